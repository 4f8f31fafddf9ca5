"""Per-model request limits: concurrency (adaptive), requests and tokens per minute.

``ModelLimiter.slot(cost)`` is the one entry point: it waits for a concurrency
slot, then for room in the RPM window, then for room in the TPM window, and
yields a ``Ticket``. Windows are *sliding*: a limiter set to R per minute never
lets more than R units start in any 60-second span (a token bucket would allow
up to 2R across a refill boundary, which is exactly what earns 429s).

Windows are also paced (``LimitSettings.pacing``, on by default): the budget
flows evenly through the minute with bursts of at most 1/20 of it. Providers
that meter per second hold less than that (a second's worth): ``observe`` reads
the ``x-ratelimit-*`` headers of each reply, which tell the provider's bucket
size, and caps the burst at half of it; until the first reply the pacing admits
one at a time (a slow start), so the first burst cannot overrun a bucket not yet
known. A reply without those headers restores the configured burst.

Concurrency is AIMD: a 429 episode halves the cap (429s from requests started
before the last decrease belong to the same episode and are ignored); every
cap's worth of successes while the cap is saturated adds 1, up to the
configured maximum.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

import anyio
import msgspec

from ._clock import Clock, MonotonicClock
from ._limit_headers import BucketReading, read_limit_headers

__all__ = ["AdaptiveConcurrency", "LimitSettings", "Limiter", "ModelLimiter", "SlidingWindow", "Ticket"]


class LimitSettings(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Limits for one model; ``None`` means unlimited."""

    max_concurrency: int = 32
    rpm: int | None = None
    tpm: int | None = None
    adaptive: bool = True
    pacing: bool = True


class SlidingWindow:
    """At most ``capacity`` units may be acquired within any ``window`` seconds.

    With ``burst`` set, admissions are also paced (GCRA): units flow at
    ``capacity / window`` per second with at most ``burst`` back to back, so a
    minute's budget is spread over the minute instead of spent in one burst at
    its start (which providers with smaller buckets answer with 429s). Waiters
    are served first-come first-served (one lock), so a large request is not
    starved by a stream of small ones. ``fit`` adapts the burst (up to the
    configured one, ``max_burst``) to the provider's bucket as a reply reports it.
    """

    def __init__(self, capacity: int, *, window: float = 60.0, clock: Clock | None = None,
                 burst: int | None = None) -> None:
        if capacity <= 0:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.window = window
        self.burst = self.max_burst = burst
        self._emission = window / capacity
        self._tat = float("-inf")  # GCRA: when the pacing bucket is next empty
        self._clock = clock or MonotonicClock()
        self._entries: deque[tuple[float, int]] = deque()
        self._used = 0
        self._lock = anyio.Lock()

    def _expire(self, now: float) -> None:
        horizon = now - self.window
        while self._entries and self._entries[0][0] <= horizon:
            _, cost = self._entries.popleft()
            self._used -= cost

    def _wait_needed(self, cost: int, now: float) -> float:
        """Seconds until ``cost`` fits, given the entries currently in the window."""
        excess = self._used + cost - self.capacity
        for started, entry_cost in self._entries:
            excess -= entry_cost
            if excess <= 0:
                return started + self.window - now
        return 0.0

    def _pace_wait(self, cost: int, now: float) -> float:
        if self.burst is None:
            return 0.0
        start = max(self._tat, now)
        return start + cost * self._emission - max(self.burst, cost) * self._emission - now

    def fit(self, reading: BucketReading) -> None:
        """Pace to the provider's bucket as one reply reported it (no-op when pacing is off).

        The burst becomes at most half the bucket: the other half absorbs admissions
        that reach the provider bunched closer than they left (event-loop and
        network jitter). The pacing credit becomes at most what the provider has
        left, so a bucket drained by someone else holds the next admissions until it
        has refilled enough for them. A per-minute limit in the reply below the
        configured one paces at the provider's rate (a tier lowered, a shared key);
        one above it never raises the configured rate.
        """
        if self.max_burst is None:
            return
        if reading.per_minute is not None:
            self._pace(max(self.window / self.capacity, 60.0 / reading.per_minute))
        size = reading.size(self.capacity * 60.0 / self.window)
        self.burst = max(1, min(self.max_burst, int(size / 2)))
        short = self.burst - reading.remaining
        if short > 0:
            self._tat = max(self._tat, self._clock.now() + short * self._emission)

    def _pace(self, emission: float) -> None:
        """Pace at ``emission`` s per unit from now on; the admissions already paced ahead of now are re-spaced
        at it too (a slower pace read once must not hold calls after a faster one is read again)."""
        now = self._clock.now()
        if self._tat > now:
            self._tat = now + (self._tat - now) * emission / self._emission
        self._emission = emission

    async def acquire(self, cost: int = 1) -> float:
        """Wait until ``cost`` units fit in the window (and the pace), take them, return seconds waited.

        A cost above the capacity is clamped to it: such a request can never fit,
        and the server, not this limiter, should be the one to reject it.
        """
        cost = min(max(cost, 0), self.capacity)
        start = self._clock.now()
        async with self._lock:
            while True:
                now = self._clock.now()
                self._expire(now)
                fits = self._used + cost <= self.capacity
                pace = self._pace_wait(cost, now)
                if fits and pace <= 1e-9:
                    self._entries.append((now, cost))
                    self._used += cost
                    self._tat = max(self._tat, now) + cost * self._emission
                    return now - start
                await self._clock.sleep(max(pace, 0.0 if fits else self._wait_needed(cost, now)))


class AdaptiveConcurrency:
    """A concurrency cap that shrinks on rate limiting and grows back when saturated."""

    def __init__(
        self,
        maximum: int,
        *,
        minimum: int = 1,
        decrease_factor: float = 0.5,
        adaptive: bool = True,
        clock: Clock | None = None,
    ) -> None:
        if maximum < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {maximum}")
        self.maximum = maximum
        self.minimum = min(minimum, maximum)
        self.decrease_factor = decrease_factor
        self.adaptive = adaptive
        self.limit = float(maximum)
        self.in_flight = 0
        self.decreases = 0
        self._clock = clock or MonotonicClock()
        self._last_decrease = float("-inf")
        self._saturated_successes = 0
        self._changed = anyio.Condition()

    @property
    def cap(self) -> int:
        """The number of requests currently allowed in flight."""
        return max(self.minimum, int(self.limit))

    async def acquire(self) -> None:
        async with self._changed:
            while self.in_flight >= self.cap:
                await self._changed.wait()
            self.in_flight += 1

    async def release(self) -> None:
        async with self._changed:
            self.in_flight -= 1
            self._changed.notify()

    def on_rate_limited(self, started_at: float) -> None:
        """Record a 429 for a request started at ``started_at``; shrink once per episode."""
        if not self.adaptive or started_at < self._last_decrease:
            return
        self.limit = max(float(self.minimum), float(int(self.limit * self.decrease_factor)))
        self._last_decrease = self._clock.now()
        self._saturated_successes = 0
        self.decreases += 1

    async def on_success(self) -> None:
        """Additive increase: +1 to the cap after a cap's worth of successes while saturated."""
        if not self.adaptive or self.limit >= self.maximum or self.in_flight < self.cap:
            return
        self._saturated_successes += 1
        if self._saturated_successes < self.cap:
            return
        self._saturated_successes = 0
        self.limit = min(float(self.maximum), float(self.cap + 1))
        async with self._changed:
            self._changed.notify()


class Ticket(msgspec.Struct, kw_only=True):
    """One admitted request: when it started and how long it queued."""

    started_at: float
    queued_s: float


class Limiter(Protocol):
    """What ``LLMClient`` needs of a model's limiter: ``ModelLimiter``, or a leased share of a global limit."""

    def slot(self, token_cost: int = 0) -> AbstractAsyncContextManager[Ticket]:
        """Hold one admitted request (concurrency, RPM, TPM) for the duration of the block."""
        ...

    def on_rate_limited(self, ticket: Ticket) -> None:
        """The request admitted with ``ticket`` was answered 429."""
        ...

    async def on_success(self) -> None:
        """A request succeeded (adaptive concurrency may grow)."""
        ...

    def observe(self, headers: Mapping[str, str] | None) -> None:
        """A reply (200 or 429) arrived with these headers (``None``: it had none); its ``x-ratelimit-*`` ones count."""
        ...


class ModelLimiter:
    """Concurrency + RPM + TPM limits for one model, in that order of admission.

    Paced windows start with a burst of 1 (the slow start) until the first reply
    is observed: its ``x-ratelimit-*`` headers size the burst (``SlidingWindow.fit``),
    or, when it has none, the configured burst applies from then on.
    """

    def __init__(self, settings: LimitSettings, *, clock: Clock | None = None) -> None:
        self.settings = settings
        self._clock = clock or MonotonicClock()
        self.concurrency = AdaptiveConcurrency(
            settings.max_concurrency, adaptive=settings.adaptive, clock=self._clock
        )
        self.requests = self._window(settings.rpm) if settings.rpm else None
        self.tokens = self._window(settings.tpm) if settings.tpm else None
        self._slow_start = settings.pacing

    def _window(self, capacity: int) -> SlidingWindow:
        """A sliding window, paced with a burst of 1/20 of the budget unless pacing is off (1 until a reply)."""
        if not self.settings.pacing:
            return SlidingWindow(capacity, clock=self._clock)
        window = SlidingWindow(capacity, clock=self._clock, burst=max(1, capacity // 20))
        window.burst = 1
        return window

    @asynccontextmanager
    async def slot(self, token_cost: int = 0) -> AsyncIterator[Ticket]:
        """Hold one admitted request for the duration of the block."""
        start = self._clock.now()
        await self.concurrency.acquire()
        try:
            if self.requests is not None:
                await self.requests.acquire(1)
            if self.tokens is not None and token_cost:
                await self.tokens.acquire(token_cost)
            now = self._clock.now()
            yield Ticket(started_at=now, queued_s=now - start)
        finally:
            with anyio.CancelScope(shield=True):
                await self.concurrency.release()

    def on_rate_limited(self, ticket: Ticket) -> None:
        self._end_slow_start()
        self.concurrency.on_rate_limited(ticket.started_at)

    async def on_success(self) -> None:
        self._end_slow_start()
        await self.concurrency.on_success()

    def observe(self, headers: Mapping[str, str] | None) -> None:
        """Fit each paced window to the provider's bucket of its kind, as this reply reports it."""
        if not self.settings.pacing or (self.requests is None and self.tokens is None):
            self._slow_start = False  # nothing paced: the headers have nothing to size (the common case: no rpm/tpm)
            return
        readings = read_limit_headers(headers) if headers else {}
        for kind, window in (("requests", self.requests), ("tokens", self.tokens)):
            reading = readings.get(kind)
            if window is not None and reading is not None:
                window.fit(reading)
            elif window is not None:  # no reading of this kind: the configured burst (a provider's limit stays)
                window.burst = window.max_burst
        self._slow_start = False

    def _end_slow_start(self) -> None:
        """A reply arrived that was not observed (a client that does not pass headers): the configured burst."""
        if self._slow_start:
            self.observe(None)
