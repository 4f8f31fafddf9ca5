"""pass^k: the chance that k trials of a task, drawn from those run, all pass (tau-bench's estimator).

Why the estimator rather than "the first k trials": with n ≥ k trials of which c
passed, C(c, k) / C(n, k) is the unbiased probability that k distinct trials
all pass, using every trial; at k = n it is simply "all n passed".

Which k a summary reports (``pass_ks``): 1, 2, 4, 8, … and the most trials of a
task, K, rather than every k up to K. pass^k falls smoothly with k, so the
doubling points show its shape; every k up to K made a 1,000-trial sweep's
summary compute 1,000 values (16% of a resume's CPU) and print them on one
10,957-character line (issue 31). A caller may name its own ks instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["pass_hat_k", "pass_ks"]


def pass_hat_k(trials_and_passes: Sequence[tuple[int, int]], k: int) -> float | None:
    """Mean over the tasks with at least ``k`` trials of C(passes, k) / C(trials, k); None when no task has k."""
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")
    ratios = [math.comb(c, k) / math.comb(n, k) for n, c in trials_and_passes if n >= k]
    return sum(ratios) / len(ratios) if ratios else None


def pass_ks(most: int, ks: Iterable[int] | None = None) -> list[int]:
    """The k at which to report pass^k when a task has at most ``most`` trials, ascending.

    By default 1, 2, 4, 8, … below ``most``, and ``most`` itself (K is always reported); with ``ks``, those of
    them from 1 to ``most`` (a k above every task's trial count has no value). Nothing when ``most`` < 1.
    """
    if ks is not None:
        return sorted({k for k in ks if 1 <= k <= most})
    if most < 1:
        return []
    return [*(1 << i for i in range(most.bit_length()) if 1 << i < most), most]
