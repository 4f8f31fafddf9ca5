"""Running a suite's keyed units into one JSONL file, resumably: the one copy of that loop.

A sweep's single-stage suites (``sweep.Runner``) and ``tariff.run_cases`` both
run units this way: skip the keys the results file already has done (per
``ResumeIndex``), run the rest through a ``WorkerPool`` (with signal handling
if asked), append every finished record, then read back each unit's latest
record. A unit fails alone: whatever ``run`` raises but cancellation becomes
the record the caller's ``failed`` makes of it (the caller logs, so the log
names its module and the unit's kind).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import anyio

from ..records import UnitRecord
from ._jsonl import JsonlWriter, ResumeIndex, iter_jsonl
from ._pool import WorkerPool

__all__ = ["run_keyed_units"]

U = TypeVar("U")
R = TypeVar("R", bound=UnitRecord)


async def run_keyed_units(
    units: Mapping[str, U],
    *,
    run: Callable[[str, U], Awaitable[R]],
    failed: Callable[[str, U, Exception], R],
    results_path: str | Path,
    record_type: type[R],
    concurrency: int,
    retry_errors: bool = False,
    handle_signals: bool = False,
    grace_period: float = 30.0,
    fsync: bool = False,
    prepare: Callable[[], Awaitable[object]] | None = None,
    on_start: Callable[[WorkerPool[Any, R], int], None] | None = None,
    on_record: Callable[[R], None] | None = None,
    on_interrupt: Callable[[], None] | None = None,
) -> list[R]:
    """Run the units of ``units`` (by key) not done in ``results_path``; return each unit's latest record, in key order.

    The latest record of a key is its first ``ok`` record in the file, else its last one; a key without a
    record (not run: the run was interrupted) is left out. ``prepare`` is awaited after the resume read,
    before any unit starts; ``on_start`` gets the pool (its ``in_flight`` is live) and the number of units
    to run; ``on_record`` sees each record once it is written; ``on_interrupt`` is called when a signal
    stopped the run. Reading the file runs in a worker thread, off the event loop.
    """
    done = await anyio.to_thread.run_sync(lambda: ResumeIndex.from_file(results_path, retry_errors=retry_errors,
                                                                        type_=record_type))
    if prepare is not None:
        await prepare()

    async def one(item: tuple[str, U]) -> R:
        key, unit = item
        try:
            return await run(key, unit)
        except Exception as exc:  # the unit fails alone; cancellation is not an Exception and passes
            return failed(key, unit, exc)

    pending = [(key, unit) for key, unit in units.items() if key not in done]
    with JsonlWriter(results_path, fsync=fsync) as writer:
        pool = WorkerPool(one, concurrency=concurrency, handle_signals=handle_signals, grace_period=grace_period)
        if on_start is not None:
            on_start(pool, len(pending))
        async with pool.stream(pending) as results:
            async for record in results:
                writer.write(record)
                if on_record is not None:
                    on_record(record)
    if pool.interrupted and on_interrupt is not None:
        on_interrupt()
    return await anyio.to_thread.run_sync(_latest_records, results_path, record_type, list(units))


def _latest_records(path: str | Path, record_type: type[R], keys: list[str]) -> list[R]:
    """Each of ``keys``' first ``ok`` record in ``path``, else its last record; in the order of ``keys``."""
    order = {key: index for index, key in enumerate(keys)}
    latest: dict[str, R] = {}
    for record in iter_jsonl(path, type_=record_type, warn=False):  # the resume read warned
        if record.key in order and (record.key not in latest or latest[record.key].status != "ok"):
            latest[record.key] = record
    return sorted(latest.values(), key=lambda r: order[r.key])
