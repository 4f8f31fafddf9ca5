"""Quantiles: one nearest-rank helper for the summary's latency columns and the endpoint profile.

The expected values were produced by the two helpers it replaced (the summary's bucketed
``_Quantiles`` and the profile's exact ``percentile``), so reports keep their numbers.
"""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from mpcbench_async._numbers import Quantiles

R = random.Random(5)
LATENCIES = [round(R.expovariate(4), 5) for _ in range(101)] + [0.0, 0.00003]
QS = (0, 0.5, 0.95, 0.99, 1)


class TestQuantiles:
    def test_data_is_the_fixed_sample(self):
        assert [0.24381, 0.33849, 0.39642, 0.71378, 0.33667, 0.63881, 0.00736, 0.15666] == LATENCIES[:8]

    def test_bucketed_gives_the_summary_numbers(self):
        """Log buckets 2% wide from 0.1 ms; a bucket answers its midpoint (so 0.0 reads as 0.1 ms)."""
        quantiles = Quantiles(LATENCIES)
        assert [0.0001, 0.163, 0.8105, 1.0695, 1.4394] == [quantiles.quantile(q) for q in QS]
        assert 0.252 == Quantiles([0.25]).quantile(0.5)

    def test_exact_gives_the_profile_numbers(self):
        quantiles = Quantiles(LATENCIES, exact=True)
        assert [0.0, 0.16407, 0.81413, 1.07998, 1.4305] == [quantiles.quantile(q) for q in QS]
        assert 0.123456 == Quantiles([0.1234564], exact=True).quantile(0.5)  # to the µs (a TPOT is a few ms)

    def test_empty_has_no_quantile(self):
        assert None is Quantiles().quantile(0.5)
        assert None is Quantiles(exact=True).quantile(0.5)

    def test_streamed_equals_given_at_once(self):
        streamed = Quantiles(exact=True)
        for value in LATENCIES:
            streamed.add(value)
        assert Quantiles(LATENCIES, exact=True).quantile(0.95) == streamed.quantile(0.95)
        assert len(LATENCIES) == streamed.n

    @given(st.lists(st.floats(0, 100, allow_nan=False), min_size=1), st.floats(0, 1))
    def test_exact_is_the_nearest_rank_of_the_sorted_values(self, values, q):
        """The smallest value with at least a fraction ``q`` of the values at or below it."""
        ordered = sorted(values)
        below = [v for v in ordered if sum(w <= v for w in ordered) >= q * len(ordered)]
        assert round(below[0], 6) == Quantiles(values, exact=True).quantile(q)
