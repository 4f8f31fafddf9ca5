"""Small numeric helpers shared by summaries, profiles, benchmarks and charts (round axis ticks)."""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter
from collections.abc import Iterable

__all__ = ["Quantiles", "tick_label", "ticks"]


class Quantiles:
    """Nearest-rank quantiles of a stream of non-negative values (latencies in seconds), rounded to 0.1 ms.

    ``exact=True`` keeps one count per distinct value: the true nearest-rank quantile, rounded
    to 1 µs (a streamed reply's time per output token is a few ms: 0.1 ms would be a 2–5% step), for
    a profile's few thousand calls. The default keeps counts of log-spaced buckets 2% wide
    from 0.1 ms and answers a bucket's midpoint: constant memory for a summary that reads
    every call of a sweep, and ample for p50/p95.
    """

    _BASE, _STEP = 1e-4, math.log(1.02)

    def __init__(self, values: Iterable[float] = (), *, exact: bool = False) -> None:
        self.exact = exact
        self.counts: Counter[float] = Counter()
        self.n = 0
        for value in values:
            self.add(value)

    def add(self, value: float) -> None:
        slot = value if self.exact else max(0, int(math.log(max(value, self._BASE) / self._BASE) / self._STEP))
        self.counts[slot] += 1
        self.n += 1

    def quantile(self, q: float) -> float | None:
        """The smallest value (or bucket) with at least ``q`` (0–1) of the values at or below it; ``None`` if empty."""
        if not self.n:
            return None
        rank = min(self.n, max(1, math.ceil(q * self.n)))
        slots = sorted(self.counts)
        slot = slots[bisect.bisect_left(list(itertools.accumulate(self.counts[s] for s in slots)), rank)]
        return round(slot, 6) if self.exact else round(self._BASE * math.exp((slot + 0.5) * self._STEP), 4)


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` evenly spaced round values covering ``[low, high]`` (step 1, 2 or 5 × 10^k).

    The step is the raw spacing rounded to the nearest nice number (Heckbert's rule:
    below 1.5 → 1, below 3 → 2, below 7 → 5, else 10, times its power of ten); the
    ticks run from the last multiple of the step at or below ``low`` to the first at
    or above ``high``.
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"ticks need a finite domain, got [{low}, {high}]")
    if high < low:
        low, high = high, low
    if high == low:
        return [low]
    raw = (high - low) / max(1, count - 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    fraction = raw / magnitude
    step = magnitude * (1 if fraction < 1.5 else 2 if fraction < 3 else 5 if fraction < 7 else 10)
    first = math.floor(low / step + 1e-9)
    last = math.ceil(high / step - 1e-9)
    return [round(i * step, 12) + 0.0 for i in range(first, last + 1)]


def tick_label(value: float, step: float) -> str:
    """``value`` with as many decimals as the tick step needs (0.5 → "0.5", 2 → "2", 0.25 → "0.25")."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    if step > 0 and not math.isclose(round(step, decimals), step, rel_tol=1e-9):
        decimals += 1
    return f"{value:.{decimals}f}"
