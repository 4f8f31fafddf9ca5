"""Every signal paces a model: headers with nothing configured, the configured burst, 429s alone (AIMD), the
slow start of an unconfigured model, and no lock convoy: admissions that need not wait never yield to the loop.

All on virtual time (``FakeClock``) or counted in event-loop iterations; nothing here waits in real time.
"""

from __future__ import annotations

import email.utils
from contextlib import AsyncExitStack
from datetime import UTC, datetime

import anyio
import anyio.lowlevel
import pytest

from mpcbench_async.llm import ModelConfig
from mpcbench_async.llm._config import ConfigError
from mpcbench_async.runtime import BucketReading, FakeClock, LimitSettings, ModelLimiter, Ticket, read_limit_headers
from mpcbench_async.runtime import _limiter as limiter_module
from mpcbench_async.runtime._limiter import AdaptiveRate

NOW = 1_800_000_000.0  # a wall time for reset moments


def openai(remaining: int, reset: str, limit: int = 1200, kind: str = "requests") -> dict[str, str]:
    return {f"x-ratelimit-limit-{kind}": str(limit), f"x-ratelimit-remaining-{kind}": str(remaining),
            f"x-ratelimit-reset-{kind}": reset}


async def starts(limiter: ModelLimiter, clock: FakeClock, n: int, cost: int = 0) -> list[float]:
    """The virtual start times of ``n`` slots taken one after another, rounded to the microsecond."""
    times = []
    for _ in range(n):
        async with limiter.slot(cost):
            times.append(round(clock.now(), 6))
    return times


def ticket(at: float, cost: int = 0) -> Ticket:
    return Ticket(started_at=at, queued_s=0.0, token_cost=cost)


class TestHeaderSpellings:
    def test_anthropic_headers_with_an_rfc3339_reset(self):
        """Anthropic's spelling: limit, remaining and the moment the bucket is full again, 0.5 s from now."""
        reset = datetime.fromtimestamp(NOW + 0.5, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        readings = read_limit_headers({"anthropic-ratelimit-requests-limit": "1200",
                                       "anthropic-ratelimit-requests-remaining": "10",
                                       "anthropic-ratelimit-requests-reset": reset,
                                       "Anthropic-RateLimit-Tokens-Limit": "80000",
                                       "anthropic-ratelimit-tokens-remaining": "80000",
                                       "anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:00Z"}, now=NOW)
        assert BucketReading(remaining=10.0, reset_s=0.5, per_minute=1200.0) == readings["requests"]
        assert BucketReading(remaining=80000.0, reset_s=0.0, per_minute=80000.0) == readings["tokens"]  # past: 0

    @pytest.mark.parametrize(("reset", "seconds"), [
        ("2", 2.0), ("0.25", 0.25), ("20ms", 0.02), ("6m0s", 360.0), ("1m30s", 90.0),
        (email.utils.formatdate(NOW + 30, usegmt=True), 30.0),
    ], ids=["seconds", "fraction", "ms", "minutes", "minutes-seconds", "http-date"])
    def test_resets_in_any_form_in_either_spelling(self, reset, seconds):
        """Seconds, Go durations and dates are all read, whichever spelling carries them."""
        for headers in ({"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": reset},
                        {"anthropic-ratelimit-requests-remaining": "3", "anthropic-ratelimit-requests-reset": reset}):
            assert seconds == read_limit_headers(headers, now=NOW)["requests"].reset_s

    @pytest.mark.parametrize("reset", ["2026-01-01T00:00:00", "tomorrow", ""])
    def test_a_moment_without_a_zone_or_garbage_gives_no_reading(self, reset):
        assert {} == read_limit_headers({"anthropic-ratelimit-requests-remaining": "3",
                                         "anthropic-ratelimit-requests-reset": reset}, now=NOW)

    def test_openai_spelling_wins_when_both_are_sent(self):
        headers = {**openai(7, "1s"), "anthropic-ratelimit-requests-remaining": "1",
                   "anthropic-ratelimit-requests-reset": "5s"}
        assert 7.0 == read_limit_headers(headers)["requests"].remaining


class TestHeadersWithNothingConfigured:
    async def test_the_headers_learn_a_requests_window(self):
        """No rpm: a reply saying 1200 a minute in a one-second bucket (20) paces at 20/s with a burst of 10."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(), clock=clock)
        assert None is limiter.requests
        limiter.observe(openai(19, "50ms"))
        assert limiter.requests is not None and limiter.requests.learned
        assert (1200, 10) == (limiter.requests.capacity, limiter.requests.burst)
        assert [0.0] * 10 + [0.05, 0.1] == await starts(limiter, clock, 12)

    async def test_the_headers_learn_a_tokens_window(self):
        """No tpm: 60000 tokens a minute metered per second (1000): 200-token calls, 500 at once, then 1000/s."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(), clock=clock)
        limiter.observe(openai(1000, "0s", limit=60000, kind="tokens"))
        assert (None, 500) == (limiter.requests, limiter.tokens.burst if limiter.tokens else None)
        assert [0.0, 0.0, 0.1, 0.3] == await starts(limiter, clock, 4, cost=200)

    async def test_anthropic_headers_learn_it_too(self):
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(), clock=clock)
        limiter.observe({"anthropic-ratelimit-requests-limit": "1200", "anthropic-ratelimit-requests-remaining": "0",
                         "anthropic-ratelimit-requests-reset": "1s"})
        assert limiter.requests is not None and 1200 == limiter.requests.capacity
        assert [0.05, 0.1] == await starts(limiter, clock, 2)  # 0 left: the next waits for a refill

    async def test_a_learned_window_follows_the_providers_limit_up_and_down(self):
        """A learned window takes each reply's limit as it is (a configured one is never raised)."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(), clock=clock)
        limiter.observe(openai(20, "0s", limit=1200))
        limiter.observe(openai(40, "0s", limit=2400))
        assert limiter.requests is not None and 2400 == limiter.requests.capacity
        limiter.observe(openai(10, "0s", limit=600))
        assert 600 == limiter.requests.capacity

    async def test_a_reply_without_headers_keeps_what_was_learned(self):
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(), clock=clock)
        limiter.observe(openai(19, "50ms"))
        limiter.observe(None)
        assert limiter.requests is not None and 10 == limiter.requests.burst

    async def test_no_limit_header_no_rate_to_learn(self):
        """remaining and reset alone do not tell the rate: nothing is learned (429s will drive the AIMD rate)."""
        limiter = ModelLimiter(LimitSettings(), clock=FakeClock())
        limiter.observe({"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "1s"})
        assert None is limiter.requests

    async def test_pacing_off_ignores_the_headers(self):
        limiter = ModelLimiter(LimitSettings(pacing=False), clock=FakeClock())
        limiter.observe(openai(0, "1s"))
        assert (None, None) == (limiter.requests, limiter.rate)


class TestConfiguredBurst:
    @pytest.mark.parametrize(("rpm", "bucket_s", "burst"), [
        (1200, 1.0, 10), (1200, 60.0, 60), (600, 1.0, 5), (60, 1.0, 1), (100_000, 1.0, 833), (1200, 0.5, 5)])
    def test_half_the_assumed_bucket_never_more_than_a_twentieth(self, rpm, bucket_s, burst):
        """A per-second bucket of 20 (rpm 1200) gets a burst of 10, never 60 (1/20 of the minute); a bucket of
        60 s keeps 1/20 of the minute; never below 1."""
        assert burst == LimitSettings(rpm=rpm, bucket_s=bucket_s).burst(rpm)

    async def test_after_the_first_reply_without_headers(self):
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=1200), clock=clock)
        limiter.observe(None)
        assert limiter.requests is not None and 10 == limiter.requests.burst
        assert [0.0] * 10 + [0.05] == await starts(limiter, clock, 11)

    @pytest.mark.parametrize("bucket_s", [0, -1])
    def test_bucket_s_must_be_above_zero(self, bucket_s):
        with pytest.raises(ConfigError, match=r"Expected `float` > 0.0 - at `\$.limits.bucket_s`"):
            ModelConfig.from_dict({"models": {"m": {"limits": {"bucket_s": bucket_s}}}})


class TestAdaptiveRate:
    def test_off_until_a_429_then_half_the_last_seconds_successes(self):
        clock = FakeClock(100.0)
        rate = AdaptiveRate(clock)
        for _ in range(40):
            rate.on_success()
            clock.advance(0.025)
        assert None is rate.rate
        rate.on_rate_limited(started_at=clock.now())
        assert (pytest.approx(40.0), pytest.approx(20.0), 1) == (rate.ceiling, rate.rate, rate.decreases)

    def test_one_decrease_per_episode_then_times_0_7(self):
        clock = FakeClock()
        rate = AdaptiveRate(clock)
        for _ in range(10):
            rate.on_success()
        rate.on_rate_limited(started_at=0.0)
        first = rate.rate
        assert first is not None
        rate.on_rate_limited(started_at=-0.1)  # started before the decrease: the same episode
        assert (first, 1) == (rate.rate, rate.decreases)
        clock.advance(1.0)
        rate.on_rate_limited(started_at=1.0)
        assert (pytest.approx(first * 0.7), 2) == (rate.rate, rate.decreases)

    def test_never_below_the_minimum(self):
        clock = FakeClock()
        rate = AdaptiveRate(clock, minimum=0.5)
        for _ in range(30):
            clock.advance(1.0)
            rate.on_rate_limited(started_at=clock.now())
        assert 0.5 == rate.rate

    async def test_paces_at_the_rate_with_no_burst_right_after_a_decrease(self):
        """20/s after the decrease: the bucket is empty, so the first admission waits one interval, then 20/s
        with a burst of a quarter second's worth once the pace has credit again."""
        clock = FakeClock()
        rate = AdaptiveRate(clock)
        for _ in range(40):
            rate.on_success()
        rate.on_rate_limited(started_at=0.0)
        assert 20.0 == rate.rate
        times = []
        for _ in range(3):
            await rate.acquire()
            times.append(round(clock.now(), 6))
        assert [0.05, 0.1, 0.15] == times

    async def test_grows_only_while_the_pace_binds(self):
        """Successes raise the rate by 10% of the ceiling a second — while requests wait for the pace, not when
        demand is below it."""
        clock = FakeClock()
        rate = AdaptiveRate(clock)
        for _ in range(40):
            rate.on_success()
        rate.on_rate_limited(started_at=0.0)  # ceiling 40, rate 20
        clock.advance(5.0)
        for _ in range(20):
            rate.on_success()  # nobody waited for the pace: no growth
        assert 20.0 == rate.rate
        for _ in range(rate.burst + 1):  # the last one waits one interval: the pace binds
            await rate.acquire()
        rate.on_success()
        assert pytest.approx(20.0 + 0.1 * 40 / 20) == rate.rate

    async def test_with_nothing_to_estimate_from_it_starts_low_and_doubles(self):
        """A 429 first of all (no success in the last second): half a request a second, doubling every second
        the pace binds (ln 2 × rate per second), until the next 429 returns to additive growth."""
        clock = FakeClock()
        rate = AdaptiveRate(clock)
        rate.on_rate_limited(started_at=0.0)
        assert 0.5 == rate.rate
        await rate.acquire()
        await rate.acquire()
        rate.on_success()
        assert pytest.approx(0.5 + 0.6931, rel=1e-3) == rate.rate  # + ln 2 per success: ×2 a second


class TestAIMDInTheLimiter:
    async def test_a_429_without_headers_engages_the_rate(self):
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(), clock=clock)
        async with limiter.slot() as first:
            limiter.observe(None)
            limiter.on_rate_limited(first)
        assert limiter.rate is not None and limiter.rate.rate is not None and 1 == limiter.rate.decreases

    async def test_a_429_the_headers_explain_leaves_it_off(self):
        """0 requests left (or fewer tokens than the call costs): the bucket is empty, the learned window holds
        the next admissions; the AIMD rate stays off."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(), clock=clock)
        async with limiter.slot() as first:
            limiter.observe(openai(0, "1s"))
            limiter.on_rate_limited(first)
        limiter.observe(openai(50, "1s", limit=60000, kind="tokens"))
        limiter.on_rate_limited(ticket(clock.now(), cost=120))
        assert limiter.rate is not None and None is limiter.rate.rate

    async def test_a_429_the_headers_do_not_explain_engages_it(self):
        """A 429 while the headers show plenty left (another limit the provider does not report)."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(), clock=clock)
        limiter.observe(openai(15, "0.25s"))
        limiter.on_rate_limited(ticket(clock.now()))
        assert limiter.rate is not None and limiter.rate.rate is not None

    async def test_the_cap_shrinks_only_when_it_bound(self):
        """A 429 with 3 of 8 slots being sent: the cap was not what bound, it stays 8 (the rate adapts); with all
        8 being sent, it halves."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(max_concurrency=8), clock=clock)
        limiter.observe(None)
        async with AsyncExitStack() as stack:
            held = [await stack.enter_async_context(limiter.slot()) for _ in range(3)]
            limiter.on_rate_limited(held[0])
            assert 8 == limiter.concurrency.cap
            clock.advance(1.0)
            held += [await stack.enter_async_context(limiter.slot()) for _ in range(5)]
            limiter.on_rate_limited(held[-1])
        assert 4 == limiter.concurrency.cap

    async def test_adaptive_off_has_no_rate(self):
        assert None is ModelLimiter(LimitSettings(adaptive=False), clock=FakeClock()).rate


class TestSlowStartWithNothingConfigured:
    async def test_one_request_until_the_first_reply(self):
        """Nothing configured: the first request goes alone; the others wait for its reply, then all go."""
        limiter = ModelLimiter(LimitSettings(max_concurrency=8), clock=FakeClock())
        entered: list[int] = []

        async def call(i: int) -> None:
            async with limiter.slot():
                entered.append(i)
                await anyio.sleep_forever()

        async with anyio.create_task_group() as tg:
            for i in range(5):
                tg.start_soon(call, i)
            await anyio.wait_all_tasks_blocked()
            assert [0] == entered
            limiter.observe(None)  # the first reply (no headers)
            await anyio.wait_all_tasks_blocked()
            assert [0, 1, 2, 3, 4] == entered
            tg.cancel_scope.cancel()

    async def test_a_probe_that_ends_without_a_reply_lets_the_next_one_go(self):
        limiter = ModelLimiter(LimitSettings(), clock=FakeClock())
        release = anyio.Event()
        entered: list[int] = []

        async def call(i: int) -> None:
            async with limiter.slot():
                entered.append(i)
                if i == 0:
                    await release.wait()  # the probe fails (no reply observed) when released
                else:
                    await anyio.sleep_forever()

        async with anyio.create_task_group() as tg:
            for i in range(3):
                tg.start_soon(call, i)
            await anyio.wait_all_tasks_blocked()
            release.set()
            await anyio.wait_all_tasks_blocked()
            assert [0, 1] == entered  # the next probe, still one at a time
            tg.cancel_scope.cancel()

    async def test_a_reply_slower_than_the_slow_start_does_not_hold_the_rest(self, monkeypatch):
        """A first reply that takes longer than SLOW_START_S (0 here) lets the others go without it."""
        monkeypatch.setattr(limiter_module, "SLOW_START_S", 0.0)
        limiter = ModelLimiter(LimitSettings(), clock=FakeClock())
        async with limiter.slot(), limiter.slot():
            pass

    async def test_configured_limits_do_not_hold_for_a_reply(self):
        """With rpm configured the paced window's own slow start applies (one per interval), not the hold."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600), clock=clock)
        async with limiter.slot(), limiter.slot():
            assert 0.1 == round(clock.now(), 6)


class TestNoLockConvoy:
    """Event-loop iterations per request through the limiter, counted by a task that ticks once per iteration."""

    @staticmethod
    async def iterations(body) -> int:
        ticks = 0
        done = False

        async def ticker() -> None:
            nonlocal ticks
            while not done:
                ticks += 1
                await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            await anyio.lowlevel.checkpoint()  # the ticker is running
            start = ticks
            await body()
            done = True
            return ticks - start

    @pytest.mark.parametrize("settings", [LimitSettings(), LimitSettings(rpm=10**6, tpm=10**9)],
                             ids=["nothing-configured", "windows-not-binding"])
    async def test_uncontended_requests_do_not_yield(self, settings):
        """1,000 requests one after another: at most 0.2 loop iterations each (it is 0: nothing yields)."""
        limiter = ModelLimiter(settings, clock=FakeClock())
        limiter.observe(None)

        async def requests() -> None:
            for _ in range(1000):
                async with limiter.slot(100):
                    pass

        assert await self.iterations(requests) <= 0.2 * 1000

    async def test_concurrent_requests_add_no_iterations_to_their_own(self):
        """64 tasks × 50 requests whose body yields once: the limiter adds at most 0.2 iterations per request
        to what the bodies cost without it (its old Condition over a Lock added 2)."""
        limiter = ModelLimiter(LimitSettings(max_concurrency=64), clock=FakeClock())
        limiter.observe(None)

        def workload(through: bool):
            async def run() -> None:
                async def worker() -> None:
                    for _ in range(50):
                        if through:
                            async with limiter.slot():
                                await anyio.lowlevel.checkpoint()
                        else:
                            await anyio.lowlevel.checkpoint()

                async with anyio.create_task_group() as tg:
                    for _ in range(64):
                        tg.start_soon(worker)
            return run

        bare = await self.iterations(workload(False))
        through = await self.iterations(workload(True))
        assert through - bare <= 0.2 * 64 * 50
