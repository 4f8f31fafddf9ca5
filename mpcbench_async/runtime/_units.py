"""Running keyed units through stages into JSONL files, pipelined and resumably: the one copy of that loop.

A ``Pipeline`` has one or more stages, each with its own results file, record
type, ``WorkerPool`` and unit function. The first stage's units are given;
every finished ``ok`` record of a stage asks for units of the next one
(``Stage.follow_ups``), which start as soon as that record is written — no
phase barrier. A record that is an error asks for nothing: its follow-ups (and
theirs) are counted as skipped.

Resume: a unit whose key is done in its stage's file (``ResumeIndex``: ``ok``,
or a non-retryable error unless ``retry_errors``) is skipped; a done record
whose follow-ups are not all done on disk is read back and asks for the missing
ones only, while a record made in this run asks for all of its follow-ups (a
follow-up on disk for its key belonged to an earlier record of that unit, one
that was lost). A follow-up on disk that started before the done record it
follows finished is of such an earlier record too (the summary calls it stale):
it is missing. The done keys (and times) come from each file's done-index
(``_done_index``, kept by the stage's writer) when it is trusted, so a resume
decodes no record but those it reads back; else from the records, and the index
is rebuilt. A record is appended when its unit has finished, so SIGKILL at
any moment loses at most the units in flight and duplicates nothing. A unit
fails alone: whatever its ``run`` raises but cancellation becomes the record
the stage's ``failed`` makes of it (the caller logs, so the log names its
module and the unit's kind).

``stop`` starts no more units (the ones in flight finish and are written);
``abandon`` also cancels those in flight; a SIGINT/SIGTERM (``handle_signals``)
stops, then abandons after the grace period. ``PipelineEvents`` hears the
plan (units per stage, skipped on resume), later skips, every record once
written, and an interrupt. ``run_keyed_units`` is the one-stage use: a dict of
units in, each unit's latest record out (``tariff.run_cases``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, ExitStack, nullcontext
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from ..records import UnitRecord
from ._attempt import current_unit_attempt, unit_attempt
from ._channel import channel
from ._jsonl import JsonlWriter, ResumeIndex, iter_jsonl
from ._pool import WorkerPool, watch_signals

__all__ = ["Pipeline", "PipelineEvents", "Stage", "latest_records", "run_keyed_units"]

U = TypeVar("U")
R = TypeVar("R", bound=UnitRecord)
Keyed = tuple[str, Any]  # (key, unit)


def _no_follow_ups(_: Any) -> Sequence[Any]:
    return ()


class Stage(NamedTuple):
    """One stage as the loop sees it: its file, its record type, how a unit runs, and what its records ask for.

    ``follow_up_keys(key)`` are the keys of the next stage's units an ``ok`` record of this stage with ``key``
    asks for (known without the record, so a resume reads back only the records that still lack some);
    ``follow_ups(record)`` are those units, as ``(key, unit)``. The last stage asks for none.
    """

    path: Path
    record_type: type[UnitRecord]
    run: Callable[[str, Any], Awaitable[UnitRecord | None]]  # None: the unit did not run (no record; runs on resume)
    failed: Callable[[str, Any, Exception], UnitRecord]
    follow_up_keys: Callable[[str], Sequence[str]] = _no_follow_ups
    follow_ups: Callable[[Any], Iterable[Keyed]] = _no_follow_ups


class PipelineEvents:
    """What a pipeline reports as it goes; these do nothing: override what you need (counters, a stream)."""

    def planned(self, stage: int, total: int, skipped: int) -> None:
        """After the resume read: ``stage`` has ``total`` units, ``skipped`` of them done on disk."""

    def skipped(self, stage: int, count: int) -> None:
        """``count`` more units of ``stage`` will not run: the record that would ask for them is an error."""

    async def record(self, stage: int, record: UnitRecord) -> None:
        """``record`` of ``stage`` has just been written (its follow-ups are queued after this returns)."""

    def interrupted(self) -> None:
        """A signal stopped the pipeline (units without a record did not run)."""


class Pipeline:
    """Runs keyed units through ``stages`` (see the module docstring); one ``run`` per pipeline.

    It is a ``Stoppable`` (``in_flight``, ``stop``, ``abandon``), so the signal watcher and callers drive it.
    """

    def __init__(self, stages: Sequence[Stage], *, concurrency: int, retry_errors: bool = False,
                 fsync: bool = False, handle_signals: bool = False, grace_period: float = 30.0,
                 events: PipelineEvents | None = None) -> None:
        self.stages = list(stages)
        self.concurrency = concurrency
        self.retry_errors, self.fsync = retry_errors, fsync
        self.handle_signals, self.grace_period = handle_signals, grace_period
        self.events = events or PipelineEvents()
        self._tries: list[dict[str, int]] = [{} for _ in self.stages]  # per stage: earlier records of units to redo
        self.pools: list[WorkerPool[Keyed, UnitRecord | None]] = [
            WorkerPool(self._unit_of(stage, self._tries[i]), concurrency=concurrency, failed=self._failed_of(stage))
            for i, stage in enumerate(self.stages)]
        self.stopping = False
        self.interrupted = False
        self._forwarding: set[anyio.CancelScope] = set()

    @staticmethod
    def _failed_of(stage: Stage) -> Callable[[Keyed, Exception], UnitRecord | None]:
        """A unit's exception as its failure record: the unit fails alone (``stage.failed``)."""
        def failed(item: Keyed, exc: Exception) -> UnitRecord | None:
            return stage.failed(item[0], item[1], exc)
        return failed

    @staticmethod
    def _unit_of(stage: Stage, tries: dict[str, int]) -> Callable[[Keyed], Awaitable[UnitRecord | None]]:
        """A unit's run as its pool's worker awaits it: ``stage.run``'s own awaitable on a first try (the usual
        case), with no coroutine of this module around it (the pool's ``failed`` makes a unit's exception its
        failure record); a resumed unit's inside ``unit_attempt``, so its calls say which try they belong to."""
        async def marked(key: str, unit: Any, attempt: int) -> UnitRecord | None:
            with unit_attempt(attempt):
                return await stage.run(key, unit)

        def one(item: Keyed) -> Awaitable[UnitRecord | None]:
            key, unit = item
            attempt = tries.get(key, 0)
            if attempt == current_unit_attempt():  # nothing to mark
                return stage.run(key, unit)
            return marked(key, unit, attempt)
        return one

    # -- control -------------------------------------------------------------
    @property
    def in_flight(self) -> int:
        return sum(pool.in_flight for pool in self.pools)

    def stop(self) -> None:
        """Start no more units and queue no more follow-ups; the units in flight finish and are written."""
        self.stopping = True
        for scope in self._forwarding:
            scope.cancel()
        for pool in self.pools:
            pool.stop()

    def abandon(self) -> None:
        """Stop, and cancel the units in flight (they have no record, so they run again on resume)."""
        self.stop()
        for pool in self.pools:
            pool.abandon()

    def _interrupt(self) -> None:
        self.interrupted = True
        for pool in self.pools:
            pool.interrupted = True
        self.events.interrupted()

    # -- the run -------------------------------------------------------------
    async def run(self, units: Callable[[], Iterable[Keyed]], *,
                  prepare: Callable[[], Awaitable[object]] | None = None) -> None:
        """Run the first stage's ``units()`` (called twice: the resume scan, then lazily as the pool takes them).

        ``prepare`` is awaited after the resume read, before any unit starts.
        """
        stages, last = self.stages, len(self.stages) - 1
        done = await anyio.to_thread.run_sync(lambda: [
            ResumeIndex.from_file(s.path, retry_errors=self.retry_errors, type_=s.record_type, rebuild=True,
                                  times=last > 0)
            for s in stages])
        for tries, index in zip(self._tries, done, strict=True):
            tries.update(index.tries)
        if prepare is not None:
            await prepare()
        lacking, todo = self._scan(units, done)
        stored = [await anyio.to_thread.run_sync(_stored_records, stages[i].path, stages[i].record_type,
                                                 set(lacking[i])) if lacking[i] else [] for i in range(last)]
        for i in range(last):  # done with an error: never followed up
            found = {record.key for record in stored[i]}
            for key, missing in lacking[i].items():
                if key not in found:
                    self._skip(i + 1, missing)

        first_done = done[0].done  # the KeySet itself: one call a test, not two

        def pending() -> Iterator[Keyed]:
            left = todo  # once every unit not done has been handed out, the rest need not be listed (nor keyed)
            if not left:
                return
            for key, unit in units():
                if self.stopping:
                    return
                if key not in first_done:
                    yield key, unit
                    left -= 1
                    if not left:
                        return

        streams = [channel[Keyed].open(self.concurrency * 2) for _ in range(last)]
        signals = (watch_signals([self], grace_period=self.grace_period, on_interrupt=self._interrupt)
                   if self.handle_signals else nullcontext())
        with signals, ExitStack() as files:
            writers = [files.enter_context(JsonlWriter(s.path, fsync=self.fsync, index=True)) for s in stages]
            for _, receive in streams:
                files.enter_context(receive)  # a stage stopped early leaves its queue unread: close it at the end
            async with anyio.create_task_group() as tg:
                for i in range(1, last + 1):
                    tg.start_soon(self._stage, i, streams[i - 1][1], writers[i],
                                  streams[i][0] if i < last else None, stored[i] if i < last else [], lacking[i])
                await self._stage(0, pending(), writers[0], streams[0][0] if last else None,
                                  stored[0] if last else [], lacking[0])

    def _scan(self, units: Callable[[], Iterable[Keyed]],
              done: list[ResumeIndex]) -> tuple[list[dict[str, list[str]]], int]:
        """Tell the events each stage's units and skips; return, per stage, the done keys lacking follow-ups, and
        how many of the first stage's units are not done."""
        n = len(self.stages)
        totals, skipped = [0] * n, [0] * n
        lacking: list[dict[str, list[str]]] = [{} for _ in range(n)]

        def visit(i: int, key: str, at: tuple[float, float] | None) -> None:
            """``at``: None when ``key`` is not done on disk, else when its last ok record started and finished."""
            on_disk = at is not None
            totals[i] += 1
            skipped[i] += on_disk
            if i + 1 == n:
                return
            keys = self.stages[i].follow_up_keys(key)
            stamps = {k: done[i + 1].done_at(k) for k in keys} if on_disk else dict.fromkeys(keys)
            for follow_up, stamp in stamps.items():  # one done earlier than ``key`` finished is of a lost record
                if stamp is not None and at and at[1] and stamp[0] and stamp[0] < at[1]:
                    stamps[follow_up] = None
            if on_disk:
                missing = [k for k in keys if stamps[k] is None]
                if missing:
                    lacking[i][key] = missing
            for follow_up in keys:
                visit(i + 1, follow_up, stamps[follow_up])

        first = done[0]
        for key, _ in units():
            visit(0, key, first.done_at(key))
        for i in range(n):
            self.events.planned(i, totals[i], skipped[i])
        return lacking, totals[0] - skipped[0]

    def _skip(self, stage: int, keys: Sequence[str]) -> None:
        """``keys`` of ``stage`` will not run, nor anything they would have asked for."""
        self.events.skipped(stage, len(keys))
        if stage + 1 < len(self.stages):
            for key in keys:
                self._skip(stage + 1, self.stages[stage].follow_up_keys(key))

    async def _stage(self, i: int, items: Iterable[Keyed] | ObjectReceiveStream[Keyed], writer: JsonlWriter,
                     send: ObjectSendStream[Keyed] | None, stored: list[UnitRecord],
                     lacking: dict[str, list[str]]) -> None:
        """Run stage ``i``'s units as they come; queue each record's follow-ups (after the stored ones') on ``send``."""
        stage = self.stages[i]
        async with AsyncExitStack() as stack:
            if send is not None:
                await stack.enter_async_context(send)  # closed once this stage ends: the next one drains and ends
                for stored_record in stored:
                    wanted = set(lacking[stored_record.key])
                    await self._forward(send, (item for item in stage.follow_ups(stored_record) if item[0] in wanted))
            async with self.pools[i].stream(items) as results:
                async for record in results:
                    if record is None:
                        continue  # the unit did not run (a budget refused it): no record, so a resume runs it
                    writer.write(record)
                    await self.events.record(i, record)
                    if send is None:
                        continue
                    if record.status == "ok":
                        await self._forward(send, stage.follow_ups(record))
                    else:
                        self._skip(i + 1, stage.follow_up_keys(record.key))

    async def _forward(self, send: ObjectSendStream[Keyed], items: Iterable[Keyed]) -> None:
        """Queue follow-ups for the next stage; none once stopping (they run on resume)."""
        with anyio.CancelScope() as scope:
            self._forwarding.add(scope)
            try:
                for item in items:
                    if self.stopping:
                        break
                    await send.send(item)
            finally:
                self._forwarding.discard(scope)


def _stored_records(path: Path, record_type: type[UnitRecord], wanted: set[str]) -> list[UnitRecord]:
    """The ``ok`` records of ``wanted`` keys in ``path`` (the last one per key); streamed, only those kept."""
    found: dict[str, UnitRecord] = {}
    for record in iter_jsonl(path, type_=record_type, warn=False):  # the resume read warned
        if record.key in wanted and record.status == "ok":
            found[record.key] = record
    return list(found.values())


async def latest_records(path: str | Path, record_type: type[R], keys: Sequence[str]) -> list[R]:
    """Each of ``keys``' first ``ok`` record in ``path``, else its last record, in the order of ``keys``.

    A key without a record (not run: the run was interrupted) is left out; the file is read in a worker thread.
    """
    def read() -> list[R]:
        order = {key: index for index, key in enumerate(keys)}
        latest: dict[str, R] = {}
        for record in iter_jsonl(path, type_=record_type, warn=False):  # the resume read warned
            if record.key in order and (record.key not in latest or latest[record.key].status != "ok"):
                latest[record.key] = record
        return sorted(latest.values(), key=lambda r: order[r.key])
    return await anyio.to_thread.run_sync(read)


class _Callbacks(PipelineEvents):
    """``run_keyed_units``' callbacks as pipeline events."""

    def __init__(self, pool: WorkerPool[Any, Any], on_start: Callable[[WorkerPool[Any, Any], int], None] | None,
                 on_record: Callable[[Any], None] | None) -> None:
        self.pool, self.on_start, self.on_record = pool, on_start, on_record

    def planned(self, stage: int, total: int, skipped: int) -> None:
        if self.on_start is not None:
            self.on_start(self.pool, total - skipped)

    async def record(self, stage: int, record: UnitRecord) -> None:
        if self.on_record is not None:
            self.on_record(record)


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

    A one-stage ``Pipeline``. The latest record of a key is its first ``ok`` record in the file, else its last
    one; a key without a record (not run: the run was interrupted) is left out. ``prepare`` is awaited after
    the resume read, before any unit starts; ``on_start`` gets the pool (its ``in_flight`` is live) and the
    number of units to run; ``on_record`` sees each record once it is written; ``on_interrupt`` is called
    after the run when a signal stopped it.
    """
    pipeline = Pipeline([Stage(Path(results_path), record_type, run, failed)], concurrency=concurrency,
                        retry_errors=retry_errors, fsync=fsync, handle_signals=handle_signals,
                        grace_period=grace_period)
    pipeline.events = _Callbacks(pipeline.pools[0], on_start, on_record)
    await pipeline.run(lambda: units.items(), prepare=prepare)
    if pipeline.interrupted and on_interrupt is not None:
        on_interrupt()
    return await latest_records(results_path, record_type, list(units))
