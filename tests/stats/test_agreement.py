"""Judge agreement against a textbook table, hand-worked cases, a closed form, and scipy's Spearman."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from mpcbench_async.stats import spearman, weighted_kappa


def _expand(table):
    """Rater pairs from a contingency table: ``table[i][j]`` pairs scored (i, j)."""
    a, b = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [i] * count
            b += [j] * count
    return a, b


def _quadratic_kappa_closed_form(a, b):
    """Quadratic-weighted kappa as 2·cov / (var_a + var_b + (mean_a − mean_b)²), population moments."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    cov = ((x - x.mean()) * (y - y.mean())).mean()
    return 2 * cov / (x.var() + y.var() + (x.mean() - y.mean()) ** 2)


class TestWeightedKappa:
    def test_textbook_two_by_two(self):
        """Wikipedia's Cohen's kappa example (20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no): κ = 0.4.
        With two categories the quadratic weights are 0/1, so weighted κ is Cohen's κ."""
        a, b = _expand([[20, 5], [10, 15]])
        assert 0.4 == pytest.approx(weighted_kappa(a, b, categories=2), abs=1e-12)

    def test_by_hand(self):
        """(0,0), (1,2), (2,2): Σw·O = 1/3, Σw·E = 5/3, so κ = 1 − 1/5."""
        assert 0.8 == pytest.approx(weighted_kappa([0, 1, 2], [0, 2, 2], categories=3), abs=1e-12)

    def test_random_scores_match_the_closed_form(self):
        rng = np.random.default_rng(11)
        a = rng.integers(0, 6, size=200)
        b = np.clip(a + rng.integers(-2, 3, size=200), 0, 5)
        assert _quadratic_kappa_closed_form(a, b) == pytest.approx(weighted_kappa(a.tolist(), b.tolist()), abs=1e-12)

    def test_perfect_and_undefined(self):
        assert 1.0 == weighted_kappa([0, 3, 5], [0, 3, 5])
        assert None is weighted_kappa([4, 4], [4, 4])  # one score throughout: chance agreement is total
        assert None is weighted_kappa([], [])

    def test_scores_out_of_range_are_refused(self):
        with pytest.raises(ValueError, match=r"kappa needs integer scores in 0\.\.5"):
            weighted_kappa([6], [1])


class TestSpearman:
    def test_ties_share_their_average_rank(self):
        """x ranks 1, 2.5, 2.5, 4; y ranks 1, 2, 3, 4: ρ = 4.5 / √(4.5 · 5) = √0.9."""
        assert 0.9 ** 0.5 == pytest.approx(spearman([1, 2, 2, 3], [10, 20, 30, 40]), abs=1e-12)

    def test_matches_scipy_with_many_ties(self):
        rng = np.random.default_rng(5)
        a = rng.integers(0, 6, size=150)
        b = np.clip(a + rng.integers(-1, 2, size=150), 0, 5)
        assert scipy.stats.spearmanr(a, b).statistic == pytest.approx(spearman(a.tolist(), b.tolist()), abs=1e-12)

    def test_constant_side_or_too_few_pairs(self):
        assert (None, None, None) == (spearman([3, 3, 3], [1, 2, 3]), spearman([1], [2]), spearman([], []))
