"""The global limit's state machine (``GlobalLimits``) and a worker's leased share of it, without Ray.

Virtual time: ``FakeClock`` for the actor's side (a waiting lease advances it), and a manual clock for the
workers' side, where time moves only when the test says so (a worker's idle slot goes back when it does).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import re

import pytest

from mpcbench_async.distributed._leased import LeasedLimiter, LimiterLost
from mpcbench_async.distributed._limits import Ask, GlobalLimits, Report
from mpcbench_async.runtime import FakeClock, LimitSettings, Ticket

M = "sim/echo"


def limits(ttl: float = 1.0) -> tuple[GlobalLimits, FakeClock]:
    clock = FakeClock()
    return GlobalLimits(ttl=ttl, clock=clock), clock


def slots(g: GlobalLimits) -> tuple[int, int, int]:
    model = g.stats()[M]
    return model["outstanding"], model["peak_outstanding"], model["cap"]


async def pending(task: asyncio.Task) -> bool:
    """True if ``task`` is still waiting once everything runnable has run."""
    for _ in range(5):
        await asyncio.sleep(0)
    return not task.done()


class TestSlots:
    async def test_slots_are_granted_up_to_the_cap_and_a_lease_waits_for_one(self):
        """Cap 4: A asks 3 and gets 3, B asks 3 and gets the 1 left, C waits until A gives 2 back, then gets 2."""
        g, _ = limits()
        settings = LimitSettings(max_concurrency=4)
        assert 3 == (await g.lease("A", M, settings, Ask(slots=3))).slots
        assert 1 == (await g.lease("B", M, settings, Ask(slots=3))).slots
        c = asyncio.create_task(g.lease("C", M, settings, Ask(slots=2)))
        assert await pending(c)
        g.release("A", M, Report(slots=2))
        assert 2 == (await c).slots
        assert (4, 4, 4) == slots(g)

    async def test_a_429_from_one_worker_halves_what_another_gets(self):
        """A holds all 8; its 429 halves the cap (a second 429 of the same episode does not); B then gets 4."""
        g, clock = limits()
        settings = LimitSettings(max_concurrency=8)
        await g.lease("A", M, settings, Ask(slots=8))
        clock.advance(1.0)
        g.rate_limited("A", M, age_s=0.5)
        g.rate_limited("A", M, age_s=0.7)  # started before the decrease: the same episode
        g.release("A", M, Report(slots=8))
        assert 4 == (await g.lease("B", M, settings, Ask(slots=8))).slots
        assert (4, 8, 4, 1) == (*slots(g), g.stats()[M]["decreases"])

    async def test_saturated_successes_grow_the_cap_back_by_one_per_cap(self):
        """Cap 4 after a 429, all 4 leased: 3 successes do nothing, the 4th (from another worker) adds 1."""
        g, _ = limits()
        settings = LimitSettings(max_concurrency=8)
        await g.lease("A", M, settings, Ask(slots=1))
        g.rate_limited("A", M, age_s=0.0)
        await g.lease("B", M, settings, Ask(slots=3))
        g.release("A", M, Report(successes=3))
        assert 4 == slots(g)[2]
        g.release("B", M, Report(successes=1))
        assert (4, 5) == slots(g)[::2]
        g.release("B", M, Report(slots=1, successes=5))  # not saturated (3 of 5): no growth
        assert (3, 5) == slots(g)[::2]

    async def test_reclaim_frees_a_dead_workers_slots_and_voids_its_waiting_lease(self):
        """A dies holding both slots: B's waiting lease gets them; A's own waiting lease then gets nothing."""
        g, _ = limits()
        settings = LimitSettings(max_concurrency=2)
        await g.lease("A", M, settings, Ask(slots=2))
        b = asyncio.create_task(g.lease("B", M, settings, Ask(slots=2)))
        a_again = asyncio.create_task(g.lease("A", M, settings, Ask(slots=1)))
        assert await pending(b)
        g.reclaim("A")
        assert 2 == (await b).slots
        assert await pending(a_again)
        g.release("B", M, Report(slots=2))
        grant = await a_again
        assert (0, 0, (0, 2, 2)) == (grant.slots, grant.calls, slots(g))

    async def test_a_lease_arriving_after_the_reclaim_gets_nothing(self):
        """A's last lease reaches the actor after the reclaim (sent just before A died): an empty grant, and
        the slot A held stays free for B; a late release from A changes nothing."""
        g, _ = limits()
        settings = LimitSettings(max_concurrency=2)
        await g.lease("A", M, settings, Ask(slots=1))
        g.reclaim("A")
        late = await g.lease("A", M, settings, Ask(slots=2, calls=(0,)))
        g.release("A", M, Report(slots=1))
        assert (0, 0, (0, 1, 2)) == (late.slots, late.calls, slots(g))
        assert 2 == (await g.lease("B", M, settings, Ask(slots=2))).slots


async def past_slow_start(g: GlobalLimits, settings: LimitSettings) -> None:
    """A worker reports a reply without rate-limit headers: the configured burst applies from then on."""
    await g.lease("A", M, settings, Ask())
    g.release("A", M, Report(replies=1, readings={}))


class TestCredits:
    async def test_credits_come_as_one_burst_then_at_the_rate(self):
        """rpm 100 in 6-s buckets (burst 5, one per 0.6 s), after a first reply: 8 asked get the burst of 5; the
        next waits 0.6 s and gets 1."""
        g, clock = limits()
        settings = LimitSettings(rpm=100, bucket_s=6)
        await past_slow_start(g, settings)
        first = await g.lease("A", M, settings, Ask(calls=(0,) * 8))
        second = await g.lease("B", M, settings, Ask(calls=(0,) * 3))
        assert [(5, 0.0), (1, 0.6)] == [(first.calls, first.waited), (second.calls, pytest.approx(second.waited))]
        assert 0.6 == pytest.approx(clock.now())

    async def test_a_lease_lingers_up_to_a_quarter_ttl_for_more_credits(self):
        """rpm 600 in minute buckets (burst 30, one per 0.1 s), ttl 1: after the burst, a lease waits 0.1 s for
        one, then 0.2 more."""
        g, clock = limits(ttl=1.0)
        settings = LimitSettings(rpm=600, bucket_s=60)
        await past_slow_start(g, settings)
        await g.lease("A", M, settings, Ask(calls=(0,) * 30))
        grant = await g.lease("A", M, settings, Ask(calls=(0,) * 8))
        assert (3, 0.3) == (grant.calls, pytest.approx(clock.now()))

    async def test_each_grant_counts_in_the_window_for_window_plus_ttl(self):
        """rpm 10 unpaced, ttl 1: 10 credits at t=0 block the next until t=61 (a call may start up to t=1)."""
        g, clock = limits(ttl=1.0)
        settings = LimitSettings(rpm=10, pacing=False)
        assert 10 == (await g.lease("A", M, settings, Ask(calls=(0,) * 10))).calls
        clock.advance(60.5)
        grant = await g.lease("B", M, settings, Ask(calls=(0,)))
        assert (1, 0.5, 61.0) == (grant.calls, pytest.approx(grant.waited), pytest.approx(clock.now()))

    async def test_unused_credits_given_back_leave_the_window(self):
        """rpm 10 unpaced: A gets all 10, gives 6 back unused; B gets those 6 at once, no more."""
        g, clock = limits()
        settings = LimitSettings(rpm=10, pacing=False)
        grant = await g.lease("A", M, settings, Ask(calls=(0,) * 10))
        g.release("A", M, Report(credits={grant.grant_id: (6, 0)}))
        assert 6 == (await g.lease("B", M, settings, Ask(calls=(0,) * 8))).calls
        assert (0.0, 10) == (clock.now(), g.stats()[M]["admitted"])

    async def test_tokens_are_granted_per_whole_call_and_a_cost_above_the_limit_is_clamped(self):
        """tpm 1000 unpaced: calls of 400 get 2 (800); later, a call of 5000 is charged 1000, the whole minute
        (the grant covers the 5000 the call will spend)."""
        g, clock = limits(ttl=1.0)
        settings = LimitSettings(tpm=1000, pacing=False)
        grant = await g.lease("A", M, settings, Ask(calls=(400, 400, 400)))
        assert (2, 800) == (grant.calls, grant.tokens)
        big = await g.lease("A", M, settings, Ask(calls=(5000,)))
        assert (1, 5000, 61.0) == (big.calls, big.tokens, clock.now())

    async def test_credits_go_only_to_calls_that_will_have_a_slot(self):
        """Cap 1, rpm 60 unpaced: 3 calls waiting, none holding a slot: 1 slot, so 1 credit, not 3."""
        g, _ = limits()
        grant = await g.lease("A", M, LimitSettings(max_concurrency=1, rpm=60, pacing=False),
                              Ask(slots=3, calls=(0, 0, 0)))
        assert (1, 1) == (grant.slots, grant.calls)


class ManualClock:
    """Time moves only when ``advance`` says; sleepers wake in order of their deadlines."""

    def __init__(self) -> None:
        self._now = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Event]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        woken = asyncio.Event()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._order), woken))
        await woken.wait()

    async def advance(self, seconds: float) -> None:
        """Let everything runnable run (and start its sleeps), move time on, wake who is due, let them run."""
        for _ in range(10):
            await asyncio.sleep(0)
        self._now += seconds
        while self._sleepers and self._sleepers[0][0] <= self._now:
            heapq.heappop(self._sleepers)[2].set()
        for _ in range(10):
            await asyncio.sleep(0)


class InProcess:
    """``Leases`` on a ``GlobalLimits`` in this process: what the Ray actor does, minus Ray."""

    def __init__(self, g: GlobalLimits) -> None:
        self.g = g

    async def lease(self, worker, model, settings, ask):
        return await self.g.lease(worker, model, settings, ask)

    def release(self, worker, model, report):
        self.g.release(worker, model, report)

    def rate_limited(self, worker, model, age_s, token_cost, readings):
        self.g.rate_limited(worker, model, age_s, token_cost, readings)


def workers(settings: LimitSettings, *names: str, ttl: float = 1.0) -> tuple[GlobalLimits, ManualClock, list]:
    clock = ManualClock()
    g = GlobalLimits(ttl=ttl, clock=clock)
    return g, clock, [LeasedLimiter(InProcess(g), name, M, settings, clock=clock) for name in names]


class Holding:
    """``n`` calls holding their slots until ``done``; ``admitted`` counts those that got in."""

    def __init__(self, limiter: LeasedLimiter, n: int) -> None:
        self.admitted = 0
        self.tickets: list[Ticket] = []
        self.done = asyncio.Event()
        self.tasks = [asyncio.create_task(self._call(limiter)) for _ in range(n)]

    async def _call(self, limiter: LeasedLimiter) -> None:
        async with limiter.slot() as ticket:
            self.admitted += 1
            self.tickets.append(ticket)
            await self.done.wait()

    async def finish(self) -> None:
        self.done.set()
        await asyncio.gather(*self.tasks)


class TestLeasedLimiter:
    async def test_a_fresh_slot_is_reused_without_a_lease_and_an_idle_one_goes_back_when_stale(self):
        """Five calls in turn make one lease; after the TTL the idle slot is back at the actor; the next call leases."""
        g, clock, (a,) = workers(LimitSettings(max_concurrency=4), "A")
        for _ in range(5):
            async with a.slot():
                pass
        assert (1, 5, 1) == (a.leases, a.calls, slots(g)[0])
        await clock.advance(1.0)
        assert (0, 5) == (slots(g)[0], g.stats()[M]["started"])
        async with a.slot():
            pass
        assert 2 == a.leases

    async def test_a_429_at_one_worker_shrinks_the_other_and_idle_slots_are_not_hoarded(self):
        """Cap 4, pacing off (only the cap adapts); A's call is answered 429 (cap 2) and its slot sits idle: B gets
        1 of 4 asked, the 2nd when A's slot goes stale and back, and no more while it holds them."""
        g, clock, (a, b) = workers(LimitSettings(max_concurrency=4, pacing=False), "A", "B")
        async with a.slot() as ticket:
            await clock.advance(0.1)
            a.on_rate_limited(ticket)
        calls = Holding(b, 4)
        await clock.advance(0.0)
        assert (1, 2) == (calls.admitted, slots(g)[2])
        await clock.advance(1.0)
        assert (2, 2) == (calls.admitted, slots(g)[0])
        await calls.finish()
        assert 4 == calls.admitted

    async def test_the_headers_one_worker_reads_pace_every_worker(self):
        """Nothing configured. A's reply tells a 1-s bucket of 100 a second (60 left, full in 0.4 s); with A's
        stale slot the actor gets the reading: it learns 6000 a minute, and from then on B's call needs a credit
        (the grant says the pace binds), as the in-process limiter would pace it."""
        g, clock, (a, b) = workers(LimitSettings(max_concurrency=4), "A", "B")
        async with a.slot():
            a.observe({"x-ratelimit-limit-requests": "6000", "x-ratelimit-remaining-requests": "60",
                       "x-ratelimit-reset-requests": "0.4s"})
            await a.on_success()
        assert (0, 0) == (g.stats()[M]["learned_rpm"], g.stats()[M]["admitted"])
        await clock.advance(1.0)
        assert (6000, 0) == (g.stats()[M]["learned_rpm"], g.stats()[M]["admitted"])
        async with b.slot():
            pass
        assert (1, 2) == (g.stats()[M]["admitted"], b.leases)

    async def test_a_429_without_headers_drives_the_actors_rate_one_with_an_empty_bucket_does_not(self):
        """As in-process: a 429 whose headers show an empty bucket is explained (the rate stays off); one with no
        headers engages the AIMD rate once per episode."""
        g, clock, (a,) = workers(LimitSettings(max_concurrency=4), "A")
        async with a.slot() as ticket:
            a.observe({"x-ratelimit-limit-requests": "6000", "x-ratelimit-remaining-requests": "0",
                       "x-ratelimit-reset-requests": "1s"})
            a.on_rate_limited(ticket)
        assert 0 == g.stats()[M]["rate_decreases"]
        await clock.advance(0.5)
        async with a.slot() as ticket:
            a.observe(None)
            a.on_rate_limited(ticket)
        assert 1 == g.stats()[M]["rate_decreases"]

    async def test_calls_waiting_lease_a_few_slots_at_a_time_and_share_them(self):
        """Cap 3, 10 calls at once in one worker: one lease of 3 slots, then the freed slots serve the rest."""
        g, _, (a,) = workers(LimitSettings(max_concurrency=3), "A")
        calls = Holding(a, 10)
        await pending(calls.tasks[-1])
        assert (3, 1) == (calls.admitted, a.leases)
        await calls.finish()
        assert (10, 3) == (calls.admitted, slots(g)[1])

    async def test_calls_waiting_together_get_their_slots_and_credits_in_one_lease(self):
        """rpm 60 unpaced: 6 calls at once make one lease of 6 slots and 6 credits."""
        g, clock, (a,) = workers(LimitSettings(max_concurrency=8, rpm=60, pacing=False), "A")
        calls = Holding(a, 6)
        await clock.advance(0.0)
        await calls.finish()
        assert (6, 1, 6) == (calls.admitted, a.leases, g.stats()[M]["admitted"])

    async def test_a_reclaimed_worker_fails_its_waiting_calls_with_the_reason(self):
        """B waits for the only slot, then the driver reclaims B: its call fails with LimiterLost."""
        g, clock, (a, b) = workers(LimitSettings(max_concurrency=1), "A", "B")
        async with a.slot():
            waiting = asyncio.create_task(Holding(b, 1).finish())
            await clock.advance(0.0)
            g.reclaim("B")
        await clock.advance(1.0)  # A's idle slot goes back; B's waiting lease gets it, and the actor voids it
        with pytest.raises(LimiterLost, match="worker B: the limiter actor reclaimed its leases for model 'sim/echo'"):
            await waiting


class Failing(InProcess):
    """``InProcess`` whose first ``failures`` leases raise ``error`` (counted in ``attempts``)."""

    def __init__(self, g: GlobalLimits, error: Exception, failures: int) -> None:
        super().__init__(g)
        self.error, self.failures, self.attempts = error, failures, 0

    async def lease(self, worker, model, settings, ask):
        self.attempts += 1
        if self.attempts <= self.failures:
            raise self.error
        return await super().lease(worker, model, settings, ask)


class ActorDiedError(Exception):
    """Named as Ray's: the limiter tells a dead actor from an unreachable one by the class name (Ray is optional)."""


class TestLeaseFailures:
    async def test_a_transient_failure_is_retried_and_the_call_admitted(self):
        """Two failed round trips (the actor briefly unreachable): leased again after 0.1 s and 0.2 s, admitted."""
        clock = ManualClock()
        leases = Failing(GlobalLimits(ttl=1.0, clock=clock), ConnectionError("unreachable"), failures=2)
        limiter = LeasedLimiter(leases, "A", M, LimitSettings(max_concurrency=2), clock=clock)
        calls = Holding(limiter, 1)
        await clock.advance(0.1)
        await clock.advance(0.2)
        await calls.finish()
        assert (1, 3, 1, None) == (calls.admitted, leases.attempts, limiter.leases, limiter.lost)

    async def test_every_retry_failing_loses_the_limiter(self):
        """Six failed round trips (0.1 + 0.2 + 0.4 + 0.8 + 1.6 s of retries): the waiting call fails with
        LimiterLost naming the cause, and so does every later call, without another round trip."""
        clock = ManualClock()
        leases = Failing(GlobalLimits(ttl=1.0, clock=clock), ConnectionError("unreachable"), failures=99)
        limiter = LeasedLimiter(leases, "A", M, LimitSettings(max_concurrency=2), clock=clock)
        waiting = asyncio.create_task(Holding(limiter, 1).finish())
        for delay in (0.1, 0.2, 0.4, 0.8, 1.6):
            await clock.advance(delay)
        message = "worker A: no lease for model 'sim/echo' from the global limiter (ConnectionError: unreachable)"
        with pytest.raises(LimiterLost, match=re.escape(message)):
            await waiting
        with pytest.raises(LimiterLost):
            await Holding(limiter, 1).finish()
        assert 6 == leases.attempts

    async def test_a_dead_actor_is_not_retried(self):
        clock = ManualClock()
        leases = Failing(GlobalLimits(ttl=1.0, clock=clock), ActorDiedError("gone"), failures=99)
        limiter = LeasedLimiter(leases, "A", M, LimitSettings(max_concurrency=2), clock=clock)
        waiting = asyncio.create_task(Holding(limiter, 1).finish())
        await clock.advance(0.0)
        with pytest.raises(LimiterLost, match=re.escape("(ActorDiedError: gone)")):
            await waiting
        assert 1 == leases.attempts
