"""The one retry loop: server wait hints, duration parsing, backoff bounds, budgets and give-up."""

from __future__ import annotations

import email.utils
import math
import random
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpcbench_async._exceptions import (
    CallDeadlineError,
    LLMConnectionError,
    PermanentLLMError,
    RateLimitError,
    ServerError,
)
from mpcbench_async.runtime import Deadline, FakeClock, RetryPolicy, retry_after_from_headers, retrying
from mpcbench_async.runtime._retry import parse_duration

NOW = 1_700_000_000.0


def http_date(epoch: float) -> str:
    return email.utils.format_datetime(datetime.fromtimestamp(epoch, tz=UTC), usegmt=True)


def rate_limited(retry_after: float | None = 2.0) -> RateLimitError:
    return RateLimitError("slow down", model="m", endpoint="http://x", status=429, retry_after=retry_after)


def server_error() -> ServerError:
    return ServerError("boom", model="m", endpoint="http://x", status=503)


async def run(policy: RetryPolicy, failures: list[BaseException], clock: FakeClock, **kwargs) -> tuple[str, int]:
    """Raise each error of ``failures`` in turn, then succeed; return the result and the attempts made."""
    attempts = 0
    result = None
    async for attempt in retrying(policy, clock=clock, rng=random.Random(0), **kwargs):
        with attempt:
            attempts += 1
            if attempts <= len(failures):
                raise failures[attempts - 1]
            result = "ok"
    return result, attempts


class TestRetryAfterFromHeaders:
    def test_retry_after_ms(self):
        """retry-after-ms is read as milliseconds."""
        assert 1.5 == retry_after_from_headers({"retry-after-ms": "1500"}, now=NOW)

    def test_retry_after_seconds(self):
        """Retry-After with delta-seconds is read as seconds."""
        assert 7.0 == retry_after_from_headers({"Retry-After": "7"}, now=NOW)

    def test_retry_after_http_date(self):
        """Retry-After with an HTTP-date is the time from now until that date."""
        assert 30.0 == retry_after_from_headers({"Retry-After": http_date(NOW + 30)}, now=NOW)

    def test_retry_after_date_in_the_past_is_zero(self):
        """An HTTP-date already past means no wait, never a negative one."""
        assert 0.0 == retry_after_from_headers({"Retry-After": http_date(NOW - 30)}, now=NOW)

    def test_ratelimit_reset_uses_the_larger(self):
        """The larger of x-ratelimit-reset-requests and x-ratelimit-reset-tokens is used."""
        headers = {"x-ratelimit-reset-requests": "6m0s", "x-ratelimit-reset-tokens": "20ms"}
        assert 360.0 == retry_after_from_headers(headers, now=NOW)
        headers = {"x-ratelimit-reset-requests": "20ms", "x-ratelimit-reset-tokens": "1s"}
        assert 1.0 == retry_after_from_headers(headers, now=NOW)

    def test_ratelimit_reset_single_header(self):
        """Either reset header alone is enough."""
        assert 0.02 == retry_after_from_headers({"x-ratelimit-reset-tokens": "20ms"}, now=NOW)

    def test_retry_after_ms_beats_retry_after(self):
        """retry-after-ms takes precedence over Retry-After and the reset headers."""
        headers = {"Retry-After": "7", "retry-after-ms": "250", "x-ratelimit-reset-requests": "6m0s"}
        assert 0.25 == retry_after_from_headers(headers, now=NOW)

    def test_retry_after_beats_ratelimit_reset(self):
        """Retry-After takes precedence over the reset headers."""
        headers = {"Retry-After": "7", "x-ratelimit-reset-requests": "6m0s"}
        assert 7.0 == retry_after_from_headers(headers, now=NOW)

    def test_unparseable_higher_precedence_falls_through(self):
        """A garbage value in a higher-precedence header lets the next header decide."""
        headers = {"retry-after-ms": "soon", "Retry-After": "nope", "x-ratelimit-reset-requests": "1s"}
        assert 1.0 == retry_after_from_headers(headers, now=NOW)

    def test_names_are_case_insensitive(self):
        """Header names match whatever their case."""
        assert 0.5 == retry_after_from_headers({"RETRY-AFTER-MS": "500"}, now=NOW)
        assert 3.0 == retry_after_from_headers({"retry-AFTER": "3"}, now=NOW)
        assert 2.0 == retry_after_from_headers({"X-RateLimit-Reset-Tokens": "2s"}, now=NOW)

    @pytest.mark.parametrize(
        "headers",
        [
            {},
            {"Retry-After": "soon"},
            {"Retry-After": ""},
            {"retry-after-ms": "abc"},
            {"x-ratelimit-reset-requests": "abc", "x-ratelimit-reset-tokens": "1x"},
            {"content-type": "application/json"},
        ],
    )
    def test_garbage_is_none(self, headers):
        """Missing or unparseable hints give None."""
        assert None is retry_after_from_headers(headers, now=NOW)

    @pytest.mark.parametrize(
        "headers",
        [{"Retry-After": "inf"}, {"retry-after-ms": "inf"}, {"x-ratelimit-reset-tokens": "inf"},
         {"Retry-After": "nan"}],
    )
    def test_non_finite_numbers_are_garbage(self, headers):
        """'inf' and 'nan' are not delay-seconds (RFC 9110: 1*DIGIT) and give None, not an endless wait."""
        assert None is retry_after_from_headers(headers, now=NOW)


class TestParseDuration:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("1s", 1.0),
            ("20ms", 0.02),
            ("6m0s", 360.0),
            ("1m30.5s", 90.5),
            ("2h", 7200.0),
            ("1h2m3s", 3723.0),
            ("1.5", 1.5),
            ("3", 3.0),
            (" 1s ", 1.0),
        ],
    )
    def test_valid(self, text, expected):
        """OpenAI-style durations and bare seconds parse to seconds."""
        assert expected == parse_duration(text)

    @pytest.mark.parametrize("text", ["", "   ", "abc", "ms", "1x", "6m0sx", "1s 2s", "s1"])
    def test_invalid(self, text):
        """Anything that is not entirely a duration gives None."""
        assert None is parse_duration(text)

    @pytest.mark.parametrize("text", ["5.s", ".5s", "1..2s", "1e3s", "+1s", "1_0s", "²s", "inf", "Infinity", "nan",
                                      "9" * 400 + "s", "1.5.5s", "0.000s", "١s", "٣", "5.", "-1s"])
    def test_fast_path_reads_as_the_pattern_does(self, text):
        """The one-unit fast path (``"0.250s"``, ``"20ms"``) accepts exactly what the pattern accepts: digits with at
        most one inner point (not ``5.s``, ``.5s``, exponents, signs, underscores or superscripts; other scripts'
        digits as ``\\d`` matches them), and nothing ending in a letter that only ``float`` reads (``inf``)."""
        assert reference_duration(text) == parse_duration(text)

    @given(st.text(alphabet="0123456789.mshnaify e+-_²١", max_size=8))
    def test_same_as_the_pattern_on_any_text(self, text):
        assert reference_duration(text) == parse_duration(text)


def reference_duration(text: str) -> float | None:
    """The definition ``parse_duration`` keeps: a finite non-negative number of seconds, or the whole text a
    sequence of number-unit parts (``\\d+(\\.\\d+)?`` then ``ms``, ``h``, ``m`` or ``s``) summed, if finite."""
    text = text.strip()
    try:
        seconds = float(text) if text else math.nan
        plain = bool(text)
    except ValueError:
        plain = False
    if plain:
        return seconds if 0 <= seconds < math.inf else None
    if not re.fullmatch(r"(?:\d+(?:\.\d+)?(?:ms|h|m|s))+", text):
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    total = sum(float(number) * scale[unit] for number, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", text))
    return total if total < math.inf else None


class TestRetrying:
    async def test_rate_limit_hint_is_honoured(self):
        """A 429 with retry_after=2 is retried once after a wait of 2 s plus at most 10% jitter."""
        clock = FakeClock()
        assert ("ok", 2) == await run(RetryPolicy(), [rate_limited(2.0)], clock)
        assert 1 == len(clock.slept)
        assert 2.0 <= clock.slept[0] <= 2.2

    async def test_hint_ignored_when_told(self):
        """With honour_server_hints off, a hinted 429 waits the backoff instead."""
        clock = FakeClock()
        policy = RetryPolicy(initial_backoff=1.0, honour_server_hints=False)
        assert ("ok", 2) == await run(policy, [rate_limited(30.0)], clock)
        assert 0.5 <= clock.slept[0] <= 1.0

    async def test_backoff_without_hint_is_exponential_and_capped(self):
        """Waits without a hint lie in [c/2, c] with c = initial * 2**(n-1) capped by max_backoff."""
        clock = FakeClock()
        policy = RetryPolicy(max_attempts=7, initial_backoff=1.0, max_backoff=4.0, max_total_wait=1000.0)
        with pytest.raises(ServerError):
            await run(policy, [server_error() for _ in range(10)], clock)
        ceilings = [1.0, 2.0, 4.0, 4.0, 4.0, 4.0]
        assert 6 == len(clock.slept)
        for ceiling, wait in zip(ceilings, clock.slept, strict=True):
            assert ceiling / 2 <= wait <= ceiling

    async def test_connection_errors_are_retried(self):
        """Connection errors are transient: retried, then the call succeeds."""
        clock = FakeClock()
        failures = [LLMConnectionError("reset", model="m", endpoint="http://x") for _ in range(2)]
        assert ("ok", 3) == await run(RetryPolicy(), failures, clock)
        assert 2 == len(clock.slept)

    async def test_permanent_error_fails_at_once(self):
        """A PermanentLLMError is raised after one attempt without sleeping."""
        clock = FakeClock()
        error = PermanentLLMError("bad request", model="m", endpoint="http://x", status=400)
        attempts = 0
        with pytest.raises(PermanentLLMError) as caught:
            async for attempt in retrying(RetryPolicy(), clock=clock, rng=random.Random(0)):
                with attempt:
                    attempts += 1
                    raise error
        assert error is caught.value
        assert 1 == attempts
        assert [] == clock.slept

    async def test_foreign_errors_are_not_retried(self):
        """An exception outside the LLM error tree is raised at once."""
        clock = FakeClock()
        with pytest.raises(KeyError):
            await run(RetryPolicy(), [KeyError("x")], clock)
        assert [] == clock.slept

    async def test_gives_up_after_max_attempts_with_the_last_error(self):
        """After max_attempts failures the last error itself is raised, not a tenacity.RetryError."""
        clock = FakeClock()
        failures = [server_error() for _ in range(5)]
        attempts = 0
        with pytest.raises(ServerError) as caught:
            async for attempt in retrying(RetryPolicy(max_attempts=3), clock=clock, rng=random.Random(0)):
                with attempt:
                    attempts += 1
                    raise failures[attempts - 1]
        assert failures[2] is caught.value
        assert 3 == attempts
        assert 2 == len(clock.slept)

    async def test_total_wait_is_bounded(self):
        """With 10 s hints and a 25 s budget the loop stops after two waits totalling at most 25 s."""
        clock = FakeClock()
        policy = RetryPolicy(max_attempts=10, max_total_wait=25.0)
        with pytest.raises(RateLimitError):
            await run(policy, [rate_limited(10.0) for _ in range(10)], clock)
        assert 2 == len(clock.slept)
        assert 20.0 <= sum(clock.slept) <= 22.0

    async def test_on_retry_sees_each_error_and_wait(self):
        """on_retry is called once per retry with the error and the wait about to be slept."""
        clock = FakeClock()
        seen: list[tuple[BaseException, float]] = []
        failures = [rate_limited(2.0), server_error()]
        assert ("ok", 3) == await run(RetryPolicy(), failures, clock, on_retry=lambda e, w: seen.append((e, w)))
        assert failures == [error for error, _ in seen]
        assert clock.slept == [wait for _, wait in seen]


class TestWaitIsHintAndBackoff:
    async def test_a_short_hint_is_a_floor_not_the_whole_wait(self):
        """Seven 429s hinting 50 ms (a token bucket's time to its next token): every wait is at least half its
        growing backoff ceiling (0.5, 1, 2, … s), so eight attempts span over 30 s instead of under one."""
        clock = FakeClock()
        with pytest.raises(RateLimitError):
            await run(RetryPolicy(), [rate_limited(0.05) for _ in range(8)], clock)
        ceilings = [0.5 * 2**n for n in range(7)]
        assert 7 == len(clock.slept)
        for ceiling, wait in zip(ceilings, clock.slept, strict=True):
            assert ceiling / 2 <= wait <= ceiling
        assert sum(clock.slept) > 30.0

    async def test_a_long_hint_is_the_wait(self):
        """A hint above the backoff is waited in full (plus at most 10% jitter)."""
        clock = FakeClock()
        assert ("ok", 3) == await run(RetryPolicy(), [rate_limited(5.0), rate_limited(5.0)], clock)
        assert all(5.0 <= wait <= 5.5 for wait in clock.slept)

    async def test_the_backoff_takes_at_most_half_the_time_left_before_the_deadline(self):
        """A deadline 3 s away: backoffs of up to 32 s are cut to half the time left, so the call still gets its
        attempts; a hint, the server's word, is not cut."""
        clock = FakeClock()
        deadline = Deadline(at=3.0, seconds=3.0)
        policy = RetryPolicy(max_attempts=5, initial_backoff=4.0)
        assert ("ok", 5) == await run(policy, [server_error() for _ in range(4)], clock, deadline=deadline)
        left = 3.0
        for wait in clock.slept:
            assert wait <= left / 2 + 1e-9
            left -= wait
        assert clock.now() < 3.0

    async def test_a_hint_past_the_deadline_ends_the_call(self):
        """A 429 asking for 10 s with 3 s left: no retry, the deadline's error."""
        clock = FakeClock()
        with pytest.raises(CallDeadlineError):
            await run(RetryPolicy(), [rate_limited(10.0)], clock, deadline=Deadline(at=3.0, seconds=3.0))
        assert [] == clock.slept
