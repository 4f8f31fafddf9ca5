"""The rate-limit core (``runtime._pace``) on its own: every decision at a given ``now``, no loop, no sleep.

The in-process limiter (tests/runtime/test_limiter*.py) and the Ray limiter actor (tests/distributed) wait on
these decisions; here they are checked directly, at times the test chooses.
"""

from __future__ import annotations

import math

import pytest

from mpcbench_async.runtime import AimdCap, BucketReading, LimitSettings, ModelPace
from mpcbench_async.runtime._pace import PROBE_S, RECHECK_S, SIZES_S, AimdRate, Probe, Window


class TestWindow:
    def test_the_burst_is_half_the_smallest_bucket_of_the_last_readings(self):
        """A fixed 1-s window of 20 read as a bucket (``remaining + reset × 20/s``): 40 at its start, 2 near its
        end. The small one sets the burst until it is ``SIZES_S`` old, whatever larger ones come after it."""
        window = Window(1, burst=1, learned=True)
        bursts = []
        for now, remaining, reset in ((0.0, 20, 1.0), (0.9, 1, 0.05), (1.0, 20, 1.0), (1.0 + SIZES_S, 20, 1.0)):
            window.fit(BucketReading(remaining=remaining, reset_s=reset, per_minute=1200), now=now)
            bursts.append(window.burst)
        assert (2.0, [20, 1, 1, 20]) == (SIZES_S, bursts)

    def test_a_reading_whose_ceiling_holds_sizes_the_burst_itself(self):
        """Placed by ``through`` and in before its reset, a reading caps its window, so its own bucket (40) sets
        the burst; one that arrives after its reset (request sent at 1.0, reset 0.5 s) falls back to the smallest."""
        window = Window(1, burst=1, learned=True)
        window.fit(BucketReading(remaining=1, reset_s=0.05, per_minute=1200), now=0.9)
        window.fit(BucketReading(remaining=20, reset_s=1.0, per_minute=1200), now=1.0, through=0, sent_at=1.0)
        fresh = window.burst
        window.fit(BucketReading(remaining=20, reset_s=0.5, per_minute=1200), now=2.0, through=1, sent_at=1.0)
        assert (20, 1) == (fresh, window.burst)

    def test_a_token_buckets_readings_keep_the_burst_at_half_of_it(self):
        """A 1-s bucket of 20 reports 20 in every reply (full, drained, half): the burst stays 10."""
        window = Window(1, burst=1, learned=True)
        bursts = []
        for now, remaining, reset in ((0.0, 20, 0.0), (0.1, 0, 1.0), (0.2, 10, 0.5), (3.0, 20, 0.0)):
            window.fit(BucketReading(remaining=remaining, reset_s=reset, per_minute=1200), now=now)
            bursts.append(window.burst)
        assert [10, 10, 10, 10] == bursts

    @staticmethod
    def starts(window: Window, now: float, n: int) -> list[float]:
        """The instants ``n`` requests are taken one after another from ``now``, each as soon as it fits."""
        times = []
        for _ in range(n):
            now += window.wait(1, now)
            window.take(1, now)
            times.append(round(now, 6))
        return times

    def test_a_drained_buckets_readings_pace_it_at_its_refill_not_its_reset(self):
        """A per-minute bucket of 1200 (20 a second) another client drained: 0 left, full in 60 s. Not yet known
        as a bucket's, the reading holds all but one request until ``PROBE_S`` after it (a hold that long is looked
        at again every ``RECHECK_S``); the probe's reply (20 left, full in 59 s: the same size a second later)
        shows a bucket, whose ceiling then grows at its rate: what the pace's credit allows at once (19), then one
        every 0.05 s. (Before: nothing until the reset, 60 s.)"""
        window = Window(1, burst=1, learned=True)
        window.fit(BucketReading(remaining=0, reset_s=60.0, per_minute=1200), now=0.0, through=0, sent_at=0.0)
        assert (None, 1.0) == (window.continuous, window.wait(1, 0.0))
        window.take(1, 1.0)
        assert (PROBE_S, RECHECK_S) == (1.0, window.wait(1, 1.0))
        window.fit(BucketReading(remaining=20, reset_s=59.0, per_minute=1200), now=1.02, through=1, sent_at=1.0)
        assert (True, 0.0) == (window.continuous, window.others)
        assert [1.02] * 19 + [1.05, 1.1, 1.15] == self.starts(window, 1.02, 22)

    def test_what_others_take_of_a_fixed_window_is_left_to_them(self):
        """A fixed 1-s window of 20: the first request's reading says 19 left (whole in 1 s), the second's, half a
        second later, 14: one was ours, so others took 4 in 0.5 s (the sizes, 39 then 24, show a fixed window).
        Of the 14, the 4 they will take by the reset are theirs: 10 go at once, the next at the reset (1.02 s).
        (Before: all 14, into 429s as the others took theirs.)"""
        window = Window(1, burst=1, learned=True)
        window.take(1, 0.0)
        window.fit(BucketReading(remaining=19, reset_s=1.0, per_minute=1200), now=0.0, through=1, sent_at=0.0)
        window.take(1, 0.5)
        window.fit(BucketReading(remaining=14, reset_s=0.5, per_minute=1200), now=0.5, through=2, sent_at=0.5)
        assert (False, 8.0) == (window.continuous, window.others)
        assert [0.5] * 10 + [1.02] == self.starts(window, 0.5, 11)

    def test_a_full_sliding_logs_readings_keep_the_pace_at_its_rate(self):
        """A log of at most 20 in any trailing second, full at 20 a second: each reply, 52 ms after its request
        left, says 0 left and the oldest leaving 49 ms after the stamp (1 ms after the send). By then the next
        request has gone, so the provider has nothing left for the pace until one emission after that one: the
        starts stay 0.05 s apart. (Before: the credit was counted from the reply's arrival, so each reply put
        the next start 2 ms later, lost for good at a log whose slots free one by one: 93% of the limit used.)"""
        window = Window(1, burst=1, learned=True)
        window.fit(BucketReading(remaining=0, reset_s=0.049, per_minute=1200), now=0.0)
        now, starts = 0.0, []
        for k in range(12):
            now += window.wait(1, now)
            window.take(1, now)
            starts.append(round(now, 6))
            if k:  # the reply to the request before this one
                now = starts[k - 1] + 0.052
                window.fit(BucketReading(remaining=0, reset_s=0.049, per_minute=1200), now=now, through=k,
                           sent_at=starts[k - 1])
        assert [round(0.05 * (k + 1), 6) for k in range(12)] == starts

    def test_the_window_holds_its_capacity_until_the_oldest_take_leaves_it(self):
        window = Window(2)
        window.take(1, 0.0)
        window.take(1, 10.0)
        assert (60.0, 50.0, 0.0) == (window.wait(1, 0.0), window.wait(1, 10.0), window.wait(1, 60.0))

    def test_a_span_beyond_the_window_keeps_each_take_counted_longer(self):
        """The Ray actor counts a grant for window + ttl: its credits may start up to ttl after the stamp."""
        window = Window(1, span=61.0)
        window.take(1, 0.0)
        assert (1.0, 0.0) == (window.wait(1, 60.0), window.wait(1, 61.0))

    def test_paced_takes_flow_at_the_rate_after_the_burst(self):
        """60 a minute, burst 2: two at once, then one a second."""
        window = Window(60, burst=2)
        for _ in range(2):
            assert 0.0 == window.wait(1, 0.0)
            window.take(1, 0.0)
        assert 1.0 == window.wait(1, 0.0)
        window.take(1, 1.0)
        assert 1.0 == window.wait(1, 1.0)

    def test_a_batch_above_the_burst_never_fits_at_once_but_one_costly_request_does(self):
        window = Window(600, burst=5)
        assert (math.inf, 0.0) == (window.wait(6, 0.0, floor=1), window.wait(5, 0.0, floor=1))
        assert 0.0 == window.wait(40, 0.0)
        assert math.inf == Window(10).wait(11, 0.0)

    def test_given_back_units_leave_the_window(self):
        window = Window(10)
        window.take(10, 0.0, key=7)
        window.give_back(7, 6)
        window.give_back(8, 3)  # unknown: already gone
        assert (0.0, 59.0) == (window.wait(6, 1.0), window.wait(7, 1.0))

    def test_fit_halves_the_bucket_and_an_empty_one_holds_the_next(self):
        """A learned window takes the provider's limit; the burst is half the bucket (0 left + 1 s of 6000 a
        minute: 100); 50 short of that burst, the next admissions wait 50 emission intervals (0.5 s)."""
        window = Window(1, burst=1, learned=True)
        window.fit(BucketReading(remaining=0, reset_s=1.0, per_minute=6000), now=10.0)
        assert (6000, 50) == (window.capacity, window.burst)
        assert 0.5 == pytest.approx(window.wait(50, 10.0))

    def test_a_configured_window_is_never_raised_by_the_headers(self):
        """60 a minute configured, the provider says 600 with 100 left: the burst is 50, the pace stays 1 a second."""
        window = Window(60, burst=1)
        window.fit(BucketReading(remaining=100, reset_s=0.0, per_minute=600), now=0.0)
        window.take(50, 0.0)
        assert (60, 50, 1.0) == (window.capacity, window.burst, pytest.approx(window.wait(1, 0.0)))


class TestAimdRate:
    def test_off_until_a_429_then_half_the_last_seconds_successes_with_no_burst_credit(self):
        rate = AimdRate()
        rate.succeeded(0.5, count=10)
        assert 0.0 == rate.wait(1, 0.9)
        rate.limited(started_at=0.8, now=1.0)
        assert (5.0, 1) == (pytest.approx(rate.rate), rate.burst)
        assert 0.2 == pytest.approx(rate.wait(1, 1.0))

    def test_one_decrease_per_episode(self):
        rate = AimdRate()
        rate.succeeded(0.5, count=10)
        rate.limited(0.8, 1.0)
        rate.limited(0.9, 1.1)  # started before the decrease: the same episode
        rate.limited(1.2, 1.3)
        assert (2, 3.5) == (rate.decreases, pytest.approx(rate.rate))

    def test_grows_only_while_the_pace_binds_and_a_count_is_so_many_successes(self):
        one, many = AimdRate(), AimdRate()
        for rate in (one, many):
            rate.succeeded(0.5, count=10)
            rate.limited(0.8, 1.0)
            rate.succeeded(1.5)  # nothing waited for the pace: it does not bind
        assert 5.0 == pytest.approx(one.rate)
        for rate in (one, many):
            rate.take(1, 2.0, waited=True)
        for _ in range(3):
            one.succeeded(2.5)
        many.succeeded(2.5, count=3)
        assert one.rate is not None and one.rate > 5.0 and one.rate == pytest.approx(many.rate)

    def test_a_batch_is_at_most_one_burst(self):
        rate = AimdRate()
        rate.succeeded(0.5, count=40)
        rate.limited(0.8, 1.0)  # 20 a second, burst 5
        assert (5, math.inf) == (rate.burst, rate.wait(6, 10.0))
        assert 0.0 == rate.wait(5, 10.0)


class TestAimdCap:
    def test_halves_once_per_episode_and_only_when_it_bound(self):
        cap = AimdCap(8)
        cap.limited(0.5, 1.0, busy=3)  # 3 of 8 busy: the cap did not bind
        cap.limited(0.5, 1.0)
        cap.limited(0.9, 1.1)
        assert (4, 1) == (cap.cap, cap.decreases)

    def test_grows_one_per_caps_worth_of_saturated_successes(self):
        cap = AimdCap(8)
        cap.limited(0.0, 0.0)
        assert (True, False) == (cap.wants_growth(4), cap.wants_growth(3))
        assert (False, True, 5) == (cap.succeeded(3), cap.succeeded(1), cap.cap)
        assert (True, 7) == (cap.succeeded(11), cap.cap)


def per_second(remaining: float, per_minute: float = 6000) -> dict[str, BucketReading]:
    return {"requests": BucketReading(remaining=remaining, reset_s=1.0, per_minute=per_minute)}


class TestModelPace:
    def test_configured_windows_start_at_a_burst_of_one_until_a_reply(self):
        pace = ModelPace(LimitSettings(rpm=1200))
        assert pace.requests is not None and 1 == pace.requests.burst
        pace.observe({}, 0.0)  # a reply without headers: the configured burst (half a second's worth)
        assert 10 == pace.requests.burst
        slow = ModelPace(LimitSettings(rpm=1200))
        slow.observe(None, 0.0)  # a reply not looked at ends the slow start too
        assert slow.requests is not None and 10 == slow.requests.burst

    def test_headers_learn_a_window_for_an_unconfigured_model(self):
        pace = ModelPace(LimitSettings())
        assert (None, None, 0.0) == (pace.requests, pace.tokens, pace.wait((5,), 0.0))
        pace.observe(per_second(60), 0.0)
        assert pace.requests is not None and (6000, 80, True) == (
            pace.requests.capacity, pace.requests.burst, pace.requests.learned)

    def test_a_429_with_an_empty_bucket_is_explained_one_without_drives_the_rate(self):
        pace = ModelPace(LimitSettings())
        pace.observe(per_second(0), 1.0)
        pace.limited(0.9, 0, 1.0)
        assert pace.rate is not None and pace.rate.rate is None
        pace.observe(per_second(30), 2.0)
        pace.limited(1.9, 0, 2.0)
        assert 1 == pace.rate.decreases
        pace.limited(2.5, 0, 3.0)  # its readings were used up by the last 429: unexplained
        assert 2 == pace.rate.decreases

    def test_pacing_off_reads_nothing_and_has_no_rate(self):
        pace = ModelPace(LimitSettings(pacing=False))
        pace.observe(per_second(0), 0.0)
        assert (None, None) == (pace.requests, pace.rate)

    def test_credits_are_taken_and_given_back_in_every_window(self):
        """rpm 10 and tpm 100 unpaced, each take counted 61 s: a batch of two calls (40 + 60 tokens) fills the
        tokens; the unused ones given back leave both windows. One call above the limit is charged the limit."""
        pace = ModelPace(LimitSettings(rpm=10, tpm=100, pacing=False), span_extra=1.0)
        assert (0.0, 0.0) == (pace.wait((40, 60), 0.0), pace.wait((500,), 0.0))
        assert math.inf == pace.wait((40, 200), 0.0)  # more than the whole minute in one batch
        pace.take((40, 60), 0.0, key=1)
        assert 61.0 == pace.wait((1,), 0.0)
        pace.give_back(1, 1, 60)
        assert (0.0, 61.0) == (pace.wait((60,), 0.0), pace.wait((61,), 0.0))


class TestProbe:
    """Until a model with nothing configured has its first reply: one out, twice as many each ``hold_s``."""

    def test_one_goes_and_the_others_wait_until_the_allowance_doubles(self):
        probe = Probe(1.0)
        decisions = [probe.admit(0.0), probe.admit(0.0), probe.admit(0.4)]
        decisions += [probe.admit(1.0), probe.admit(1.0), probe.admit(1.5)]  # 2 may be out: 1 more
        decisions += [probe.admit(2.0), probe.admit(2.0), probe.admit(2.0)]  # 4: 2 more
        assert [0.0, 1.0, 0.6, 0.0, 1.0, 0.5, 0.0, 0.0, 1.0] == decisions
        assert (4, 4) == (probe.out, probe.allowed)

    def test_a_probe_that_ends_makes_room_for_the_next(self):
        probe = Probe(1.0)
        assert (0.0, 1.0) == (probe.admit(0.0), probe.admit(0.0))
        probe.ended()
        assert (0.0, 0.5) == (probe.admit(0.5), probe.admit(0.5))
