"""``compare A B``: two sweeps (per model × task deltas with intervals, per model paired over tasks) or two tariff
reports (the tariff compare), with regressions, improvements and new failures in one shape for CI gates."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._findings import Finding, NewFailure, failure_line, finding_line
    from ._inputs import compare_paths
    from ._render import render_markdown
    from ._reports import ReportComparison, compare_tariff_reports
    from ._sweeps import Delta, ModelComparison, OverTasks, Side, SweepComparison, TaskComparison, compare_sweeps

__all__ = ["Delta", "Finding", "ModelComparison", "NewFailure", "OverTasks", "ReportComparison", "Side",
           "SweepComparison", "TaskComparison", "compare_paths", "compare_sweeps", "compare_tariff_reports",
           "render_markdown"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["failure_line", "finding_line"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
