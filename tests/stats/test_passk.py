"""pass^k against brute force: the share of all k-subsets of a task's trials that pass entirely."""

from __future__ import annotations

import itertools

import pytest

from mpcbench_async.stats import pass_hat_k, pass_ks


def _brute_force(tasks, k):
    """Mean over tasks with ≥ k trials of the share of k-subsets of its trials in which every trial passed."""
    shares = []
    for outcomes in tasks:
        if len(outcomes) >= k:
            subsets = list(itertools.combinations(outcomes, k))
            shares.append(sum(all(s) for s in subsets) / len(subsets))
    return sum(shares) / len(shares) if shares else None


TASKS = [[True, True, False, True], [True, False, False], [True, True, True, True, True], [False, False],
         [True]]


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_matches_brute_force_enumeration(k):
    counts = [(len(t), sum(t)) for t in TASKS]
    assert _brute_force(TASKS, k) == pytest.approx(pass_hat_k(counts, k), abs=1e-12)


def test_k_equal_to_the_trials_is_all_pass():
    """Every task with 3 trials: pass^3 is the share of tasks whose 3 trials all passed."""
    assert 1 / 3 == pass_hat_k([(3, 3), (3, 2), (3, 0)], 3)


def test_no_task_with_k_trials():
    assert None is pass_hat_k([(2, 2)], 3)
    assert None is pass_hat_k([], 1)


def test_k_below_one_is_refused():
    with pytest.raises(ValueError, match="k must be ≥ 1, got 0"):
        pass_hat_k([(1, 1)], 0)


class TestReportedKs:
    @pytest.mark.parametrize(("most", "ks"), [
        (0, []), (1, [1]), (2, [1, 2]), (3, [1, 2, 3]), (4, [1, 2, 4]), (5, [1, 2, 4, 5]), (8, [1, 2, 4, 8]),
        (1000, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000]), (1024, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]),
    ])
    def test_doubling_and_the_most_trials(self, most, ks):
        """By default 1, 2, 4, 8, … below K, and K itself: about log2(K) values, never K of them."""
        assert ks == pass_ks(most)

    def test_named_ks_are_kept_within_the_trials(self):
        """Named ks come back sorted and once each; a k below 1 or above the most trials has no value."""
        assert [1, 3, 5] == pass_ks(5, [5, 3, 0, 1, 3, 9])
        assert [] == pass_ks(0, [1, 2])
