"""Sweeps: the composition of a benchmark run. Check the inputs, choose the registered suites, run them through one
``runner.Runner``, summarise the results. The generic runner and the ``Suite`` protocols are ``runner``'s."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._dry_run import CostRange, DryRun, ModelTime, RoleEstimate, TokenRange, estimate_sweep, render_dry_run
    from ._errors import ErrorClass, hint_for
    from ._experiment import (
        fingerprint_changes,
        open_experiment,
        plan_fingerprint,
        read_experiment_keys,
        read_manifest,
        record_case_keys,
        record_experiment_keys,
        write_manifest,
    )
    from ._job import (
        SweepOptions,
        SweepResult,
        check_output_dir,
        check_sweep_options,
        dry_run_sweep,
        run_sweep,
        write_summary,
    )
    from ._kept import KeptRun, kept_records
    from ._levels_records import kept_levels_records
    from ._names import CALLS, JUDGEMENTS, RUNS
    from ._reading import JudgeEntry, JudgeLine, Reader, RunEntry, RunLine
    from ._records import Experiment, Fingerprint, Invocation, Manifest
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
        Thresholds,
    )
    from ._table import RunRow, iter_run_rows, kept_runs
    from ._tariff_run import TariffRunOptions, TariffRunResult, run_tariff
    from ._verify import Mismatch, Verification, verify_sweep

__all__ = [
    "iter_run_rows",
    "Spend",
    "Rate",
    "JudgeView",
    "Estimate",
    "summary_of",
    "RunLine",
    "RunEntry",
    "Reader",
    "JudgeLine",
    "JudgeEntry",
    "ErrorClass",
    "CALLS",
    "JUDGEMENTS",
    "RUNS",
    "AxisStats",
    "Certificate",
    "CostRange",
    "DryRun",
    "Experiment",
    "FamilyCertificate",
    "Fingerprint",
    "Invocation",
    "KeptRun",
    "Manifest",
    "Mismatch",
    "ModelTime",
    "ModelSummary",
    "RoleEstimate",
    "RunRow",
    "SweepOptions",
    "SweepResult",
    "Summary",
    "TariffRunOptions",
    "TariffRunResult",
    "Thresholds",
    "TokenRange",
    "Verification",
    "fingerprint_changes",
    "hint_for",
    "kept_levels_records",
    "kept_records",
    "kept_runs",
    "check_output_dir",
    "check_sweep_options",
    "dry_run_sweep",
    "estimate_sweep",
    "open_experiment",
    "plan_fingerprint",
    "read_experiment_keys",
    "read_manifest",
    "record_case_keys",
    "record_experiment_keys",
    "render_dry_run",
    "run_tariff",
    "run_sweep",
    "summarize",
    "verify_sweep",
    "write_manifest",
    "write_summary",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
