"""The public API (issue 27 point 5): what each package promises users is its ``__all__``, pinned here name by name.

A package's ``__all__`` holds what a user needs; what only the project's other packages use is its ``_INTERNAL``
(allowed across packages by tests/test_import_graph.py, promised to no one), and the rest stays in its private
modules. A new public name is a deliberate change: add it to API below and to the README's API section, whose table
for each package lists exactly its ``__all__``.
"""

from __future__ import annotations

import importlib
import re

import pytest

from mpcbench_async import _exceptions
from tests.conftest import REPO

# Package ("" for the top level) -> its ``__all__``.
API: dict[str, set[str]] = {
    "": set(
        "BadResponseError BatchDeadlineError BenchError BudgetExceeded CacheError CallDeadlineError "
        "ChatResult CircuitOpenError ConfigError FunctionCall FunctionSchema GenerationError HTMLReplyError "
        "InputError Interrupted JsonlWriter LLMCallRecord LLMClient LLMConnectionError LLMError LimiterLost "
        "LLMTimeoutError LedgerError LimitSettings Message MissingAPIKeyError MixedScoringError ModelConfig "
        "ModelLimiter ModelSettings PermanentLLMError PromptConfig RateLimitError RecordDecodeError "
        "ReplayMissError ReplyStoreError ResumeIndex RetryEvent RetryPolicy Runner ServerError SweepOptions "
        "SweepPlan ToolCall ToolSchema ToolWorkerTimeout TransientLLMError UnknownBatchError Usage WorkerPool "
        "WorkersLost __version__ build_plan load_model_config load_prompts run_sweep summarize"
        .split()),
    "records": set(
        "CallIntent ChatResult FunctionCall FunctionSchema LLMCallRecord Message ToolCall ToolSchema "
        "UnitRecord Usage"
        .split()),
    "runtime": set(
        "Clock DirLock FakeClock JsonlWriter LimitSettings Limiter ModelLimiter MonotonicClock Pipeline "
        "PipelineEvents ReadReport ResumeIndex RetryPolicy Stage WorkerPool configure_logging iter_jsonl "
        "read_jsonl"
        .split()),
    "llm": set(
        "AnthropicBatches BatchBackend BatchSettings BatchTransport BatchView BreakerSettings Budget "
        "CACHE_MODES CacheMode CacheStats Call CallLedger ChatRequest DEFAULT_LAYERS Endpoint LLMClient Layer "
        "LedgerStats MockHandler MockTransport ModelCacheStats ModelConfig ModelSettings ModelTotals "
        "NativeTransport OpenAIBatches OpenAISDKTransport Prices Provider ProviderFactory RecordTransport "
        "ReplayTransport ResponseCache RetryEvent RetryListener StreamTiming Timeouts Transport "
        "TransportFactory TransportOptions WaveLog WaveReport WireCompletion load_model_config register_provider "
        "register_transport request_hash transport_names"
        .split()),
    "sim": set(
        "FaultSpec Policy Reply SimProcessProvider SimProvider SimServer SimStats policy_names "
        "register_policy"
        .split()),
    "stats": set(
        "Interval Paired bootstrap_ci bootstrap_mean_ci paired_by_task paired_difference pass_hat_k pass_ks "
        "sign_test_p spearman weighted_kappa"
        .split()),
    "runner": set(
        "Limits Outcome RunChoice Runner SUITES StagedSuite Suite SuiteFactory SuiteRequest SuiteStage Unit "
        "register_suite suite_names"
        .split()),
    "mpcbench": set(
        "AgentRunRecord CheckResult DataGenerator GenerationRecord GenerationSuite JudgeRecord Judgement "
        "MPCBenchInputs MPCBenchSuite "
        "PromptConfig RunLog Scenario ScenarioData SchemaSet SweepPlan Task TaskEvaluation build_judge_input "
        "build_plan evaluate_task list_scenarios list_tasks load_prompts load_scenario load_schemas load_task "
        "load_task_data run_agent run_checks run_judge"
        .split()),
    "sweep": set(
        "Certificate DryRun Fingerprint Manifest Mismatch ModelSummary Output Placement RunRow Summary SweepOptions "
        "SweepResult "
        "TariffRunOptions TariffRunResult Verification check_sweep_options dry_run_sweep kept_runs read_manifest "
        "render_dry_run run_sweep run_tariff summarize verify_sweep write_summary"
        .split()),
    "tariff": set(
        "BenchmarkReport Case CaseScore Dossier FixtureTransport LLMProposer Pack Proposer SCORING_MODES "
        "ScoringMode TariffCaseRecord TariffInputs TariffSuite VerificationResult build_report compare_reports "
        "load_case load_pack "
        "load_report load_suite read_hscodecomp render_diff render_report run_cases score_case verify "
        "write_hscodecomp"
        .split()),
    "levels": set(
        "LevelSet LevelsInputs LevelsRecord LevelsSuite Metrics OracleSettings ToolOptions generate_level level_rows "
        "load_level_set parse_answer render_levels_table run_levels_agent score solve verify_file"
        .split()),
    "perf": set(
        "EndpointProfile LevelResult Percentiles ProfileOptions RequestSample SweepProfile profile_endpoint "
        "profile_sweep render_endpoint_profile render_sweep_profile"
        .split()),
    "report": set(
        "render_markdown render_table"
        .split()),
    "view": set(
        "SweepIndex make_app open_index render_report write_report"
        .split()),
    "compare": set(
        "Delta Finding ModelComparison NewFailure OverTasks ReportComparison Side SweepComparison "
        "TaskComparison compare_paths compare_sweeps compare_tariff_reports render_markdown"
        .split()),
    "distributed": set(
        "RayExecutor"
        .split()),
    "labels": set(
        "Agreement Calibration CheckAgreement Label LabelSet LabelledRun append_labels calibrate read_labels"
        .split()),
    "export": set(
        "calibration_set export_inspect export_otel"
        .split()),
    "testing": set(
        "Billed BillingProxy Scanner full_disk_write random_keys write_workspace"
        .split()),
}
SUBPACKAGES = sorted(set(API) - {""})
PACKAGES = ["mpcbench_async", *(f"mpcbench_async.{name}" for name in SUBPACKAGES)]


def package(key: str):
    return importlib.import_module(f"mpcbench_async.{key}" if key else "mpcbench_async")


def api_section() -> str:
    """The README's ``### API`` section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return text.split("\n### API\n", 1)[1].split("\n### ", 1)[0]


def readme_table(key: str) -> set[str]:
    """The names in backticks in the second column of the README's table for ``key``: the first table under
    ``#### `key` ``, or the section's first table for the top level."""
    section = api_section()
    if key:
        section = section.split(f"\n#### `{key}`\n", 1)[1].split("\n#### ", 1)[0]
    lines = section.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[first + 2:]:  # after the header and its rule
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[2])
    return {name for row in rows for name in re.findall(r"`(\w+)`", row)}


@pytest.mark.parametrize("key", sorted(API))
def test_each_package_promises_exactly_its_pinned_names(key):
    assert API[key] == set(package(key).__all__)


@pytest.mark.parametrize("key", sorted(API))
def test_the_readme_lists_each_package_s_names(key):
    """The README's API section has a table per narrowed package listing exactly its ``__all__``."""
    assert set(package(key).__all__) == readme_table(key)


def test_the_readme_names_every_package():
    section = api_section()
    assert [] == [name for name in SUBPACKAGES if f"`{name}`" not in section]


def test_every_error_of_the_tree_is_a_top_level_name():
    """One place to import any error from: the top level holds the whole tree of ``_exceptions``."""
    assert set(_exceptions.__all__) <= set(package("").__all__)


def test_every_package_of_the_tree_is_covered():
    """A new sub-package is added to API (and so to the checks below and the README)."""
    found = {path.parent.name for path in (REPO / "mpcbench_async").glob("*/__init__.py")}
    assert set() == found - set(SUBPACKAGES) - {"cli", "evaluation", "generator"}  # entry points: no library API


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_resolve(name):
    """Every name in ``__all__`` and ``_INTERNAL`` exists in the package."""
    module = importlib.import_module(name)
    missing = [n for n in (*module.__all__, *getattr(module, "_INTERNAL", ())) if not hasattr(module, n)]
    assert [] == missing


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_every_public_name(name):
    """Every public (non-underscore, non-module) name defined in a package is in its ``__all__`` or ``_INTERNAL``."""
    module = importlib.import_module(name)
    public = {n for n, v in vars(module).items()
              if not n.startswith("_") and not isinstance(v, type(importlib)) and n != "annotations"}
    assert set() == public - set(module.__all__) - set(getattr(module, "_INTERNAL", ()))
