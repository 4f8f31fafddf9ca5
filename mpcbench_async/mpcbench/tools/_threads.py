"""The tool pool's threads: a call handed to a worker and its outcome handed back, at the least cost per call.

``ToolPool`` used ``loop.run_in_executor`` on a ``ThreadPoolExecutor``, wrapped in ``asyncio.shield``, with a
``threading.Event`` as each call's stop flag. Per call that built two ``threading.Condition`` (the event's and
the concurrent future's, about 5 µs each), a concurrent future chained to an asyncio one both ways and a
shield future: several times the cost of the hand-off itself, with a tool call or three per LLM call
(issue 31). Here a call is one ``Job`` on a queue the threads share; its outcome comes back with one
``call_soon_threadsafe`` onto the caller's loop, into one asyncio future; its stop flag is an attribute.

Threads start as calls need them, at most ``size``; they are daemons, and end when their ``ToolThreads`` is
closed — by ``close()`` or when the pool that owns it is collected (``weakref.finalize`` in ``ToolPool``).

Cheaper still is no hand-off at all. A built-in tool call or the checks of a normal answer take tens to hundreds
of microseconds of CPU, while handing one to a thread and back cost the runner about as much again, on both sides
(waking a thread, the interpreter lock passed back and forth, ``call_soon_threadsafe``; issue 31), and every
thread that wakes slows the event loop's client. ``run_inline`` runs such a call on the event loop first, under a
short budget (``INLINE_BUDGET_S``): code that reaches ``checkpoint()`` in every loop its input can make long
raises a private stop at the first checkpoint past the budget, the partial work is dropped, and the caller hands
the same call to a thread as before (``inline_or_thread``). A call may only be run this way when it has no effect
but its result (a rerun must be the same call), and only by code known to reach its checkpoints: anything that may
block or sleep would hold the loop for its whole length. The price of a pathological call is the budget once, on
the loop, before it moves to a thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any, Final, TypeVar

import anyio

from ..._checkpoint import run_checked

T = TypeVar("T")

__all__ = ["INLINE_BUDGET_S", "MISSED", "Job", "Missed", "ToolThreads", "call_in_thread", "inline_or_thread",
           "run_inline"]

INLINE_BUDGET_S = 0.002
"""How long a call may run on the event loop before it moves to a thread, seconds. A normal tool call or the checks
of a normal answer take well under it (tens to hundreds of microseconds), so they finish inline and cost no
hand-off; a pathological one holds the loop this long once — the wait of one LLM reply's parse in a busy sweep,
not enough to delay the other units' requests noticeably — and is then run again in a thread."""


class Job:
    """One call for a worker thread: ``run(job)`` in ``context``, its outcome to ``future`` on ``loop``.

    ``stopped`` is set (on the loop's thread) when the caller was cancelled: the running call looks at it at
    its checkpoints. ``finished`` is set on the loop's thread when the outcome has been handed back, and
    ``on_done()`` called there at that moment (the pool frees the call's worker slot then, not when the caller
    next runs: a call that has ended no longer holds a worker while the loop is busy elsewhere).
    """

    __slots__ = ("context", "finished", "future", "loop", "on_done", "run", "stopped")

    def __init__(self, run: Callable[[Job], Any], loop: asyncio.AbstractEventLoop,
                 on_done: Callable[[], None]) -> None:
        self.run, self.loop, self.on_done = run, loop, on_done
        self.context = contextvars.copy_context()
        self.future: asyncio.Future[Any] = loop.create_future()
        self.stopped = self.finished = False


def _settle(job: Job, result: Any, error: BaseException | None) -> None:
    """On the loop's thread: the call's outcome into its future (unless the caller stopped waiting on it)."""
    job.finished = True
    job.on_done()
    future = job.future
    if future.done():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


def _serve(threads: ToolThreads) -> None:
    jobs, lock = threads.jobs, threads.lock
    while (job := jobs.get()) is not None:
        result, error = None, None
        try:
            result = job.context.run(job.run, job)
        except BaseException as exc:  # noqa: BLE001 — every outcome goes back to the caller, stops included
            error = exc
        try:
            job.loop.call_soon_threadsafe(_settle, job, result, error)
        except RuntimeError:
            pass  # the caller's loop is closed: nobody waits for this outcome
        del job, result, error  # a finished call's data is not kept alive while the thread waits
        with lock:
            threads.idle += 1


class ToolThreads:
    """Up to ``size`` daemon threads serving one queue of ``Job``s (started as calls need them)."""

    def __init__(self, size: int, name: str = "mpcbench-tool") -> None:
        self.size, self.name = size, name
        self.jobs: SimpleQueue[Job | None] = SimpleQueue()
        self.lock = threading.Lock()
        self.idle = self.started = 0
        self.submitted = 0
        """Jobs handed to the threads so far (tests count the hand-offs a sweep makes)."""
        self.closed = False

    def __reduce__(self) -> tuple[type[ToolThreads], tuple[int, str]]:
        """Pickled as its size and name: a copy in another process (a Ray worker's stage) starts its own threads
        as its calls need them; queued jobs and running threads belong to this process alone."""
        return ToolThreads, (self.size, self.name)

    def submit(self, job: Job) -> None:
        """Queue ``job``; start a thread for it when none is idle and fewer than ``size`` run."""
        with self.lock:
            if self.closed:
                raise RuntimeError("the tool pool's threads are closed")
            self.submitted += 1
            index = -1
            if self.idle:
                self.idle -= 1  # that thread takes this job
            elif self.started < self.size:
                index, self.started = self.started, self.started + 1
        if index >= 0:
            threading.Thread(target=_serve, args=(self,), name=f"{self.name}_{index}", daemon=True).start()
        self.jobs.put(job)

    def close(self) -> None:
        """End every thread once the jobs queued before have run."""
        with self.lock:
            self.closed = True
            started = self.started
        for _ in range(started):
            self.jobs.put(None)


def _nothing() -> None:
    pass


async def call_in_thread(threads: ToolThreads, fn: Callable[[], T]) -> T:
    """``fn()`` in one of ``threads``, waited for to its end even by a cancelled caller (which then raises its
    cancellation), as ``anyio.to_thread.run_sync`` does — at a tenth of its Python calls: no backend look-up,
    no capacity limiter, no task tracking (the checks of each finished run, issue 31)."""
    loop = asyncio.get_running_loop()
    job = Job(lambda _job: fn(), loop, _nothing)
    threads.submit(job)
    try:
        return await job.future
    except BaseException:
        if not job.finished:  # cancelled while fn runs: wait for its end, its outcome dropped
            job.future = loop.create_future()
            with anyio.CancelScope(shield=True):
                await asyncio.wait([job.future])
            job.future.exception()  # retrieved: nobody wants it now
        raise


class _OverBudget(BaseException):  # noqa: N818 — a stop signal, not an error
    """Raised at the first checkpoint of an inline call past its budget (a ``BaseException``: a tool's own ``except
    Exception`` lets it through)."""


class Missed:
    """What ``run_inline`` returns for a call that did not finish within its budget (``MISSED``, its one value)."""

    __slots__ = ()


MISSED: Final = Missed()


def run_inline(fn: Callable[[], T], budget_s: float, clock: Callable[[], float]) -> T | Missed:
    """``fn()`` here (on the event loop), or ``MISSED`` when it reached a checkpoint after ``budget_s`` on ``clock``.

    ``fn`` must have no effect but its result, and reach ``checkpoint()`` in every loop its input can make long: a
    missed call's partial work is dropped (freed as it unwinds) and the caller runs it again elsewhere. Whatever
    else ``fn`` raises is raised.
    """
    deadline = clock() + budget_s

    def check() -> None:
        if clock() > deadline:
            raise _OverBudget

    try:
        return run_checked(check, fn)
    except _OverBudget:
        pass
    return MISSED  # outside the handler: the stopped frames and their partial results are freed now


async def inline_or_thread(threads: ToolThreads, fn: Callable[[], T], budget_s: float = INLINE_BUDGET_S,
                           clock: Callable[[], float] = time.perf_counter) -> T:
    """``fn()`` inline under ``budget_s`` (``run_inline``), else in one of ``threads`` as ``call_in_thread`` runs it,
    from its start and with no limit."""
    result = run_inline(fn, budget_s, clock)
    return await call_in_thread(threads, fn) if isinstance(result, Missed) else result
