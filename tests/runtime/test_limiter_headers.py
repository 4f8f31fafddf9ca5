"""The limiter sized by the x-ratelimit-* headers: parsing, slow start, burst and credit, on virtual time."""

from __future__ import annotations

import pytest

from mpcbench_async.runtime import BucketReading, FakeClock, LimitSettings, ModelLimiter, Ticket, read_limit_headers
from mpcbench_async.runtime._limit_headers import HeaderReader, counted_window


def per_second(remaining: int, reset: str, limit: int = 600) -> dict[str, str]:
    """Request headers as a provider metering ``limit`` per minute in one-second buckets sends them."""
    return {"x-ratelimit-limit-requests": str(limit), "x-ratelimit-remaining-requests": str(remaining),
            "x-ratelimit-reset-requests": reset}


async def starts(limiter: ModelLimiter, clock: FakeClock, n: int, cost: int = 0) -> list[float]:
    """The virtual start times of ``n`` slots taken one after another, rounded to the microsecond."""
    times = []
    for _ in range(n):
        async with limiter.slot(cost):
            times.append(round(clock.now(), 6))
    return times


class TestReadLimitHeaders:
    def test_openai_documented_example(self):
        """OpenAI's documented example, names in any case: both kinds, durations in Go notation."""
        readings = read_limit_headers({
            "X-RateLimit-Limit-Requests": "60", "x-ratelimit-remaining-requests": "59",
            "x-ratelimit-reset-requests": "1s", "x-ratelimit-limit-tokens": "150000",
            "x-ratelimit-remaining-tokens": "149984", "x-ratelimit-reset-tokens": "6m0s"})
        assert {"requests": BucketReading(remaining=59.0, reset_s=1.0, per_minute=60.0),
                "tokens": BucketReading(remaining=149984.0, reset_s=360.0, per_minute=150000.0)} == readings

    @pytest.mark.parametrize(("reset", "seconds"), [("20ms", 0.02), ("0.5s", 0.5), ("1m30s", 90.0), ("0.25", 0.25)])
    def test_reset_durations(self, reset, seconds):
        """Resets in milliseconds, fractional seconds, minutes and seconds, or a bare number of seconds."""
        assert seconds == read_limit_headers(per_second(3, reset))["requests"].reset_s

    @pytest.mark.parametrize("headers", [
        {"x-ratelimit-remaining-requests": "5"},
        {"x-ratelimit-reset-requests": "1s"},
        {"x-ratelimit-remaining-requests": "-1", "x-ratelimit-reset-requests": "1s"},
        {"x-ratelimit-remaining-requests": "nan", "x-ratelimit-reset-requests": "1s"},
        {"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "soon"},
        {"retry-after": "1"},
    ])
    def test_incomplete_or_garbled_readings_are_left_out(self, headers):
        """A kind needs both a remaining amount (a finite number, not negative) and a parseable reset."""
        assert {} == read_limit_headers(headers)

    @pytest.mark.parametrize("headers", [
        {"x-ratelimit-remaining-requests": "1e308", "x-ratelimit-reset-requests": "1s"},
        {"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "9" * 400 + "s"},
        {"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "1764201600000"},  # epoch ms
        {"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "25h"},
    ], ids=["huge-remaining", "overflowing-reset", "epoch-reset", "reset-over-a-day"])
    def test_hostile_amounts_and_resets_are_left_out(self, headers):
        """Values no provider's budget has (over 1e12, a reset over a day or infinite) give no reading."""
        assert {} == read_limit_headers(headers)

    @pytest.mark.parametrize("limit", ["0", "0.001", "1e308"])
    def test_a_limit_out_of_bounds_reads_as_unknown(self, limit):
        """A limit below one a minute (or over 1e12) cannot set the pace: the reading keeps remaining and reset."""
        assert BucketReading(remaining=3.0, reset_s=0.7) == read_limit_headers(per_second(3, "0.7s", limit))["requests"]

    def test_a_missing_or_garbled_limit_leaves_the_rate_unknown(self):
        """Without a usable limit the reading still counts; the bucket size then assumes the configured rate."""
        reading = read_limit_headers({"x-ratelimit-limit-tokens": "lots", "x-ratelimit-remaining-tokens": "400",
                                      "x-ratelimit-reset-tokens": "600ms"})["tokens"]
        assert (None, 1000.0) == (reading.per_minute, reading.size(60000))

    def test_bucket_size_is_what_is_left_plus_what_refills_until_reset(self):
        """600 per minute metered per second: 3 left, full again in 0.7 s → a bucket of 10."""
        assert 10.0 == read_limit_headers(per_second(3, "0.7s"))["requests"].size(6000)


class TestHeaderReader:
    def test_headers_equal_to_the_last_ones_give_the_same_readings_without_a_new_read(self):
        """A model's replies often repeat their headers (a bucket far from empty): the readings are the last ones,
        the very objects; any change reads them anew. Each read equals ``read_limit_headers``'."""
        reader = HeaderReader()
        first = reader.read(per_second(600, "0.000s", 60_000_000))
        assert read_limit_headers(per_second(600, "0.000s", 60_000_000)) == first
        assert first is reader.read(per_second(600, "0.000s", 60_000_000))  # an equal dict, another object
        changed = reader.read(per_second(599, "0.000s", 60_000_000))
        assert (read_limit_headers(per_second(599, "0.000s", 60_000_000)), False) == (changed, changed is first)
        assert {} == reader.read({"x-ratelimit-reset-requests": "1s"})  # no reading at all is kept too

    def test_changing_headers_read_as_read_limit_headers_does(self):
        """Headers that change (``remaining`` each reply, resets recurring or not, more than the reader keeps)
        give each time what ``read_limit_headers`` gives."""
        reader = HeaderReader()
        for i in range(600):
            headers = per_second(600 - i % 7, f"{i % 3 * 0.25:.3f}s" if i % 2 else f"{i}ms", 600)
            assert read_limit_headers(headers) == reader.read(headers)

    def test_a_reset_moment_is_read_every_time(self):
        """A reset given as a moment counts from now: the same headers are read again on every reply."""
        reader = HeaderReader()
        moment = {"anthropic-ratelimit-requests-remaining": "3",
                  "anthropic-ratelimit-requests-reset": "2020-01-01T00:00:00Z"}  # past: 0 s
        first = reader.read(moment)
        assert {"requests": BucketReading(remaining=3.0, reset_s=0.0)} == first
        again = reader.read(dict(moment))
        assert (first, False) == (again, again is first)


class TestSlowStart:
    async def test_one_at_a_time_until_the_first_reply(self):
        """Before any reply the paced window admits one per emission interval, not the configured burst of 30."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600), clock=clock)
        assert [0.0, 0.1, 0.2, 0.3] == await starts(limiter, clock, 4)

    @pytest.mark.parametrize("headers", [None, {}, {"content-type": "application/json"}])
    async def test_a_reply_without_limit_headers_restores_the_configured_burst(self, headers):
        """A reply with no x-ratelimit headers: the configured burst (30 at rpm 600 in a bucket of 60 s) applies from
        then on."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600, bucket_s=60), clock=clock)
        assert [0.0] == await starts(limiter, clock, 1)
        limiter.observe(headers)
        assert 30 == limiter.requests.burst
        assert [0.0] * 29 + [0.1, 0.2] == await starts(limiter, clock, 31)

    async def test_a_reply_without_headers_after_a_reading_restores_the_burst(self):
        """A 429 reads 0 left of a bucket of 1 (60 per minute): a burst of 1. A later reply without headers (a
        gateway that sends them on 429s only) restores the configured burst of 30; the provider's pace stays."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600, bucket_s=60), clock=clock)
        limiter.observe(per_second(0, "1s", limit=60))
        assert 1 == limiter.requests.burst
        limiter.observe({})
        assert 30 == limiter.requests.burst
        assert [0.0] * 29 + [1.0] == await starts(limiter, clock, 30)

    async def test_a_success_not_observed_ends_the_slow_start(self):
        """A caller that never passes headers still gets the configured burst after its first success."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600, tpm=60000, bucket_s=60), clock=clock)
        await limiter.on_success()
        assert (30, 3000) == (limiter.requests.burst, limiter.tokens.burst)

    async def test_pacing_off_has_no_slow_start_and_ignores_headers(self):
        """Unpaced windows admit the whole budget at once, whatever the replies say."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600, pacing=False), clock=clock)
        limiter.observe(per_second(0, "1s"))
        assert None is limiter.requests.burst
        assert [0.0] * 5 == await starts(limiter, clock, 5)


class TestBurstFromHeaders:
    async def test_per_second_bucket_caps_the_burst_at_half_of_it(self):
        """rpm 600 in 1 s buckets (10): after the first reply, a burst of 5 then one every 0.1 s."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600), clock=clock)
        assert [0.0] == await starts(limiter, clock, 1)
        limiter.observe(per_second(9, "0.1s"))
        assert 5 == limiter.requests.burst
        assert [0.0, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3] == await starts(limiter, clock, 7)

    async def test_per_minute_bucket_allows_half_of_it(self):
        """A bucket holding the whole minute (600), as the headers tell: a burst of 300, not the configured 5
        (the headers know the bucket; the configured burst only assumes one)."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600), clock=clock)
        limiter.observe(per_second(599, "0.1s"))
        assert 300 == limiter.requests.burst

    async def test_a_lower_provider_limit_sets_the_pace(self):
        """rpm 600 configured, the provider says 120 per minute, a bucket of 10: a burst of 5, then one every 0.5 s."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600), clock=clock)
        limiter.observe(per_second(9, "0.5s", limit=120))
        assert [0.0] * 5 + [0.5, 1.0] == await starts(limiter, clock, 7)

    async def test_a_slower_pace_read_once_is_undone_by_a_faster_one(self):
        """60 per minute read once (one every 1 s; a burst of 4) paces 6 calls to 2 s; then 600 per minute is read:
        the calls already paced ahead are re-spaced at 0.1 s, so the next start at 2.0 s, not at 5.6 s."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600), clock=clock)
        limiter.observe(per_second(9, "0.5s", limit=60))
        assert [0.0] * 4 + [1.0, 2.0] == await starts(limiter, clock, 6)
        limiter.observe(per_second(9, "0.1s"))
        assert [2.0, 2.1, 2.2] == await starts(limiter, clock, 3)

    async def test_a_higher_provider_limit_keeps_the_configured_pace(self):
        """rpm 600 configured, the provider allows 6000 per minute (a bucket of 9 + 0.1 s × 100/s = 19): a burst of 9,
        then one every 0.1 s, the configured pace, not 0.01 s."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600), clock=clock)
        limiter.observe(per_second(9, "0.1s", limit=6000))
        assert (9, [0.0] * 9 + [0.1, 0.2]) == (limiter.requests.burst, await starts(limiter, clock, 11))

    async def test_limit_header_missing_assumes_the_configured_rate(self):
        """Without x-ratelimit-limit the refill rate is the configured rpm: 2 left + 0.8 s × 10/s = 10."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600), clock=clock)
        limiter.observe({"x-ratelimit-remaining-requests": "2", "x-ratelimit-reset-requests": "800ms"})
        assert 5 == limiter.requests.burst

    async def test_a_tiny_bucket_still_allows_one(self):
        """A bucket of one request (60 per minute per second) gives a burst of 1, never 0."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=60), clock=clock)
        limiter.observe(per_second(1, "0s", limit=60))
        assert 1 == limiter.requests.burst

    async def test_tokens_bucket_sizes_the_tokens_burst(self):
        """TPM 60000 in 1 s buckets (1000 tokens): a burst of 500 tokens, then 1000 tokens a second.

        Two 200-token requests start at once; the third when 100 more tokens have flowed (0.1 s), then one
        every 0.2 s.
        """
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(tpm=60000), clock=clock)
        limiter.observe({"x-ratelimit-limit-tokens": "60000", "x-ratelimit-remaining-tokens": "1000",
                         "x-ratelimit-reset-tokens": "0s"})
        assert 500 == limiter.tokens.burst
        assert [0.0, 0.0, 0.1, 0.3] == await starts(limiter, clock, 4, cost=200)


class TestCreditFromHeaders:
    async def test_a_drained_bucket_holds_admissions_until_it_refills(self):
        """With 0 left the next admission waits one emission interval (the refill of one request), then paces."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600), clock=clock)
        limiter.observe(per_second(10, "0s"))
        clock.advance(5.0)
        limiter.observe(per_second(0, "1s"))
        assert [5.1, 5.2, 5.3] == await starts(limiter, clock, 3)

    async def test_a_low_remaining_limits_the_burst_to_it(self):
        """2 left of a bucket of 10: two start at once (not the burst of 5), then one every 0.1 s."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600), clock=clock)
        limiter.observe(per_second(2, "0.8s"))
        assert [0.0, 0.0, 0.1, 0.2] == await starts(limiter, clock, 4)

    async def test_a_429_reply_with_headers_is_observed(self):
        """A 429's headers (0 left) hold the next admission. They explain the 429 (an empty bucket), so the AIMD
        rate stays off; one request of a cap of 8 in flight, so the cap was not what bound: it stays."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=600, max_concurrency=8), clock=clock)
        async with limiter.slot() as ticket:
            limiter.observe(per_second(0, "1s"))
            limiter.on_rate_limited(ticket)
        assert (5, 8, None) == (limiter.requests.burst, limiter.concurrency.cap, limiter.rate.rate)
        assert [0.1, 0.2] == await starts(limiter, clock, 2)


class TestALimitCountedOverAShorterWindow:
    """``x-ratelimit-limit-requests: 20`` with a reset under a second and most of it left: 20 a second, not a
    minute (read as a minute's, the calls would crawl 60 times too slowly and no reply would say why)."""

    @pytest.mark.parametrize(("remaining", "reset", "counted"), [
        (19, 0.05, 1.0),  # a 1-s bucket one request in: whole in 1/20 s, a minute's rate needs 3 s
        (12, 0.9, 1.0),  # a fixed 1-s window, 8 spent
        (15, 2.0, 10.0),  # a 10-s window, 5 spent: a minute's rate needs 15 s
        (19, 3.0, 60.0),  # one spent, whole in 3 s: a minute's rate exactly
        (5, 0.05, 60.0),  # most of it spent: a minute's limit metered in small buckets (the sim's way)
        (20, 0.05, 60.0),  # nothing spent: nothing to tell
        (10, 30.0, 60.0),  # a reset beyond the short windows
    ])
    def test_the_reset_tells_the_window(self, remaining, reset, counted):
        reading = BucketReading(remaining=remaining, reset_s=reset, per_minute=20)
        assert counted == counted_window(reading)

    def test_a_short_window_grows_to_the_next_a_reset_runs_past_and_never_shrinks(self):
        assert 1.0 == counted_window(BucketReading(remaining=0, reset_s=0.5, per_minute=20), 1.0)
        assert 10.0 == counted_window(BucketReading(remaining=0, reset_s=2.5, per_minute=20), 1.0)
        assert 60.0 == counted_window(BucketReading(remaining=0, reset_s=30.0, per_minute=20), 10.0)
        assert 10.0 == counted_window(BucketReading(remaining=19, reset_s=3.0, per_minute=20), 10.0)

    def test_a_reading_without_a_limit_keeps_the_window(self):
        assert 1.0 == counted_window(BucketReading(remaining=3, reset_s=0.1), 1.0)

    async def test_an_unconfigured_model_is_paced_at_the_windows_rate(self):
        """The first reply (19 left of 20, whole in 0.05 s) teaches 20 a second: a burst of 10, then one every
        0.05 s; a later reply with most of it spent keeps the window (it never falls back to a minute)."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(), clock=clock)
        limiter.observe(per_second(19, "50ms", limit=20))
        assert limiter.requests is not None and (1200, 10) == (limiter.requests.capacity, limiter.requests.burst)
        assert [0.0] * 10 + [0.05, 0.1] == await starts(limiter, clock, 12)
        limiter.observe(per_second(2, "900ms", limit=20))
        assert 1200 == limiter.requests.capacity

    async def test_a_configured_rpm_is_not_cut_to_the_windows_count(self):
        """rpm 1200 configured and the provider says 20 per 1-s window: the same rate, so the pace stays the
        configured one (read as a minute's, 20 would have cut it sixty-fold)."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(rpm=1200), clock=clock)
        limiter.observe(per_second(19, "50ms", limit=20))
        assert [0.0] * 10 + [0.05, 0.1] == await starts(limiter, clock, 12)


async def admit(limiter: ModelLimiter, n: int, cost: int = 0) -> list[Ticket]:
    """``n`` slots taken one after another; their tickets (start times and counts through them)."""
    tickets = []
    for _ in range(n):
        async with limiter.slot(cost) as ticket:
            tickets.append(ticket)
    return tickets


class TestAReadingCapsWhatIsSentUntilItsReset:
    """A provider counting a fixed window is whole again only at its reset, so a reply's ``remaining`` caps what
    may still go until then; it was counted when the reply's request arrived, so the requests sent after that one
    are what it does not know of (not everything in flight). 20 a second (1200 a minute) throughout; the first
    reply (no ticket: the probe's) teaches the rate and a burst of 20, so the pace alone would admit at once."""

    @staticmethod
    async def six_sent() -> tuple[FakeClock, ModelLimiter, list[Ticket]]:
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(), clock=clock)
        limiter.observe(per_second(20, "1s", limit=1200))
        tickets = await admit(limiter, 6)
        assert [(0.0, (i, None)) for i in range(1, 7)] == [(t.started_at, t.through) for t in tickets]
        return clock, limiter, tickets

    async def test_the_requests_sent_after_the_replys_own_spend_what_it_left(self):
        """The 2nd request's reply: 2 left, reset in 0.5 s. Four were sent after it, so the window is spent: the
        next waits for the reset and the margin (0.52 s), then the pace (a burst of 6 from 2 left + 0.5 s × 20/s).
        Without a ticket the same reading only paces: one every 0.05 s after the burst."""
        clock, limiter, tickets = await self.six_sent()
        limiter.observe(per_second(2, "500ms", limit=1200), tickets[1])
        assert [0.52, 0.52, 0.52] == [t.started_at for t in await admit(limiter, 3)]
        clock, limiter, tickets = await self.six_sent()
        limiter.observe(per_second(2, "500ms", limit=1200))
        assert [0.05, 0.1, 0.15] == [round(t.started_at, 6) for t in await admit(limiter, 3)]

    async def test_what_is_left_beyond_the_later_requests_is_sent_at_once(self):
        """The 2nd request's reply says 7 left, reset in 1 s: the four sent after it leave 3, sent at once (the
        pace's burst is 13); the 4th waits for the reset."""
        clock, limiter, tickets = await self.six_sent()
        limiter.observe(per_second(7, "1s", limit=1200), tickets[1])
        assert [0.0, 0.0, 0.0, 1.02] == [t.started_at for t in await admit(limiter, 4)]

    async def test_an_overtaken_reading_changes_nothing(self):
        """The 5th request's reply (8 left, reset in 1 s) came first; the 2nd's (0 left), overtaken, neither holds
        the next admissions nor shrinks the burst (14): the 8 less the one sent after the 5th go at once."""
        clock, limiter, tickets = await self.six_sent()
        limiter.observe(per_second(8, "1s", limit=1200), tickets[4])
        limiter.observe(per_second(0, "1s", limit=1200), tickets[1])
        assert limiter.requests is not None and 14 == limiter.requests.burst
        assert [0.0] * 7 + [1.02] == [t.started_at for t in await admit(limiter, 8)]

    async def test_a_429s_reading_holds_until_the_reset(self):
        """A 429 to the last request sent, 0 left, reset in 0.3 s: nothing goes before 0.32 s; after it the
        pace alone decides (a burst of 3: 0 left + 0.3 s × 20/s, halved)."""
        clock, limiter, tickets = await self.six_sent()
        limiter.observe(per_second(0, "300ms", limit=1200), tickets[5])
        limiter.on_rate_limited(tickets[5])
        assert [0.32, 0.32, 0.32, 0.37] == [round(t.started_at, 6) for t in await admit(limiter, 4)]

    async def test_the_ceiling_lapses_at_the_reset(self):
        """Once the reset (plus the margin) has passed, the reading caps nothing: the window is whole again."""
        clock, limiter, tickets = await self.six_sent()
        limiter.observe(per_second(0, "300ms", limit=1200), tickets[5])
        clock.advance(0.32)
        assert [0.32, 0.32, 0.32] == [round(t.started_at, 6) for t in await admit(limiter, 3)]

    @pytest.mark.parametrize(("replied_at", "starts_at"), [
        (0.01, 0.33),  # a quick reply: the reset counts from its arrival, 0.01 + 0.3 + the margin
        (0.25, 0.34),  # a slow one: from the margin after its request left (0.02), not from its arrival
        (2.0, 2.0),  # slower than the window: the window it reports is over, and the pace's credit counts from
        # the request's departure (0 left then, nothing sent since, 2 s of the rate gone by): at once
    ])
    async def test_the_reset_counts_from_the_request_when_the_reply_is_slow(self, replied_at, starts_at):
        """A gateway stamps the headers as the request passes: the 6th request's reply (0 left, reset in 0.3 s)
        holds the next admission until its reset counted from when it arrived, at most the margin after the
        request left (counted from a slow reply's arrival, every window would be held that long past its end)."""
        clock, limiter, tickets = await self.six_sent()
        clock.advance(replied_at)
        limiter.observe(per_second(0, "300ms", limit=1200), tickets[5])
        assert [starts_at] == [round(t.started_at, 6) for t in await admit(limiter, 1)]

    async def test_tokens_are_capped_the_same_way(self):
        """tpm 60000 (1000 a second): three requests of 100 tokens; the first one's reply says 150 left, so the
        two sent after it (200) leave none: the fourth waits for the reset (0.4 s) and the margin."""
        clock = FakeClock()
        limiter = ModelLimiter(LimitSettings(tpm=60000), clock=clock)
        limiter.observe({"x-ratelimit-limit-tokens": "60000", "x-ratelimit-remaining-tokens": "1000",
                         "x-ratelimit-reset-tokens": "0s"})
        tickets = await admit(limiter, 3, cost=100)
        assert [(None, 100), (None, 200), (None, 300)] == [t.through for t in tickets]
        limiter.observe({"x-ratelimit-limit-tokens": "60000", "x-ratelimit-remaining-tokens": "150",
                         "x-ratelimit-reset-tokens": "400ms"}, tickets[0])
        assert [0.42] == [round(t.started_at, 6) for t in await admit(limiter, 1, cost=100)]
