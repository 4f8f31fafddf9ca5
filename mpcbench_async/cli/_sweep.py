"""``mpcbench-async sweep`` (the main job) and ``summarize``.

Each handler parses its arguments, calls the library (``sweep.run_sweep``,
``sweep.write_summary``), prints, and maps the result to an exit code.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._exceptions import InputError, Interrupted
from .._options import sweep_dir_problem
from .._resources import workspace_path
from . import _exit
from ._bench import _int_list
from ._flags import flagged
from ._levels import DATA as LEVELS_DATA
from ._paths import output_dir

if TYPE_CHECKING:
    from ..llm import Provider
    from ..runner import Outcome, Runner
    from ..sweep import SweepOptions, SweepResult
    from ._commands import Commands

# Heavy imports live in the handlers: building a command's parser must stay cheap for its --help (issue 13).


def add_sweep(commands: Commands) -> None:
    sweep = commands.add_parser(
        "sweep",
        description="Run every task with every agent model (and trial), judge every run with every judge "
        "model as soon as it finishes, and write runs.jsonl, judgements.jsonl, calls.jsonl, ledger.jsonl (each "
        "request's intent, durable before it is sent: calls in flight at a kill still count), manifest.json, "
        "certificate_baselines.json (the validity certificate's sim baselines on these tasks), summary.json and "
        "summary.md to --out; the summary ends with the validity certificate (oracle ceiling, lazy floor, vacuous "
        "passes, check–judge and judge–judge agreement per task family). Rerunning the same command resumes: "
        "finished units are skipped, infrastructure errors are retried; it reads the done units from each results "
        "file's done-index (runs.keys, judgements.keys), not the records, and keeps summary.json when nothing it "
        "counts changed. One sweep at a time per --out; a directory holds one experiment, so a rerun that changes "
        "model params, prompts, --max-turns or task content is refused (see --allow-changes), while new models, "
        "tasks and trials extend it. The exit code describes the whole plan, whatever earlier runs did.",
        **_exit.with_epilog())
    sweep.add_argument("--config", type=Path, default=workspace_path("model_config.json"),
                       help="default: model_config.json")
    sweep.add_argument("--prompts", type=Path, default=workspace_path("prompt_config.json"),
                       help="default: prompt_config.json")
    sweep.add_argument("--models", default=None, help="agent models, comma-separated (default: agent_models)")
    sweep.add_argument("--judges", default=None, help="judge models, comma-separated (default: judge_models)")
    sweep.add_argument("--tasks", default="*", help="glob over task ids or type/id (default: *)")
    sweep.add_argument("--trials", type=int, default=1, help="runs per task and model (default: 1)")
    sweep.add_argument("--out", type=output_dir, default=Path("reports/sweeps/latest"),
                       help="output directory (default: reports/sweeps/latest)")
    sweep.add_argument("--concurrency", type=int, default=32,
                       help="units in flight per stage; each model's limits still apply (default: 32)")
    sweep.add_argument("--retry-errors", action="store_true", help="also rerun units that ended in a task-level error")
    sweep.add_argument("--allow-changes", action="store_true",
                       help="when --out holds results of different settings (model params, prompts, max turns, task "
                       "content), start a new experiment there instead of refusing; the summary counts only the new "
                       "experiment's units")
    sweep.add_argument("--max-turns", type=int, default=12, help="agent turns per run (default: 12)")
    sweep.add_argument("--suite", default="mpcbench",
                       help="benchmark suites, comma-separated: mpcbench, tariff, hscodecomp, levels (default: "
                       "mpcbench); tariff and hscodecomp run every case live with each model of tariff_models, levels "
                       "runs every instance of the three-level MPCBench (--levels-data) with each agent model "
                       "(--models) and --trials, all through the same client and limits")
    sweep.add_argument("--tariff-path", type=Path, default=Path("storage/benchmarks/tariff"),
                       help="tariff suite directory with cases/ (default: storage/benchmarks/tariff)")
    sweep.add_argument("--hscodecomp-path", type=Path, default=Path("storage/benchmarks/hscodecomp"),
                       help="HSCodeComp suite directory with cases/ (default: storage/benchmarks/hscodecomp)")
    sweep.add_argument("--pack", type=Path, default=Path("storage/packs/tariff"),
                       help="tariff pack directory (default: storage/packs/tariff)")
    sweep.add_argument("--scoring", choices=("project", "original"), default="project",
                       help="tariff and hscodecomp suites: project scoring (default) or the original harness's rules; "
                       "recorded in the manifest and in each case's key (a change reruns the cases)")
    sweep.add_argument("--levels-data", type=Path, default=LEVELS_DATA,
                       help="the levels suite's data: what 'levels import' or 'levels generate' wrote, or a checkout "
                       "of MPCBench (default: storage/levels); its table is levels_summary.md in --out")
    sweep.add_argument("--levels", default="1,2,3",
                       help="levels the levels suite runs, comma-separated (default: 1,2,3)")
    sweep.add_argument("--levels-splits", default=None,
                       help="splits the levels suite runs, comma-separated (default: every split in --levels-data)")
    sweep.add_argument("--tasks-dir", type=Path, default=Path("tasks"))
    sweep.add_argument("--data-dir", type=Path, default=Path("data"))
    sweep.add_argument("--scenarios-dir", type=Path, default=Path("scenarios"))
    sweep.add_argument("--scenario-id", default=None,
                       help="scenario for tasks that name none (original MPCBench task files)")
    sweep.add_argument("--max-cost", type=float, default=None, metavar="USD",
                       help="stop starting units once the sweep's spend (earlier runs into --out included) would "
                       "pass USD: each call's worst case is reserved before it is sent; calls an earlier, killed "
                       "run sent and never recorded (unsettled, in ledger.jsonl) count at their worst case; units in "
                       "flight finish; "
                       "exit 3; every model needs a known price (models.<name>.prices) and a max_tokens")
    sweep.add_argument("--ledger-sync", choices=("fsync", "flush"), default="fsync",
                       help="how each request's intent reaches ledger.jsonl before it is sent: fsync (default: "
                       "flushed to the disk, group-committed; survives a crash of the machine) or flush (written to "
                       "the OS only: survives a killed process, not a crash; for thousands of calls/s on a slow "
                       "disk, see bench/RESULTS.md)")
    sweep.add_argument("--cache", nargs="?", const=".mpcbench_cache", default=None, type=Path, metavar="DIR",
                       help="answer repeated requests from a response cache (one SQLite file in DIR, default "
                       ".mpcbench_cache/; a path with a suffix is the file itself): hits make no call, spend $0 "
                       "and are marked cached in calls.jsonl; each trial keeps its own replies")
    sweep.add_argument("--cache-mode", choices=("read", "write", "readwrite", "off"), default="readwrite",
                       help="with --cache: read (hits only, never store), write (store, never read), readwrite "
                       "(default) or off")
    sweep.add_argument("--executor", choices=("local", "ray"), default="local",
                       help="where the mpcbench and levels suites' units run: local (this process, default) or ray "
                       "(Ray worker actors, each with its own event loop and client, one global rate limit per model "
                       "across them; this process still writes every file of --out and resumes as usual; tariff and "
                       "hscodecomp run here; not with --max-cost, budget_usd or --cache yet; needs pip install -e "
                       "'.[ray]')")
    sweep.add_argument("--ray-address", default=None, metavar="ADDR",
                       help="with --executor ray: join the running Ray cluster at ADDR (HEAD:6379, as printed by "
                       "'ray start --head'; or auto); default: start a local Ray instance for this sweep")
    sweep.add_argument("--workers", type=int, default=None, metavar="N",
                       help="with --executor ray: worker actors, spread over the cluster's nodes, one CPU each "
                       "(default: one per CPU of the cluster)")
    sweep.add_argument("--no-certificate", action="store_true",
                       help="skip the validity certificate's baselines (sim/oracle-agent and sim/lazy-agent run on "
                       "the sweep's tasks, and non-answers checked; cached per task, so usually instant): the "
                       "certificate's verdict is then unknown; the agreement figures are still given")
    sweep.add_argument("--certificate-cache", type=Path, default=None, metavar="DIR",
                       help="where the certificate's baselines are cached across sweeps, keyed by task, data, agent "
                       "prompt and code version (default: $XDG_CACHE_HOME/mpcbench-async/certificate, else "
                       "~/.cache/mpcbench-async/certificate)")
    sweep.add_argument("--require-valid", action="store_true",
                       help="exit 4 when the validity certificate is not valid: an oracle ceiling below min_oracle "
                       "(default 0.95), a lazy floor above max_lazy (0.10) or more vacuous passes than "
                       "max_vacuous_passes (0) in any task family; thresholds in model config $.certificate")
    sweep.add_argument("--batch", choices=["judge", "agent"], action="append", default=[],
                       help="judge: send every judge model's calls in provider batches (the OpenAI Batch API; a "
                       "model's \"batch\": {\"api\": \"anthropic\"} uses Anthropic Message Batches) at the "
                       "batch price, judgements written as each batch ends; agent: send every agent model's "
                       "calls in provider batches, the runs in lock-step waves (every run waiting on the model "
                       "joins the next batch, tools run between batches; a wave is sent when every run waits, "
                       "or at the model's batch.max_requests or batch.max_wait_s), and the wall time printed "
                       "against the bound (turns x batch latency); repeatable; --dry-run shows batch vs online "
                       "cost. Batches kept in --out/batches.jsonl, so a killed sweep resumes by polling them (a "
                       "model's \"batch\" in the config does the same for that model)")
    sweep.add_argument("--quiet", action="store_true", help="no progress line; the summary table is still printed")
    sweep.add_argument("--dry-run", action="store_true",
                       help="print the plan and its estimate (units, what a resume of --out would skip, calls, tokens, "
                       "cost, the time the model limits imply) without making a call or writing a file")
    sweep.add_argument("--history", type=Path, action="append", default=[], metavar="DIR",
                       help="with --dry-run: an earlier sweep directory whose calls.jsonl narrows the estimate "
                       "(repeatable; --out's own is always read)")
    sweep.set_defaults(handler=cmd_sweep)


def add_summarize(commands: Commands) -> None:
    summary = commands.add_parser("summarize",
                                  description="Rebuild summary.json and summary.md of a sweep directory from "
                                  "runs.jsonl, judgements.jsonl and calls.jsonl, with the validity certificate (its "
                                  "baselines from certificate_baselines.json, as the sweep wrote them), and print "
                                  "the table (always recomputed; summary.inputs.json notes what it was computed "
                                  "from, so a rerun of the sweep that changes nothing keeps it).")
    summary.add_argument("dir", type=Path)
    summary.add_argument("--pass-k", type=_int_list, default=None, metavar="K,K,...",
                         help="the k of pass^k over tasks, comma-separated, e.g. 1,2,3,5 (default: 1, 2, 4, 8, … and "
                         "the most trials of a task)")
    summary.set_defaults(handler=cmd_summarize)


def add_verify(commands: Commands) -> None:
    verify = commands.add_parser(
        "verify",
        description="Re-score a finished MPCBench sweep from its stored records without any model call: run every "
        "ok run's checks again on its stored final answer (against the task and data in --tasks-dir / --data-dir, "
        "as the sweep used them) and, with --rejudge, rebuild every ok judgement's input from its run's stored log "
        "and the judge prompt; rebuild summary.json from the records. Confirms that every stored score is "
        "reproduced bit for bit, or lists each one that is not with the reason: the check code, the task, the data "
        "or the judge prompt changed since the sweep, or the record was edited. Exit 0 when everything "
        "reproduces, 1 when anything differs, 2 for a directory that is no sweep. (Not 'levels verify', which "
        "replays the original MPCBench's recorded runs.)", **_exit.with_epilog())
    verify.add_argument("dir", type=Path, help="the sweep's output directory (its --out)")
    verify.add_argument("--rejudge", action="store_true",
                        help="also rebuild each judgement's input (run log, answer requirements, judge prompt) and "
                        "compare its digest with the one stored when the judge was asked")
    verify.add_argument("--prompts", type=Path, default=Path("prompt_config.json"),
                        help="with --rejudge: the prompts (default: prompt_config.json)")
    verify.add_argument("--tasks-dir", type=Path, default=Path("tasks"),
                        help="the sweep's --tasks-dir (default: tasks)")
    verify.add_argument("--data-dir", type=Path, default=Path("data"), help="the sweep's --data-dir (default: data)")
    verify.add_argument("--scenarios-dir", type=Path, default=Path("scenarios"),
                        help="the sweep's --scenarios-dir (default: scenarios)")
    verify.add_argument("--scenario-id", default=None, help="the sweep's --scenario-id, if it used one")
    verify.set_defaults(handler=cmd_verify)


def cmd_verify(args: argparse.Namespace) -> int:
    from ..sweep import verify_sweep

    result = verify_sweep(args.dir, tasks_dir=args.tasks_dir, data_dir=args.data_dir,
                          scenarios_dir=args.scenarios_dir, scenario_id=args.scenario_id, prompts=args.prompts,
                          rejudge=args.rejudge)
    print(result.report())
    return _exit.OK if result.ok else _exit.FAILED


def _models(value: str | None) -> list[str] | None:
    return [m.strip() for m in value.split(",") if m.strip()] if value is not None else None


def cmd_sweep(args: argparse.Namespace) -> int:
    if args.dry_run:
        from ..sweep import dry_run_sweep, render_dry_run

        options = _options(args)
        _check_require_valid(args)
        print(render_dry_run(dry_run_sweep(options, history=args.history)))
        return _exit.OK
    from ..runtime import hold_malloc_thresholds, single_threaded_blas, space_young_collections
    from ._loop import run

    hold_malloc_thresholds()  # a long sweep's heap would otherwise grow with its units (runtime/_malloc.py)
    space_young_collections()  # 50–75 µs of CPU per LLM call walking young objects otherwise (runtime/_gc.py)
    single_threaded_blas()  # before numpy's import: its idle BLAS threads spin ~0.1 s each (runtime/_blas.py)
    return run(_sweep, args)  # uvloop: less of the runner's CPU per call (cli/_loop.py)


def _check_require_valid(args: argparse.Namespace) -> None:
    if args.require_valid and args.no_certificate:
        raise InputError("--require-valid needs the certificate's baselines: drop --no-certificate")


async def _sweep(args: argparse.Namespace) -> int:
    """The sweep, its embedded sim child launched first (``launch_providers``): the child's start-up then runs on
    another core while this process imports the sweep's modules (0.5–1 s), instead of after them (issue 31)."""
    from ..sweep import launch_for_config  # light: the model config and the provider registry

    _check_require_valid(args)
    providers: dict[str, Provider] = {}
    if args.executor == "local" and not args.batch:
        providers = await launch_for_config(args.config, _models(args.models), _models(args.judges))
    from ..runtime import frozen_imports, thaw_imports

    try:
        with frozen_imports():  # the sweep's ~500 modules, never walked by the collector again (runtime/_gc.py)
            from ..sweep import run_sweep

        options = _options(args)
        result = await run_sweep(options, _progress(quiet=args.quiet), providers=providers)
    finally:
        thaw_imports()  # a caller's own process (a test, a notebook) gets its collector back as it was
        for provider in providers.values():  # a no-op once the sweep's client has stopped it
            await provider.aclose()
    return _report(args, result)


def _report(args: argparse.Namespace, result: SweepResult) -> int:
    """Print the sweep's result; its exit code."""
    for warning in result.warnings:
        print(f"data warning: {warning}", file=sys.stderr)
    print(flagged(result.table))  # with the tariff section, the error classes, an example of each and what to do
    if result.waves:
        print(result.waves)
    print(f"written to {result.out}/")
    if result.interrupted:
        raise Interrupted("sweep stopped; finished units are saved — rerun the same command to resume")
    if result.budget_reached:
        print(flagged(result.budget_reached), file=sys.stderr)
        return _exit.BUDGET
    code = _exit_code(result.outcome)
    if code == _exit.OK and args.require_valid and result.certificate.status in ("invalid", "unknown"):
        from ..report import certificate_status

        print(f"--require-valid: the validity certificate is {certificate_status(result.certificate)}", file=sys.stderr)
        for problem in result.certificate.problems:
            print(f"  {problem}", file=sys.stderr)
        return _exit.INVALID
    return code


def _level_numbers(value: str) -> list[int]:
    try:
        return [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--levels: expected numbers such as 1,2,3, got {value!r}") from None


def _options(args: argparse.Namespace) -> SweepOptions:
    from ..levels import LevelsInputs
    from ..llm import cache_path
    from ..mpcbench import MPCBenchInputs
    from ..runner import Limits, RunChoice
    from ..sweep import Output, Placement, SweepOptions
    from ..tariff import TariffInputs

    return SweepOptions(
        config=args.config, prompts=args.prompts,
        run=RunChoice(suites=args.suite.split(","), models=_models(args.models), judges=_models(args.judges),
                      tasks=args.tasks, trials=args.trials, retry_errors=args.retry_errors),
        limits=Limits(concurrency=args.concurrency, max_turns=args.max_turns, max_cost=args.max_cost),
        output=Output(out=args.out, allow_changes=args.allow_changes,
                      cache=cache_path(args.cache) if args.cache is not None else None, cache_mode=args.cache_mode,
                      ledger_fsync=args.ledger_sync == "fsync", certificate=not args.no_certificate,
                      certificate_cache=args.certificate_cache),
        placement=Placement(executor=args.executor, ray_address=args.ray_address, workers=args.workers),
        inputs=[MPCBenchInputs(tasks_dir=args.tasks_dir, data_dir=args.data_dir, scenarios_dir=args.scenarios_dir,
                               scenario_id=args.scenario_id),
                TariffInputs(tariff_path=args.tariff_path, hscodecomp_path=args.hscodecomp_path, pack=args.pack,
                             scoring=args.scoring),
                LevelsInputs(data=args.levels_data, levels=_level_numbers(args.levels),
                             splits=_models(args.levels_splits))],
        batch=args.batch, command="mpcbench-async " + " ".join(shlex.quote(a) for a in sys.argv[1:]))


def _progress(*, quiet: bool) -> Callable[[Runner], Coroutine[Any, Any, None]]:
    """The progress line of a sweep's runner on stderr, redrawn until the sweep ends, then once more."""
    from ._progress import ProgressLine

    async def show(runner: Runner) -> None:
        line = ProgressLine(runner.stats, quiet=quiet, retries=lambda: runner.retries,
                            in_flight=lambda: runner.in_flight, batches=runner.batches)
        if runner.client is not None:
            runner.client.add_retry_listener(line.retried)
        try:
            await line.run()
        finally:
            line.emit(final=True)

    return show


def _exit_code(outcome: Outcome) -> int:
    """0 when every unit of the plan has an ok record (now or from an earlier run), else 1, saying why."""
    if outcome.complete:
        return _exit.OK
    parts = [f"{outcome.failed} ended in an error" if outcome.failed else "",
             f"{outcome.not_run} did not run (their agent run failed)" if outcome.not_run else ""]
    print(f"{outcome.units - outcome.ok} of {outcome.units} unit(s) have no ok result: "
          f"{', '.join(p for p in parts if p)}. Infrastructure errors are retried by rerunning the same command; "
          "fix other errors, then rerun with --retry-errors", file=sys.stderr)
    return _exit.FAILED


def cmd_summarize(args: argparse.Namespace) -> int:
    from ..sweep import write_summary

    if (problem := sweep_dir_problem(args.dir)) is not None:
        raise InputError(problem)
    print(flagged(write_summary(args.dir, pass_k=args.pass_k)))
    return 0
