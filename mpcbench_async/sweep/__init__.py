"""Sweeps: the composition of a benchmark run. Check the inputs, choose the registered suites, run them through one
``runner.Runner``, summarise the results. The generic runner and the ``Suite`` protocols are ``runner``'s."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._dry_run import DryRun, render_dry_run
    from ._errors import ErrorClass, hint_for
    from ._experiment import fingerprint_changes, read_manifest
    from ._job import (
        Output,
        Placement,
        SweepOptions,
        SweepResult,
        check_sweep_options,
        dry_run_sweep,
        run_sweep,
        write_summary,
    )
    from ._kept import KeptRun, kept_records
    from ._launch import launch_for_config
    from ._levels_records import kept_levels_records
    from ._names import CALLS, JUDGEMENTS, RUNS
    from ._reading import JudgeLine, Judges, Reader, RunEntry, RunLine, Runs
    from ._records import Fingerprint, Manifest
    from ._summary import summarize, summary_of
    from ._summary_types import (
        AxisStats,
        Certificate,
        Estimate,
        FamilyCertificate,
        JudgeView,
        ModelSummary,
        Rate,
        Spend,
        Summary,
    )
    from ._table import RunRow, iter_run_rows, kept_runs
    from ._tariff_run import TariffRunOptions, TariffRunResult, run_tariff
    from ._verify import Mismatch, Verification, verify_sweep

__all__ = ["Certificate", "DryRun", "Fingerprint", "Manifest", "Mismatch", "ModelSummary", "Output", "Placement",
           "RunRow", "Summary", "SweepOptions", "SweepResult", "TariffRunOptions", "TariffRunResult", "Verification",
           "check_sweep_options", "dry_run_sweep", "kept_runs", "read_manifest", "render_dry_run", "run_sweep",
           "run_tariff", "summarize", "verify_sweep", "write_summary"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["CALLS", "JUDGEMENTS", "RUNS", "AxisStats", "ErrorClass", "Estimate", "FamilyCertificate", "JudgeLine",
             "JudgeView", "Judges", "KeptRun", "Rate", "Reader", "RunEntry", "RunLine", "Runs", "Spend",
             "fingerprint_changes", "hint_for", "iter_run_rows", "kept_levels_records", "kept_records",
             "launch_for_config", "summary_of"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
