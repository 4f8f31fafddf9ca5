"""One global limit per model, leased to workers in small batches: the state machine the limiter actor wraps.

A Ray sweep runs many workers against the same models; each worker's own limiter would let through N times
the configured limit. Here one ``GlobalLimits`` (inside one actor) owns each model's budget and *leases*
capacity to workers, so the sum over workers never exceeds it, while a worker talks to it only once per
small batch of calls (``_leased.LeasedLimiter`` is the worker's side).

What is leased:

- **Concurrency slots.** The actor counts every slot a worker holds, busy or idle, so the global outstanding
  count never exceeds the model's current cap. The cap is AIMD as in ``runtime.ModelLimiter``: halved once
  per 429 episode reported by *any* worker, +1 after a cap's worth of successes reported while the cap was
  saturated. A worker reuses a slot for its next call only while the slot is fresh (``ttl`` seconds from its
  grant), else returns it, so an idle worker does not hoard and a shrink reaches every worker within ``ttl``.
- **Call credits** (models with ``rpm`` or ``tpm``): one request plus its token cost each, granted as a batch
  stamped at grant time. A worker may start a call on a credit only before ``stamp + ttl``.

Why ``window + ttl``: a credit granted at ``g`` starts somewhere in ``[g, g + ttl)``. The credits whose calls
start in a 60-s span ``[s, s + 60]`` were therefore granted in ``[s - ttl, s + 60]``, a span of ``60 + ttl``.
So the actor counts each grant in its sliding window for ``window + ttl`` seconds: at the latest of those
grants, all the others were still counted, and the window admitted them only while their sum fit the limit.
Hence the real starts in ANY 60-s span never exceed the limit, whatever the workers do within their TTL.
Unused credits come back (``release``) and leave the window: they never started.

Pacing is GCRA, applied globally as ``ModelLimiter`` does per process: credits flow at ``limit / 60`` per second
with bursts of at most 1/20 of the limit (a batch never exceeds the burst, except one call costing more). GCRA
stamps at most ``burst + rate * (b - a)`` in any interval ``[a, b]``; a call starts within ``ttl`` of its
credit's stamp, so in any interval ``[a, b]`` of real starts: ``count <= burst + rate * (b - a + ttl)``.

Batches: a lease waits for credit for its first call, then lingers up to ``ttl / 4`` for more of the calls it
asked for (as they come due under the pace), so a worker held to the pace gets a few credits per round trip
rather than one; the pace itself is unchanged.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import Any

import anyio
import msgspec

from ..runtime import Clock, LimitSettings, MonotonicClock

__all__ = ["Ask", "GlobalLimits", "Grant", "Report"]

WINDOW_S = 60.0  # the RPM/TPM window, as runtime.SlidingWindow


class Report(msgspec.Struct, kw_only=True, frozen=True):
    """What a worker gives back or tells, carried by every lease and release (so nothing needs its own trip).

    ``credits`` maps a grant id to its unused (requests, tokens), never started; ``successes`` counts calls that
    succeeded while the worker had calls waiting (saturated); ``started`` counts calls started.
    """

    slots: int = 0
    credits: dict[int, tuple[int, int]] = {}
    successes: int = 0
    started: int = 0


class Ask(msgspec.Struct, kw_only=True, frozen=True):
    """A worker's lease request: ``slots`` more slots, and credits for calls costing ``calls`` tokens each.

    Asking for slots, the lease waits for at least one, and ``calls`` are for the calls the new slots will serve,
    in order, after the first ``covered`` of them (which hold credits already): a credit goes only to a call
    that gets a slot. Asking for no slots, ``calls`` are for calls with a slot in hand.
    """

    slots: int = 0
    calls: tuple[int, ...] = ()
    covered: int = 0
    report: Report = Report()


class Grant(msgspec.Struct, kw_only=True, frozen=True):
    """What a lease got: ``slots`` slots and credits for the first ``calls`` calls asked (``tokens`` in all).

    ``waited`` is how long the actor held the lease before stamping it: the worker's deadline for the grant is
    its own send time + ``waited`` + ``ttl``, never later than ``stamp + ttl`` on a shared clock.
    """

    grant_id: int
    slots: int
    calls: int
    tokens: int
    waited: float
    ttl: float


class _Window:
    """Grants counted for ``span`` seconds from their stamp, at most ``capacity`` in all; paced GCRA-style."""

    def __init__(self, capacity: int, span: float, pacing: bool) -> None:
        self.capacity = capacity
        self.span = span
        self.burst = max(1, capacity // 20) if pacing else None
        self._emission = WINDOW_S / capacity
        self._tat = float("-inf")
        self._entries: deque[list[Any]] = deque()  # [stamp, amount, grant_id]
        self._by_grant: dict[int, list[Any]] = {}
        self._used = 0

    def clamp(self, cost: int) -> int:
        """A cost above the capacity can never fit: clamped, so the server, not the limiter, rejects it."""
        return min(max(cost, 0), self.capacity)

    def _expire(self, now: float) -> None:
        while self._entries and self._entries[0][0] <= now - self.span:
            _, amount, grant_id = self._entries.popleft()
            self._used -= amount
            del self._by_grant[grant_id]

    def wait(self, total: int, floor: int, now: float) -> float:
        """Seconds until ``total`` fits (0 when it fits now); ``floor``, one call's cost, may exceed the burst."""
        if total > self.capacity or (self.burst is not None and total > max(self.burst, floor)):
            return float("inf")  # never fits: a batch is at most one burst
        self._expire(now)
        pace = 0.0
        if self.burst is not None:
            pace = max(self._tat, now) + (total - max(self.burst, floor)) * self._emission - now
        excess = self._used + total - self.capacity
        room = 0.0
        for stamp, amount, _ in self._entries:
            if excess <= 0:
                break
            excess -= amount
            room = stamp + self.span - now
        wait = max(pace, room)
        return wait if wait > 1e-9 else 0.0

    def take(self, amount: int, grant_id: int, now: float) -> None:
        entry = self._by_grant[grant_id] = [now, amount, grant_id]
        self._entries.append(entry)
        self._used += amount
        self._tat = max(self._tat, now) + amount * self._emission

    def give_back(self, grant_id: int, amount: int) -> None:
        """Unused units of a grant leave the window (pacing keeps them: a conservative choice)."""
        entry = self._by_grant.get(grant_id)
        if entry is not None:  # else it has left the window already
            back = min(amount, entry[1])
            entry[1] -= back
            self._used -= back


class _Model:
    """One model's budget: slots outstanding per worker, the AIMD cap, and the request and token windows."""

    def __init__(self, settings: LimitSettings, ttl: float, clock: Clock) -> None:
        self.settings = settings
        self.maximum = max(1, settings.max_concurrency)
        self.limit = float(self.maximum)
        self.held: dict[str, int] = {}
        self.outstanding = 0
        self.peak = 0
        self.last_decrease = float("-inf")
        self.saturated_successes = 0
        self.decreases = 0
        self.leases = 0
        self.releases = 0
        self.started = 0
        self.credited = 0
        self.requests = _Window(settings.rpm, WINDOW_S + ttl, settings.pacing) if settings.rpm else None
        self.tokens = _Window(settings.tpm, WINDOW_S + ttl, settings.pacing) if settings.tpm else None
        self.changed = anyio.Event()  # set (and replaced) whenever slots free up or the cap grows
        self.slot_turn = anyio.Lock()  # FIFO among leases waiting for a slot
        self.credit_turn = anyio.Lock()  # FIFO among leases waiting for credits
        self._clock = clock

    @property
    def cap(self) -> int:
        return max(1, int(self.limit))

    def free(self) -> int:
        return max(0, self.cap - self.outstanding)

    def hold(self, worker: str, slots: int) -> None:
        self.held[worker] = self.held.get(worker, 0) + slots
        self.outstanding += slots
        self.peak = max(self.peak, self.outstanding)

    def unhold(self, worker: str, slots: int) -> None:
        slots = min(slots, self.held.get(worker, 0))
        if slots > 0:
            self.held[worker] -= slots
            self.outstanding -= slots
            self.wake()

    def wake(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for_slot(self) -> None:
        while not self.free():
            await self.changed.wait()

    def costs(self, calls: tuple[int, ...]) -> tuple[int, ...]:
        """Each call's token cost as charged: clamped to the TPM limit, 0 without one."""
        return tuple(self.tokens.clamp(cost) for cost in calls) if self.tokens is not None else (0,) * len(calls)

    def wait_for(self, costs: tuple[int, ...], now: float) -> float:
        """Seconds until credits for all of ``costs`` fit both windows and their pace (0: they fit now)."""
        waits = [0.0]
        if self.requests is not None:
            waits.append(self.requests.wait(len(costs), 1, now))
        if self.tokens is not None:
            waits.append(self.tokens.wait(sum(costs), costs[0], now))
        return max(waits)

    def take_credits(self, n: int, tokens: int, grant_id: int, now: float) -> None:
        if self.requests is not None:
            self.requests.take(n, grant_id, now)
        if self.tokens is not None and tokens:
            self.tokens.take(tokens, grant_id, now)
        self.credited += n

    def give_back(self, credits: dict[int, tuple[int, int]]) -> None:
        for grant_id, (requests, tokens) in credits.items():
            if self.requests is not None:
                self.requests.give_back(grant_id, requests)
            if self.tokens is not None:
                self.tokens.give_back(grant_id, tokens)
            self.credited -= requests

    def on_rate_limited(self, started_at: float) -> None:
        """Halve the cap once per episode: a 429 for a call started before the last decrease is the same one."""
        if not self.settings.adaptive or started_at < self.last_decrease:
            return
        self.limit = max(1.0, float(int(self.limit * 0.5)))
        self.last_decrease = self._clock.now()
        self.saturated_successes = 0
        self.decreases += 1

    def on_successes(self, count: int) -> None:
        """Additive increase: +1 per cap's worth of successes reported while every slot was leased out."""
        if not self.settings.adaptive or self.limit >= self.maximum or self.outstanding < self.cap:
            return
        self.saturated_successes += count
        grew = False
        while self.saturated_successes >= self.cap and self.limit < self.maximum:
            self.saturated_successes -= self.cap
            self.limit = float(self.cap + 1)
            grew = True
        if grew:
            self.wake()


class GlobalLimits:
    """Every model's budget, leased to workers; ``ttl`` is how long a worker may use a grant.

    Thread-free and Ray-free: the actor serves each remote method with the same-named method here, on one loop.
    """

    def __init__(self, *, ttl: float = 1.0, clock: Clock | None = None) -> None:
        if ttl <= 0:
            raise ValueError(f"ttl must be positive, got {ttl}")
        self.ttl = ttl
        self.linger = ttl / 4
        self._clock = clock or MonotonicClock()
        self._models: dict[str, _Model] = {}
        self._reclaimed: set[str] = set()  # workers declared dead: nothing more is granted to them, ever
        self._grant_ids = itertools.count(1)

    def _model(self, model: str, settings: LimitSettings | None) -> _Model | None:
        state = self._models.get(model)
        if state is None and settings is not None:
            state = self._models[model] = _Model(settings, self.ttl, self._clock)
        return state

    def _apply(self, worker: str, state: _Model, report: Report) -> None:
        state.give_back(report.credits)
        state.started += report.started
        state.unhold(worker, report.slots)
        if report.successes:
            state.on_successes(report.successes)

    async def lease(self, worker: str, model: str, settings: LimitSettings, ask: Ask) -> Grant:
        """Slots, then credits, as many as asked that are free now, after waiting for the first of each needed.

        The first lease for a model sets its limits (all workers share one config). A worker that was
        reclaimed gets an empty grant, also for a lease that reaches the actor after the reclaim (sent
        just before it died, or by a worker the driver gave up on while it still ran): what it would
        hold could never be reclaimed again.
        """
        state = self._model(model, settings)
        assert state is not None
        if worker in self._reclaimed:
            return Grant(grant_id=next(self._grant_ids), slots=0, calls=0, tokens=0, waited=0.0, ttl=self.ttl)
        self._apply(worker, state, ask.report)
        received = self._clock.now()
        state.leases += 1
        slots = 0
        if ask.slots:
            async with state.slot_turn:
                await state.wait_for_slot()
                slots = min(ask.slots, state.free())
                state.hold(worker, slots)
        calls = ask.calls[: max(0, slots - ask.covered)] if ask.slots else ask.calls
        n = tokens = 0
        grant_id = next(self._grant_ids)
        stamp = self._clock.now()
        if calls:
            async with state.credit_turn:
                costs = state.costs(calls)
                now = await self._until_fit(state, costs[:1])
                n = max(k for k in range(1, len(costs) + 1) if state.wait_for(costs[:k], now) <= self.linger)
                stamp = await self._until_fit(state, costs[:n])
                tokens = sum(costs[:n])
                state.take_credits(n, tokens, grant_id, stamp)
        if worker in self._reclaimed:  # reclaimed while waiting: it will never use these
            state.give_back({grant_id: (n, tokens)})
            state.unhold(worker, slots)
            slots = n = tokens = 0
        return Grant(grant_id=grant_id, slots=slots, calls=n, tokens=tokens,
                     waited=stamp - received, ttl=self.ttl)

    async def _until_fit(self, state: _Model, costs: tuple[int, ...]) -> float:
        """Wait until credits for ``costs`` fit; the time then."""
        while True:
            now = self._clock.now()
            wait = state.wait_for(costs, now)
            if wait <= 0:
                return now
            await self._clock.sleep(wait)

    def release(self, worker: str, model: str, report: Report) -> None:
        """Slots and unused credits back, and the counts a worker reports."""
        state = self._model(model, None)
        if state is not None and worker not in self._reclaimed:  # a reclaimed worker's slots are already free
            state.releases += 1
            self._apply(worker, state, report)

    def rate_limited(self, worker: str, model: str, age_s: float) -> None:
        """A worker's call started ``age_s`` ago (its clock) was answered 429: shrink the cap once per episode."""
        state = self._model(model, None)
        if state is not None:
            state.on_rate_limited(self._clock.now() - age_s)

    def reclaim(self, worker: str) -> None:
        """Free every slot ``worker`` holds (it died); credits it was granted stay counted (they may have started).

        From now on ``worker`` is granted nothing and its releases are ignored.
        """
        self._reclaimed.add(worker)
        for state in self._models.values():
            state.unhold(worker, state.held.get(worker, 0))

    def stats(self) -> dict[str, dict[str, float]]:
        """Per model: leases, releases, requests admitted (credits net of returns), calls started (as reported so
        far), slots outstanding and their peak, the cap, and its decreases (429 episodes)."""
        return {name: {"leases": s.leases, "releases": s.releases, "admitted": s.credited, "started": s.started,
                       "outstanding": s.outstanding, "peak_outstanding": s.peak, "cap": s.cap,
                       "decreases": s.decreases}
                for name, s in self._models.items()}
