"""Export a sweep's kept runs to the formats other tools open: Inspect AI logs and OpenTelemetry GenAI traces, and
people's labels of them as a judge calibration set (``calibration_set``).

Both read the runs the summary counts (``sweep.kept_records``) and never modify the sweep.
``export_inspect`` needs the ``export`` extra (``inspect-ai``); ``export_otel`` writes OTLP JSON itself.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._calset import calibration_set
    from ._inspect import export_inspect
    from ._otel import export_otel

__all__ = ["calibration_set", "export_inspect", "export_otel"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
