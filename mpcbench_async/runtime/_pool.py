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
"""

from __future__ import annotations

import signal
import threading
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

import anyio
import structlog
from anyio.abc import ObjectReceiveStream, ObjectSendStream

__all__ = ["WorkerPool", "stop_on_signals"]

T = TypeVar("T")
R = TypeVar("R")

log = structlog.get_logger(__name__)


class WorkerPool(Generic[T, R]):
    """Run ``fn`` over items with at most ``concurrency`` in flight."""

    def __init__(
        self,
        fn: Callable[[T], Awaitable[R]],
        *,
        concurrency: int,
        queue_size: int | None = None,
        handle_signals: bool = False,
        grace_period: float = 30.0,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.fn = fn
        self.concurrency = concurrency
        self.queue_size = queue_size if queue_size is not None else concurrency
        self.handle_signals = handle_signals
        self.grace_period = grace_period
        self.interrupted = False
        self.abandoned = False
        self.started = 0
        self.finished = 0
        self._stopping = anyio.Event()
        self._worker_scopes: list[anyio.CancelScope] = []

    @property
    def in_flight(self) -> int:
        return self.started - self.finished

    def stop(self) -> None:
        """Stop taking new items; in-flight items finish. Safe to call repeatedly."""
        self._stopping.set()

    def abandon(self) -> None:
        """Cancel in-flight items now (their results are lost; they rerun on resume)."""
        self.abandoned = True
        self._stopping.set()
        for scope in self._worker_scopes:
            scope.cancel()

    async def _produce(self, items: Iterable[T] | AsyncIterable[T], send: ObjectSendStream[T]) -> None:
        async with send:
            try:
                if isinstance(items, AsyncIterable):
                    async for item in items:
                        if self._stopping.is_set():
                            break
                        await send.send(item)
                else:
                    for item in items:
                        if self._stopping.is_set():
                            break
                        await send.send(item)
            except anyio.BrokenResourceError:
                pass  # every worker has gone: the consumer stopped early

    async def _work(self, receive: ObjectReceiveStream[T], send: ObjectSendStream[R]) -> None:
        scope = anyio.CancelScope()
        self._worker_scopes.append(scope)
        with scope:
            async with receive, send:
                async for item in receive:
                    if self._stopping.is_set():
                        break
                    self.started += 1
                    try:
                        result = await self.fn(item)
                    finally:
                        self.finished += 1
                    try:
                        await send.send(result)
                    except anyio.BrokenResourceError:
                        break

    async def _watch_signals(self) -> None:
        def interrupted() -> None:
            self.interrupted = True

        await stop_on_signals([self], grace_period=self.grace_period, on_interrupt=interrupted)

    @asynccontextmanager
    async def stream(self, items: Iterable[T] | AsyncIterable[T]) -> AsyncIterator[ObjectReceiveStream[R]]:
        """Start the pool over ``items``; yield the stream of results as they finish."""
        send_in, receive_in = anyio.create_memory_object_stream[T](self.queue_size)
        send_out, receive_out = anyio.create_memory_object_stream[R](self.queue_size)
        watch_signals = self.handle_signals and threading.current_thread() is threading.main_thread()
        async with anyio.create_task_group() as tg:
            watcher = anyio.CancelScope()
            if watch_signals:
                tg.start_soon(self._run_in_scope, watcher, self._watch_signals)
            tg.start_soon(self._produce, items, send_in)
            async with receive_in, send_out:
                for _ in range(self.concurrency):
                    tg.start_soon(self._work, receive_in.clone(), send_out.clone())
            try:
                async with receive_out:
                    yield receive_out
            finally:
                # The caller is done (or failed): release workers and the watcher.
                self.stop()
                watcher.cancel()
                receive_out.close()

    @staticmethod
    async def _run_in_scope(scope: anyio.CancelScope, fn: Callable[[], Awaitable[None]]) -> None:
        with scope:
            await fn()


async def stop_on_signals(
    pools: Sequence[WorkerPool[Any, Any]],
    *,
    grace_period: float,
    on_interrupt: Callable[[], None] = lambda: None,
) -> None:
    """Watch SIGINT/SIGTERM for ``pools`` until cancelled.

    The first signal calls ``on_interrupt`` and makes every pool stop taking
    work; in-flight items get ``grace_period`` seconds. A second signal, or the
    end of the grace period, abandons them.
    """

    def abandon() -> None:
        for pool in pools:
            pool.abandon()

    async def after_grace() -> None:
        await anyio.sleep(grace_period)
        log.warning("pool.grace_period_over", in_flight=sum(p.in_flight for p in pools))
        abandon()

    interrupted = False
    async with anyio.create_task_group() as tg:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                name = signal.Signals(signum).name
                in_flight = sum(p.in_flight for p in pools)
                if interrupted:
                    log.warning("pool.abandon", signal=name, in_flight=in_flight)
                    abandon()
                    tg.cancel_scope.cancel()
                    return
                interrupted = True
                log.warning("pool.stopping", signal=name, in_flight=in_flight, grace_period=grace_period)
                on_interrupt()
                for pool in pools:
                    pool.stop()
                tg.start_soon(after_grace)
