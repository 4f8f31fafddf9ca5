"""Sweeps: the composition of a benchmark run. Check the inputs, choose the registered suites, run them through one
``runner.Runner``, summarise the results. The generic runner and the ``Suite`` protocols are ``runner``'s."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ..levels import LevelsSuite, LevelsUnit  # moved beside the levels benchmark; kept here
    from ..mpcbench import GenerationSuite, ScenarioUnit  # moved beside the generator; kept here
    from ..runner import Outcome, StagedSuite, Suite, SuiteStage, SweepStats, SweepStream, Unit  # moved; kept here
    from ..tariff import CaseUnit, TariffSuite, tariff_outcome  # moved beside the tariff pipeline; kept here
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
    from ._job import SweepOptions, SweepResult, check_sweep_options, dry_run_sweep, run_sweep, write_summary
    from ._kept import KeptRun, kept_records
    from ._levels_records import kept_levels_records
    from ._mpcbench_suite import AgentStage, JudgeJob, JudgeStage, MPCBenchSuite, plan_outcome
    from ._names import CALLS, JUDGEMENTS, RUNS
    from ._plan import AgentUnit, JudgeUnit, SweepPlan, build_plan, check_models, check_output_dir
    from ._plan_runner import Runner
    from ._reading import JudgeEntry, JudgeLine, Reader, RunEntry, RunLine
    from ._records import AgentRunRecord, Experiment, Fingerprint, Invocation, JudgeRecord, Manifest
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
    "Outcome",
    "ModelTime",
    "ModelSummary",
    "Runner",
    "RoleEstimate",
    "RunRow",
    "ScenarioUnit",
    "SweepOptions",
    "SweepPlan",
    "SweepResult",
    "StagedSuite",
    "Suite",
    "SuiteStage",
    "SweepStats",
    "SweepStream",
    "Unit",
    "Summary",
    "TariffRunOptions",
    "TariffRunResult",
    "TariffSuite",
    "Thresholds",
    "TokenRange",
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
