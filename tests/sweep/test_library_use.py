"""``Runner.sweep`` from a caller's own async code: leaving early is clean, resumable, and wraps no exception.

The sim answers the first unit and holds every later request open (a gate), so when the caller leaves after
the first record the other units are exactly in flight: if leaving did not cancel them, the ``Runner`` block
could never end (``fail_after`` turns such a hang into a failure).
"""

from __future__ import annotations

import fcntl
import os
from collections import Counter
from pathlib import Path

import anyio
import pytest

from mpcbench_async.mpcbench import MPCBenchSuite
from mpcbench_async.runner import Runner
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from tests.sweep.conftest import plan_of

CONCURRENCY = 3


def unit_of(call_key: str) -> str:
    """The unit key of an LLM call key (``<unit key>/<call>``)."""
    return call_key.split("/")[0]


class FirstUnitOnly:
    """A sim gate: the first unit's calls are answered, every other request waits until ``release``."""

    def __init__(self) -> None:
        self.first: str | None = None
        self.held: set[str] = set()
        self.release = anyio.Event()
        self._more = anyio.Event()

    async def __call__(self, key: str) -> None:
        unit = unit_of(key)
        self.first = self.first or unit
        if unit != self.first:
            self.held.add(unit)
            self._more.set()
            await self.release.wait()

    async def until_held(self, n: int) -> None:
        while len(self.held) < n:
            self._more = anyio.Event()
            await self._more.wait()


def lines(path: Path) -> list[dict]:
    """Every record of a JSONL file, requiring each line to decode (no torn or bad line)."""
    found, report = read_jsonl(path)
    assert (False, []) == (report.torn_tail, report.bad_lines)
    return found


def lock_is_free(out: Path) -> bool:
    """Whether another open file description could take the directory's lock now."""
    fd = os.open(out / ".lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


class TestLeavingEarly:
    async def test_break_after_the_first_record_cancels_the_rest_and_a_rerun_finishes(self, workspace, tmp_path):
        """``break`` inside ``async with runner.stream(suite)``: the block and the Runner exit without error while
        units are in flight; the lock is free, every line decodes, only the first unit has a record; the rerun
        does every other unit once, repeats no call of a unit on disk, and ends with one ok record per unit."""
        out = tmp_path / "out"
        gate = FirstUnitOnly()
        async with SimServer(seed=21, gate=gate) as sim:
            config, prompts, plan = plan_of(workspace(sim.base_url), trials=2)
            with anyio.fail_after(30):
                async with Runner(config, out_dir=out, concurrency=CONCURRENCY) as runner:
                    async with runner.stream(MPCBenchSuite(plan, prompts)) as records:
                        async for record in records:  # noqa: B007 - the first record is kept for the checks below
                            await gate.until_held(1)  # another unit in flight as we leave (a loaded machine may lag)
                            break
                    in_flight_when_left = set(gate.held)
            first_run = dict(sim.stats.completed)
            assert lock_is_free(out)
            runs, judgements = lines(out / "runs.jsonl"), lines(out / "judgements.jsonl")
            assert ([record.key], "ok", []) == ([r["key"] for r in runs], runs[0]["status"], judgements)
            assert 0 < len(in_flight_when_left) <= 2 * CONCURRENCY
            assert {record.key} == {unit_of(k) for k in first_run}  # the held calls never completed

            sim.gate = None
            async with Runner(config, out_dir=out, concurrency=CONCURRENCY) as runner:
                stats = await runner.run(MPCBenchSuite(plan, prompts))
        repeated = Counter(unit_of(k) for k, n in sim.stats.completed.items() if n > first_run.get(k, 0))
        assert record.key not in repeated
        assert (15, 16, 1) == (stats.runs_done, stats.judges_done, stats.runs_skipped)
        runs, judgements = lines(out / "runs.jsonl"), lines(out / "judgements.jsonl")
        assert (16, {"ok"}) == (len({r["key"] for r in runs}), {r["status"] for r in runs})
        assert (16, 16) == (len(runs), len(judgements))

    async def test_plain_async_for_with_break_ends_with_the_runner_block(self, workspace, tmp_path):
        """``async for record in runner.stream(suite): break`` without the inner block: the sweep still running is
        stopped when the Runner block ends — no hang, no ExceptionGroup, the first record on disk."""
        out = tmp_path / "out"
        gate = FirstUnitOnly()
        async with SimServer(seed=22, gate=gate) as sim:
            config, prompts, plan = plan_of(workspace(sim.base_url), trials=2)
            with anyio.fail_after(30):
                async with Runner(config, out_dir=out, concurrency=CONCURRENCY) as runner:
                    async for record in runner.stream(MPCBenchSuite(plan, prompts)):  # noqa: B007 - the usage under test; record read below
                        break
        assert [record.key] == [r["key"] for r in lines(out / "runs.jsonl")]
        assert lock_is_free(out)

    async def test_an_exception_in_the_block_comes_out_as_itself(self, workspace, tmp_path):
        """An error raised while reading records stops the sweep and reaches the caller unwrapped."""
        gate = FirstUnitOnly()
        async with SimServer(seed=23, gate=gate) as sim:
            config, prompts, plan = plan_of(workspace(sim.base_url), trials=2)
            with anyio.fail_after(30), pytest.raises(LookupError, match="^stop here$"):
                async with Runner(config, out_dir=tmp_path / "out", concurrency=CONCURRENCY) as r:
                    async with r.stream(MPCBenchSuite(plan, prompts)) as records:
                        async for _ in records:
                            raise LookupError("stop here")
        assert lock_is_free(tmp_path / "out")

    async def test_in_flight_reports_units_running_now(self, workspace, tmp_path):
        """``Runner.in_flight`` counts the units running in every pool: after the first run, a full agent pool and
        that run's judgement while the sim holds them; none once the sweep is over."""
        gate = FirstUnitOnly()
        async with SimServer(seed=24, gate=gate) as sim:
            config, prompts, plan = plan_of(workspace(sim.base_url), trials=2)
            with anyio.fail_after(30):
                async with Runner(config, out_dir=tmp_path / "out", concurrency=CONCURRENCY) as r:
                    async with r.stream(MPCBenchSuite(plan, prompts)) as records:
                        await records.__anext__()
                        await gate.until_held(CONCURRENCY + 1)
                        assert CONCURRENCY + 1 == r.in_flight
                    assert 0 == r.in_flight


class TestStop:
    async def test_stop_lets_the_units_in_flight_finish_and_starts_no_more(self, workspace, tmp_path):
        """``records.stop()`` with three runs and one judgement held in flight: once released, those four finish
        and are streamed and written, then the stream ends; no other unit ever reaches the sim."""
        gate = FirstUnitOnly()
        async with SimServer(seed=25, gate=gate) as sim:
            config, prompts, plan = plan_of(workspace(sim.base_url), trials=2)
            with anyio.fail_after(30):
                async with Runner(config, out_dir=tmp_path / "out", concurrency=CONCURRENCY) as r:
                    async with r.stream(MPCBenchSuite(plan, prompts)) as records:
                        first = await records.__anext__()
                        await gate.until_held(CONCURRENCY + 1)
                        records.stop()
                        gate.release.set()
                        rest = [record async for record in records]
        assert (CONCURRENCY + 1, gate.held) == (len(rest), {record.key for record in rest})
        assert {first.key} | gate.held == {unit_of(k) for k in sim.stats.received}
        runs, judgements = lines(tmp_path / "out" / "runs.jsonl"), lines(tmp_path / "out" / "judgements.jsonl")
        assert (CONCURRENCY + 1, 1) == (len(runs), len(judgements))
