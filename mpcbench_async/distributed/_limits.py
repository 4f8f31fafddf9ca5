"""One global limit per model, leased to workers in small batches: the state machine the limiter actor wraps.

A Ray sweep runs many workers against the same models; each worker's own limiter would let through N times
the configured limit. Here one ``GlobalLimits`` (inside one actor) owns each model's budget and *leases*
capacity to workers, so the sum over workers never exceeds it, while a worker talks to it only once per
small batch of calls (``_leased.LeasedLimiter`` is the worker's side).

What is leased:

- **Concurrency slots.** The actor counts every slot a worker holds, busy or idle, so the global outstanding
  count never exceeds the model's current cap. The cap is ``runtime.AimdCap``, as in ``ModelLimiter``: halved once
  per 429 episode reported by *any* worker, +1 after a cap's worth of successes reported while the cap was
  saturated. A worker reuses a slot for its next call only while the slot is fresh (``ttl`` seconds from its
  grant), else returns it, so an idle worker does not hoard and a shrink reaches every worker within ``ttl``.
- **Call credits** (once the model's pace may bind: ``rpm``/``tpm``, or, pacing on, headers or a 429 seen):
  one request plus its token cost each, granted as a batch stamped at grant time. A worker may start a call
  on a credit only before ``stamp + ttl``.

Every decision is the rate-limit core's (``runtime.ModelPace``, the same object ``ModelLimiter`` uses in one
process): the windows and their pacing, the headers the workers report (``Report.readings``, and a 429's own
with ``rate_limited``) fitting them to the provider's bucket or learning one, the AIMD rate driven by 429s the
headers do not explain. This module adds only what leasing needs: slots per worker, grant ids, the waits.

Why ``window + ttl``: a credit granted at ``g`` starts somewhere in ``[g, g + ttl)``. The credits whose calls
start in a 60-s span ``[s, s + 60]`` were therefore granted in ``[s - ttl, s + 60]``, a span of ``60 + ttl``.
So the actor counts each grant in its sliding window for ``window + ttl`` seconds: at the latest of those
grants, all the others were still counted, and the window admitted them only while their sum fit the limit.
Hence the real starts in ANY 60-s span never exceed the limit, whatever the workers do within their TTL.
Unused credits come back (``release``) and leave the window: they never started.

Pacing is GCRA, applied globally as ``ModelLimiter`` does per process: credits flow at ``limit / 60`` per second
with bursts of the core's burst (configured: half of ``bucket_s`` seconds' worth, at most 1/20 of the limit, 1
until the first reply; fitted: half the provider's bucket), and a batch never exceeds it, except one call
costing more. GCRA
stamps at most ``burst + rate * (b - a)`` in any interval ``[a, b]``; a call starts within ``ttl`` of its
credit's stamp, so in any interval ``[a, b]`` of real starts: ``count <= burst + rate * (b - a + ttl)``.

Batches: a lease waits for credit for its first call, then lingers up to ``ttl / 4`` for more of the calls it
asked for (as they come due under the pace), so a worker held to the pace gets a few credits per round trip
rather than one; the pace itself is unchanged.
"""

from __future__ import annotations

import itertools

import anyio
import msgspec

from ..runtime import AimdCap, BucketReading, Clock, LimitSettings, ModelPace, MonotonicClock

__all__ = ["Ask", "GlobalLimits", "Grant", "Report"]

class Report(msgspec.Struct, kw_only=True, frozen=True):
    """What a worker gives back or tells, carried by every lease and release (so nothing needs its own trip).

    ``credits`` maps a grant id to its unused (requests, tokens), never started; ``successes`` counts calls that
    succeeded while the worker had calls waiting (saturated), ``replies`` every call that succeeded (the AIMD
    rate counts them); ``started`` counts calls started. ``readings``: the rate-limit headers of the last reply
    the worker observed since its last report, as ``runtime.read_limit_headers`` read them (``{}``: a reply
    without any; ``None``: no reply observed).
    """

    slots: int = 0
    credits: dict[int, tuple[int, int]] = {}
    successes: int = 0
    replies: int = 0
    started: int = 0
    readings: dict[str, BucketReading] | None = None


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
    its own send time + ``waited`` + ``ttl``, never later than ``stamp + ttl`` on a shared clock. ``paced``:
    the model's pace may bind (a window, configured or learned from headers, or an AIMD rate engaged by a 429),
    so from now on each of the worker's calls needs a credit, not only a slot.
    """

    grant_id: int
    slots: int
    calls: int
    tokens: int
    waited: float
    ttl: float
    paced: bool = False


class _Model:
    """One model's budget: slots outstanding per worker, the AIMD cap, and the pace (``runtime.ModelPace``, the
    same core as in-process: windows counted for ``window + ttl``, fitted to the headers workers report, the
    AIMD rate driven by the 429s they report)."""

    def __init__(self, settings: LimitSettings, ttl: float, clock: Clock) -> None:
        self.settings = settings
        self.concurrency = AimdCap(max(1, settings.max_concurrency), adaptive=settings.adaptive)
        self.pace = ModelPace(settings, span_extra=ttl)
        self.held: dict[str, int] = {}
        self.outstanding = 0
        self.peak = 0
        self.leases = 0
        self.releases = 0
        self.started = 0
        self.credited = 0
        self.changed = anyio.Event()  # set (and replaced) whenever slots free up or the cap grows
        self.slot_turn = anyio.Lock()  # FIFO among leases waiting for a slot
        self.credit_turn = anyio.Lock()  # FIFO among leases waiting for credits
        self._clock = clock

    @property
    def cap(self) -> int:
        return self.concurrency.cap

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

    def take_credits(self, costs: tuple[int, ...], grant_id: int, now: float, waited: bool) -> None:
        self.pace.take(costs, now, grant_id, waited=waited)
        self.credited += len(costs)

    def give_back(self, credits: dict[int, tuple[int, int]]) -> None:
        for grant_id, (requests, tokens) in credits.items():
            self.pace.give_back(grant_id, requests, tokens)
            self.credited -= requests

    def on_successes(self, saturated: int, replies: int) -> None:
        """``replies`` successes reported (they pace the AIMD rate), ``saturated`` of them while the worker had
        calls waiting: the cap grows by 1 per cap's worth of those while every slot was leased out."""
        if replies:
            self.pace.succeeded(self._clock.now(), replies)
        if saturated and self.concurrency.wants_growth(self.outstanding) and self.concurrency.succeeded(saturated):
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
        if report.readings is not None:
            state.pace.observe(report.readings, self._clock.now())
        state.on_successes(report.successes, report.replies)

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
                now, waited = await self._until_fit(state, calls[:1])
                n = max(k for k in range(1, len(calls) + 1) if state.pace.wait(calls[:k], now) <= self.linger)
                stamp, waited_more = await self._until_fit(state, calls[:n])
                tokens = sum(calls[:n])
                state.take_credits(calls[:n], grant_id, stamp, waited or waited_more)
        if worker in self._reclaimed:  # reclaimed while waiting: it will never use these
            state.give_back({grant_id: (n, tokens)})
            state.unhold(worker, slots)
            slots = n = tokens = 0
        pace = state.pace
        paced = pace.requests is not None or pace.tokens is not None or (
            pace.rate is not None and pace.rate.rate is not None)
        return Grant(grant_id=grant_id, slots=slots, calls=n, tokens=tokens,
                     waited=stamp - received, ttl=self.ttl, paced=paced)

    async def _until_fit(self, state: _Model, costs: tuple[int, ...]) -> tuple[float, bool]:
        """Wait until credits for ``costs`` fit the pace; the time then, and whether it had to wait (the
        AIMD rate grows only while it binds: ``waiting`` counts the leases held by the pace now)."""
        waited = False
        while True:
            now = self._clock.now()
            wait = state.pace.wait(costs, now)
            if wait <= 0:
                return now, waited
            waited = True
            rate = state.pace.rate
            if rate is not None:
                rate.waiting += 1
            try:
                await self._clock.sleep(wait)
            finally:
                if rate is not None:
                    rate.waiting -= 1

    def release(self, worker: str, model: str, report: Report) -> None:
        """Slots and unused credits back, and the counts a worker reports."""
        state = self._model(model, None)
        if state is not None and worker not in self._reclaimed:  # a reclaimed worker's slots are already free
            state.releases += 1
            self._apply(worker, state, report)

    def rate_limited(self, worker: str, model: str, age_s: float, token_cost: int = 0,
                     readings: dict[str, BucketReading] | None = None) -> None:
        """A worker's call started ``age_s`` ago (its clock), costing ``token_cost``, was answered 429 with
        ``readings`` (its headers, ``None``: not looked at): the pace observes them, and as in-process the AIMD
        rate decreases unless they explain the 429; the cap shrinks once per episode (whoever holds the slots)."""
        state = self._model(model, None)
        if state is not None:
            now = self._clock.now()
            started_at = now - age_s
            state.pace.observe(readings, now)
            state.pace.limited(started_at, token_cost, now)
            state.concurrency.limited(started_at, now)

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
                       "decreases": s.concurrency.decreases,
                       "rate_decreases": s.pace.rate.decreases if s.pace.rate is not None else 0,
                       "learned_rpm": s.pace.requests.capacity if s.pace.requests is not None
                       and s.pace.requests.learned else 0}
                for name, s in self._models.items()}
