"""Human labels of a sweep's runs (``DIR/labels.jsonl``) and the judges' and checks' agreement with them.

Below the sweep and the viewer: the viewer appends labels, and the summary, the viewer, ``compare`` and
``labels export`` read them. The sweep's own records are never touched.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._calibration import SHORT, Agreement, Calibration, CheckAgreement, LabelledRun, calibrate, judge_errors
    from ._store import (
        AXES,
        CHECK_VALUES,
        LABELS,
        OUTCOMES,
        REASON_MAX,
        Label,
        LabelSet,
        append_labels,
        label_problem,
        now_iso,
        read_labels,
    )

__all__ = ["Agreement", "Calibration", "CheckAgreement", "Label", "LabelSet", "LabelledRun", "append_labels",
           "calibrate", "read_labels"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["AXES", "CHECK_VALUES", "LABELS", "OUTCOMES", "REASON_MAX", "SHORT", "judge_errors", "label_problem",
             "now_iso"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
