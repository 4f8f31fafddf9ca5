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
   nearly empty holds the next admissions until it has refilled. A reading
   placed by its ticket also caps what is sent: until its reset for a fixed
   window, growing at the refill for a token bucket (the readings tell which,
   ``_pace.Window``), less what other clients on the key are seen to take.
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
and holds the rest until a reply, twice as many more each ``SLOW_START_S``
without one (``_pace.Probe``), so that a first burst cannot overrun a bucket
not yet known.

Concurrency is AIMD too: a 429 episode halves the cap when the cap was what
bound (as many requests being sent as it allows; otherwise the rate adapts,
since halving a cap that is not reached only keeps it from growing back) —
429s from requests started before the last decrease belong to the same episode
and are ignored; every cap's worth of successes while the cap is saturated adds
1, up to the configured maximum.

Every decision above is made by ``_pace`` (the rate-limit core, shared with the
Ray limiter actor so that a model is paced the same in a process and across
workers); this module is its in-process adapter: it waits, on locks and the
clock, until the core says a request fits.

No admission yields to the event loop unless it has to wait: the concurrency
cap is a counter with a FIFO of waiters, a window's lock is not even taken when
it is free and the request fits at once (nobody can be waiting: a waiter holds or
queues on it), and otherwise acquires without a checkpoint when free
(``anyio.Lock(fast_acquire=True)``), so an uncontended request passes the limiter
in the same loop iteration (no lock convoy).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Protocol

import anyio
import msgspec

from ._clock import Clock, MonotonicClock
from ._limit_headers import HeaderReader
from ._pace import AimdCap, AimdRate, LimitSettings, ModelPace, Probe, Window

__all__ = ["AdaptiveConcurrency", "AdaptiveRate", "LimitSettings", "Limiter", "ModelLimiter", "SlidingWindow",
           "Ticket"]

SLOW_START_S = 1.0  # each this long without a first reply, a model with nothing configured lets twice as many out


class SlidingWindow(Window):
    """``_pace.Window`` in-process: ``acquire`` waits (FIFO, one lock) until the core says ``cost`` fits.

    The window, its pacing and ``fit`` are the core's (the Ray actor uses the same); this adds only the wait.
    """

    def __init__(self, capacity: int, *, window: float = 60.0, clock: Clock | None = None,
                 burst: int | None = None, learned: bool = False) -> None:
        super().__init__(capacity, window=window, burst=burst, learned=learned)
        self._clock = clock or MonotonicClock()
        self._lock = anyio.Lock(fast_acquire=True)  # a free lock is taken without yielding to the loop

    async def acquire(self, cost: int = 1) -> float:
        """Wait until ``cost`` units fit in the window (and the pace), take them, return seconds waited."""
        start = self._clock.now()
        await _admit_window(self, cost, self._clock, self._lock)
        return self._clock.now() - start


async def _admit_window(window: Window, cost: int, clock: Clock, lock: anyio.Lock) -> int:
    """Wait until ``cost`` units fit ``window`` and its pace, take them; the window's count ``sent`` through them
    (what places the reply's reading, ``Window.fit``).

    A cost above the capacity is clamped to it: such a request can never fit, and the server, not this
    limiter, should be the one to reject it.
    """
    sent = _take_now(window, cost, clock, lock)
    return sent if sent is not None else await _wait_window(window, cost, clock, lock)


def _take_now(window: Window, cost: int, clock: Clock, lock: anyio.Lock) -> int | None:
    """``_admit_window`` when nobody waits (a waiter holds or queues on the lock) and ``cost`` fits now: taken,
    the count ``sent`` through it; ``None`` otherwise, nothing taken. A plain call: no coroutine per request."""
    if lock.locked():
        return None
    if cost > window.capacity:  # clamped as ``_admit_window`` says (conditionals: cheaper than ``min``/``max``)
        cost = window.capacity
    elif cost < 0:
        cost = 0
    now = clock.now()
    if window.wait(cost, now) <= 0:  # no await between the look and the take: the loop runs nothing else
        window.take(cost, now)
        return window.sent
    return None


async def _wait_window(window: Window, cost: int, clock: Clock, lock: anyio.Lock) -> int:
    """``_admit_window`` in turn: behind the lock, until ``cost`` fits."""
    cost = min(max(cost, 0), window.capacity)
    async with lock:
        while True:
            now = clock.now()
            cost = min(cost, window.capacity)  # a learned capacity may have shrunk while this waited
            wait = window.wait(cost, now)
            if wait <= 0:
                window.take(cost, now)
                return window.sent
            await clock.sleep(wait)


async def _admit_rate(rate: AimdRate, clock: Clock, lock: anyio.Lock) -> None:
    """Wait for the AIMD rate's pace (at once when off), counting the waiters so that successes know it binds."""
    async with lock:
        waited = False
        while rate.rate is not None:
            now = clock.now()
            wait = rate.wait(1, now)
            if wait <= 0:
                rate.take(1, now, waited=waited)
                return
            waited = True
            rate.waiting += 1
            try:
                await clock.sleep(wait)
            finally:
                rate.waiting -= 1


class AdaptiveRate(AimdRate):
    """``_pace.AimdRate`` in-process: ``acquire`` waits for the pace (one lock, waiters in order)."""

    def __init__(self, clock: Clock | None = None, *, decrease: float = 0.7, growth: float = 0.1,
                 minimum: float = 1 / 60) -> None:
        super().__init__(decrease=decrease, growth=growth, minimum=minimum)
        self._clock = clock or MonotonicClock()
        self._lock = anyio.Lock(fast_acquire=True)

    async def acquire(self) -> None:
        """Wait for the pace (at once when off)."""
        if self.rate is not None:
            await _admit_rate(self, self._clock, self._lock)

    def on_success(self) -> None:
        self.succeeded(self._clock.now())

    def on_rate_limited(self, started_at: float) -> None:
        """A 429 the headers do not explain, for a request started at ``started_at``: decrease once per episode."""
        self.limited(started_at, self._clock.now())


class AdaptiveConcurrency(AimdCap):
    """``_pace.AimdCap`` in-process: a counter with a FIFO of waiters.

    Taking a free slot and giving one back never yield to the event loop. A waiter is a bare asyncio future
    (``True`` when granted a slot, ``False`` when its wait ran out), not an ``anyio.Event``: its backend look-up
    and event were most of a wait's cost, and the tool pool waits for a worker on most calls (issue 31).
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
        super().__init__(maximum, minimum=minimum, decrease_factor=decrease_factor, adaptive=adaptive)
        self.in_flight = 0
        self._clock = clock or MonotonicClock()
        self._waiters: deque[asyncio.Future[bool]] = deque()

    def try_acquire(self) -> bool:
        """Take a free slot if there is one and nobody waits for it (never yields); ``False`` otherwise."""
        if self.in_flight < self.cap and not self._waiters:
            self.in_flight += 1
            return True
        return False

    async def acquire(self) -> None:
        if not self.try_acquire():
            await self._wait(None)

    async def acquire_within(self, timeout_s: float) -> bool:
        """Take a slot, waiting at most ``timeout_s`` seconds (of the event loop's clock); ``False`` when none
        came free in time (then no slot is held). One timer, no cancel scope."""
        return self.try_acquire() or await self._wait(timeout_s)

    async def _wait(self, timeout_s: float | None) -> bool:
        loop = asyncio.get_running_loop()
        granted: asyncio.Future[bool] = loop.create_future()
        self._waiters.append(granted)
        timer = loop.call_later(timeout_s, self._expire, granted) if timeout_s is not None else None
        try:
            return await granted
        except BaseException:
            if granted.done() and not granted.cancelled() and granted.result():  # granted as it was cancelled
                self.release_nowait()  # pass the slot on
            elif granted in self._waiters:
                self._waiters.remove(granted)
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def _expire(self, granted: asyncio.Future[bool]) -> None:
        """A waiter's time is up: it leaves the queue empty-handed (unless a slot reached it first)."""
        if not granted.done():
            self._waiters.remove(granted)
            granted.set_result(False)

    def release_nowait(self) -> None:
        self.in_flight -= 1
        if self._waiters:
            self._admit()

    async def release(self) -> None:
        self.release_nowait()

    def _admit(self) -> None:
        """Hand free slots to the waiters, oldest first (the slot is counted for them before they wake)."""
        while self._waiters and self.in_flight < self.cap:
            granted = self._waiters.popleft()
            if not granted.done():  # a cancelled waiter's future is done until its task has left the queue
                self.in_flight += 1
                granted.set_result(True)

    def on_rate_limited(self, started_at: float, *, busy: int | None = None) -> None:
        """Record a 429 for a request started at ``started_at``; shrink once per episode (``AimdCap.limited``)."""
        self.limited(started_at, self._clock.now(), busy=busy)

    async def on_success(self) -> None:
        """Additive increase: +1 to the cap after a cap's worth of successes while saturated."""
        self.succeeded_nowait()

    def succeeded_nowait(self) -> None:
        """``on_success`` without a coroutine (the model limiter's fast path)."""
        if self.wants_growth(self.in_flight) and self.succeeded():
            self._admit()


class _Slot:
    """``ModelLimiter.slot``: a class, not an ``asynccontextmanager`` — no generator to drive on every call."""

    __slots__ = ("_limiter", "_cost", "_probe", "_sending", "_through")

    def __init__(self, limiter: ModelLimiter, token_cost: int) -> None:
        self._limiter = limiter
        self._cost = token_cost
        self._probe = self._sending = False
        self._through: tuple[int | None, int | None] = (None, None)

    async def __aenter__(self) -> Ticket:
        limiter, cost = self._limiter, self._cost
        clock = limiter._clock
        start = clock.now()
        concurrency = limiter.concurrency
        if concurrency.in_flight < concurrency.cap and not concurrency._waiters:  # try_acquire, inline
            concurrency.in_flight += 1
        else:
            await concurrency._wait(None)
        pace = limiter.pace
        # Every gate is tested before it is entered, so a model nothing paces passes without a call (issue 31)
        if (limiter._probing or pace.requests is not None or (pace.tokens is not None and cost)
                or (pace.rate is not None and pace.rate.rate is not None)):
            try:
                if limiter._probing:
                    self._probe = await limiter._first_reply()
                locks = limiter._locks
                requests = tokens = None
                if pace.requests is not None:
                    requests = await _admit_window(pace.requests, 1, clock, locks[0])
                if pace.tokens is not None and cost:
                    tokens = await _admit_window(pace.tokens, cost, clock, locks[1])
                self._through = (requests, tokens)
                if pace.rate is not None and pace.rate.rate is not None:
                    await _admit_rate(pace.rate, clock, locks[2])
            except BaseException:
                self._release()
                raise
        now = clock.now()
        limiter._sending += 1
        self._sending = True
        return Ticket(started_at=now, queued_s=now - start, token_cost=cost, through=self._through)

    async def __aexit__(self, *_exc: object) -> None:
        self._release()

    def _release(self) -> None:
        limiter = self._limiter
        if self._sending:
            limiter._sending -= 1
        if self._probe:
            limiter._probe.ended()
            limiter._wake_probe_waiters()
        concurrency = limiter.concurrency
        concurrency.in_flight -= 1  # release_nowait, inline
        if concurrency._waiters:
            concurrency._admit()


class Ticket(msgspec.Struct, kw_only=True):
    """One admitted request: when it started, how long it queued, and the token cost it was admitted with.

    ``through``: the requests and tokens windows' counts ``sent`` through this request (``None``: no window
    then), which place the reply's rate-limit reading among the requests sent (``_pace.Window.fit``).
    """

    started_at: float
    queued_s: float
    token_cost: int = 0
    through: tuple[int | None, int | None] = (None, None)


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

    def observe(self, headers: Mapping[str, str] | None, ticket: Ticket | None = None) -> None:
        """A reply (200 or 429) arrived with these headers (``None``: it had none) to the request admitted with
        ``ticket``; its rate-limit ones count."""
        ...


class ModelLimiter:
    """Concurrency + requests + tokens + adaptive rate for one model, in that order of admission.

    The decisions are ``pace`` (a ``_pace.ModelPace``, the core the Ray limiter actor uses too): ``requests``/
    ``tokens`` are its configured windows, or the ones learned from the headers (``None`` until either
    exists); ``rate`` is its AIMD rate (``None`` when ``adaptive`` or ``pacing`` is off). This adds the waits
    (a lock per gate), the concurrency slots and the probe of a model with nothing configured.
    """

    def __init__(self, settings: LimitSettings, *, clock: Clock | None = None) -> None:
        self.settings = settings
        self._clock = clock or MonotonicClock()
        self.concurrency = AdaptiveConcurrency(
            settings.max_concurrency, adaptive=settings.adaptive, clock=self._clock
        )
        self.pace = ModelPace(settings)
        self._locks = (anyio.Lock(fast_acquire=True), anyio.Lock(fast_acquire=True), anyio.Lock(fast_acquire=True))
        # Nothing configured: one request goes first and the rest wait for its reply (``_pace.Probe``).
        self._probing = settings.pacing and not settings.rpm and not settings.tpm
        self._probe = Probe(SLOW_START_S)
        self._probe_changed: anyio.Event | None = None
        self._sending = 0
        self._headers = HeaderReader()

    @property
    def requests(self) -> Window | None:
        return self.pace.requests

    @property
    def tokens(self) -> Window | None:
        return self.pace.tokens

    @property
    def rate(self) -> AimdRate | None:
        return self.pace.rate

    def slot(self, token_cost: int = 0) -> _Slot:
        """Hold one admitted request for the duration of the ``async with`` block."""
        return _Slot(self, token_cost)

    async def _first_reply(self) -> bool:
        """While no reply has come: a caller the probe lets out goes (``True``), the others wait for a reply, for
        a probe to end (the next one goes) or for the probe's allowance to double (``_pace.Probe``)."""
        while self._probing:
            left = self._probe.admit(time.monotonic())
            if left <= 0:
                return True
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
        self.pace.limited(ticket.started_at, ticket.token_cost, self._clock.now())
        self._end_probing()
        self.concurrency.on_rate_limited(ticket.started_at, busy=self._sending)

    async def on_success(self) -> None:
        self.pace.succeeded(self._clock.now())
        if self._probing:
            self._end_probing()
        self.concurrency.succeeded_nowait()

    def observe(self, headers: Mapping[str, str] | None, ticket: Ticket | None = None) -> None:
        """Fit each kind's window to the provider's bucket as this reply reports it; learn one if none exists.
        With ``ticket`` (the reply's request's), the reading also caps what is sent until its reset."""
        pace = self.pace
        if not headers and pace.requests is None and pace.tokens is None and not self._probing:
            # A reply without rate-limit headers to a model with no window: all ``pace.observe`` would do is note
            # that it saw none (no call for it, issue 31). With pacing off it would do nothing at all.
            if self.settings.pacing:
                pace._last_readings = {}
                pace.slow_start = False
            return
        readings = (self._headers.read(headers) if headers else {}) if self.settings.pacing else None
        if ticket is None:
            pace.observe(readings, self._clock.now())
        else:
            pace.observe(readings, self._clock.now(), ticket.through, ticket.started_at)
        if self._probing:
            self._end_probing()

    def _end_probing(self) -> None:
        if self._probing:
            self._probing = False
            self._wake_probe_waiters()
