"""``run_keyed_units``: resume by key, every finished record written, latest record per key, crashes, signals."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import anyio

from mpcbench_async.records import UnitRecord
from mpcbench_async.runtime import JsonlWriter, WorkerPool, read_jsonl, run_keyed_units, unit_attempt_headers
from mpcbench_async.runtime._attempt import UNIT_ATTEMPT_HEADER


class ToyRecord(UnitRecord, kw_only=True):
    value: int = 0
    kind: Literal["toy"] = "toy"


def ok(key: str, value: int) -> ToyRecord:
    return ToyRecord(key=key, status="ok", value=value)


def error(key: str, value: int, *, retryable: bool) -> ToyRecord:
    return ToyRecord(key=key, status="error", value=value, retryable=retryable, error_class="Boom")


def seed(path: Path, *records: ToyRecord) -> None:
    with JsonlWriter(path) as writer:
        for record in records:
            writer.write(record)


def written(path: Path) -> list[tuple[str, str, int]]:
    return [(r.key, r.status, r.value) for r in read_jsonl(path, type_=ToyRecord)[0]]


def summary(records: list[ToyRecord]) -> list[tuple[str, str, int]]:
    return [(r.key, r.status, r.value) for r in records]


async def square(key: str, unit: int) -> ToyRecord:
    await anyio.lowlevel.checkpoint()
    return ok(key, unit * unit)


def never_fails(key: str, unit: int, exc: Exception) -> ToyRecord:
    raise AssertionError(f"no unit should raise, {key} raised {exc!r}")


async def run(units: dict[str, int], path: Path, fn: Callable = square, **kwargs) -> list[ToyRecord]:
    return await run_keyed_units(units, run=fn, failed=kwargs.pop("failed", never_fails), results_path=path,
                                 record_type=ToyRecord, concurrency=kwargs.pop("concurrency", 4), **kwargs)


class TestRunKeyedUnits:
    async def test_every_unit_runs_and_records_come_back_in_key_order(self, tmp_path):
        """Unit ``a`` finishes last, yet the returned records follow the keys; the file has all three."""
        c_done = anyio.Event()

        async def fn(key: str, unit: int) -> ToyRecord:
            if key == "a":
                await c_done.wait()
            if key == "c":
                c_done.set()
            return await square(key, unit)

        path = tmp_path / "r.jsonl"
        records = await run({"a": 1, "b": 2, "c": 3}, path, fn)
        assert [("a", "ok", 1), ("b", "ok", 4), ("c", "ok", 9)] == summary(records)
        assert "a" == written(path)[-1][0]
        assert {("a", "ok", 1), ("b", "ok", 4), ("c", "ok", 9)} == set(written(path))

    async def test_resume_skips_done_keys_and_reruns_retryable_errors(self, tmp_path):
        """``ok`` and non-retryable errors are done; a retryable error runs again; ``on_start`` sees 1 to run."""
        path = tmp_path / "r.jsonl"
        seed(path, ok("a", 10), error("b", 20, retryable=True), error("c", 30, retryable=False))
        starts: list[int] = []
        records = await run({"a": 1, "b": 2, "c": 3}, path, on_start=lambda pool, n: starts.append(n))
        assert [1] == starts
        assert [("a", "ok", 10), ("b", "ok", 4), ("c", "error", 30)] == summary(records)
        assert [("a", "ok", 10), ("b", "error", 20), ("c", "error", 30), ("b", "ok", 4)] == written(path)

    async def test_a_rerun_unit_knows_its_try_from_its_earlier_records(self, tmp_path):
        """Each unit runs inside ``unit_attempt(n)``, n its records already in the file: ``b`` has two retryable
        errors (try 2), ``d`` a task error rerun by ``retry_errors`` (try 1), ``c`` none (try 0: no header sent)."""
        path = tmp_path / "r.jsonl"
        seed(path, ok("a", 10), error("b", 20, retryable=True), error("b", 21, retryable=True),
             error("d", 40, retryable=False))
        seen: dict[str, dict[str, str]] = {}

        async def fn(key: str, unit: int) -> ToyRecord:
            seen[key] = unit_attempt_headers()
            return await square(key, unit)

        await run({"a": 1, "b": 2, "c": 3, "d": 4}, path, fn, retry_errors=True)
        assert {"b": {UNIT_ATTEMPT_HEADER: "2"}, "c": {}, "d": {UNIT_ATTEMPT_HEADER: "1"}} == seen
        assert {} == unit_attempt_headers()  # outside a unit

    async def test_retry_errors_reruns_every_error(self, tmp_path):
        path = tmp_path / "r.jsonl"
        seed(path, ok("a", 10), error("c", 30, retryable=False))
        records = await run({"a": 1, "c": 3}, path, retry_errors=True)
        assert [("a", "ok", 10), ("c", "ok", 9)] == summary(records)

    async def test_latest_record_is_the_first_ok_else_the_last(self, tmp_path):
        """``a``: two ``ok`` lines, the first wins; ``b``: errors only, the last (this run's) wins.

        Keys in the file that are not units of this run are left out.
        """
        path = tmp_path / "r.jsonl"
        seed(path, error("a", 1, retryable=True), ok("a", 2), ok("a", 3), error("b", 4, retryable=True),
             ok("stranger", 5))

        async def fails(key: str, unit: int) -> ToyRecord:
            return error(key, unit, retryable=True)

        records = await run({"a": 0, "b": 6}, path, fails)
        assert [("a", "ok", 2), ("b", "error", 6)] == summary(records)

    async def test_a_crash_becomes_the_callers_failed_record_and_the_others_go_on(self, tmp_path):
        path = tmp_path / "r.jsonl"
        seen: list[tuple[str, int, str]] = []

        async def fn(key: str, unit: int) -> ToyRecord:
            if key == "b":
                raise ValueError("data shape nobody foresaw")
            return await square(key, unit)

        def failed(key: str, unit: int, exc: Exception) -> ToyRecord:
            seen.append((key, unit, str(exc)))
            return error(key, -1, retryable=False)

        records = await run({"a": 1, "b": 2, "c": 3}, path, fn, failed=failed)
        assert [("b", 2, "data shape nobody foresaw")] == seen
        assert [("a", "ok", 1), ("b", "error", -1), ("c", "ok", 9)] == summary(records)
        assert ("b", "error", -1) in written(path)

    async def test_prepare_runs_before_any_unit_and_on_record_sees_each_record_once(self, tmp_path):
        events: list[str] = []

        async def prepare() -> None:
            events.append("prepare")

        async def fn(key: str, unit: int) -> ToyRecord:
            events.append(f"run {key}")
            return await square(key, unit)

        await run({"a": 1, "b": 2}, tmp_path / "r.jsonl", fn, prepare=prepare,
                  on_record=lambda r: events.append(f"record {r.key} {r.value}"))
        assert "prepare" == events[0]
        assert ["record a 1", "record b 4", "run a", "run b"] == sorted(events[1:])
        assert all(events.index(f"run {k}") < events.index(f"record {k} {v}") for k, v in [("a", 1), ("b", 4)])

    async def test_a_signal_stops_the_run_reports_it_and_leaves_unrun_keys_out(self, tmp_path, monkeypatch):
        """SIGINT (the loop's handler, called as the loop would) while ``a`` runs: ``a`` finishes and is kept,
        ``b`` never starts, ``on_interrupt`` is called once, and the next run does ``b`` only."""
        handlers: list[Callable[[], object]] = []
        loop = asyncio.get_running_loop()
        original = loop.add_signal_handler

        def add_signal_handler(sig, callback, *args):
            if sig == signal.SIGINT:
                handlers.append(lambda: callback(*args))
            return original(sig, callback, *args)

        monkeypatch.setattr(loop, "add_signal_handler", add_signal_handler)

        async def fn(key: str, unit: int) -> ToyRecord:
            handlers[-1]()
            return await square(key, unit)

        path = tmp_path / "r.jsonl"
        interrupts: list[str] = []
        pools: list[WorkerPool] = []
        records = await run({"a": 1, "b": 2}, path, fn, concurrency=1, handle_signals=True,
                            on_start=lambda pool, n: pools.append(pool),
                            on_interrupt=lambda: interrupts.append("interrupted"))
        assert (["interrupted"], [("a", "ok", 1)]) == (interrupts, summary(records))
        assert pools[0].interrupted
        assert [("a", "ok", 1), ("b", "ok", 4)] == summary(await run({"a": 1, "b": 2}, path))

