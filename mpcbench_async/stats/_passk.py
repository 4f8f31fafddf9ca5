"""pass^k: the chance that k trials of a task, drawn from those run, all pass (tau-bench's estimator).

Why the estimator rather than "the first k trials": with n ≥ k trials of which c
passed, C(c, k) / C(n, k) is the unbiased probability that k distinct trials
all pass, using every trial; at k = n it is simply "all n passed".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["pass_hat_k"]


def pass_hat_k(trials_and_passes: Sequence[tuple[int, int]], k: int) -> float | None:
    """Mean over the tasks with at least ``k`` trials of C(passes, k) / C(trials, k); None when no task has k."""
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")
    ratios = [math.comb(c, k) / math.comb(n, k) for n, c in trials_and_passes if n >= k]
    return sum(ratios) / len(ratios) if ratios else None
