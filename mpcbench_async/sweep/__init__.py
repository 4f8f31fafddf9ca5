"""Sweeps: plan units, run agents and judges pipelined and resumably, drive other suites, summarise the results."""

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
    from ._generation_suite import GenerationSuite, ScenarioUnit
    from ._job import SweepOptions, SweepResult, check_sweep_options, dry_run_sweep, run_sweep, write_summary
    from ._kept import KeptRun, kept_records
    from ._levels_suite import LevelsSuite, LevelsUnit, kept_levels_records
    from ._mpcbench_suite import AgentStage, JudgeJob, JudgeStage, MPCBenchSuite
    from ._names import CALLS, JUDGEMENTS, RUNS
    from ._outcome import Outcome, plan_outcome, tariff_outcome
    from ._plan import AgentUnit, JudgeUnit, SweepPlan, build_plan, check_models, check_output_dir
    from ._reading import JudgeEntry, JudgeLine, Reader, RunEntry, RunLine
    from ._records import AgentRunRecord, Experiment, Fingerprint, Invocation, JudgeRecord, Manifest
    from ._runner import Runner, SweepStats, SweepStream
    from ._suite import StagedSuite, Suite, SuiteStage, Unit
    from ._suites import CaseUnit, TariffSuite
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
    "AgentRunRecord",
    "AgentStage",
    "AgentUnit",
    "AxisStats",
    "CaseUnit",
    "Certificate",
    "CostRange",
    "DryRun",
    "Experiment",
    "FamilyCertificate",
    "Fingerprint",
    "GenerationSuite",
    "Invocation",
    "JudgeJob",
    "JudgeRecord",
    "JudgeStage",
    "JudgeUnit",
    "KeptRun",
    "LevelsSuite",
    "LevelsUnit",
    "MPCBenchSuite",
    "Manifest",
    "Mismatch",
    "ModelTime",
    "ModelSummary",
    "Outcome",
    "Runner",
    "RoleEstimate",
    "RunRow",
    "ScenarioUnit",
    "StagedSuite",
    "SweepOptions",
    "SweepPlan",
    "SweepResult",
    "Suite",
    "SuiteStage",
    "Summary",
    "SweepStats",
    "SweepStream",
    "TariffRunOptions",
    "TariffRunResult",
    "TariffSuite",
    "Thresholds",
    "TokenRange",
    "Unit",
    "Verification",
    "build_plan",
    "fingerprint_changes",
    "hint_for",
    "kept_levels_records",
    "kept_records",
    "kept_runs",
    "check_models",
    "check_output_dir",
    "check_sweep_options",
    "dry_run_sweep",
    "estimate_sweep",
    "open_experiment",
    "plan_fingerprint",
    "plan_outcome",
    "read_experiment_keys",
    "read_manifest",
    "record_case_keys",
    "record_experiment_keys",
    "render_dry_run",
    "run_tariff",
    "run_sweep",
    "summarize",
    "tariff_outcome",
    "verify_sweep",
    "write_manifest",
    "write_summary",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
