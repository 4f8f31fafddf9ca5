"""Paired differences between two conditions measured on the same items (tasks × trials).

Why paired: two agent models run on the same tasks differ far less than their
separate intervals suggest, because task difficulty is shared; the per-pair
difference removes it. The sign test is exact (binomial over the non-tied pairs),
so it holds for the small counts a sweep has.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from ._bootstrap import Values, bootstrap_mean_ci
from ._results import Paired

__all__ = ["Paired", "format_p", "paired_by_task", "paired_difference", "sign_test_p"]


def format_p(p: float | None) -> str:
    """A p-value as every output shows it: ``< 0.001`` below that (never ``0.0000``), else 3 decimals; ``–`` none."""
    if p is None:
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def paired_by_task(a: Mapping[tuple[str, int], float], b: Mapping[tuple[str, int], float], *,
                   confidence: float = 0.95, resamples: int = 2000, seed: int = 0) -> Paired:
    """B − A over the (task, trial) cells both have a value for, the interval resampling tasks.

    The one way two agent models are compared on one sweep, wherever it is shown (the summary, its Markdown and
    HTML, the viewer's Overview and Compare pages): trials of one task share its difficulty and move together, so
    the sample is the tasks; resampling task × trial pairs one by one gave intervals too narrow.
    """
    shared = sorted(a.keys() & b.keys())
    return paired_difference([a[cell] for cell in shared], [b[cell] for cell in shared], confidence=confidence,
                             resamples=resamples, seed=seed, groups=[task for task, _ in shared])


def sign_test_p(wins: int, losses: int) -> float | None:
    """The exact two-sided sign-test p-value of ``wins`` against ``losses`` (ties left out); None with no pairs."""
    n = wins + losses
    if n == 0:
        return None
    # Σ C(n, i) for i ≤ k, summed downward from the largest term, each term from the one before (exact
    # integers). The terms fall at least geometrically, by i / (n − i + 1), so the sum stops once the rest
    # is below 2^-60 of it — too small to change the float result; at 10^4 pairs that skips most terms.
    k = min(wins, losses)
    tail, term = 0, math.comb(n, k)
    for i in range(k, 0, -1):
        tail += term
        if (term * i) << 60 < tail * (n - 2 * i + 1):  # the rest ≤ term · i / (n − 2i + 1)
            break
        term = term * i // (n - i + 1)
    else:
        tail += term  # C(n, 0)
    return min(1.0, 2 * tail / 2**n)


def paired_difference(a: Values, b: Values, *, confidence: float = 0.95, resamples: int = 2000, seed: int = 0,
                      groups: Sequence[Hashable] | None = None) -> Paired:
    """Compare ``b`` with ``a`` pair by pair (equal lengths): mean of ``b − a``, its CI, wins/losses/ties, sign p.

    ``groups`` (one label per pair, e.g. the task of each task × trial pair) makes the
    interval a bootstrap over groups rather than pairs: pairs of one group (trials of
    one task) move together, so resampling them one by one would claim too much. Each
    resample's statistic is still the mean over all its pairs.
    """
    if len(a) != len(b) or (groups is not None and len(groups) != len(a)):
        lengths = f"{len(a)} and {len(b)}" + ("" if groups is None else f" (groups {len(groups)})")
        raise ValueError(f"paired samples differ in length: {lengths}")
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    if groups is None or not diff.size:
        ci = bootstrap_mean_ci(diff, confidence=confidence, resamples=resamples, seed=seed)
    else:
        index: dict[Hashable, int] = {}  # group -> its number, in order of first appearance
        member = np.array([index.setdefault(group, len(index)) for group in groups])
        sizes = np.bincount(member)
        ci = bootstrap_mean_ci(np.bincount(member, weights=diff) / sizes, weights=sizes, confidence=confidence,
                               resamples=resamples, seed=seed)
    return Paired(n=int(diff.size), mean_diff=float(diff.mean()) if diff.size else None, ci=ci,
                  wins=wins, losses=losses, ties=int(diff.size) - wins - losses, sign_p=sign_test_p(wins, losses))
