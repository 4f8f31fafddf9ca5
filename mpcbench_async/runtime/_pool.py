"""A bounded worker pool on anyio: producer → N workers → the caller, all bounded.

``WorkerPool(fn, concurrency=N).stream(items)`` is an async context manager
yielding a receive stream of results in completion order::

    pool = WorkerPool(run_unit, concurrency=64, handle_signals=True)
    async with pool.stream(units) as results:
        async for record in results:
            writer.write(record)          # the single writer: no locks needed

The input queue holds at most ``queue_size`` items, so a generator of a million
units is consumed lazily (backpressure). On SIGINT/SIGTERM (when
``handle_signals``) the pool stops taking work, lets in-flight items finish for
up to ``grace_period`` seconds, then abandons them (a second signal abandons at
once); results already produced keep flowing to the caller, who writes and
closes its files normally. ``pool.interrupted`` tells the caller to exit 130.

Signals are watched once per process (``watch_signals``): the first pool or
runner that asks installs the SIGINT/SIGTERM handlers on the event loop, later
ones join the same watcher, and the last one to leave restores the handlers
that were there before. Two watchers would each install their own handler and
the first to finish would take Ctrl-C away from the other (issue 12).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager, nullcontext
from typing import Generic, Protocol, TypeVar

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from ._channel import channel

__all__ = ["Stoppable", "WorkerPool", "watch_signals"]

T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger(__name__)


class WorkerPool(Generic[T, R]):
    """Run ``fn`` over items with at most ``concurrency`` in flight.

    ``failed(item, exc)``: the result of an item whose ``fn`` raised an ``Exception`` (that item fails alone; the
    pool goes on); without it, such an exception ends the pool. Caught here, by the worker that awaits ``fn``'s
    awaitable, a caller needs no coroutine of its own around ``fn`` for it: one frame less on every resumption of
    the item (``runtime.Pipeline``'s units, issue 31).
    """

    def __init__(
        self,
        fn: Callable[[T], Awaitable[R]],
        *,
        concurrency: int,
        queue_size: int | None = None,
        handle_signals: bool = False,
        grace_period: float = 30.0,
        failed: Callable[[T, Exception], R] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.fn = fn
        self.failed = failed
        self.concurrency = concurrency
        self.queue_size = queue_size if queue_size is not None else concurrency
        self.handle_signals = handle_signals
        self.grace_period = grace_period
        self.interrupted = False
        self.abandoned = False
        self.started = 0
        self.finished = 0
        self._stopping = False  # a plain flag: only ever read, never waited on
        self._running: set[anyio.CancelScope] = set()  # one per item in flight

    @property
    def in_flight(self) -> int:
        return self.started - self.finished

    def stop(self) -> None:
        """Stop taking new items; in-flight items finish. Safe to call repeatedly."""
        self._stopping = True

    def abandon(self) -> None:
        """Cancel in-flight items now (their results are lost; they rerun on resume).

        Results of items that had already finished are still delivered.
        """
        self.abandoned = True
        self._stopping = True
        for scope in self._running:
            scope.cancel()

    async def _produce(self, items: Iterable[T] | AsyncIterable[T], send: ObjectSendStream[T]) -> None:
        async with send:
            try:
                if isinstance(items, AsyncIterable):
                    async for item in items:
                        if self._stopping:
                            break
                        await send.send(item)
                else:
                    for item in items:
                        if self._stopping:
                            break
                        await send.send(item)
            except anyio.BrokenResourceError:
                pass  # every worker has gone: the consumer stopped early

    async def _work(self, receive: ObjectReceiveStream[T], send: ObjectSendStream[R]) -> None:
        async with receive, send:
            async for item in receive:
                if self._stopping:
                    break
                self.started += 1
                scope = anyio.CancelScope()  # abandon() cancels the item, never the delivery of a finished one
                self._running.add(scope)
                try:
                    with scope:
                        result = await self.fn(item)
                except Exception as exc:  # cancellation is not an Exception and passes
                    if self.failed is None:
                        raise
                    result = self.failed(item, exc)
                finally:
                    self._running.discard(scope)
                    self.finished += 1
                if scope.cancelled_caught:
                    break
                try:
                    await send.send(result)
                except anyio.BrokenResourceError:
                    break

    def _interrupted(self) -> None:
        self.interrupted = True

    @asynccontextmanager
    async def stream(self, items: Iterable[T] | AsyncIterable[T]) -> AsyncIterator[ObjectReceiveStream[R]]:
        """Start the pool over ``items``; yield the stream of results as they finish."""
        send_in, receive_in = channel[T].open(self.queue_size)
        send_out, receive_out = channel[R].open(self.queue_size)
        signals = (watch_signals([self], grace_period=self.grace_period, on_interrupt=self._interrupted)
                   if self.handle_signals else nullcontext())
        with signals:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._produce, items, send_in)
                async with receive_in, send_out:
                    for _ in range(self.concurrency):
                        tg.start_soon(self._work, receive_in.clone(), send_out.clone())
                try:
                    async with receive_out:
                        yield receive_out
                finally:
                    # The caller is done (or failed): release the workers.
                    self.stop()
                    receive_out.close()


class Stoppable(Protocol):
    """What the signal watcher drives: a ``WorkerPool`` or anything shaped like one."""

    @property
    def in_flight(self) -> int: ...

    def stop(self) -> None: ...

    def abandon(self) -> None: ...


class _Watch:
    """One registration with the watcher: its pools, their grace period and the owner's interrupt callback."""

    def __init__(self, pools: Sequence[Stoppable], grace_period: float, on_interrupt: Callable[[], None]) -> None:
        self.pools = list(pools)
        self.grace_period = grace_period
        self.on_interrupt = on_interrupt
        self._timer: asyncio.TimerHandle | None = None

    @property
    def in_flight(self) -> int:
        return sum(pool.in_flight for pool in self.pools)

    def stop(self, loop: asyncio.AbstractEventLoop) -> None:
        """First signal: take no more work; abandon what is still in flight after the grace period."""
        self.on_interrupt()
        for pool in self.pools:
            pool.stop()
        self._timer = loop.call_later(self.grace_period, self._grace_over)

    def _grace_over(self) -> None:
        log.warning("pool.grace_period_over", extra={"in_flight": self.in_flight})
        self.abandon()

    def abandon(self) -> None:
        self.close()
        for pool in self.pools:
            pool.abandon()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class _SignalWatcher:
    """The process's one SIGINT/SIGTERM handler, shared by every registered pool of the running loop."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.watches: list[_Watch] = []
        self.received = 0
        self._previous = {sig: signal.getsignal(sig) for sig in self.SIGNALS}
        for sig in self.SIGNALS:
            loop.add_signal_handler(sig, self._on_signal, sig)

    def uninstall(self) -> None:
        for sig, previous in self._previous.items():
            self.loop.remove_signal_handler(sig)
            if previous is not None:
                signal.signal(sig, previous)  # whatever was there before us (Python's KeyboardInterrupt by default)

    def join(self, watch: _Watch) -> None:
        """Register ``watch``; a pool that starts after a signal stops (or is abandoned) at once."""
        self.watches.append(watch)
        if self.received:
            watch.stop(self.loop)
        if self.received > 1:
            watch.abandon()

    def _on_signal(self, signum: int) -> None:
        self.received += 1
        fields = {"signal": signal.Signals(signum).name, "in_flight": sum(w.in_flight for w in self.watches)}
        if self.received == 1:
            grace = max((w.grace_period for w in self.watches), default=0.0)
            log.warning("pool.stopping", extra={**fields, "grace_period": grace})
            for watch in list(self.watches):
                watch.stop(self.loop)
        else:
            log.warning("pool.abandon", extra=fields)
            for watch in list(self.watches):
                watch.abandon()


_watcher: _SignalWatcher | None = None  # the process's watcher while any pool is registered


@contextmanager
def watch_signals(
    pools: Sequence[Stoppable],
    *,
    grace_period: float = 30.0,
    on_interrupt: Callable[[], None] = lambda: None,
) -> Iterator[None]:
    """Drive ``pools`` by SIGINT/SIGTERM while the block runs, through the process's one watcher.

    The first signal calls every registration's ``on_interrupt`` and makes all
    their pools stop taking work; in-flight items get ``grace_period`` seconds.
    A second signal, or the end of the grace period, abandons them. Outside the
    main thread (where no signal handler can be installed) or off asyncio, the
    block runs without signal handling.
    """
    global _watcher
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is None or threading.current_thread() is not threading.main_thread():
        log.debug("pool.signals_not_watched", extra={"reason": "not the main thread's asyncio loop"})
        yield
        return
    if _watcher is None or _watcher.loop is not loop:
        _watcher = _SignalWatcher(loop)
    watcher = _watcher
    watch = _Watch(pools, grace_period, on_interrupt)
    watcher.join(watch)
    try:
        yield
    finally:
        watch.close()
        watcher.watches.remove(watch)
        if not watcher.watches and _watcher is watcher:
            watcher.uninstall()
            _watcher = None
