"""Per-model request limits, paced by every signal there is: configuration, rate-limit headers, 429s.

``ModelLimiter.slot(cost)`` is the one entry point: it waits for a concurrency
slot, then for room in the requests window, in the tokens window and in the
adaptive rate, and yields a ``Ticket``. What paces a model, strongest first:

1. **Headers.** Every reply (200 or 429) is shown to ``observe``; its
   ``x-ratelimit-*`` (OpenAI) or ``anthropic-ratelimit-*`` headers tell the
   provider's per-minute limit, what is left and when the bucket is full again
   (``_limit_headers``). They pace the model whether or not ``rpm``/``tpm`` is
   configured: a kind with no configured window gets one *learned* from the
   headers, at the provider's rate. The burst is half the bucket they report (a
   provider metering per second holds only a second's worth), and a bucket left
   nearly empty holds the next admissions until it has refilled.
2. **Configuration.** ``rpm``/``tpm`` are sliding windows (never more than the
   budget in any 60 s), paced (``LimitSettings.pacing``, on by default) so the
   budget flows evenly through the minute. Until a reply tells the bucket, the
   burst is half of ``bucket_s`` seconds' worth (default 1: a per-second bucket,
   the finest providers document; never more than 1/20 of the minute), so a
   provider metering 20 per second is never sent a burst of 60.
3. **429s alone.** A 429 the headers do not explain (none sent, or none shows an
   empty bucket) drives ``AdaptiveRate``: multiplicative decrease per 429
   episode, additive increase per success while the pace binds (AIMD).

Until the first reply arrives, a paced window admits one request per emission
interval (slow start), and a model with nothing configured sends one request
and holds the rest until a reply (for at most ``SLOW_START_S``), so that a
first burst cannot overrun a bucket not yet known.

Concurrency is AIMD too: a 429 episode halves the cap when the cap was what
bound (as many requests being sent as it allows; otherwise the rate adapts,
since halving a cap that is not reached only keeps it from growing back) —
429s from requests started before the last decrease belong to the same episode
and are ignored; every cap's worth of successes while the cap is saturated adds
1, up to the configured maximum.

No admission yields to the event loop unless it has to wait: the concurrency
cap is a counter with a FIFO of waiters, the windows' locks acquire without a
checkpoint when free (``anyio.Lock(fast_acquire=True)``), so an uncontended
request passes the limiter in the same loop iteration (no lock convoy).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Annotated, Protocol

import anyio
import msgspec

from ._clock import Clock, MonotonicClock
from ._limit_headers import BucketReading, read_limit_headers

__all__ = ["AdaptiveConcurrency", "AdaptiveRate", "LimitSettings", "Limiter", "ModelLimiter", "SlidingWindow",
           "Ticket"]

SLOW_START_S = 1.0  # the longest a model with nothing configured holds requests waiting for its first reply


class LimitSettings(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Limits for one model; ``None`` means unlimited.

    ``bucket_s``: the seconds of the configured rate the provider's bucket is assumed to hold until a
    reply's headers tell (1: a provider metering per second; 60: per minute). The configured burst is
    half of it.
    """

    max_concurrency: int = 32
    rpm: int | None = None
    tpm: int | None = None
    adaptive: bool = True
    pacing: bool = True
    bucket_s: Annotated[float, msgspec.Meta(gt=0)] = 1.0

    def burst(self, per_minute: int) -> int:
        """The burst for a configured window of ``per_minute``: half the assumed bucket, at most 1/20 of it."""
        return max(1, min(per_minute // 20, int(per_minute / 60.0 * self.bucket_s / 2)))


class SlidingWindow:
    """At most ``capacity`` units may be acquired within any ``window`` seconds.

    With ``burst`` set, admissions are also paced (GCRA): units flow at
    ``capacity / window`` per second with at most ``burst`` back to back, so a
    minute's budget is spread over the minute instead of spent in one burst at
    its start (which providers with smaller buckets answer with 429s). Waiters
    are served first-come first-served (one lock), so a large request is not
    starved by a stream of small ones. ``fit`` sizes the burst to the provider's
    bucket as a reply reports it; ``max_burst`` is the configured one, restored by a
    reply without headers. A ``learned`` window (no configured limit) takes its
    capacity from the headers and follows the provider's limit when it changes.
    """

    def __init__(self, capacity: int, *, window: float = 60.0, clock: Clock | None = None,
                 burst: int | None = None, learned: bool = False) -> None:
        if capacity <= 0:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.window = window
        self.burst = self.max_burst = burst
        self.learned = learned
        self._emission = window / capacity
        self._tat = float("-inf")  # GCRA: when the pacing bucket is next empty
        self._clock = clock or MonotonicClock()
        self._entries: deque[tuple[float, int]] = deque()
        self._used = 0
        self._lock = anyio.Lock(fast_acquire=True)  # a free lock is taken without yielding to the loop

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

        The burst becomes half the bucket: the other half absorbs admissions that
        reach the provider bunched closer than they left (event-loop and network
        jitter). The pacing credit becomes at most what the provider has left, so a
        bucket drained by someone else holds the next admissions until it has
        refilled enough for them. A per-minute limit in the reply below the
        configured one paces at the provider's rate (a tier lowered, a shared key);
        one above it never raises the configured rate. A learned window takes the
        reply's limit as it is, higher or lower.
        """
        if self.max_burst is None:
            return
        if reading.per_minute is not None:
            provider = 60.0 / reading.per_minute
            if self.learned:
                self.capacity = max(1, int(reading.per_minute * self.window / 60.0))
                self._pace(provider)
            else:
                self._pace(max(self.window / self.capacity, provider))
        size = reading.size(self.capacity * 60.0 / self.window)
        self.burst = max(1, int(size / 2))
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
                cost = min(cost, self.capacity)  # a learned capacity may have shrunk while this waited
                fits = self._used + cost <= self.capacity
                pace = self._pace_wait(cost, now)
                if fits and pace <= 1e-9:
                    self._entries.append((now, cost))
                    self._used += cost
                    self._tat = max(self._tat, now) + cost * self._emission
                    return now - start
                await self._clock.sleep(max(pace, 0.0 if fits else self._wait_needed(cost, now)))


class AdaptiveRate:
    """A request rate learned from 429s alone (AIMD), for providers that say nothing else.

    Off (no pacing at all) until a 429 arrives. The first sets the rate to half
    the successes of the last second (what the provider let through); each later
    429 episode multiplies it by ``decrease`` (429s from requests started before
    the last decrease belong to the same episode). Each success while the pace
    binds (a request waited for it within the last second) adds
    ``growth × max(ceiling, rate) / rate``: the rate climbs by ``growth × ceiling``
    per second (``ceiling``: the rate the last decrease cut), additively up to
    where the 429s began and faster beyond it. When the first 429 came with
    fewer than ``SLOW_START_SUCCESSES`` successes in the last second to estimate
    from (e.g. a key another client drained), the rate starts at half a request
    a second and doubles every second the pace binds, until the next 429.
    Admissions are paced (GCRA) with a burst of ``BURST_S`` seconds' worth;
    waiters are served in order (one lock).
    """

    BURST_S = 0.25
    SLOW_START_SUCCESSES = 4

    def __init__(self, clock: Clock | None = None, *, decrease: float = 0.7, growth: float = 0.1,
                 minimum: float = 1 / 60) -> None:
        self.rate: float | None = None
        self.decrease = decrease
        self.growth = growth
        self.minimum = minimum
        self.decreases = 0
        self.ceiling = 0.0
        self._doubling = False
        self._clock = clock or MonotonicClock()
        self._tat = float("-inf")
        self._last_decrease = float("-inf")
        self._last_wait = float("-inf")
        self._waiting = 0
        self._second = 0  # successes counted per whole second while off: this second's and the last one's
        self._this_second = 0
        self._last_second = 0
        self._lock = anyio.Lock(fast_acquire=True)

    @property
    def burst(self) -> int:
        """Admissions allowed back to back at the current rate."""
        return max(1, int((self.rate or 0.0) * self.BURST_S))

    def _recent_successes(self, now: float) -> float:
        """Successes within the last second, from the per-second counts."""
        second = math.floor(now)
        if second != self._second:
            return self._this_second * (1.0 - (now - second)) if second == self._second + 1 else 0.0
        return self._this_second + self._last_second * (1.0 - (now - second))

    async def acquire(self) -> None:
        """Wait for the pace (at once when off)."""
        if self.rate is None:
            return
        async with self._lock:
            waited = False
            while (rate := self.rate) is not None:
                now = self._clock.now()
                emission = 1.0 / rate
                wait = max(self._tat, now) - now - (self.burst - 1) * emission
                if wait <= 1e-9:
                    self._tat = max(self._tat, now) + emission
                    if waited:
                        self._last_wait = now  # admitted by the pace, not at once: it binds
                    return
                waited = True
                self._waiting += 1
                try:
                    await self._clock.sleep(wait)
                finally:
                    self._waiting -= 1

    def on_success(self) -> None:
        now = self._clock.now()
        rate = self.rate
        if rate is None:
            second = math.floor(now)
            if second != self._second:
                self._last_second = self._this_second if second == self._second + 1 else 0
                self._this_second = 0
                self._second = second
            self._this_second += 1
        elif self._waiting or now - self._last_wait < 1.0:
            step = math.log(2) * rate if self._doubling else self.growth * max(self.ceiling, rate)
            self.rate = rate + step / rate

    def on_rate_limited(self, started_at: float) -> None:
        """A 429 the headers do not explain, for a request started at ``started_at``: decrease once per episode."""
        if started_at < self._last_decrease:
            return
        now = self._clock.now()
        if self.rate is None:
            successes = self._recent_successes(now)
            self._doubling = successes < self.SLOW_START_SUCCESSES
            self.ceiling = max(self.minimum, successes, 1.0)
            self.rate = max(self.minimum, self.ceiling / 2)
        else:
            self._doubling = False
            self.ceiling = self.rate
            self.rate = max(self.minimum, self.rate * self.decrease)
        # No burst credit: the provider's bucket is empty now, so the next admission waits one emission interval.
        self._tat = max(self._tat, now + self.burst / self.rate)
        self._last_decrease = now
        self.decreases += 1


class AdaptiveConcurrency:
    """A concurrency cap that shrinks on rate limiting and grows back when saturated.

    A counter with a FIFO of waiters: taking a free slot and giving one back never yield to the event loop.
    """

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
        self._waiters: deque[anyio.Event] = deque()

    @property
    def cap(self) -> int:
        """The number of requests currently allowed in flight."""
        return max(self.minimum, int(self.limit))

    def try_acquire(self) -> bool:
        """Take a free slot if there is one and nobody waits for it (never yields); ``False`` otherwise."""
        if self.in_flight < self.cap and not self._waiters:
            self.in_flight += 1
            return True
        return False

    async def acquire(self) -> None:
        if self.try_acquire():
            return
        granted = anyio.Event()
        self._waiters.append(granted)
        try:
            await granted.wait()
        except BaseException:
            if granted.is_set():  # granted as it was cancelled: pass the slot on
                self.release_nowait()
            else:
                self._waiters.remove(granted)
            raise

    def release_nowait(self) -> None:
        self.in_flight -= 1
        self._admit()

    async def release(self) -> None:
        self.release_nowait()

    def _admit(self) -> None:
        """Hand free slots to the waiters, oldest first (the slot is counted for them before they wake)."""
        while self._waiters and self.in_flight < self.cap:
            self.in_flight += 1
            self._waiters.popleft().set()

    def on_rate_limited(self, started_at: float, *, busy: int | None = None) -> None:
        """Record a 429 for a request started at ``started_at``; shrink once per episode.

        ``busy``: how many requests were being sent (past every other limit) when it came; the cap shrinks
        only when it was what bound them (``busy`` at least the cap; ``None``: assume it was).
        """
        if not self.adaptive or started_at < self._last_decrease or (busy is not None and busy < self.cap):
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
        self._admit()


class _Slot:
    """``ModelLimiter.slot``: a class, not an ``asynccontextmanager`` — no generator to drive on every call."""

    __slots__ = ("_limiter", "_cost", "_probe", "_sending")

    def __init__(self, limiter: ModelLimiter, token_cost: int) -> None:
        self._limiter = limiter
        self._cost = token_cost
        self._probe = self._sending = False

    async def __aenter__(self) -> Ticket:
        limiter, cost = self._limiter, self._cost
        start = limiter._clock.now()
        await limiter.concurrency.acquire()
        try:
            if limiter._probing:
                self._probe = await limiter._first_reply()
            if limiter.requests is not None:
                await limiter.requests.acquire(1)
            if limiter.tokens is not None and cost:
                await limiter.tokens.acquire(cost)
            if limiter.rate is not None and limiter.rate.rate is not None:
                await limiter.rate.acquire()
        except BaseException:
            self._release()
            raise
        now = limiter._clock.now()
        limiter._sending += 1
        self._sending = True
        return Ticket(started_at=now, queued_s=now - start, token_cost=cost)

    async def __aexit__(self, *_exc: object) -> None:
        self._release()

    def _release(self) -> None:
        limiter = self._limiter
        if self._sending:
            limiter._sending -= 1
        if self._probe:
            limiter._probe_busy = False
            limiter._wake_probe_waiters()
        limiter.concurrency.release_nowait()


class Ticket(msgspec.Struct, kw_only=True):
    """One admitted request: when it started, how long it queued, and the token cost it was admitted with."""

    started_at: float
    queued_s: float
    token_cost: int = 0


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
        """A reply (200 or 429) arrived with these headers (``None``: it had none); its rate-limit ones count."""
        ...


class ModelLimiter:
    """Concurrency + requests + tokens + adaptive rate for one model, in that order of admission.

    ``requests``/``tokens`` are the configured windows, or the ones learned from
    the headers (``None`` until either exists); ``rate`` is the AIMD rate (``None``
    when ``adaptive`` or ``pacing`` is off). Paced windows start with a burst of 1
    (the slow start) until the first reply is observed: its headers size the burst
    (``SlidingWindow.fit``), or, when it has none, the configured burst applies from
    then on.
    """

    def __init__(self, settings: LimitSettings, *, clock: Clock | None = None) -> None:
        self.settings = settings
        self._clock = clock or MonotonicClock()
        self.concurrency = AdaptiveConcurrency(
            settings.max_concurrency, adaptive=settings.adaptive, clock=self._clock
        )
        self.requests = self._window(settings.rpm) if settings.rpm else None
        self.tokens = self._window(settings.tpm) if settings.tpm else None
        self.rate = AdaptiveRate(self._clock) if settings.adaptive and settings.pacing else None
        self._slow_start = settings.pacing
        # Nothing configured: one request goes first and the rest wait for its reply (or SLOW_START_S).
        self._probing = settings.pacing and not settings.rpm and not settings.tpm
        self._probe_busy = False
        self._probe_until = math.inf
        self._probe_changed: anyio.Event | None = None
        self._sending = 0
        self._last_readings: dict[str, BucketReading] | None = None

    def _window(self, capacity: int) -> SlidingWindow:
        """A sliding window, paced with the configured burst unless pacing is off (1 until a reply)."""
        if not self.settings.pacing:
            return SlidingWindow(capacity, clock=self._clock)
        window = SlidingWindow(capacity, clock=self._clock, burst=self.settings.burst(capacity))
        window.burst = 1
        return window

    def slot(self, token_cost: int = 0) -> _Slot:
        """Hold one admitted request for the duration of the ``async with`` block."""
        return _Slot(self, token_cost)

    async def _first_reply(self) -> bool:
        """While no reply has come: the first caller goes (``True``), the others wait for a reply, for the
        probe's slot to end (the next one goes) or for ``SLOW_START_S`` after the first went."""
        while self._probing:
            if not self._probe_busy:
                self._probe_busy = True
                self._probe_until = min(self._probe_until, time.monotonic() + SLOW_START_S)
                return True
            left = self._probe_until - time.monotonic()
            if left <= 0:
                self._end_slow_start()
                break
            if self._probe_changed is None:
                self._probe_changed = anyio.Event()
            changed = self._probe_changed
            with anyio.move_on_after(left):
                await changed.wait()
        return False

    def _wake_probe_waiters(self) -> None:
        if self._probe_changed is not None:
            self._probe_changed.set()
            self._probe_changed = None

    def on_rate_limited(self, ticket: Ticket) -> None:
        """A 429: the AIMD rate decreases unless the headers just observed explain it (an empty bucket)."""
        readings, self._last_readings = self._last_readings, None
        self._end_slow_start()
        explained = readings is not None and (
            ("requests" in readings and readings["requests"].remaining < 1)
            or ("tokens" in readings and readings["tokens"].remaining < max(1, ticket.token_cost)))
        if self.rate is not None and not explained:
            self.rate.on_rate_limited(ticket.started_at)
        self.concurrency.on_rate_limited(ticket.started_at, busy=self._sending)

    async def on_success(self) -> None:
        self._last_readings = None
        self._end_slow_start()
        if self.rate is not None:
            self.rate.on_success()
        await self.concurrency.on_success()

    def observe(self, headers: Mapping[str, str] | None) -> None:
        """Fit each kind's window to the provider's bucket as this reply reports it; learn one if none exists."""
        if not self.settings.pacing:
            self._end_slow_start()
            return
        readings = read_limit_headers(headers) if headers else {}
        self._last_readings = readings
        for kind in ("requests", "tokens"):
            window = self.requests if kind == "requests" else self.tokens
            reading = readings.get(kind)
            if reading is not None:
                if window is None and reading.per_minute is not None:
                    window = SlidingWindow(max(1, int(reading.per_minute)), clock=self._clock, burst=1,
                                           learned=True)
                    if kind == "requests":
                        self.requests = window
                    else:
                        self.tokens = window
                if window is not None:
                    window.fit(reading)
            elif window is not None and not window.learned:  # no reading of this kind: the configured burst
                window.burst = window.max_burst
        self._slow_start = False
        self._end_probing()

    def _end_slow_start(self) -> None:
        """A reply arrived that was not observed (a client that does not pass headers): the configured burst."""
        if self._slow_start:
            self._slow_start = False
            for window in (self.requests, self.tokens):
                if window is not None and not window.learned:
                    window.burst = window.max_burst
        self._end_probing()

    def _end_probing(self) -> None:
        if self._probing:
            self._probing = False
            self._wake_probe_waiters()
