"""Statistics for results: bootstrap intervals, paired differences, pass^k and agreement between judges.

The bottom layer (numpy and msgspec only), shared by the sweep summary, ``compare``
and the viewer, so all three report the same numbers. Every random draw comes from a
seeded ``numpy.random.Generator``: the same inputs give the same intervals, byte for byte.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._agreement import spearman, weighted_kappa
    from ._bootstrap import bootstrap_ci, bootstrap_mean_ci
    from ._paired import format_p, paired_by_task, paired_difference, sign_test_p
    from ._passk import pass_hat_k, pass_ks
    from ._results import Interval, Paired

__all__ = ["Interval", "Paired", "bootstrap_ci", "bootstrap_mean_ci", "paired_by_task", "paired_difference",
           "pass_hat_k", "pass_ks", "sign_test_p", "spearman", "weighted_kappa"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["format_p"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
