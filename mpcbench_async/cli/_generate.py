"""``mpcbench-async generate``: world states and sources from scenarios, resumable per file.

Every subcommand runs a ``mpcbench.GenerationSuite`` through ``Runner.run_suites`` (its lock, signals, limits and
calls log); this module parses the arguments and prints the progress and the totals.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import ConfigError, InputError, Interrupted
from .._resources import workspace_path
from ..mpcbench import SOURCES
from . import _exit
from ._commands import add_commands
from ._paths import output_dir

if TYPE_CHECKING:
    from ..mpcbench import GenerationOutcome, GenerationRecord, Scenario
    from ._commands import Commands

# Heavy imports live in the handlers: building a command's parser must stay cheap for its --help (issue 13).

def add_common(parser: argparse.ArgumentParser) -> None:
    """Paths and model options shared by every generate command."""
    parser.add_argument("--config", type=Path, default=Path("model_config.json"),
                        help="model config (default: model_config.json)")
    parser.add_argument("--prompts", type=Path, default=Path("prompt_config.json"),
                        help="prompt templates (default: prompt_config.json)")
    parser.add_argument("--scenarios-dir", type=Path, default=workspace_path("scenarios"), help="default: scenarios/")
    parser.add_argument("--schemas-dir", type=Path, default=Path("schemas"), help="default: schemas/")
    parser.add_argument("--data-dir", type=output_dir, default=Path("data"), help="output directory (default: data/)")
    parser.add_argument("--model", default=None,
                        help="generation model (default: data_generation_model from the config)")
    parser.add_argument("--max-repairs", type=int, default=3,
                        help="repair turns per file after a failed validation (default: 3)")
    parser.add_argument("--force", action="store_true",
                        help="regenerate files that already exist (every scenario runs, whatever generation.jsonl "
                        "holds)")
    parser.add_argument("--logs-dir", type=output_dir, default=Path("reports/generation"),
                        help="where the run's records go, never into --data-dir: generation.jsonl (one record per "
                        "scenario run, what resume reads), calls.jsonl (every model call), ledger.jsonl (each "
                        "request's intent, durable before it is sent) and the .lock that keeps a second generate off "
                        "them (default: reports/generation/)")


def add_generate(commands: Commands) -> None:
    generate = commands.add_parser(
        "generate",
        description="Generate world states and the six sources (Slack, Gmail, Calendar, Contacts, Jira, "
        "Drive) from scenarios/, validated against schemas/ with model repair. Writes "
        "data/<scenario_id>_<name>.json atomically as each file becomes valid; existing files are "
        "kept unless --force, so rerunning resumes. The run's records (generation.jsonl, calls.jsonl, "
        "ledger.jsonl) go to --logs-dir (default: reports/generation/); a scenario whose files a run found valid "
        "is skipped whole. "
        "Exit code 0 when every file is valid, 1 when one failed, 2 for a user error, 130 when interrupted.")
    sub = add_commands(generate, dest="generate_command", metavar="SUBCOMMAND", required=True)
    sub.add_command("world-state", _add_world_state, help="generate one scenario's world state")
    sub.add_command("sources", _add_sources, help="generate one scenario's six sources (world state first if missing)")
    sub.add_command("all", _add_all, help="every scenario: world states and sources, pipelined")


def _add_world_state(commands: Commands) -> None:
    world = commands.add_parser("world-state")
    world.add_argument("--scenario-id", required=True)
    add_common(world)
    world.set_defaults(handler=run_world_state)


def _add_sources(commands: Commands) -> None:
    sources = commands.add_parser("sources")
    sources.add_argument("--scenario-id", required=True)
    sources.add_argument("--sources", default=",".join(SOURCES),
                         help=f"comma-separated subset (default: {','.join(SOURCES)})")
    add_common(sources)
    sources.set_defaults(handler=run_sources)


def _add_all(commands: Commands) -> None:
    every = commands.add_parser("all")
    every.add_argument("--scenarios", default="*", help="glob over scenario ids (default: *)")
    every.add_argument("--concurrency", type=int, default=8, help="scenarios in flight (default: 8)")
    add_common(every)
    every.set_defaults(handler=run_all)


class _Progress:
    """One stderr line per file as it is written, skipped or fails; the totals at the end."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.counts = {"written": 0, "skipped": 0, "error": 0}
        self.seen: set[str] = set()  # keys of the units that ran in this invocation

    def outcome(self, outcome: GenerationOutcome) -> None:
        self.done += 1
        self.counts[outcome.status] += 1
        detail = {"written": f"written ({outcome.calls} call{'s' if outcome.calls != 1 else ''})",
                  "skipped": "exists, kept", "error": f"ERROR: {outcome.error}"}[outcome.status]
        print(f"[{self.done:>3}/{self.total}] {outcome.scenario_id} {outcome.name}: {detail} -> {outcome.path}",
              file=sys.stderr, flush=True)

    def record(self, record: GenerationRecord) -> None:
        self.seen.add(record.key)
        if not record.outcomes:  # the unit crashed before any file: the Runner logged it; say it here too
            self.counts["error"] += 1
            print(f"{record.scenario_id}: ERROR: {record.error_class}: {record.error_message}", file=sys.stderr,
                  flush=True)

    def skipped(self, records: list[GenerationRecord]) -> None:
        """The scenarios the Runner skipped (their files are as a run found them), shown as that run showed them."""
        for record in records:
            if record.key not in self.seen:
                self.record(record)
                for outcome in record.outcomes:
                    self.outcome(outcome)

    def finish(self) -> int:
        print(f"generation: {self.counts['written']} written, {self.counts['skipped']} kept, "
              f"{self.counts['error']} failed", file=sys.stderr)
        return _exit.FAILED if self.counts["error"] else _exit.OK


def _run(args: argparse.Namespace, scenarios: list[Scenario], sources: list[str], concurrency: int = 1) -> int:
    """Generate ``sources`` (after the world state) of ``scenarios`` through the Runner; the exit code."""
    import anyio

    from ..llm import load_model_config
    from ..mpcbench import GenerationSuite, load_prompts, load_schemas
    from ..runner import Runner, check_models
    from ..runtime import DirLock

    config = load_model_config(args.config)
    model = args.model or config.data_generation_model
    if not model:
        raise ConfigError(f"{args.config}: $.data_generation_model is not set (or pass --model)")
    if args.max_repairs < 0:
        raise InputError("--max-repairs must be 0 or more")
    progress = _Progress(len(scenarios) * (1 + len(sources)))
    suite = GenerationSuite(scenarios, model=model, config=config, schemas=load_schemas(str(args.schemas_dir)),
                            prompts=load_prompts(args.prompts), data_dir=args.data_dir, sources=sources,
                            max_repairs=args.max_repairs, force=args.force, on_outcome=progress.outcome,
                            on_record=progress.record)

    async def main() -> bool:
        await check_models(config, [model])  # a missing key fails before --logs-dir is taken: it stays as it was
        with DirLock(args.logs_dir, setting="logs_dir"):  # the Runner takes it again; a clash names --logs-dir
            async with Runner(config, out_dir=args.logs_dir, concurrency=concurrency, handle_signals=True,
                              grace_period=10.0) as runner:
                await runner.run_suites([suite])
                return runner.stats.interrupted

    interrupted = anyio.run(main)
    if interrupted:
        raise Interrupted(f"generation stopped; {progress.counts['written']} files written are kept; rerun the "
                          "same command to resume")
    progress.skipped(suite.records)
    return progress.finish()


def _scenario(args: argparse.Namespace) -> Scenario:
    from ..mpcbench import load_scenario

    path = args.scenarios_dir / f"{args.scenario_id}.json"
    if not path.exists():
        raise InputError(f"{path}: no such scenario (--scenario-id {args.scenario_id!r})")
    return load_scenario(path)


def run_world_state(args: argparse.Namespace) -> int:
    return _run(args, [_scenario(args)], [])


def run_sources(args: argparse.Namespace) -> int:
    scenario = _scenario(args)
    wanted = [s.strip() for s in args.sources.split(",") if s.strip()]
    unknown = sorted(set(wanted) - set(SOURCES))
    if unknown:
        raise InputError(f"--sources: unknown source(s) {', '.join(unknown)}; choose from {', '.join(SOURCES)}")
    return _run(args, [scenario], wanted)


def run_all(args: argparse.Namespace) -> int:
    from ..mpcbench import list_scenarios, load_scenario

    paths = list_scenarios(args.scenarios_dir, args.scenarios)
    if not paths:
        raise InputError(f"{args.scenarios_dir}: no scenario matches --scenarios {args.scenarios!r}")
    scenarios = [load_scenario(p) for p in paths]  # all validated before any call
    return _run(args, scenarios, list(SOURCES), concurrency=max(1, args.concurrency))
