"""Bootstrap intervals against a plain loop over the same seeded Generator and against scipy's bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from mpcbench_async.stats import Interval, bootstrap_mean_ci, paired_difference, sign_test_p
from mpcbench_async.stats import _bootstrap as bootstrap_module


def _loop_ci(values, *, confidence, resamples, seed):
    """The percentile bootstrap written out: one resample at a time, then the two percentiles."""
    rng = np.random.default_rng(seed)
    data = np.asarray(values, dtype=float)
    means = [data[rng.integers(0, len(data), size=len(data))].mean() for _ in range(resamples)]
    tail = 100 * (1 - confidence) / 2
    return Interval(low=float(np.percentile(means, tail)), high=float(np.percentile(means, 100 - tail)))


class TestBootstrapMeanCI:
    VALUES = [3.0, 4.5, 2.0, 5.0, 4.0, 1.5, 3.5]

    @pytest.mark.parametrize(("confidence", "resamples", "seed"), [(0.95, 2000, 0), (0.9, 500, 7), (0.99, 333, 3)])
    def test_matches_a_plain_loop(self, confidence, resamples, seed):
        """Same Generator, same draws: the vectorised interval is the loop's exactly."""
        expected = _loop_ci(self.VALUES, confidence=confidence, resamples=resamples, seed=seed)
        assert expected == bootstrap_mean_ci(self.VALUES, confidence=confidence, resamples=resamples, seed=seed)

    def test_matches_scipy_percentile_bootstrap(self):
        """scipy.stats.bootstrap (percentile method, same seed) draws the same resamples."""
        ref = scipy.stats.bootstrap((np.array(self.VALUES),), np.mean, n_resamples=2000, method="percentile",
                                    confidence_level=0.95, rng=np.random.default_rng(0))
        ci = bootstrap_mean_ci(self.VALUES)
        low, high = ref.confidence_interval
        assert (low, high) == pytest.approx((ci.low, ci.high), abs=1e-12)

    def test_chunked_draws_are_the_one_shot_draws(self, monkeypatch):
        """Resamples drawn a few rows at a time (how large inputs keep memory bounded) give the same interval."""
        whole = bootstrap_mean_ci(self.VALUES, resamples=101)
        monkeypatch.setattr(bootstrap_module, "_CHUNK", 3 * len(self.VALUES))
        assert whole == bootstrap_mean_ci(self.VALUES, resamples=101)

    def test_weighted_mean_matches_a_plain_loop(self):
        """Per-task rates weighted by their checks: each resample's statistic is Σ passed / Σ checks of its draws."""
        passed, checks = np.array([1, 3, 0, 2, 5]), np.array([2, 4, 1, 2, 6])
        rng = np.random.default_rng(9)
        pooled = []
        for _ in range(700):
            drawn = rng.integers(0, 5, size=5)
            pooled.append(passed[drawn].sum() / checks[drawn].sum())
        expected = (np.percentile(pooled, 2.5), np.percentile(pooled, 97.5))
        ci = bootstrap_mean_ci(passed / checks, weights=checks, resamples=700, seed=9)
        assert expected == pytest.approx((ci.low, ci.high), abs=1e-12)

    def test_weights_must_match_and_be_positive(self):
        with pytest.raises(ValueError, match="weights must be positive, one per value"):
            bootstrap_mean_ci([1, 2], weights=[1, 0])

    def test_fewer_than_two_values_have_no_interval(self):
        assert (None, None) == (bootstrap_mean_ci([]), bootstrap_mean_ci([4.0]))

    def test_constant_values_give_a_point(self):
        assert Interval(low=2.0, high=2.0) == bootstrap_mean_ci([2, 2, 2])

    def test_bad_confidence_is_refused(self):
        with pytest.raises(ValueError, match="confidence must be in"):
            bootstrap_mean_ci([1, 2], confidence=95)


class TestSignTest:
    def test_eight_against_two(self):
        """By hand: 2 · (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 2 · 56 / 1024."""
        assert 112 / 1024 == sign_test_p(8, 2) == sign_test_p(2, 8)

    @pytest.mark.parametrize(("wins", "losses"), [(0, 1), (5, 5), (12, 3), (0, 20), (30, 17), (1, 0), (3, 4),
                                                  (4200, 4000), (9000, 8000), (5000, 5000)])
    def test_matches_scipy_binomtest(self, wins, losses):
        assert scipy.stats.binomtest(wins, wins + losses).pvalue == pytest.approx(sign_test_p(wins, losses), rel=1e-12)

    def test_no_pairs_no_p(self):
        assert sign_test_p(0, 0) is None


class TestPairedDifference:
    def test_counts_mean_interval_and_p(self):
        """b − a per pair: 8 above, 2 below, 1 tie; the CI is the bootstrap of the differences themselves."""
        a = [1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 3]
        b = [2, 3, 4, 5, 5, 2, 3, 5, 5, 4, 2]
        diffs = np.subtract(b, a)
        assert (8, 2, 1) == (int((diffs > 0).sum()), int((diffs < 0).sum()), int((diffs == 0).sum()))
        paired = paired_difference(a, b, seed=4)
        assert (11, 8, 2, 1, 112 / 1024) == (paired.n, paired.wins, paired.losses, paired.ties, paired.sign_p)
        assert diffs.mean() == paired.mean_diff
        assert _loop_ci(diffs, confidence=0.95, resamples=2000, seed=4) == paired.ci

    def test_groups_resample_whole_groups(self):
        """With groups, each resample draws groups (tasks) and pools their pairs: checked against that loop."""
        a = [1, 2, 3, 4, 5, 1, 2, 3, 4]
        b = [2, 2, 4, 5, 3, 1, 4, 3, 5]
        groups = ["t1", "t1", "t2", "t2", "t2", "t3", "t3", "t4", "t4"]
        diffs = np.subtract(b, a)
        members = [np.flatnonzero(np.array(groups) == g) for g in ("t1", "t2", "t3", "t4")]
        rng = np.random.default_rng(0)
        pooled = []
        for _ in range(2000):
            drawn = np.concatenate([members[g] for g in rng.integers(0, 4, size=4)])
            pooled.append(diffs[drawn].mean())
        paired = paired_difference(a, b, groups=groups)
        assert (np.percentile(pooled, 2.5), np.percentile(pooled, 97.5)) == pytest.approx(
            (paired.ci.low, paired.ci.high), abs=1e-12)
        assert (9, diffs.mean(), 5, 1, 3) == (paired.n, paired.mean_diff, paired.wins, paired.losses, paired.ties)

    def test_empty_and_single_pairs(self):
        empty, one = paired_difference([], []), paired_difference([3], [1])
        assert (0, None, None, None) == (empty.n, empty.mean_diff, empty.ci, empty.sign_p)
        assert (1, -2.0, None, 0, 1, 1.0) == (one.n, one.mean_diff, one.ci, one.wins, one.losses, one.sign_p)

    def test_unequal_lengths_are_refused(self):
        with pytest.raises(ValueError, match="paired samples differ in length: 2 and 1"):
            paired_difference([1, 2], [1])
        with pytest.raises(ValueError, match=r"paired samples differ in length: 2 and 2 \(groups 1\)"):
            paired_difference([1, 2], [1, 2], groups=["t"])
