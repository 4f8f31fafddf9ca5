"""One signal watcher per process: every pool and runner of a loop shares one SIGINT/SIGTERM handler.

The handler the watcher installs is captured (the loop's ``add_signal_handler`` is wrapped) and called directly,
as the loop would on a signal, so no real signal reaches the test process.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections import Counter

import anyio
import pytest

from mpcbench_async.runtime import WorkerPool
from mpcbench_async.runtime._pool import watch_signals


@pytest.fixture
def handlers(monkeypatch):
    """Capture the handlers installed on the running loop: ``{signum: [callback, ...]}`` in install order."""
    installed: dict[int, list] = {}

    def install() -> None:
        loop = asyncio.get_running_loop()
        original = loop.add_signal_handler

        def add_signal_handler(sig, callback, *args):
            installed.setdefault(sig, []).append(lambda: callback(*args))
            return original(sig, callback, *args)

        monkeypatch.setattr(loop, "add_signal_handler", add_signal_handler)

    return installed, install


class Blocked:
    """Items that wait for ``release``; ``started`` counts the items taken."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.started: Counter[str] = Counter()

    def fn(self, name: str):
        async def work(i: int) -> int:
            self.started[name] += 1
            await self.release.wait()
            return i

        return work


async def drain(pool: WorkerPool, items, out: list) -> None:
    async with pool.stream(items) as results:
        async for r in results:
            out.append(r)


class TestOneWatcher:
    async def test_two_pools_in_one_loop_install_one_handler_per_signal(self, handlers):
        """Two signal-handling pools running at once install SIGINT and SIGTERM once; after both end the
        handlers that were there before are back."""
        installed, install = handlers
        install()
        before = signal.getsignal(signal.SIGINT)
        work = Blocked()
        a = WorkerPool(work.fn("a"), concurrency=2, handle_signals=True)
        b = WorkerPool(work.fn("b"), concurrency=2, handle_signals=True)
        got_a, got_b = [], []
        async with anyio.create_task_group() as tg:
            tg.start_soon(drain, a, range(10), got_a)
            tg.start_soon(drain, b, range(10), got_b)
            while work.started != Counter(a=2, b=2):
                await anyio.lowlevel.checkpoint()
            assert {signal.SIGINT: 1, signal.SIGTERM: 1} == {s: len(h) for s, h in installed.items()}
            work.release.set()
        assert (10, 10) == (len(got_a), len(got_b))
        assert before is signal.getsignal(signal.SIGINT)

    async def test_first_signal_stops_every_pool_second_abandons(self, handlers):
        """The first signal makes both pools take no more items and marks both interrupted (their in-flight items
        keep running); the second cancels the in-flight items of both, so both streams end with no results."""
        installed, install = handlers
        install()
        work = Blocked()
        a = WorkerPool(work.fn("a"), concurrency=2, handle_signals=True, grace_period=3600)
        b = WorkerPool(work.fn("b"), concurrency=3, handle_signals=True, grace_period=3600)
        got_a, got_b = [], []
        async with anyio.create_task_group() as tg:
            tg.start_soon(drain, a, range(100), got_a)
            tg.start_soon(drain, b, range(100), got_b)
            while work.started != Counter(a=2, b=3):
                await anyio.lowlevel.checkpoint()
            [sigint] = installed[signal.SIGINT]
            sigint()
            assert (True, True, 2, 3) == (a.interrupted, b.interrupted, a.in_flight, b.in_flight)
            sigint()
        assert ([], [], Counter(a=2, b=3)) == (got_a, got_b, work.started)
        assert (True, True) == (a.abandoned, b.abandoned)

    async def test_in_flight_items_finish_after_the_first_signal(self, handlers):
        """After one signal the items already running finish and are delivered; no new item starts."""
        installed, install = handlers
        install()
        work = Blocked()
        pool = WorkerPool(work.fn("a"), concurrency=2, handle_signals=True, grace_period=3600)
        got: list[int] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(drain, pool, range(100), got)
            while work.started["a"] < 2:
                await anyio.lowlevel.checkpoint()
            installed[signal.SIGTERM][0]()
            work.release.set()
        assert ([0, 1], True, False) == (sorted(got), pool.interrupted, pool.abandoned)

    async def test_a_pool_that_starts_after_the_signal_takes_no_work(self, handlers):
        """A pool joining a watcher that already saw a signal is stopped at once: it runs nothing and says it was
        interrupted; the registration's callback is called too."""
        installed, install = handlers
        install()
        work = Blocked()
        first = WorkerPool(work.fn("a"), concurrency=1, handle_signals=True, grace_period=3600)
        called: list[str] = []
        got: list[int] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(drain, first, range(5), [])
            while work.started["a"] < 1:
                await anyio.lowlevel.checkpoint()
            installed[signal.SIGINT][0]()
            late = WorkerPool(work.fn("late"), concurrency=2, handle_signals=True)
            with watch_signals([], on_interrupt=lambda: called.append("late runner")):
                await drain(late, range(5), got)
            work.release.set()
        assert ([], 0, True, ["late runner"]) == (got, work.started["late"], late.interrupted, called)
        assert 1 == len(installed[signal.SIGINT])

    async def test_a_watcher_again_after_the_last_one_left(self, handlers):
        """Once every registration has left, the next one installs a fresh handler that has seen no signal."""
        installed, install = handlers
        install()
        with watch_signals([]):
            installed[signal.SIGINT][0]()
        stopped: list[bool] = []
        with watch_signals([], on_interrupt=lambda: stopped.append(True)):
            assert [] == stopped
        assert 2 == len(installed[signal.SIGINT])

    def test_outside_the_main_thread_nothing_is_installed(self):
        """In a worker thread's loop no handler can be installed: the block simply runs."""

        async def main() -> bool:
            with watch_signals([]):
                return True

        result: list[bool] = []

        def thread() -> None:
            result.append(anyio.run(main))

        t = threading.Thread(target=thread)
        t.start()
        t.join()
        assert [True] == result
