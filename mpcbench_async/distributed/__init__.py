"""Sweeps on Ray: units sharded over worker actors, one global rate limit per model (``sweep --executor ray``).

Ray is an optional extra (``pip install -e '.[ray]'``): nothing here imports it until a Ray sweep starts.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._executor import RayExecutor, require_ray
    from ._worker import WorkersLost

__all__ = ["RayExecutor"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["WorkersLost", "require_ray"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
