"""Attempt deadlines without a timer per attempt: one watchdog timer per event loop for every attempt in flight.

Each attempt of a call is cut at its deadline (what is left of ``timeouts.call_deadline_s``, or the legacy
per-attempt ``timeout_s``). A cancel scope with a deadline per attempt (``anyio.CancelScope(deadline=)``) costs
about twenty Python calls and a timer handle on the event loop (scheduled, pushed on the loop's heap, cancelled)
on every request — the largest part of the client's own cost per call after HTTP itself (issue 31,
bench/RESULTS.md). Here the attempts in flight wait in one heap by deadline, and one loop timer is armed at the
earliest: a deadline that passes cancels its attempt's task (``task.cancel()``, as ``asyncio.timeout`` does, so
an outer cancellation still wins: ``Attempt.cut``), while an attempt that ends only marks its entry done. Done
entries leave the heap when they reach its top or in a compaction once they are half of it, so the heap holds
about the attempts in flight, whatever the deadlines' length.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from heapq import heapify, heappop, heappush

import msgspec

__all__ = ["Attempt", "Deadlines", "loop_clock"]

_COMPACT_AT = 64  # done entries tolerated in the heap before it is rebuilt (when they are half of it too)


def loop_clock(loop: asyncio.AbstractEventLoop) -> Callable[[], float]:
    """``loop.time`` as a function that costs no Python call: asyncio's own loop reads ``time.monotonic``."""
    return time.monotonic if type(loop).time is asyncio.BaseEventLoop.time else loop.time


class Attempt(msgspec.Struct):
    """One attempt in flight: its task, whether it ended, whether its deadline cancelled it.

    A msgspec struct so making one per attempt runs no Python ``__init__`` (``tests/llm/test_call_costs``).
    """

    task: asyncio.Task[object]
    cancelling: int  # the task's cancellation requests when the attempt started: more than that at the cut = others'
    done: bool = False
    fired: bool = False

    def cut(self) -> bool:
        """After the attempt was cancelled: whether its deadline alone did it (then the cancellation is withdrawn and
        the caller raises the deadline's error); ``False``: someone else cancelled the task too, let it propagate."""
        return self.fired and self.task.uncancel() <= self.cancelling


class Deadlines:
    """The attempts in flight on one event loop, by deadline (loop time), with one timer at the earliest."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.now = loop_clock(loop)  # the loop's time
        self._heap: list[tuple[float, int, Attempt]] = []
        self._count = 0  # a tie-breaker: entries with the same deadline keep their order, attempts are never compared
        self._done = 0  # entries in the heap whose attempt ended
        self._timer: asyncio.TimerHandle | None = None
        self._armed = math.inf  # when the timer fires

    def watch(self, when: float, task: asyncio.Task[object]) -> Attempt:
        """Cut ``task``'s attempt at loop time ``when`` unless ``end`` comes first."""
        attempt = Attempt(task, task.cancelling())
        self._count += 1
        heappush(self._heap, (when, self._count, attempt))
        if when < self._armed:
            self._arm(when)
        return attempt

    def end(self, attempt: Attempt) -> None:
        """The attempt is over (replied, failed or cut): its entry no longer counts."""
        attempt.done = True
        if not attempt.fired:  # a fired entry has left the heap already
            self._done += 1
            if self._done > _COMPACT_AT and 2 * self._done > len(self._heap):
                self._heap = [entry for entry in self._heap if not entry[2].done]
                heapify(self._heap)
                self._done = 0

    def _arm(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._armed = when
        self._timer = self.loop.call_at(when, self._expire)

    def _expire(self) -> None:
        """The timer fired: cancel every attempt whose deadline passed, re-arm at the next live one."""
        due = max(self._armed, self.now())  # the loop runs a timer up to its clock resolution early
        self._timer, self._armed = None, math.inf
        heap = self._heap
        while heap:
            when, _, attempt = heap[0]
            if attempt.done:
                heappop(heap)
                self._done -= 1
            elif when <= due:
                heappop(heap)
                attempt.fired = True
                attempt.task.cancel()
            else:
                self._arm(when)
                break
