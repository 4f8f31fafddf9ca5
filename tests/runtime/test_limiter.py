"""Per-model limits: sliding RPM/TPM windows on virtual time and the adaptive (AIMD) concurrency cap."""

from __future__ import annotations

from collections import Counter
from contextlib import AsyncExitStack

import anyio
import pytest

from mpcbench_async.runtime import AdaptiveConcurrency, FakeClock, LimitSettings, ModelLimiter
from mpcbench_async.runtime._limiter import SlidingWindow


def max_in_any_window(events: list[tuple[float, int]], window: float = 60.0) -> int:
    """The largest total cost of events starting inside any half-open span [t, t + window)."""
    return max(sum(cost for s, cost in events if t <= s < t + window) for t, _ in events)


class TestSlidingWindow:
    async def test_rpm_never_exceeded_in_any_window(self):
        """Fifty acquisitions from five tasks at 10 per minute start in five batches of ten, 60 s apart."""
        clock = FakeClock()
        window = SlidingWindow(10, clock=clock)
        starts: list[float] = []

        async def client() -> None:
            for _ in range(10):
                await window.acquire()
                starts.append(clock.now())

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(client)

        assert 50 == len(starts)
        assert 10 == max_in_any_window([(t, 1) for t in starts])
        assert {0.0: 10, 60.0: 10, 120.0: 10, 180.0: 10, 240.0: 10} == Counter(starts)
        assert 240.0 == clock.now()

    async def test_acquire_returns_the_seconds_waited(self):
        """The first acquisitions do not wait; the one over capacity waits until the oldest entry expires."""
        clock = FakeClock()
        window = SlidingWindow(2, clock=clock)
        assert 0.0 == await window.acquire()
        clock.advance(15.0)
        assert 0.0 == await window.acquire()
        assert 45.0 == await window.acquire()
        assert [45.0] == clock.slept

    async def test_tpm_costs_never_exceed_capacity_in_any_window(self):
        """Variable token costs are admitted so that no 60 s span holds more than the capacity."""
        clock = FakeClock()
        window = SlidingWindow(100, clock=clock)
        costs = [30, 50, 40, 20, 70, 10, 60, 90, 5, 25, 45, 35]
        admitted: list[tuple[float, int]] = []

        async def client(mine: list[int]) -> None:
            for cost in mine:
                await window.acquire(cost)
                admitted.append((clock.now(), cost))

        async with anyio.create_task_group() as tg:
            for i in range(3):
                tg.start_soon(client, costs[i::3])

        assert sorted(costs) == sorted(cost for _, cost in admitted)
        assert max_in_any_window(admitted) <= 100

    async def test_fifo_waiters_get_exact_start_times(self):
        """A single client's token costs start exactly when the window has room for them."""
        clock = FakeClock()
        window = SlidingWindow(100, clock=clock)
        admitted = []
        for cost in [60, 30, 50, 20, 80]:
            await window.acquire(cost)
            admitted.append((clock.now(), cost))
        assert [(0.0, 60), (0.0, 30), (60.0, 50), (60.0, 20), (120.0, 80)] == admitted

    async def test_cost_above_capacity_is_clamped(self):
        """A request larger than the capacity is admitted as a full window instead of waiting forever."""
        clock = FakeClock()
        window = SlidingWindow(10, clock=clock)
        assert 0.0 == await window.acquire(25)
        assert 60.0 == await window.acquire(1)
        assert [60.0] == clock.slept

    def test_capacity_must_be_positive(self):
        """A zero capacity is rejected when the window is built."""
        with pytest.raises(ValueError, match="capacity must be positive, got 0"):
            SlidingWindow(0, clock=FakeClock())


class TestModelLimiter:
    async def test_rpm_limits_concurrent_slots(self):
        """Fifty slots at rpm=10 from several tasks never start more than ten per minute, paced 6 s apart."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(max_concurrency=8, rpm=10), clock=clock)
        starts: list[float] = []

        async def client() -> None:
            for _ in range(10):
                async with limiter.slot() as ticket:
                    starts.append(clock.now())
                    assert clock.now() == ticket.started_at

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(client)

        assert 50 == len(starts)
        assert 10 == max_in_any_window([(t, 1) for t in starts])
        assert [6.0 * i for i in range(50)] == sorted(starts)
        assert 0 == limiter.concurrency.in_flight

    async def test_tpm_costs_are_respected(self):
        """Token costs through slots never sum past the TPM capacity within any minute."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(tpm=1000), clock=clock)
        admitted: list[tuple[float, int]] = []

        async def client(cost: int) -> None:
            async with limiter.slot(cost):
                admitted.append((clock.now(), cost))

        async with anyio.create_task_group() as tg:
            for cost in [400, 300, 500, 200, 600, 100, 700, 1500]:
                tg.start_soon(client, cost)

        assert 8 == len(admitted)
        assert max_in_any_window([(t, min(c, 1000)) for t, c in admitted]) <= 1000

    async def test_ticket_reports_queueing_time(self):
        """The ticket of a request that waited for the RPM window carries its start and queue time."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=1), clock=clock)
        async with limiter.slot() as first:
            pass
        async with limiter.slot() as second:
            pass
        assert (0.0, 0.0) == (first.started_at, first.queued_s)
        assert (60.0, 60.0) == (second.started_at, second.queued_s)

    async def test_reduced_cap_bounds_concurrent_slots(self):
        """A 429 while all 8 slots are being sent halves the cap to 4; then no more than four slots are held at
        once."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(max_concurrency=8), clock=clock)
        limiter.observe(None)  # the first reply has come: no slow start
        async with AsyncExitStack() as stack:
            tickets = [await stack.enter_async_context(limiter.slot()) for _ in range(8)]
            clock.advance(1.0)
            limiter.on_rate_limited(tickets[0])
        assert 4 == limiter.concurrency.cap

        release = anyio.Event()
        inside = 0
        max_inside = 0
        done = 0

        async def client() -> None:
            nonlocal inside, max_inside, done
            async with limiter.slot():
                inside += 1
                max_inside = max(max_inside, inside)
                await release.wait()
                inside -= 1
            done += 1

        async with anyio.create_task_group() as tg:
            for _ in range(10):
                tg.start_soon(client)
            await anyio.wait_all_tasks_blocked()
            assert 4 == inside
            release.set()

        assert 4 == max_inside
        assert 10 == done
        assert 0 == limiter.concurrency.in_flight


class TestAdaptiveConcurrency:
    def test_rate_limit_halves_once_per_episode(self):
        """A 429 halves the cap; another 429 from a request started before the decrease does not."""
        clock = FakeClock()
        cap = AdaptiveConcurrency(16, clock=clock)
        clock.advance(5.0)
        cap.on_rate_limited(started_at=1.0)
        assert 8 == cap.cap
        cap.on_rate_limited(started_at=2.0)
        assert 8 == cap.cap
        assert 1 == cap.decreases

    def test_rate_limit_after_decrease_shrinks_again(self):
        """A 429 from a request started after the last decrease starts a new episode."""
        clock = FakeClock()
        cap = AdaptiveConcurrency(16, clock=clock)
        clock.advance(5.0)
        cap.on_rate_limited(started_at=1.0)
        clock.advance(5.0)
        cap.on_rate_limited(started_at=6.0)
        assert 4 == cap.cap
        assert 2 == cap.decreases

    def test_cap_never_below_minimum(self):
        """Repeated episodes stop shrinking the cap at its minimum."""
        clock = FakeClock()
        cap = AdaptiveConcurrency(16, minimum=3, clock=clock)
        for _ in range(6):
            clock.advance(1.0)
            cap.on_rate_limited(started_at=clock.now())
        assert 3 == cap.cap

    def test_not_adaptive_ignores_rate_limits(self):
        """With adaptation off the cap stays at its maximum."""
        cap = AdaptiveConcurrency(16, adaptive=False, clock=FakeClock())
        cap.on_rate_limited(started_at=0.0)
        assert 16 == cap.cap

    async def test_success_while_saturated_grows_by_one_per_cap(self):
        """At cap 4 and saturated, three successes keep the cap at 4 and the fourth raises it to 5."""
        clock = FakeClock()
        cap = AdaptiveConcurrency(8, clock=clock)
        clock.advance(1.0)
        cap.on_rate_limited(started_at=1.0)
        assert 4 == cap.cap
        for _ in range(4):
            await cap.acquire()
        caps = []
        for _ in range(4):
            await cap.on_success()
            caps.append(cap.cap)
        assert [4, 4, 4, 5] == caps

    async def test_success_while_saturated_grows_back_to_maximum(self):
        """Successes while saturated grow the cap back to its maximum and no further."""
        clock = FakeClock()
        cap = AdaptiveConcurrency(8, clock=clock)
        clock.advance(1.0)
        cap.on_rate_limited(started_at=1.0)
        for _ in range(200):
            while cap.in_flight < cap.cap:
                await cap.acquire()
            await cap.on_success()
        assert 8 == cap.cap
        assert 8.0 == cap.limit

    async def test_success_when_not_saturated_does_not_grow(self):
        """Successes while fewer than cap requests are in flight leave the cap unchanged."""
        clock = FakeClock()
        cap = AdaptiveConcurrency(8, clock=clock)
        clock.advance(1.0)
        cap.on_rate_limited(started_at=1.0)
        for _ in range(3):
            await cap.acquire()
        for _ in range(50):
            await cap.on_success()
        assert 4 == cap.cap
        assert 4.0 == cap.limit

    async def test_growth_wakes_a_waiter(self):
        """When the cap grows, a task waiting for a slot is admitted."""
        clock = FakeClock()
        cap = AdaptiveConcurrency(2, clock=clock)
        clock.advance(1.0)
        cap.on_rate_limited(started_at=1.0)
        await cap.acquire()
        admitted = anyio.Event()

        async def waiter() -> None:
            await cap.acquire()
            admitted.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()
            assert not admitted.is_set()
            await cap.on_success()
            await admitted.wait()
        assert 2 == cap.in_flight


class TestPacing:
    async def test_paced_window_spreads_admissions_after_the_burst(self):
        """With a burst of 3 at 60 per minute, three start at once and the rest one second apart."""
        clock = FakeClock()
        window = SlidingWindow(60, clock=clock, burst=3)
        starts = []
        for _ in range(8):
            await window.acquire()
            starts.append(clock.now())
        assert [0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0] == starts

    async def test_a_cost_above_the_burst_waits_for_an_empty_bucket(self):
        """A request costing more than the burst is admitted once the pacing bucket has drained."""
        clock = FakeClock()
        window = SlidingWindow(600, clock=clock, burst=30)
        await window.acquire(30)
        await window.acquire(100)
        assert 3.0 == clock.now()
