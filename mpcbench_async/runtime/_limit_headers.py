"""What a provider's rate-limit headers say about the bucket that meters it.

Two spellings are read, for ``requests`` and ``tokens``:

* OpenAI (and the providers that copy it: Azure, Groq, vLLM gateways, LiteLLM):
  ``x-ratelimit-limit-<kind>`` the per-minute limit, ``x-ratelimit-remaining-<kind>``
  what may still be sent now and ``x-ratelimit-reset-<kind>`` the time until the
  budget is whole again, in seconds (``1.5``) or as a duration (``1s``, ``6m0s``, ``20ms``);
* Anthropic: ``anthropic-ratelimit-<kind>-limit``/``-remaining``/``-reset``, the reset
  being the moment (RFC 3339, e.g. ``2026-01-01T00:00:01.5Z``) the bucket is full again.

Either reset may be given in any of those forms (seconds, a duration, an RFC 3339
time or an HTTP date); a moment is turned into seconds from now. The limit alone
does not say how the minute is metered — some providers enforce it per second —
but remaining and reset do: the bucket holds what is left plus what refills until
the reset (``remaining + reset × limit / 60``), a minute's worth or a second's.

Some providers and gateways count the limit itself over a shorter window (20 a
second, not a minute). Read as a minute's, such a limit would pace 60 times too
slowly, and no reply would ever say so: the calls just crawl. The reset gives it
away: a mostly unspent limit (``remaining`` at least half of it) that is whole
again in less than a quarter of the time a minute's rate needs to refill what is
spent counts a shorter window. ``counted_window`` names it (1 s or 10 s, the next
one up once a reset runs past it) and ``BucketReading.per_window`` restates the
reading as per minute, which is what the pacing reads.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from datetime import datetime

import msgspec

from ._retry import parse_duration

__all__ = ["BucketReading", "HeaderReader", "counted_window", "parse_reset", "read_limit_headers"]


class BucketReading(msgspec.Struct, kw_only=True, frozen=True):
    """One reply's view of one of the provider's buckets (``per_minute`` ``None`` when it sent no limit)."""

    remaining: float
    reset_s: float
    per_minute: float | None = None

    def size(self, per_minute: float) -> float:
        """The bucket's size when full; ``per_minute`` is the rate to assume when the reply gave no limit."""
        return self.remaining + self.reset_s * (self.per_minute or per_minute) / 60.0

    def per_window(self, seconds: float) -> BucketReading:
        """This reading with its limit counted over ``seconds`` (see ``counted_window``), restated per minute."""
        if self.per_minute is None or seconds == MINUTE_S:
            return self
        return BucketReading(remaining=self.remaining, reset_s=self.reset_s,
                             per_minute=self.per_minute * MINUTE_S / seconds)


MINUTE_S = 60.0
SHORT_WINDOWS_S = (1.0, 10.0)  # the windows a limit may count instead of a minute, shortest first


def counted_window(reading: BucketReading, current: float = MINUTE_S) -> float:
    """Seconds the reading's limit counts, given ``current``, what the model's earlier readings showed.

    A minute, unless the reset shows a shorter window: at least half the limit remaining and whole again in
    under a quarter of the time a minute's rate would take to refill the rest. A shorter window never
    shrinks, and grows to the next one a reset runs past (a 10-s window's first replies may show resets
    under a second).
    """
    limit, remaining, reset = reading.per_minute, reading.remaining, reading.reset_s
    if limit is None:
        return current
    if current < MINUTE_S:
        if reset <= current:
            return current
        return next((w for w in SHORT_WINDOWS_S if reset <= w), MINUTE_S)
    spent = limit - remaining
    if remaining >= limit / 2 and spent >= 1 and reset * limit / MINUTE_S < spent / 4:
        return next((w for w in SHORT_WINDOWS_S if reset <= w), MINUTE_S)
    return current


# Beyond these a header is garbled or hostile, not a provider's budget: its reading is left out, so that
# one odd reply can neither overflow the bucket's size nor pace calls hours apart.
MAX_AMOUNT = 1e12  # requests or tokens
MAX_RESET_S = 86400.0  # a day
MIN_PER_MINUTE = 1.0  # a limit below one request (or token) a minute
_DURATIONS_KEPT = 256  # resets read as durations kept per model (``HeaderReader``), all dropped when full
_UNREAD = -1.0  # not among them (no duration reads as negative)

_KINDS = ("requests", "tokens")
# Each kind's (limit, remaining, reset) header names, OpenAI's spelling first: built once, not per reply.
_NAMES = tuple((kind, (
    (f"x-ratelimit-limit-{kind}", f"x-ratelimit-remaining-{kind}", f"x-ratelimit-reset-{kind}"),
    (f"anthropic-ratelimit-{kind}-limit", f"anthropic-ratelimit-{kind}-remaining", f"anthropic-ratelimit-{kind}-reset"),
)) for kind in _KINDS)


def _amount(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 <= value <= MAX_AMOUNT else None  # NaN fails both comparisons; inf fails the second


def parse_reset(text: str, *, now: float | None = None) -> float | None:
    """Seconds until a reset given as seconds, a duration (``6m0s``), an RFC 3339 time or an HTTP date.

    A moment already past is 0; ``None`` when the text is none of these (``now``: the wall time, for tests).
    """
    seconds = parse_duration(text)
    return seconds if seconds is not None else _seconds_to(text, now)


def _seconds_to(text: str, now: float | None) -> float | None:
    """``parse_reset`` of a text that is no duration: a moment's seconds from ``now``, ``None`` if no moment."""
    text = text.strip()
    when: datetime | None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
    if when is None or when.tzinfo is None:  # a moment without a zone is no moment at all
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def read_limit_headers(headers: Mapping[str, str], *, now: float | None = None) -> dict[str, BucketReading]:
    """Readings (``"requests"``, ``"tokens"``) from a reply's headers, in either spelling (OpenAI's first).

    A kind lacking remaining or reset, or with either out of bounds (``MAX_AMOUNT``, ``MAX_RESET_S``),
    is left out; a limit out of bounds (below ``MIN_PER_MINUTE``) reads as unknown. ``now``: the wall
    time a reset moment is counted from (default: the clock's).
    """
    return _read(headers, now, None)[0]


def _read(headers: Mapping[str, str], now: float | None,
          durations: dict[str, float | None] | None) -> tuple[dict[str, BucketReading], bool]:
    """``read_limit_headers``, and whether every reset read was a number of seconds or a duration (no moment):
    then the readings depend on the headers' text alone. ``durations``: resets already read (text → seconds, or
    ``None`` for no duration), looked up before ``parse_duration`` and filled with what it reads."""
    lowered = {name.lower(): value for name, value in headers.items()}
    readings: dict[str, BucketReading] = {}
    timeless = True
    for kind, spellings in _NAMES:
        for limit_name, remaining_name, reset_name in spellings:
            remaining_text, reset_text = lowered.get(remaining_name), lowered.get(reset_name)
            if remaining_text is None or reset_text is None:  # this spelling is not the reply's
                continue
            if durations is None:
                reset = parse_duration(reset_text)
            elif (reset := durations.get(reset_text, _UNREAD)) is _UNREAD:
                if len(durations) >= _DURATIONS_KEPT:  # a provider's resets take few values: rarely reached
                    durations.clear()
                reset = durations[reset_text] = parse_duration(reset_text)
            remaining = _amount(remaining_text)
            if reset is None:
                timeless = False
                reset = _seconds_to(reset_text, now)
            if remaining is not None and reset is not None and reset <= MAX_RESET_S:
                limit = _amount(lowered.get(limit_name))
                readings[kind] = BucketReading(
                    remaining=remaining, reset_s=reset,
                    per_minute=limit if limit is not None and limit >= MIN_PER_MINUTE else None)
                break
    return readings, timeless


class HeaderReader:
    """``read_limit_headers`` for one model's replies, the last reply's readings kept while its headers repeat.

    A provider's headers repeat reply after reply while its bucket stays full (a limit far above the rate
    sent: the usual case) or between two refills; reading them again (lower-casing, parsing the amounts and the
    reset) was half of what the headers cost a reply (issue 31). The readings of headers equal to the last
    ones are the same objects (``BucketReading`` is frozen; nobody changes a readings dict) — unless a reset
    was a moment (an RFC 3339 time, an HTTP date), which reads as fewer seconds as time passes: such headers
    are read every time.
    """

    __slots__ = ("_durations", "_headers", "_readings")

    def __init__(self) -> None:
        self._headers: dict[str, str] | None = None  # a copy of the last headers read whose readings are timeless
        self._readings: dict[str, BucketReading] = {}
        # Headers that differ mostly differ in ``remaining``: their resets (``0.000s``, ``1s``) recur, and reading
        # one as a duration was the dearest part of a new reading.
        self._durations: dict[str, float | None] = {}

    def read(self, headers: Mapping[str, str]) -> dict[str, BucketReading]:
        if headers == self._headers:
            return self._readings
        readings, timeless = _read(headers, None, self._durations)
        self._headers, self._readings = (dict(headers) if timeless else None), readings
        return readings
