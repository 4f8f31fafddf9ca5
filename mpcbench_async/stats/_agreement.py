"""Agreement between two judges scoring the same runs: quadratic-weighted Cohen's kappa and Spearman's rho.

Why both: kappa asks whether the judges give the same score (near misses cost
little under quadratic weights, chance agreement is removed); Spearman asks
whether they rank runs alike even when one is harsher. Changing the judge can
swing a benchmark's score, so the summary reports both instead of assuming them.
"""

from __future__ import annotations

import numpy as np

from ._bootstrap import Values

__all__ = ["spearman", "weighted_kappa"]


def weighted_kappa(a: Values, b: Values, *, categories: int = 6) -> float | None:
    """Quadratic-weighted kappa of integer scores in 0..categories−1; None when undefined (no pairs, or
    both judges gave one and the same score throughout, so chance agreement is total)."""
    x, y = _pair(a, b)
    if x.size == 0:
        return None
    scores = np.concatenate([x, y])
    if (scores != np.round(scores)).any() or scores.min() < 0 or scores.max() >= categories:
        raise ValueError(f"kappa needs integer scores in 0..{categories - 1}")
    observed = np.zeros((categories, categories))
    np.add.at(observed, (x.astype(int), y.astype(int)), 1)
    observed /= x.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    grid = np.arange(categories)
    weights = (grid[:, None] - grid[None, :]) ** 2
    chance = float((weights * expected).sum())
    return None if chance == 0 else 1 - float((weights * observed).sum()) / chance


def spearman(a: Values, b: Values) -> float | None:
    """Spearman's rho (Pearson correlation of ranks, ties sharing their average rank); None when fewer than
    two pairs or either side is constant."""
    x, y = _pair(a, b)
    if x.size < 2 or (x == x[0]).all() or (y == y[0]).all():
        return None
    rx, ry = _ranks(x), _ranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    return float((rx * ry).sum() / np.sqrt((rx * rx).sum() * (ry * ry).sum()))


def _pair(a: Values, b: Values) -> tuple[np.ndarray, np.ndarray]:
    if len(a) != len(b):
        raise ValueError(f"paired scores differ in length: {len(a)} and {len(b)}")
    return np.asarray(a, dtype=float), np.asarray(b, dtype=float)


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, tied values sharing the mean of the ranks they span."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)  # the last rank of each distinct value
    return (ends - (counts - 1) / 2)[inverse].astype(float)
