"""Small numeric helpers shared by summaries, profiles and benchmarks."""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter
from collections.abc import Iterable

__all__ = ["Quantiles"]


class Quantiles:
    """Nearest-rank quantiles of a stream of non-negative values (latencies in seconds), rounded to 0.1 ms.

    ``exact=True`` keeps one count per distinct value: the true nearest-rank quantile, for
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
        return round(slot if self.exact else self._BASE * math.exp((slot + 0.5) * self._STEP), 4)
