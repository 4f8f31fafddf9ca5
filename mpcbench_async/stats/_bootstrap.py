"""Percentile-bootstrap confidence intervals of a mean, vectorised and seeded.

Why a bootstrap: scores are bounded (0–5) and tasks few, so a normal interval
would mislead; resampling the per-task values makes no shape assumption. Why
numpy: thousands of resamples over up to 100k values are one indexed gather
per chunk instead of a Python loop. The draws are those of
``Generator.integers(0, n, size=(resamples, n))`` for ``default_rng(seed)``,
taken in row chunks (the stream is the same) so memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias

import numpy as np

from ._results import Interval

__all__ = ["Interval", "bootstrap_ci", "bootstrap_mean_ci"]

Values: TypeAlias = Sequence[float] | np.ndarray  # what every function here accepts as a sample

_CHUNK = 1 << 22  # resampled values per chunk (16 MiB of indices)


def bootstrap_mean_ci(values: Values, *, confidence: float = 0.95, resamples: int = 2000, seed: int = 0,
                      weights: Values | None = None) -> Interval | None:
    """The percentile bootstrap interval of the mean of ``values``; None for fewer than two values.

    With ``weights`` (positive, one per value) the statistic is the weighted mean, each
    resample drawing value and weight together: e.g. per-task pass rates weighted by
    their checks, whose weighted mean is the pooled rate over all checks.
    """
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None
    if not 0 < confidence < 1 or resamples < 1:
        raise ValueError(f"confidence must be in (0, 1) and resamples ≥ 1, got {confidence} and {resamples}")
    weight = None if weights is None else np.asarray(weights, dtype=float)
    if weight is not None and (weight.shape != data.shape or (weight <= 0).any()):
        raise ValueError("weights must be positive, one per value")
    rng = np.random.default_rng(seed)
    n = data.size
    rows = max(1, _CHUNK // n)
    index_type = np.int32 if n < 2**31 else np.int64  # the same draws either way; int32 is drawn faster
    if weight is None:
        def statistic(drawn: np.ndarray) -> np.ndarray:
            return data[drawn].mean(axis=1)
    else:
        product = data * weight

        def statistic(drawn: np.ndarray) -> np.ndarray:
            return product[drawn].sum(axis=1) / weight[drawn].sum(axis=1)
    means = np.concatenate([statistic(rng.integers(0, n, size=(min(rows, resamples - start), n), dtype=index_type))
                            for start in range(0, resamples, rows)])
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return Interval(low=float(low), high=float(high))


def bootstrap_ci(statistic: Callable[[np.ndarray], float | None], n: int, *, confidence: float = 0.95,
                 resamples: int = 1000, seed: int = 0) -> Interval | None:
    """The percentile bootstrap interval of any ``statistic`` of ``n`` items, given the drawn items' indices.

    For statistics that are no mean (kappa, Spearman's rho of labelled pairs): each resample draws ``n`` item
    indices with replacement and calls ``statistic`` on them, so it is a loop in Python, meant for hundreds
    of items, not 100k. Resamples where the statistic is undefined (None) are left out; None when fewer than
    two items, or when fewer than half the resamples gave a value.
    """
    if n < 2:
        return None
    if not 0 < confidence < 1 or resamples < 1:
        raise ValueError(f"confidence must be in (0, 1) and resamples ≥ 1, got {confidence} and {resamples}")
    rng = np.random.default_rng(seed)
    values = [v for drawn in rng.integers(0, n, size=(resamples, n)) if (v := statistic(drawn)) is not None]
    if 2 * len(values) < resamples:
        return None
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return Interval(low=float(low), high=float(high))
