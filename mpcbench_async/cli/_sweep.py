"""``mpcbench-async sweep`` (the main job) and ``summarize``."""

from __future__ import annotations

import argparse
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import InputError, Interrupted
from .._resources import workspace_path
from ..runtime import DirLock, atomic_write_bytes
from . import _exit
from ._paths import output_dir

if TYPE_CHECKING:
    from ..sweep import Outcome, TariffSuite

# Heavy imports live in the handlers: registering the arguments must stay cheap for --help (issue 13).


def register(commands: argparse._SubParsersAction) -> None:
    sweep = commands.add_parser(
        "sweep", help="every task × agent model × trial, judged by every judge model (the main job)",
        description="Run every task with every agent model (and trial), judge every run with every judge "
        "model as soon as it finishes, and write runs.jsonl, judgements.jsonl, calls.jsonl, manifest.json, "
        "summary.json and summary.md to --out. Rerunning the same command resumes: finished units are "
        "skipped, infrastructure errors are retried. One sweep at a time per --out; a directory holds one "
        "experiment, so a rerun that changes model params, prompts, --max-turns or task content is refused "
        "(see --allow-changes), while new models, tasks and trials extend it. The exit code describes the whole "
        "plan, whatever earlier runs did.", **_exit.with_epilog())
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
                       help="benchmark suites, comma-separated: mpcbench, tariff, hscodecomp (default: mpcbench); "
                       "tariff and hscodecomp run every case live with each model of tariff_models, through the same "
                       "client and limits")
    sweep.add_argument("--tariff-path", type=Path, default=Path("storage/benchmarks/tariff"),
                       help="tariff suite directory with cases/ (default: storage/benchmarks/tariff)")
    sweep.add_argument("--hscodecomp-path", type=Path, default=Path("storage/benchmarks/hscodecomp"),
                       help="HSCodeComp suite directory with cases/ (default: storage/benchmarks/hscodecomp)")
    sweep.add_argument("--pack", type=Path, default=Path("storage/packs/tariff"),
                       help="tariff pack directory (default: storage/packs/tariff)")
    sweep.add_argument("--tasks-dir", type=Path, default=Path("tasks"))
    sweep.add_argument("--data-dir", type=Path, default=Path("data"))
    sweep.add_argument("--scenarios-dir", type=Path, default=Path("scenarios"))
    sweep.add_argument("--scenario-id", default=None,
                       help="scenario for tasks that name none (original MPCBench task files)")
    sweep.add_argument("--quiet", action="store_true", help="no progress line; the summary table is still printed")
    sweep.set_defaults(handler=cmd_sweep)

    summary = commands.add_parser("summarize", help="rebuild a sweep's summary from its JSONL files",
                                  description="Rebuild summary.json and summary.md of a sweep directory from "
                                  "runs.jsonl, judgements.jsonl and calls.jsonl, and print the table.")
    summary.add_argument("dir", type=Path)
    summary.set_defaults(handler=cmd_summarize)


def _models(value: str | None) -> list[str] | None:
    return [m.strip() for m in value.split(",") if m.strip()] if value is not None else None


def _versions() -> dict[str, str]:
    import platform
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for name in ("mpcbench-async", "aiohttp", "openai", "msgspec", "anyio", "tenacity"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def write_summary(out: Path) -> str:
    import msgspec

    from ..sweep import render_markdown, render_table, summarize

    summary = summarize(out)
    atomic_write_bytes(out / "summary.json", msgspec.json.format(msgspec.json.encode(summary)) + b"\n", fsync=False)
    atomic_write_bytes(out / "summary.md", render_markdown(summary).encode(), fsync=False)
    return render_table(summary)


TARIFF_SUITES = ("tariff", "hscodecomp")


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..llm import load_model_config
    from ..mpcbench import load_prompts
    from ..sweep import build_plan

    suites = {x.strip() for x in args.suite.split(",") if x.strip()}
    known = {"mpcbench", *TARIFF_SUITES}
    if not suites or suites - known:
        raise InputError(f"--suite: unknown suite(s) {', '.join(sorted(suites - known)) or '(none)'}; "
                         f"available: {', '.join(sorted(known))}")
    if args.concurrency < 1:
        raise InputError("--concurrency must be at least 1")
    config = load_model_config(args.config)
    prompts = load_prompts(args.prompts)
    plan = None
    if "mpcbench" in suites:
        plan = build_plan(config=config, prompts=prompts, tasks_dir=args.tasks_dir, data_dir=args.data_dir,
                          scenarios_dir=args.scenarios_dir, task_glob=args.tasks, agent_models=_models(args.models),
                          judge_models=_models(args.judges), trials=args.trials, max_turns=args.max_turns,
                          scenario_id=args.scenario_id)
    if suites & set(TARIFF_SUITES):
        prompts.require("tariff_proposer", "tariff_critique")
    tariff = [s for name in TARIFF_SUITES if name in suites for s in _tariff_suites(args, config, prompts, name)]
    with DirLock(args.out):  # one sweep per directory, from the manifest check to the summary
        return _sweep_locked(args, config, prompts, plan, tariff)


def _sweep_locked(args: argparse.Namespace, config, prompts, plan, tariff: list[TariffSuite]) -> int:
    """The sweep proper, run while this process holds the output directory's lock."""
    import hashlib

    import anyio

    from ..sweep import (
        Manifest,
        Outcome,
        Runner,
        open_experiment,
        plan_fingerprint,
        plan_outcome,
        record_case_keys,
        record_experiment_keys,
        write_manifest,
    )
    from ._progress import ProgressLine

    tariff_models = sorted({model for suite in tariff for model in suite.models})
    agents = plan.agent_models if plan else []
    judges = plan.judge_models if plan else []
    manifest = Manifest(
        command="mpcbench-async " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        config_hash=hashlib.sha256(args.config.read_bytes()).hexdigest()[:16],
        prompts_hash=hashlib.sha256(args.prompts.read_bytes()).hexdigest()[:16],
        versions=_versions(), started_at=datetime.now(UTC).isoformat(),
        agent_models=agents, judge_models=judges, tasks=sorted(plan.tasks) if plan else [],
        trials=args.trials,
        units={"agent_run": plan.agent_unit_count if plan else 0, "judge": plan.judge_unit_count if plan else 0,
               "tariff_case": sum(len(suite.cases) for suite in tariff)},
        caps={m: config.settings_for(m).limits.max_concurrency for m in {*agents, *judges, *tariff_models}},
    )
    runner = Runner(config, prompts=prompts, out_dir=args.out, concurrency=args.concurrency,
                    retry_errors=args.retry_errors, handle_signals=True)
    fingerprint = plan_fingerprint(plan, config, judge_attempts=runner.judge_attempts) if plan else None
    manifest, new_experiment = open_experiment(args.out, manifest, fingerprint, allow_changes=args.allow_changes)
    if plan is not None:
        record_experiment_keys(args.out, plan, new_experiment=new_experiment)
    for suite in tariff:
        record_case_keys(args.out, f"{suite.name}.jsonl", {unit.key for unit in suite.units()})
    write_manifest(args.out, manifest)
    outcomes: list[Outcome] = []

    async def run_suites() -> None:
        outcomes.extend(await runner.run_suites(tariff))

    async def main() -> None:
        async with runner:
            assert runner.client is not None
            runner.client.check_models(tariff_models)
            progress = ProgressLine(runner.stats, quiet=args.quiet, retries=lambda: runner.client.retries,
                                    in_flight=lambda: runner.in_flight)
            async with anyio.create_task_group() as tg:
                tg.start_soon(progress.run)
                async with anyio.create_task_group() as work:
                    if plan is not None:
                        work.start_soon(runner.run, plan)
                    if tariff:
                        work.start_soon(run_suites)
                tg.cancel_scope.cancel()
            progress.emit(final=True)

    anyio.run(main)
    manifest.finished_at = manifest.history[-1].finished_at = datetime.now(UTC).isoformat()
    manifest.interrupted = manifest.history[-1].interrupted = runner.stats.interrupted
    write_manifest(args.out, manifest)
    print(write_summary(args.out))  # with the tariff section, the error classes, an example of each and what to do
    print(f"written to {args.out}/")
    if runner.stats.interrupted:
        raise Interrupted("sweep stopped; finished units are saved — rerun the same command to resume")
    if plan is not None:
        outcomes.append(plan_outcome(args.out, plan))
    return _exit_code(sum(outcomes, Outcome()))


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


def _suite_path(args: argparse.Namespace, suite: str) -> Path:
    return args.hscodecomp_path if suite == "hscodecomp" else args.tariff_path


def _tariff_suites(args: argparse.Namespace, config, prompts, suite: str) -> list[TariffSuite]:
    """One tariff-pipeline suite of a sweep, one ``TariffSuite`` per model, all validated before any call."""
    from ..sweep import TariffSuite
    from ..tariff import load_pack, load_suite

    cases_dir = _suite_path(args, suite) / "cases"
    cases = load_suite(cases_dir)
    if not cases:
        raise InputError(f"{cases_dir}: no {suite} cases")
    pack = load_pack(args.pack)
    models = _models(args.models) if args.models and "mpcbench" not in args.suite else None
    return [TariffSuite(suite, cases, pack=pack, prompts=prompts, model=model, config=config)
            for model in models or config.tariff_models or ["sim/tariff"]]


def cmd_summarize(args: argparse.Namespace) -> int:
    if not any((args.dir / name).exists() for name in ("runs.jsonl", "manifest.json")):
        raise InputError(f"{args.dir}: no runs.jsonl or manifest.json here; is it a sweep output directory?")
    print(write_summary(args.dir))
    return 0
