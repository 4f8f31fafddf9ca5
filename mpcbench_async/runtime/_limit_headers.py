"""What a provider's ``x-ratelimit-*`` headers say about the bucket that meters it.

OpenAI (and the providers that copy its headers) send, for ``requests`` and
``tokens``: ``x-ratelimit-limit-<kind>`` the per-minute limit,
``x-ratelimit-remaining-<kind>`` what may still be sent now and
``x-ratelimit-reset-<kind>`` the time until the budget is whole again (``1s``,
``6m0s``, ``20ms``). The limit alone does not say how the minute is metered —
some providers enforce it per second — but remaining and reset do: the bucket
holds what is left plus what refills until the reset
(``remaining + reset × limit / 60``), a minute's worth or a second's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import msgspec

from ._retry import parse_duration

__all__ = ["BucketReading", "read_limit_headers"]


class BucketReading(msgspec.Struct, kw_only=True, frozen=True):
    """One reply's view of one of the provider's buckets (``per_minute`` ``None`` when it sent no limit)."""

    remaining: float
    reset_s: float
    per_minute: float | None = None

    def size(self, per_minute: float) -> float:
        """The bucket's size when full; ``per_minute`` is the rate to assume when the reply gave no limit."""
        return self.remaining + self.reset_s * (self.per_minute or per_minute) / 60.0


# Beyond these a header is garbled or hostile, not a provider's budget: its reading is left out, so that
# one odd reply can neither overflow the bucket's size nor pace calls hours apart.
MAX_AMOUNT = 1e12  # requests or tokens
MAX_RESET_S = 86400.0  # a day
MIN_PER_MINUTE = 1.0  # a limit below one request (or token) a minute


def _amount(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return value if math.isfinite(value) and 0 <= value <= MAX_AMOUNT else None


def read_limit_headers(headers: Mapping[str, str]) -> dict[str, BucketReading]:
    """Readings (``"requests"``, ``"tokens"``) from a reply's headers.

    A kind lacking remaining or reset, or with either out of bounds (``MAX_AMOUNT``, ``MAX_RESET_S``),
    is left out; a limit out of bounds (below ``MIN_PER_MINUTE``) reads as unknown.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    readings: dict[str, BucketReading] = {}
    for kind in ("requests", "tokens"):
        remaining = _amount(lowered.get(f"x-ratelimit-remaining-{kind}"))
        reset_text = lowered.get(f"x-ratelimit-reset-{kind}")
        reset = parse_duration(reset_text) if reset_text is not None else None
        if remaining is not None and reset is not None and reset <= MAX_RESET_S:
            limit = _amount(lowered.get(f"x-ratelimit-limit-{kind}"))
            readings[kind] = BucketReading(remaining=remaining, reset_s=reset,
                                           per_minute=limit if limit is not None and limit >= MIN_PER_MINUTE else None)
    return readings
