"""A worker's share of the global limit: a ``runtime.Limiter`` that leases slots and credits from the limiter actor.

``leased_limiters(actor, worker_id)`` is the ``limiter_factory`` of a Ray worker's ``LLMClient``. Its limiter
keeps what it was granted and spends it locally, so the actor hears from a worker once per small batch of
calls, not per call:

- a call needs a slot, and for a model with ``rpm``/``tpm`` a credit (one request + its token cost);
- a freed slot serves the next waiting call while it is fresh (``ttl`` from its grant), else it goes back;
- only a worker with waiting calls leases, a few slots/credits at a time (``batch``), one lease at a time;
- an idle slot or an unused credit goes back when it goes stale (a timer), so an idle worker hoards nothing;
- a 429 goes to the actor at once with its reply's rate-limit headers (the shared ``runtime.ModelPace``
  there decides, as in-process, whether they explain it or the AIMD rate must slow down, and it shrinks the
  cap for every worker); the last reply's headers, successes, starts and returns ride along with the next
  lease or release, so the actor fits the pace to the provider's bucket as a ``ModelLimiter`` would.

A grant's deadline is the worker's own send time + the actor's wait + ``ttl``: never later than the actor's
stamp + ``ttl``, which is what the actor's ``window + ttl`` accounting assumes (see ``_limits``).
"""

from __future__ import annotations

import asyncio
import bisect
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from itertools import islice
from typing import Any, Protocol

import anyio

from .._exceptions import LimiterLost
from ..runtime import BucketReading, Clock, Limiter, LimitSettings, MonotonicClock, Ticket, read_limit_headers
from ._limits import Ask, Grant, Report

__all__ = ["LeasedLimiter", "LeasedLimiters", "Leases", "leased_limiters"]

# Waits before leasing again after a failed lease (the actor briefly unreachable): about 3 s in all.
RETRY_DELAYS = (0.1, 0.2, 0.4, 0.8, 1.6)


def _permanent(exc: BaseException) -> bool:
    """A lease failure no retry mends: the actor died (Ray's ``ActorDiedError``, matched by name: Ray is optional)."""
    return any(cls.__name__ == "ActorDiedError" for cls in type(exc).__mro__)


class Leases(Protocol):
    """The limiter actor as a worker sees it (``GlobalLimits``'s methods, awaited or fired and forgotten)."""

    async def lease(self, worker: str, model: str, settings: LimitSettings, ask: Ask) -> Grant: ...

    def release(self, worker: str, model: str, report: Report) -> None: ...

    def rate_limited(self, worker: str, model: str, age_s: float, token_cost: int,
                     readings: dict[str, BucketReading] | None) -> None: ...


class _ActorLeases:
    """``Leases`` over a Ray actor handle: a lease is awaited, the rest are sent without waiting."""

    def __init__(self, actor: Any) -> None:
        self._actor = actor

    async def lease(self, worker: str, model: str, settings: LimitSettings, ask: Ask) -> Grant:
        grant: Grant = await self._actor.lease.remote(worker, model, settings, ask)
        return grant

    def release(self, worker: str, model: str, report: Report) -> None:
        self._actor.release.remote(worker, model, report)

    def rate_limited(self, worker: str, model: str, age_s: float, token_cost: int,
                     readings: dict[str, BucketReading] | None) -> None:
        self._actor.rate_limited.remote(worker, model, age_s, token_cost, readings)


class LeasedLimiters:
    """``LLMClient(limiter_factory=...)`` for a worker (each model's limiter leases from ``leases``), and whether
    any of them lost the global limiter (``lost``)."""

    def __init__(self, leases: Leases, worker_id: str) -> None:
        self.leases, self.worker_id = leases, worker_id
        self.made: list[LeasedLimiter] = []

    def __call__(self, model: str, settings: LimitSettings) -> Limiter:
        limiter = LeasedLimiter(self.leases, self.worker_id, model, settings)
        self.made.append(limiter)
        return limiter

    def lost(self) -> LimiterLost | None:
        """The first ``LimiterLost`` of this worker's limiters (``None`` while they all can lease)."""
        return next((limiter.lost for limiter in self.made if limiter.lost is not None), None)


def leased_limiters(limiter: Any, worker_id: str) -> LeasedLimiters:
    """The limiter factory of a worker whose models lease from the Ray actor ``limiter``."""
    return LeasedLimiters(_ActorLeases(limiter), worker_id)


class _Credit:
    """Part of a grant not yet spent: requests and tokens usable until ``deadline``."""

    __slots__ = ("deadline", "grant_id", "requests", "tokens")

    def __init__(self, grant_id: int, deadline: float, requests: int, tokens: int) -> None:
        self.grant_id, self.deadline, self.requests, self.tokens = grant_id, deadline, requests, tokens


class _Waiter:
    """A call waiting for a slot (and credit); admitted, it knows when (its start) and its slot's deadline."""

    __slots__ = ("admitted_at", "cost", "ready", "slot_deadline")

    def __init__(self, cost: int) -> None:
        self.cost = cost
        self.ready = anyio.Event()
        self.slot_deadline: float | None = None
        self.admitted_at = 0.0


class LeasedLimiter:
    """One model's limiter in one worker, spending what it leased from the global limit."""

    def __init__(self, leases: Leases, worker: str, model: str, settings: LimitSettings, *,
                 clock: Clock | None = None, batch: int = 8) -> None:
        self.worker = worker
        self.model = model
        self.settings = settings
        self.leases = 0  # lease round trips made
        self.calls = 0  # calls admitted
        self._leases = leases
        self._clock = clock or MonotonicClock()
        self._batch = batch
        # A call needs a credit, not only a slot, once the pace may bind: configured windows, or (pacing on) a
        # reply with rate-limit headers or a 429 seen here, or a grant saying the actor's pace binds.
        self._credited = bool(settings.rpm or settings.tpm)
        self._idle: list[float] = []  # deadlines of held idle slots, sorted
        self._credits: deque[_Credit] = deque()
        self._waiters: deque[_Waiter] = deque()
        self._back_slots = 0
        self._back_credits: dict[int, tuple[int, int]] = {}
        self._successes = 0
        self._replies = 0
        self._readings: dict[str, BucketReading] | None = None  # the last observed reply's, not yet reported
        self._last_readings: dict[str, BucketReading] | None = None  # the reply observed just now (a 429's)
        self._started = 0
        self._slot_pump: asyncio.Task[None] | None = None
        self._credit_pump: asyncio.Task[None] | None = None
        self._leasing = 0  # leases at the actor now
        self._timer: asyncio.Task[None] | None = None
        self.lost: LimiterLost | None = None  # set for good once no lease can be had: every call then fails

    # -- the Limiter protocol ----------------------------------------------
    @asynccontextmanager
    async def slot(self, token_cost: int = 0) -> AsyncIterator[Ticket]:
        """Hold one admitted call: a leased slot and, with rpm/tpm, a credit; the slot is kept while fresh."""
        if self.lost is not None:
            raise self.lost
        start = self._clock.now()
        cost = max(token_cost, 0)
        waiter = _Waiter(min(cost, self.settings.tpm) if self.settings.tpm else cost)
        self._waiters.append(waiter)
        self._dispatch()
        if waiter.slot_deadline is None:
            self._start_pumps()
            try:
                await waiter.ready.wait()
            except BaseException:  # cancelled while waiting: give back what it may just have been given
                if waiter.slot_deadline is not None:
                    self._free(waiter.slot_deadline)
                elif waiter in self._waiters:
                    self._waiters.remove(waiter)
                raise
            if waiter.slot_deadline is None:
                assert self.lost is not None
                raise self.lost
        deadline = waiter.slot_deadline
        try:  # the call starts when admitted: before its credit's deadline
            yield Ticket(started_at=waiter.admitted_at, queued_s=waiter.admitted_at - start, token_cost=waiter.cost)
        finally:
            self._free(deadline)

    def on_rate_limited(self, ticket: Ticket) -> None:
        readings, self._last_readings = self._last_readings, None
        self._readings = None  # sent with the 429
        self._credited = self._credited or (self.settings.pacing and self.settings.adaptive)
        self._leases.rate_limited(self.worker, self.model, self._clock.now() - ticket.started_at,
                                  ticket.token_cost, readings)

    async def on_success(self) -> None:
        self._last_readings = None
        self._replies += 1
        if self._waiters:  # saturated here; the actor checks it is saturated overall
            self._successes += 1

    def observe(self, headers: Mapping[str, str] | None, ticket: Ticket | None = None) -> None:
        """Read the reply's rate-limit headers (as ``ModelLimiter`` does); the actor's pace gets them with the
        next lease or release (the latest reply's only: one round trip per reply would cost more than it
        tells), or at once with a 429. ``ticket`` is not used: the actor's credits are not counted per
        request, so its readings set no ceiling (``_pace.Window.fit``)."""
        if self.settings.pacing:
            self._readings = self._last_readings = readings = read_limit_headers(headers) if headers else {}
            self._credited = self._credited or bool(readings)

    # -- spending what is held -----------------------------------------------
    def _prune(self, now: float) -> None:
        """Stale idle slots and expired credits become returns."""
        stale = bisect.bisect_right(self._idle, now)
        if stale:
            self._back_slots += stale
            del self._idle[:stale]
        if any(credit.deadline <= now for credit in self._credits):
            for credit in self._credits:
                if credit.deadline <= now:
                    self._give_back(credit)
            self._credits = deque(c for c in self._credits if c.deadline > now)

    def _give_back(self, credit: _Credit) -> None:
        if credit.requests or credit.tokens:
            self._back_credits[credit.grant_id] = (credit.requests, credit.tokens)

    def _covers(self, costs: list[int]) -> int:
        """How many calls of ``costs`` (in order) the held credits pay for."""
        requests = sum(c.requests for c in self._credits)
        tokens = sum(c.tokens for c in self._credits)
        n = 0
        for cost in costs:
            if requests < 1 or tokens < cost:
                break
            requests, tokens, n = requests - 1, tokens - cost, n + 1
        return n

    def _spend(self, cost: int) -> None:
        """One request and ``cost`` tokens from the oldest credits."""
        need_request = True
        for credit in self._credits:
            if need_request and credit.requests:
                credit.requests -= 1
                need_request = False
            take = min(cost, credit.tokens)
            credit.tokens -= take
            cost -= take
        while self._credits and not (self._credits[0].requests or self._credits[0].tokens):
            self._credits.popleft()

    def _dispatch(self) -> None:
        """Admit waiting calls, first come first served, while fresh slots (and credits) last."""
        now = self._clock.now()
        self._prune(now)
        while self._waiters and self._idle:
            waiter = self._waiters[0]
            if self._credited:
                if not self._covers([waiter.cost]):
                    break
                self._spend(waiter.cost)
            self._waiters.popleft()
            waiter.slot_deadline = self._idle.pop(0)  # the stalest first: it would expire soonest
            waiter.admitted_at = now
            self._started += 1
            self.calls += 1
            waiter.ready.set()

    def _free(self, deadline: float) -> None:
        if deadline > self._clock.now():
            bisect.insort(self._idle, deadline)
        else:
            self._back_slots += 1
        self._dispatch()
        self._hand_back()

    def _hand_back(self) -> None:
        """Returns go with the next lease, or now if none is due or one is already at the actor (perhaps
        waiting for them); and the leases the waiting calls need are under way."""
        if not self._waiters:
            self._settle()
            return
        if self._leasing and (self._back_slots or self._back_credits):
            self._release()
        self._start_pumps()
        self._arm()

    # -- talking to the actor ------------------------------------------------
    def _report(self) -> Report:
        report = Report(slots=self._back_slots, credits=self._back_credits, successes=self._successes,
                        replies=self._replies, started=self._started, readings=self._readings)
        self._back_slots, self._back_credits, self._successes, self._started = 0, {}, 0, 0
        self._replies, self._readings = 0, None
        return report

    def _slot_ask(self) -> Ask | None:
        """More slots for the calls waiting beyond the idle ones, with credits for the calls they will serve."""
        idle, waiting = len(self._idle), len(self._waiters)
        if waiting <= idle:
            return None
        slots = min(waiting - idle, self._batch)
        calls: tuple[int, ...] = ()
        covered = 0
        if self._credited:
            costs = [w.cost for w in islice(self._waiters, idle + slots)]
            covered = max(0, self._covers(costs) - idle)
            calls = tuple(costs[idle + covered:])
        return Ask(slots=slots, calls=calls, covered=covered, report=self._report())

    def _uncovered(self) -> list[int]:
        """The costs of the waiting calls that have an idle slot to go to but no credit yet."""
        if not self._credited:
            return []
        costs = [w.cost for w in islice(self._waiters, len(self._idle))]
        return costs[self._covers(costs):]

    def _credit_ask(self) -> Ask | None:
        """Credits for the calls an idle slot is waiting to serve."""
        uncovered = self._uncovered()
        return Ask(calls=tuple(uncovered[: self._batch]), report=self._report()) if uncovered else None

    def _start_pumps(self) -> None:
        """A lease loop for slots and, apart (so a slot wait never holds up credits for slots in hand), for credits."""
        self._prune(self._clock.now())
        loop = asyncio.get_running_loop()
        if self._slot_pump is None and len(self._waiters) > len(self._idle):
            self._slot_pump = loop.create_task(self._lease_while(self._slot_ask, "_slot_pump"))
        if self._credit_pump is None and self._uncovered():
            self._credit_pump = loop.create_task(self._lease_while(self._credit_ask, "_credit_pump"))

    async def _lease_while(self, ask_for: Callable[[], Ask | None], name: str) -> None:
        """Lease what ``ask_for`` says, one lease at a time, until it asks for nothing."""
        try:
            while True:
                self._prune(self._clock.now())
                ask = ask_for()
                if ask is None:
                    break
                sent, grant = await self._lease(ask)
                self._absorb(grant, sent + grant.waited + grant.ttl)
        except LimiterLost as exc:  # the actor is gone or refused: every waiting call fails with the reason
            self.lost = exc
            while self._waiters:
                self._waiters.popleft().ready.set()
        finally:
            setattr(self, name, None)
        self._hand_back()

    async def _lease(self, ask: Ask) -> tuple[float, Grant]:
        """One lease (when it was sent, the grant), the same ``ask`` again after a transient failure (its report
        must reach the actor once); ``LimiterLost`` when reclaimed, the actor died, or every retry failed."""
        for delay in (*RETRY_DELAYS, None):
            sent = self._clock.now()
            self._leasing += 1
            try:
                grant = await self._leases.lease(self.worker, self.model, self.settings, ask)
            except Exception as exc:
                if delay is None or _permanent(exc):
                    raise LimiterLost(f"worker {self.worker}: no lease for model {self.model!r} from the global "
                                      f"limiter ({type(exc).__name__}: {exc})") from exc
            else:
                self.leases += 1
                if not (grant.slots or grant.calls):
                    raise LimiterLost(f"worker {self.worker}: the limiter actor reclaimed its leases "
                                      f"for model {self.model!r}")
                return sent, grant
            finally:
                self._leasing -= 1
            await self._clock.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _absorb(self, grant: Grant, deadline: float) -> None:
        self._credited = self._credited or grant.paced
        for _ in range(grant.slots):
            bisect.insort(self._idle, deadline)
        if grant.calls:
            self._credits.append(_Credit(grant.grant_id, deadline, grant.calls, grant.tokens))
        self._dispatch()
        if not self._waiters:  # the calls it was for were served meanwhile: its slots go straight back
            unneeded = min(grant.slots, len(self._idle))
            self._back_slots += unneeded
            del self._idle[len(self._idle) - unneeded:]
        self._start_pumps()

    def _settle(self) -> None:
        """With no call waiting: send back what went stale (and the counts, when nothing is held)."""
        self._prune(self._clock.now())
        holding = bool(self._idle or self._credits)
        if self._back_slots or self._back_credits or (
                not holding and (self._started or self._replies or self._readings is not None)):
            self._release()
        self._arm()

    def _release(self) -> None:
        self._leases.release(self.worker, self.model, self._report())

    def _arm(self) -> None:
        """Wake up when the next held slot or credit goes stale, so it goes back even if nothing else happens."""
        if self._timer is None and (self._idle or self._credits):
            deadline = min([c.deadline for c in self._credits] + self._idle[:1])
            self._timer = asyncio.get_running_loop().create_task(self._expire_at(deadline))

    async def _expire_at(self, deadline: float) -> None:
        await self._clock.sleep(deadline - self._clock.now())
        self._timer = None
        self._dispatch()
        self._hand_back()
