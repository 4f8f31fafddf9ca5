"""The whole ``sweep`` command as one library call: ``await run_sweep(SweepOptions(...))``.

First every input is checked, before anything is written (the suites asked
for, the model config and prompts, the MPCBench plan's tasks and data, each
tariff suite's cases and pack). Then, holding the output directory's lock
(``runtime.DirLock``) from the manifest check to the summary: the experiment
check (``open_experiment``: a rerun with other settings is refused unless
``allow_changes``) and every model's key (``_checked_start``, which writes
nothing: a start that fails there leaves ``out`` as it found it, the lock file
and directories it made removed by ``DirLock.abandon``, so the corrected rerun
is no "changed experiment"); then the manifest, the experiment's unit keys, one
``runner.Runner`` driving every suite chosen at once (each built by its factory in
the suite registry (``runner.register_suite``): ``MPCBenchSuite``, one ``TariffSuite`` per
tariff suite × model, the levels suite, any other registered suite), the manifest's end, and ``summary.json`` /
``summary.md`` with the validity certificate (``_certificate``, ``_baselines``: the sim
baselines run on the plan's tasks, cached across sweeps, unless ``certificate``
is off). The result carries the outcome of the whole plan (every unit
as it stands on disk, whatever earlier runs did), whether a signal stopped the
run, and the rendered summary table.

Spending: ``max_cost`` (and each model's ``budget_usd``) make a ``llm.Budget``
shared by every call, charged first with what earlier runs into ``out`` spent
(``calls.jsonl``, plus the worst case of every call in ``ledger.jsonl`` that no
record settles: sent before a kill, reply never recorded), so the limit is the
sweep's, not one invocation's; a model
it cannot bound (no price, no ``max_tokens``) is refused with the inputs. Once
a call is refused the runner starts no new unit, the refused unit leaves no
record, and ``SweepResult.budget_reached`` says which budget stopped it and how
to continue. ``cache`` answers repeated requests from a ``llm.ResponseCache``
(opened with the inputs, so an unusable one fails before any call); each unit's
calls are keyed by its trial, so trials stay independent.

Ray: ``executor="ray"`` runs the MPCBench and levels suites' units on Ray worker actors
(``distributed.RayExecutor``: a local Ray instance, or the cluster at
``ray_address``; ``workers`` of them), while this process stays the only writer
of ``out``; tariff suites run here. Budgets and the response cache are not
supported with it yet (refused with the inputs): both are state of this process
the workers cannot share.

The CLI (``mpcbench-async sweep``) only parses its arguments into
``SweepOptions``, shows the progress line (the ``progress`` hook), prints the
table and maps the result to an exit code.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import anyio
import msgspec

from .._exceptions import InputError
from .._options import checked_options, setting_error
from .._prompts import PromptConfig, load_prompts
from .._resources import workspace_path
from .._validate import output_dir_problem
from ..llm import (
    LEDGER,
    Budget,
    BudgetExceeded,
    CacheMode,
    ModelConfig,
    ResponseCache,
    SettledCalls,
    load_model_config,
    model_prices,
    unsettled_calls,
)
from ..mpcbench import MPCBenchSuite, SweepPlan
from ..runner import (
    AnySuite,
    Limits,
    Outcome,
    RunChoice,
    Runner,
    StagedSuite,
    SuiteRequest,
    check_models,
    suite_factory,
    suite_names,
)
from ..runtime import DirLock, atomic_write_bytes, iter_jsonl
from ._baselines import thresholds_from, write_baselines
from ._data_warnings import plan_warnings, write_data_warnings
from ._experiment import open_experiment, plan_fingerprint, record_case_keys, record_experiment_keys, write_manifest
from ._launch import launch_providers
from ._records import Manifest
from ._summary_prefetch import SummaryPrefetch
from ._summary_types import Certificate
from ._waves import batched, wave_line

if TYPE_CHECKING:
    from ..distributed import RayExecutor
    from ..llm import Provider
    from ..tariff import TariffSuite  # imported when a tariff suite runs
    from ._dry_run import DryRun
    from ._summary import Summary

__all__ = ["Output", "Placement", "SweepOptions", "SweepResult", "check_output_dir", "check_sweep_options",
           "dry_run_sweep", "run_sweep", "write_summary"]

TARIFF_SUITES = ("tariff", "hscodecomp")

Progress = Callable[[Runner], Coroutine[Any, Any, object]]  # runs beside the suites; cancelled when they end


class Output(msgspec.Struct, kw_only=True, frozen=True):
    """Where a sweep writes and what it keeps there.

    ``out`` is the sweep's directory; a rerun with other settings is refused there unless ``allow_changes`` (the old
    experiment's records stay on disk, out of the summary). ``cache`` is a response cache file (``llm.cache_path``;
    ``None``: no cache) used as ``cache_mode`` says. ``ledger_fsync=False``: call intents survive a killed process,
    not a crash. ``certificate=False`` skips the certificate's baselines, cached in ``certificate_cache`` (``None``:
    the user's cache directory).
    """

    out: Path = Path("reports/sweeps/latest")
    allow_changes: bool = False
    cache: Path | None = None
    cache_mode: CacheMode = "readwrite"
    ledger_fsync: bool = True
    certificate: bool = True
    certificate_cache: Path | None = None


class Placement(msgspec.Struct, kw_only=True, frozen=True):
    """Where the units run: ``executor="local"`` (this process) or ``"ray"`` (the MPCBench and levels suites' units on
    ``workers`` Ray workers, ``None``: one per CPU, of a local Ray instance or the cluster at ``ray_address``)."""

    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    workers: int | None = None


class SweepOptions(msgspec.Struct, kw_only=True):
    """What ``mpcbench-async sweep`` takes, as a few small values (its ``--help`` explains each; the defaults match).

    ``run`` is what to run and ``limits`` how far it may go (``runner.RunChoice``, ``runner.Limits``); ``output``
    where it writes; ``placement`` where units run. ``inputs`` holds each benchmark's own settings, one object per
    benchmark (``mpcbench.MPCBenchInputs``, ``tariff.TariffInputs``, ``levels.LevelsInputs``; one not given takes its
    defaults): the suites' factories read them (``runner.SuiteRequest.settings``). ``batch`` names the roles whose
    calls go in provider batches (``_waves``); ``command`` is recorded in the manifest as what was run.
    """

    config: Path = msgspec.field(default_factory=lambda: workspace_path("model_config.json"))
    prompts: Path = msgspec.field(default_factory=lambda: workspace_path("prompt_config.json"))
    run: RunChoice = msgspec.field(default_factory=RunChoice)
    limits: Limits = msgspec.field(default_factory=Limits)
    output: Output = msgspec.field(default_factory=Output)
    placement: Placement = msgspec.field(default_factory=Placement)
    inputs: Sequence[Any] = ()
    batch: Sequence[Literal["judge", "agent"]] = ()
    handle_signals: bool = True
    command: str = "mpcbench_async.sweep.run_sweep"


def check_sweep_options(options: SweepOptions) -> SweepOptions:
    """``options`` checked as the CLI checks its flags, paths given as text made ``Path``; nothing is read or written.

    Every setting must have its declared type (``checked_options``, into ``run``, ``limits``, ``output``,
    ``placement`` and each of ``inputs``), the suites must be registered (``runner.suite_names``), the counts
    (trials, max_turns, concurrency, workers) at least 1, ``max_cost`` positive and ``out`` usable as an output
    directory, and each of ``inputs`` that has a ``check(run)`` passes it. Raises ``InputError`` naming the setting by
    its own name (``max_turns``; the CLI names its flag).
    """
    options = checked_options(options)
    inputs = [checked_options(given) for given in options.inputs]
    run, limits = options.run, options.limits
    suites = [name.strip() for name in run.suites if name.strip()]
    known = suite_names()  # every registered suite (``runner.register_suite``)
    unknown = sorted(set(suites) - set(known))
    if not suites or unknown:
        raise setting_error("suites", f"suites: unknown suite(s) {', '.join(unknown) or '(none)'}; "
                                      f"available: {', '.join(known)}")
    for name, value in (("trials", run.trials), ("max_turns", limits.max_turns),
                        ("concurrency", limits.concurrency), ("workers", options.placement.workers)):
        if value is not None and value < 1:
            raise setting_error(name, f"{name} must be at least 1, got {value}")
    if limits.max_cost is not None and not limits.max_cost > 0:
        raise setting_error("max_cost", f"max_cost must be a positive amount of USD, got {limits.max_cost}")
    check_output_dir(options.output.out)
    run = msgspec.structs.replace(run, suites=suites)
    for given in inputs:  # a benchmark's own rules for its inputs (``levels.LevelsInputs``: levels 1–3)
        if callable(check := getattr(given, "check", None)):
            check(run)
    return msgspec.structs.replace(options, run=run, inputs=inputs)


def check_output_dir(path: str | Path) -> Path:
    """``path`` if a sweep can write its records there (absent, or a writable directory); else an ``InputError``."""
    if (problem := output_dir_problem(path)) is not None:
        raise setting_error("out", f"out: {problem}")
    return Path(path)


class SweepResult(msgspec.Struct, kw_only=True):
    """How a sweep ended: its plan's outcome (read from disk), whether a signal stopped it, its summary table."""

    out: Path
    outcome: Outcome
    interrupted: bool
    table: str
    budget_reached: str | None = None  # the line saying which budget stopped the sweep and how to continue
    warnings: list[str] = []  # the scenarios' data warnings (file: row: what), also in data_warnings.json
    certificate: Certificate = msgspec.field(default_factory=Certificate)  # the summary's validity certificate
    waves: str | None = None  # ``--batch agent``: the agents' waves against their bound (``_waves.wave_line``)


def write_summary(out: Path, *, pass_k: Sequence[int] | None = None, reuse: bool = False) -> str:
    """Rebuild ``summary.json`` and ``summary.md`` of the sweep directory ``out``; return the summary table.

    The levels suite's table (``levels_summary.md``, written as that suite finishes) is appended to both.
    ``pass_k``: the ks of pass^k over tasks (default: 1, 2, 4, 8, … and the most trials of a task).
    ``reuse``: keep ``summary.json``'s figures when none of the files they come from changed since it was written
    (``_summary_cache``; the wall time is read again from the manifest).
    """
    return _write_summary(out, pass_k=pass_k, reuse=reuse)[1]


def _write_summary(out: Path, *, pass_k: Sequence[int] | None = None, reuse: bool = False) -> tuple[Summary, str]:
    """``write_summary``, also returning the summary itself (its certificate decides ``--require-valid``)."""
    from ..report import render_markdown, render_table  # imported here, see _summary_prefetch
    from ._summary import summarize
    from ._summary_cache import note_inputs, reusable_summary

    summary = reusable_summary(out, pass_k) if reuse else None
    if summary is None:
        summary = summarize(out, pass_k=pass_k)
    levels = out / "levels_summary.md"
    levels_md = "\n" + levels.read_text(encoding="utf-8") if levels.is_file() else ""
    atomic_write_bytes(out / "summary.json", msgspec.json.format(msgspec.json.encode(summary)) + b"\n", fsync=False)
    atomic_write_bytes(out / "summary.md", (render_markdown(summary) + levels_md).encode(), fsync=False)
    note_inputs(out, pass_k)
    return summary, render_table(summary) + levels_md


async def run_sweep(options: SweepOptions, progress: Progress | None = None, *,
                    providers: Mapping[str, Provider] | None = None) -> SweepResult:
    """Check every input, then run the sweep of ``options`` (see the module docstring).

    ``progress(runner)`` runs beside the suites and is cancelled once they end (a progress line reads
    ``runner.stats``). Raises ``InputError`` for a bad input or a refused experiment, before any call.
    ``providers``: the embedded providers already launched for it (``_launch``: the CLI launches them before it
    imports this module), which it takes over; ``None``: it launches them itself, before it plans.
    glibc's malloc thresholds are left as the process has them: ``runtime.hold_malloc_thresholds()`` keeps a long
    sweep's heap from growing with its units, but it is the whole process's setting and cannot be undone, so the
    process's owner calls it (the ``sweep`` command does), not this library call.
    """
    began = datetime.now(UTC).isoformat()  # the invocation's wall time counts from here: a Ray start can take 20 s
    options = check_sweep_options(options)
    if providers is None:  # the model config read twice: a few ms, and the inputs' checks stay in one place
        providers = (await launch_providers(_batched(load_model_config(options.config), options),
                                            options.run.models, options.run.judges)
                     if options.placement.executor == "local" else {})
    providers = dict(providers)
    try:
        return await _run_checked(options, providers, progress, began=began)
    finally:
        for provider in providers.values():  # a no-op once the runner's client has stopped it
            await provider.aclose()


async def _run_checked(options: SweepOptions, providers: dict[str, Provider], progress: Progress | None, *,
                       began: str) -> SweepResult:
    config, prompts, chosen = _inputs(options)
    executor = _executor(options, config, chosen)
    output = options.output
    cache = (ResponseCache(output.cache, output.cache_mode).open()
             if output.cache is not None and output.cache_mode != "off" else None)
    lock = DirLock(output.out)
    with cache or nullcontext(), lock:  # one sweep per directory, from the manifest check to the end
        started = False
        try:
            async with executor or nullcontext():
                runner = Runner(config, out_dir=output.out, concurrency=options.limits.concurrency,
                                retry_errors=options.run.retry_errors, handle_signals=options.handle_signals,
                                budget=_budget(options, config, chosen.models), cache=cache,
                                executor=executor, ledger_fsync=output.ledger_fsync, providers=providers)
                manifest, new_experiment = await _checked_start(options, config, chosen, runner, began=began)
                started = True
                return await _locked(options, prompts, runner, chosen, progress, manifest, new_experiment)
        except BaseException:
            if not started:
                lock.abandon()  # nothing was written: leave out as it was (no new lock file, no new directory)
            raise


class _Chosen(NamedTuple):
    """The suites of one sweep, built by their registered factories: MPCBench's (its plan is the experiment's
    fingerprint), the tariff suites (counted in the manifest), and every other suite."""

    mpcbench: MPCBenchSuite | None
    tariff: list[TariffSuite]
    others: list[AnySuite]

    @property
    def plan(self) -> SweepPlan | None:
        return self.mpcbench.plan if self.mpcbench else None

    @property
    def suites(self) -> list[AnySuite]:
        """Every suite, in the order they start."""
        return [*([self.mpcbench] if self.mpcbench else []), *self.tariff, *self.others]

    @property
    def models(self) -> list[str]:
        """Every model the sweep calls, once each."""
        return list(dict.fromkeys(model for suite in self.suites for model in suite.models))

    @property
    def remote_models(self) -> list[str]:
        """The models of the suites whose units run on an executor (``remote``)."""
        return list(dict.fromkeys(model for suite in self.suites if getattr(suite, "remote", False)
                                  for model in suite.models))


def _inputs(options: SweepOptions) -> tuple[ModelConfig, PromptConfig, _Chosen]:
    """Every input of ``options`` (``check_sweep_options``'s) loaded and checked (``InputError`` naming the first
    bad one); nothing written. Each suite chosen comes from its registered factory (``runner.suite_factory``): the
    MPCBench suite (whose plan is the experiment's fingerprint), the tariff suites (counted in the manifest), and
    every other suite, in the order chosen."""
    config = _batched(load_model_config(options.config), options)
    prompts = load_prompts(options.prompts)
    request = SuiteRequest(config, prompts, options.run, options.limits, options.inputs)
    built = {name: list(suite_factory(name)(request)) for name in options.run.suites}
    tariff: list[TariffSuite] = []
    if any(name in built for name in TARIFF_SUITES):  # else the tariff suites are never imported (issue 31)
        from ..tariff import TariffSuite

        tariff = [s for name in TARIFF_SUITES for s in built.get(name, []) if isinstance(s, TariffSuite)]
    chosen = _Chosen(
        mpcbench=next((s for s in built.get("mpcbench", []) if isinstance(s, MPCBenchSuite)), None),
        tariff=tariff,
        others=[s for name, suites in built.items() if name not in ("mpcbench", *TARIFF_SUITES) for s in suites])
    thresholds_from(config)  # a bad $.certificate fails now, before any call
    _check_budget(options, config, chosen.models)
    return config, prompts, chosen


def _batched(config: ModelConfig, options: SweepOptions) -> ModelConfig:
    """``config`` with ``"batch": true`` for the models ``batch`` names (``_waves.batched``)."""
    return batched(config, options.batch, agents=options.run.models, judges=options.run.judges,
                   suites=options.run.suites)


def _check_budget(options: SweepOptions, config: ModelConfig, models: Sequence[str]) -> None:
    """Refuse, before any call, a budget that cannot bound some model's calls (no price, or no output cap)."""
    if not _budgeted(options, config, models):
        return
    why = "--max-cost" if options.limits.max_cost is not None else "budget_usd"
    for model in models:
        settings = config.settings_for(model)
        prices = model_prices(model, settings)
        if prices is None:
            raise InputError(f"{why}: model {model!r} has no known price, so a budget cannot bound its calls: set "
                             f"models.{model}.prices (input_per_1m, output_per_1m) in {config.source}")
        capped = settings.params.get("max_tokens") or settings.params.get("max_completion_tokens")
        if not capped and max(prices.output_per_1m, prices.reasoning_per_1m or 0.0) > 0:
            raise InputError(f"{why}: model {model!r} has no output cap, so a budget cannot bound its calls: set "
                             f"models.{model}.params.max_tokens in {config.source}")


def _budgeted(options: SweepOptions, config: ModelConfig, models: Sequence[str]) -> bool:
    """Whether the sweep has a limit: ``--max-cost``, or ``budget_usd`` on one of its models."""
    return options.limits.max_cost is not None or any(config.settings_for(m).budget_usd is not None for m in models)


def _executor(options: SweepOptions, config: ModelConfig, chosen: _Chosen) -> RayExecutor | None:
    """The Ray executor ``options`` ask for (not started), or ``None`` for a local sweep; ``InputError`` if refused."""
    placement = options.placement
    if placement.executor == "local":
        return None
    from ..distributed import RayExecutor, require_ray

    require_ray()
    if not chosen.remote_models:
        raise InputError("``executor=ray`` runs the mpcbench and levels suites' units on Ray (tariff and hscodecomp "
                         "run on the driver): add mpcbench or levels to ``suites``, or drop ``executor=ray``")
    if _budgeted(options, config, chosen.models):
        raise InputError("``executor=ray``: budgets (``max_cost``, models.<name>.budget_usd) are not supported yet; "
                         "drop them or use ``executor=local``")
    if options.output.cache is not None and options.output.cache_mode != "off":
        raise InputError("``executor=ray``: ``cache`` is not supported yet; drop it or use ``executor=local``")
    # Each worker may run a full pool of runs and one of judgements at once.
    return RayExecutor(config, address=placement.ray_address, workers=placement.workers,
                       concurrency=2 * options.limits.concurrency)


def dry_run_sweep(options: SweepOptions, *, history: Sequence[Path] = ()) -> DryRun:
    """What ``run_sweep(options)`` would do and cost, from the same checked inputs; makes no call, writes nothing.

    Only the MPCBench suite is estimated (its agent and judge units); ``history`` adds earlier sweep directories
    whose ``calls.jsonl`` narrows the ranges (``output.out``'s own is always read).
    """
    options = check_sweep_options(options)
    config, prompts, chosen = _inputs(options)
    plan = chosen.plan
    if plan is None or chosen.tariff or chosen.others:
        raise InputError("``dry_run``: only ``suites=mpcbench`` is estimated so far")
    from ._dry_run import estimate_sweep  # not a sweep's: its imports stay out of every start-up

    return estimate_sweep(plan, config, prompts, options.output.out, concurrency=options.limits.concurrency,
                          history=history, retry_errors=options.run.retry_errors)


async def _checked_start(options: SweepOptions, config: ModelConfig, chosen: _Chosen, runner: Runner, *,
                         began: str) -> tuple[Manifest, bool]:
    """The last checks before anything is written into ``out``: the experiment (a rerun with other settings is
    refused) and every model's key, here and on the Ray workers. Returns the manifest (``began``: when the
    invocation started) and whether a new experiment begins; reads ``out``, writes nothing."""
    plan, tariff = chosen.plan, chosen.tariff
    fingerprint = (plan_fingerprint(plan, config, judge_attempts=chosen.mpcbench.judge_attempts)
                   if plan and chosen.mpcbench else None)
    if fingerprint is not None and tariff:
        fingerprint.tariff_scoring = tariff[0].scoring
    opened = open_experiment(options.output.out, _manifest(options, config, plan, tariff, began), fingerprint,
                             allow_changes=options.output.allow_changes)
    await check_models(config, chosen.models)
    if runner.executor is not None:
        await runner.executor.check_models(chosen.remote_models)
    return opened


async def _locked(options: SweepOptions, prompts: PromptConfig, runner: Runner, chosen: _Chosen,
                  progress: Progress | None, manifest: Manifest, new_experiment: bool) -> SweepResult:
    """The sweep proper, run while this process holds the output directory's lock (and the executor is up), once
    every input is checked: from here on it writes into ``out``."""
    out, config, budget, plan = options.output.out, runner.config, runner.budget, chosen.plan
    if plan is not None:
        record_experiment_keys(out, plan, new_experiment=new_experiment)
    for suite in [*chosen.tariff, *chosen.others]:
        if not isinstance(suite, StagedSuite):
            record_case_keys(out, f"{suite.name}.jsonl", {unit.key for unit in suite.units()})
    write_manifest(out, manifest)
    warnings = plan_warnings(plan) if plan is not None else []
    if plan is not None:
        write_data_warnings(out, warnings)
    outcomes: list[Outcome] = []
    prefetch = SummaryPrefetch()
    async with runner:
        async with anyio.create_task_group() as tg:
            if progress is not None:
                tg.start_soon(progress, runner)
            tg.start_soon(prefetch.start_when_waiting)  # the summary's imports while the first requests wait
            outcomes = await runner.run_suites(chosen.suites)
            tg.cancel_scope.cancel()
    manifest.finished_at = manifest.history[-1].finished_at = datetime.now(UTC).isoformat()
    manifest.interrupted = manifest.history[-1].interrupted = runner.stats.interrupted
    write_manifest(out, manifest)
    if plan is not None and not runner.stats.interrupted:  # a stopped sweep leaves its last baselines as they were
        await write_baselines(out, plan, prompts, thresholds_from(config), skip=not options.output.certificate,
                              cache_dir=options.output.certificate_cache,
                              keep=manifest.fingerprint.tasks if manifest.fingerprint else ())
    # With the tariff section, the error classes, an example of each and what to do, and the certificate;
    # reused when nothing it is computed from changed.
    prefetch.join()
    summary, table = _write_summary(out, reuse=True)
    outcome = sum(outcomes, Outcome())
    return SweepResult(out=out, outcome=outcome, interrupted=runner.stats.interrupted, table=table,
                       budget_reached=_budget_line(runner.budget_stop, budget, outcome, config), warnings=warnings,
                       certificate=summary.certificate, waves=wave_line(runner.client.wave_logs() if runner.client
                                                                        else []))


def _budget(options: SweepOptions, config: ModelConfig, models: Sequence[str]) -> Budget | None:
    """The sweep's budget (``None``: no limit), charged with what earlier runs into ``output.out`` spent.

    That is every call record's cost, and every unsettled call's worst case: its intent is in the ledger and no
    record settles it (it was in flight when a run was killed, so the provider may have billed it).
    """
    if not _budgeted(options, config, models):
        return None
    budget = Budget.from_config(config, options.limits.max_cost)
    settled = SettledCalls()
    calls = options.output.out / "calls.jsonl"
    if calls.is_file():
        for call in iter_jsonl(calls, type_=_SpentView, warn=False):
            settled.add(call.call_id)
            if call.cost_usd:
                budget.add_spent(call.model, call.cost_usd)
    for intent in unsettled_calls(options.output.out / LEDGER, settled):
        if intent.worst_usd is not None:
            budget.add_unsettled(intent.model, intent.worst_usd)
    return budget


class _SpentView(msgspec.Struct):
    """What a budget reads of an earlier call record: its model, what it spent (a cache hit spent $0), its call id."""

    model: str
    cost_usd: float | None = None
    call_id: str | None = None


def _budget_line(stop: BudgetExceeded | None, budget: Budget | None, outcome: Outcome,
                 config: ModelConfig) -> str | None:
    """``budget reached: $X of $Y for WHO; N units not run; rerun with ... to continue`` once a budget stopped it."""
    if stop is None or budget is None:
        return None
    if stop.scope == "the run":
        spent, who, how = budget.spent_usd, "the sweep", "a higher ``max_cost``"
        unsettled = (budget.unsettled_calls, budget.unsettled_usd)
    else:
        spent, who = budget.spent_by_model().get(stop.model, 0.0), stop.model
        how = f"a higher models.{stop.model}.budget_usd in {config.source}"
        unsettled = budget.unsettled_by_model().get(stop.model, (0, 0.0))
    counted = (f" (unsettled: {unsettled[0]} call{'s' if unsettled[0] != 1 else ''}, ≤ ${unsettled[1]:.4f}, "
               "counted at their worst case)" if unsettled[0] else "")
    return (f"budget reached: ${spent:.4f} of ${stop.limit_usd:.4f} for {who}{counted}; {outcome.not_run} units "
            f"not run; rerun with {how} to continue")


def _manifest(options: SweepOptions, config: ModelConfig, plan: SweepPlan | None,
              tariff: list[TariffSuite], began: str) -> Manifest:
    """This invocation's manifest: what it runs, with which files and versions, and each model's cap; its wall time
    runs from ``began`` (the invocation's start, before the inputs are read and an executor starts)."""
    agents = plan.agent_models if plan else []
    judges = plan.judge_models if plan else []
    tariff_models = {model for suite in tariff for model in suite.models}
    return Manifest(
        command=options.command,
        config_hash=hashlib.sha256(options.config.read_bytes()).hexdigest()[:16],
        prompts_hash=hashlib.sha256(options.prompts.read_bytes()).hexdigest()[:16],
        versions=_versions(), started_at=began,
        agent_models=agents, judge_models=judges, tasks=sorted(plan.tasks) if plan else [],
        trials=options.run.trials,
        units={"agent_run": plan.agent_unit_count if plan else 0, "judge": plan.judge_unit_count if plan else 0,
               "tariff_case": sum(len(suite.cases) for suite in tariff)},
        tariff_scoring=tariff[0].scoring if tariff else None,
        caps={m: config.settings_for(m).limits.max_concurrency for m in {*agents, *judges, *tariff_models}},
    )


def _versions() -> dict[str, str]:
    import email
    import platform
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for name in ("mpcbench-async", "aiohttp", "openai", "msgspec", "anyio", "tenacity"):
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        # ``metadata.version`` parses the whole file, the package's long description included (~8,000 Python calls
        # for these six, issue 31); the headers end at the first empty line, and ``Version`` is one of them
        text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or dist.read_text("") or ""
        version = email.message_from_string(text.split("\n\n", 1)[0] + "\n")["Version"]
        if version is not None:
            versions[name] = version
    return versions
