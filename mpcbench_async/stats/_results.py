"""The result types of the statistics (intervals, paired differences): msgspec only, no numpy.

Why apart: a summary or a viewer page that shows these results decodes them without importing numpy (~0.1 s),
which only computing them needs.
"""

from __future__ import annotations

import msgspec

__all__ = ["Interval", "Paired"]


class Interval(msgspec.Struct, frozen=True):
    """A two-sided confidence interval."""

    low: float
    high: float


class Paired(msgspec.Struct, kw_only=True):
    """``b − a`` over ``n`` pairs: its mean, bootstrap interval, and how often b was above, below or equal to a."""

    n: int
    mean_diff: float | None
    ci: Interval | None
    wins: int  # pairs where b > a
    losses: int  # pairs where b < a
    ties: int
    sign_p: float | None
