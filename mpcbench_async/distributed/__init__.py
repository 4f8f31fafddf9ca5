"""Sweeps on Ray: units sharded over worker actors, one global rate limit per model (``sweep --executor ray``).

Ray is an optional extra (``pip install -e '.[ray]'``): nothing here imports it until a Ray sweep starts.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._executor import RayExecutor, WorkerState, require_ray
    from ._leased import LeasedLimiter, LeasedLimiters, LimiterLost, leased_limiters
    from ._limiter_actor import start_limiter
    from ._limits import GlobalLimits
    from ._worker import UnitReply, UnitWorker, WorkersLost

__all__ = ["GlobalLimits", "LeasedLimiter", "LeasedLimiters", "LimiterLost", "RayExecutor", "UnitReply", "UnitWorker",
           "WorkerState", "WorkersLost", "leased_limiters", "require_ray", "start_limiter"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
