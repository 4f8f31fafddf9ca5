"""Injectable clocks, so limiters and retries can be tested on virtual time."""

from __future__ import annotations

import time
from typing import Protocol

import anyio
import anyio.lowlevel

__all__ = ["Clock", "FakeClock", "MonotonicClock"]


class Clock(Protocol):
    """A source of monotonic time and a way to wait on it."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class MonotonicClock:
    """Real time: ``time.monotonic`` and ``anyio.sleep``."""

    # ``time.monotonic`` itself: a clock read is a C call, no Python frame (the limiter reads it several times a
    # request, issue 31)
    now = staticmethod(time.monotonic)

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(max(0.0, seconds))


class FakeClock:
    """Virtual time for tests: ``sleep`` advances the clock instead of waiting.

    Each sleep still yields to the event loop once, so other tasks interleave.
    ``slept`` records every requested wait in order.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self.slept: list[float] = []

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds

    async def sleep(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        self.slept.append(seconds)
        self._now += seconds
        await anyio.lowlevel.checkpoint()
