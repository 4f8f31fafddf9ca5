"""The one retry loop for model calls, built on tenacity.

Transient failures (``TransientLLMError``: 408/409/429/5xx, connection errors,
timeouts, truncated or undecodable bodies) are retried after the larger of two
waits: a growing backoff (attempt n waits between half and all of
``initial_backoff × 2^(n-1)``, capped at ``max_backoff``: jittered, so a crowd of
callers does not return in lockstep) and the server's hint when it gave one
(``retry-after-ms``, ``Retry-After``, ``x-ratelimit-reset-*``, plus up to 10%
jitter). The hint is a floor, never the whole wait: a token bucket's hint is the
time to its next token (often a few ms), which taken alone would spend every
attempt within a second while the bucket stays drained.

Attempts and total waiting are both bounded, and so is the whole call when it
has a ``Deadline``: the backoff never takes more than half the time left before
it (the attempt after it gets the other half), and a retry whose wait would
still end past it — a server's hint longer than the time left — is not made: the
call fails with a ``CallDeadlineError``. Anything else fails at once.
"""

from __future__ import annotations

import email.utils
import math
import random
import re
import time
from collections.abc import Callable, Mapping

import msgspec
import tenacity

from .._exceptions import CallDeadlineError, LLMError, TransientLLMError
from ._clock import Clock, MonotonicClock

__all__ = ["Deadline", "RetryPolicy", "parse_duration", "retry_after_from_headers", "retrying"]


class RetryPolicy(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """How hard to retry: attempts, backoff shape and the total wait budget (seconds)."""

    max_attempts: int = 8
    max_total_wait: float = 300.0
    initial_backoff: float = 0.5
    max_backoff: float = 60.0
    honour_server_hints: bool = True


class Deadline(msgspec.Struct, kw_only=True, frozen=True):
    """When a whole call (attempts, backoff and waits) must be over: ``at`` on the clock, ``seconds`` as configured."""

    at: float
    seconds: float

    def remaining(self, clock: Clock) -> float:
        """Seconds left before the deadline (negative once it has passed)."""
        return self.at - clock.now()

    def error(self, attempts: int, *, model: str, endpoint: str, last: LLMError | None) -> CallDeadlineError:
        """The error for a call cut by this deadline, naming model, endpoint, attempts and the last failure."""
        if last is None:
            happened = "the last attempt was still waiting for its reply"
        else:
            happened = f"last error: {last.reason}"
        return CallDeadlineError(
            f"call deadline of {self.seconds:g} s passed after {attempts} attempt(s), retries and backoff "
            f"included (timeouts.call_deadline_s); {happened}", last_error=last, model=model, endpoint=endpoint)


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_SCALE = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float | None:
    """Parse OpenAI-style reset durations (``"1s"``, ``"6m0s"``, ``"20ms"``, ``"1.5"``) to seconds.

    Read on every reply that carries rate-limit headers, so the usual one-unit forms (``"0.250s"``, ``"20ms"``)
    skip the regular expression; they give the same value it would.
    """
    text = text.strip()
    if not text:
        return None
    if not text[-1].isalpha():  # seconds as a number; ending in a letter, ``float`` reads only inf or nan: none
        try:
            value = float(text)
        except ValueError:
            pass
        else:
            return value if math.isfinite(value) and value >= 0 else None
    unit = "ms" if text.endswith("ms") else text[-1]
    number = text[:-len(unit)]
    if unit in _SCALE and _plain_number(number):
        return _finite(float(number) * _SCALE[unit])
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(a + b for a, b in parts) != text:
        return None
    return _finite(sum(float(value) * _SCALE[unit] for value, unit in parts))


def _plain_number(text: str) -> bool:
    """Whether ``text`` is what ``_DURATION_PART`` reads as a number: ASCII digits, at most one inner point."""
    return (text.isascii() and text.replace(".", "", 1).isdigit()
            and not text.startswith(".") and not text.endswith("."))


def _finite(seconds: float) -> float | None:
    return seconds if math.isfinite(seconds) else None  # "9999…9s" overflows to inf


def _parse_retry_after(value: str, now: float) -> float | None:
    """``Retry-After`` is either delta-seconds or an HTTP-date."""
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return when.timestamp() - now


def retry_after_from_headers(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """The wait (seconds, ≥ 0) a server asked for, or ``None`` if it did not say.

    Precedence: ``retry-after-ms``, then ``Retry-After``, then the larger of
    ``x-ratelimit-reset-requests`` / ``x-ratelimit-reset-tokens``. Header names
    are matched case-insensitively.
    """
    lower = {k.lower(): v for k, v in headers.items()}
    wall_now = time.time() if now is None else now
    if "retry-after-ms" in lower:
        try:
            millis = float(lower["retry-after-ms"])
        except ValueError:
            millis = math.nan
        if math.isfinite(millis):
            return max(0.0, millis / 1000.0)
    if "retry-after" in lower:
        seconds = _parse_retry_after(lower["retry-after"], wall_now)
        if seconds is not None:
            return max(0.0, seconds)
    resets = [r for name in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")
              if name in lower and (r := parse_duration(lower[name])) is not None]
    return max(resets) if resets else None


class _Wait(tenacity.wait.wait_base):
    """The larger of the server's hint (when honoured) and a growing, jittered backoff within the deadline."""

    def __init__(self, policy: RetryPolicy, rng: random.Random, clock: Clock, deadline: Deadline | None) -> None:
        self.policy = policy
        self.rng = rng
        self.clock = clock
        self.deadline = deadline

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        ceiling = min(
            self.policy.max_backoff,
            self.policy.initial_backoff * 2 ** (retry_state.attempt_number - 1),
        )
        backoff = self.rng.uniform(ceiling / 2, ceiling)
        if self.deadline is not None:  # half the time left at most: the attempt after the wait needs the rest
            backoff = min(backoff, max(0.0, self.deadline.remaining(self.clock)) / 2)
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        hint = getattr(exc, "retry_after", None)
        if hint is not None and self.policy.honour_server_hints:
            return max(hint * (1.0 + 0.1 * self.rng.random()), backoff)
        return backoff


def _is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, TransientLLMError)


def retrying(
    policy: RetryPolicy,
    *,
    clock: Clock | None = None,
    rng: random.Random | None = None,
    on_retry: Callable[[BaseException, float], None] | None = None,
    deadline: Deadline | None = None,
) -> tenacity.AsyncRetrying:
    """A tenacity ``AsyncRetrying`` for ``policy``.

    Stops after ``max_attempts`` or when the next wait would push the total
    waiting past ``max_total_wait``; the last error is re-raised as is. When the
    next wait would end past ``deadline`` it stops too, raising the deadline's
    ``CallDeadlineError`` instead. ``on_retry(error, wait)`` is called before each sleep.
    """
    clock = clock or MonotonicClock()

    def past_deadline(state: tenacity.RetryCallState) -> bool:
        return deadline is not None and (state.upcoming_sleep or 0.0) >= deadline.remaining(clock)

    def stop(state: tenacity.RetryCallState) -> bool:
        if state.attempt_number >= policy.max_attempts:
            return True
        return state.idle_for + (state.upcoming_sleep or 0.0) > policy.max_total_wait or past_deadline(state)

    def give_up(state: tenacity.RetryCallState) -> None:
        """Re-raise the last error, or the deadline's error when the deadline is what ended the retries."""
        assert state.outcome is not None
        exc = state.outcome.exception()
        if (deadline is not None and isinstance(exc, LLMError) and state.attempt_number < policy.max_attempts
                and past_deadline(state)):
            raise deadline.error(state.attempt_number, model=exc.model, endpoint=exc.endpoint, last=exc) from exc
        state.outcome.result()

    def before_sleep(state: tenacity.RetryCallState) -> None:
        if on_retry is not None and state.outcome is not None:
            exc = state.outcome.exception()
            if exc is not None:
                on_retry(exc, state.upcoming_sleep)

    return tenacity.AsyncRetrying(
        sleep=clock.sleep,
        retry=tenacity.retry_if_exception(_is_retryable),
        wait=_Wait(policy, rng or random.Random(), clock, deadline),
        stop=stop,
        before_sleep=before_sleep,
        retry_error_callback=give_up,
    )

