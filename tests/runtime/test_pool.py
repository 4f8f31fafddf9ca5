"""The bounded worker pool: all results, completion order, concurrency cap, backpressure, stop, errors, SIGINT."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path

import anyio
import pytest

from mpcbench_async.runtime import WorkerPool, read_jsonl

SCRIPT = Path(__file__).with_name("pool_sigint_script.py")


async def double(i: int) -> int:
    await anyio.lowlevel.checkpoint()
    return 2 * i


class TestWorkerPool:
    async def test_all_results_come_out(self):
        """Twenty items at concurrency 4 give exactly the twenty results."""
        pool = WorkerPool(double, concurrency=4)
        async with pool.stream(range(20)) as results:
            got = [r async for r in results]
        assert Counter(2 * i for i in range(20)) == Counter(got)
        assert (20, 20) == (pool.started, pool.finished)

    async def test_async_iterable_input(self):
        """An async generator works as the input."""

        async def items() -> AsyncIterator[int]:
            for i in range(10):
                await anyio.lowlevel.checkpoint()
                yield i

        async with WorkerPool(double, concurrency=3).stream(items()) as results:
            got = [r async for r in results]
        assert Counter(2 * i for i in range(10)) == Counter(got)

    async def test_empty_input(self):
        """No items: the stream ends at once with no results."""
        async with WorkerPool(double, concurrency=3).stream([]) as results:
            assert [] == [r async for r in results]

    async def test_results_in_completion_order(self):
        """The item whose work finishes first is yielded first."""
        events = {i: anyio.Event() for i in range(3)}

        async def wait_for_turn(i: int) -> int:
            await events[i].wait()
            return i

        order = []
        async with WorkerPool(wait_for_turn, concurrency=3).stream(range(3)) as results:
            for i in (2, 0, 1):
                events[i].set()
                order.append(await results.receive())
        assert [2, 0, 1] == order

    async def test_in_flight_never_exceeds_concurrency(self):
        """Work fills exactly the concurrency cap and never goes beyond it."""
        full = anyio.Event()
        in_flight = 0
        peak = 0
        pool: WorkerPool[int, int]

        async def work(i: int) -> int:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight, pool.in_flight)
            if in_flight == 4:
                full.set()
            await full.wait()
            await anyio.lowlevel.checkpoint()
            in_flight -= 1
            return i

        pool = WorkerPool(work, concurrency=4)
        async with pool.stream(range(20)) as results:
            got = [r async for r in results]
        assert 4 == peak
        assert list(range(20)) == sorted(got)

    async def test_backpressure_bounds_items_taken(self):
        """Breaking out after five results from an endless input takes only as many items as the buffers hold."""
        produced = 0

        def endless() -> Iterator[int]:
            nonlocal produced
            i = 0
            while True:
                produced += 1
                yield i
                i += 1

        concurrency, queue_size = 2, 2
        pool = WorkerPool(double, concurrency=concurrency, queue_size=queue_size)
        got = []
        async with pool.stream(endless()) as results:
            async for r in results:
                got.append(r)
                if len(got) == 5:
                    break
        # consumed + output buffer + one item per worker + input buffer + the one the producer holds
        bound = 5 + queue_size + concurrency + queue_size + 1
        assert [0, 2, 4, 6, 8] == sorted(got)
        assert produced <= bound
        assert pool.finished == pool.started
        assert 0 == pool.in_flight

    async def test_stop_lets_in_flight_finish_and_takes_no_more(self):
        """After stop(), the items already running finish and no new item is started."""
        started: list[int] = []
        two_started = anyio.Event()
        release = anyio.Event()

        async def work(i: int) -> int:
            started.append(i)
            if len(started) == 2:
                two_started.set()
            await release.wait()
            return i

        pool = WorkerPool(work, concurrency=2)
        async with pool.stream(range(100)) as results:
            await two_started.wait()
            pool.stop()
            release.set()
            got = [r async for r in results]
        assert [0, 1] == sorted(got)
        assert [0, 1] == started
        assert (2, 2) == (pool.started, pool.finished)
        assert False is pool.interrupted

    async def test_error_in_fn_propagates(self):
        """An exception raised by fn ends the pool and comes out of the block as a one-member ExceptionGroup."""

        async def fail_on_three(i: int) -> int:
            await anyio.lowlevel.checkpoint()
            if i == 3:
                raise ValueError("item 3 failed")
            return i

        with pytest.raises(ExceptionGroup) as caught:
            async with WorkerPool(fail_on_three, concurrency=2).stream(range(10)) as results:
                async for _ in results:
                    pass
        assert 1 == len(caught.value.exceptions)
        assert isinstance(caught.value.exceptions[0], ValueError)
        assert "item 3 failed" == str(caught.value.exceptions[0])

    async def test_failed_makes_an_items_exception_its_result_and_the_pool_goes_on(self):
        """With ``failed``, an item whose fn raises (before its first await or after) gives ``failed(item, exc)``
        as its result; every other item's result comes out as well."""

        def fail_on_three_or_five(i: int) -> Awaitable[int]:
            if i == 5:
                raise KeyError(i)  # fn itself raises: no awaitable at all
            return fail_on_three(i)

        async def fail_on_three(i: int) -> int:
            await anyio.lowlevel.checkpoint()
            if i == 3:
                raise ValueError("item 3 failed")
            return i

        pool = WorkerPool(fail_on_three_or_five, concurrency=2,
                          failed=lambda i, exc: -i if isinstance(exc, ValueError | KeyError) else 0)
        async with pool.stream(range(8)) as results:
            got = sorted([r async for r in results])
        assert ([-5, -3, 0, 1, 2, 4, 6, 7], 8) == (got, pool.finished)

    def test_concurrency_must_be_positive(self):
        """A pool without workers is rejected."""
        with pytest.raises(ValueError, match="concurrency must be at least 1, got 0"):
            WorkerPool(double, concurrency=0)


def run_script(tmp_path: Path, *args: str, timeout: float) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out), *args], capture_output=True, text=True,
                          timeout=timeout, env=env)
    return proc, out


class TestWorkerPoolSignals:
    def test_sigint_stops_the_pool_and_keeps_the_file_whole(self, tmp_path):
        """On SIGINT the pool stops taking work, in-flight items finish and are written, and the run exits 130."""
        proc, out = run_script(tmp_path, timeout=60)
        assert 130 == proc.returncode, proc.stderr
        records, report = read_jsonl(out)
        assert False is report.torn_tail
        assert [] == report.bad_lines
        printed = int(proc.stdout.strip().splitlines()[-1])
        assert printed == len(records)
        assert all(record["status"] == "ok" for record in records)
        keys = [record["key"] for record in records]
        assert len(keys) == len(set(keys))
        assert len(records) < 100
        assert "unit-20" in keys

    def test_second_sigint_abandons_at_once(self, tmp_path):
        """A second SIGINT abandons items stuck in flight at once: exit 130 long before the grace period, file whole."""
        proc, out = run_script(tmp_path, "double", timeout=15)
        assert 130 == proc.returncode, proc.stderr
        records, report = read_jsonl(out)
        assert False is report.torn_tail
        assert [] == report.bad_lines
        printed = int(proc.stdout.strip().splitlines()[-1])
        assert printed == len(records)
        assert {f"unit-{i}" for i in range(20)} == {record["key"] for record in records}
