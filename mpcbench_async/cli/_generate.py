"""``mpcbench-async generate``: world states and sources from scenarios, resumable per file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import ConfigError, InputError
from .._resources import workspace_path
from ..mpcbench._schemas import SOURCES
from ._paths import output_dir

if TYPE_CHECKING:
    from ..llm import LLMClient
    from ..mpcbench import DataGenerator, GenerationOutcome

# Heavy imports live in the handlers: registering the arguments must stay cheap for --help (issue 13).

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
    parser.add_argument("--force", action="store_true", help="regenerate files that already exist")


def register(commands: argparse._SubParsersAction) -> None:
    generate = commands.add_parser(
        "generate", help="generate MPCBench world states and source data",
        description="Generate world states and the six sources (Slack, Gmail, Calendar, Contacts, Jira, "
        "Drive) from scenarios/, validated against schemas/ with model repair. Writes "
        "data/<scenario_id>_<name>.json atomically as each file becomes valid; existing files are "
        "kept unless --force, so rerunning resumes.")
    sub = generate.add_subparsers(dest="generate_command", metavar="SUBCOMMAND", required=True)
    world = sub.add_parser("world-state", help="generate one scenario's world state")
    world.add_argument("--scenario-id", required=True)
    add_common(world)
    world.set_defaults(handler=run_world_state)
    sources = sub.add_parser("sources", help="generate one scenario's six sources (world state first if missing)")
    sources.add_argument("--scenario-id", required=True)
    sources.add_argument("--sources", default=",".join(SOURCES),
                         help=f"comma-separated subset (default: {','.join(SOURCES)})")
    add_common(sources)
    sources.set_defaults(handler=run_sources)
    every = sub.add_parser("all", help="every scenario: world states and sources, pipelined")
    every.add_argument("--scenarios", default="*", help="glob over scenario ids (default: *)")
    every.add_argument("--concurrency", type=int, default=8, help="scenarios in flight (default: 8)")
    add_common(every)
    every.set_defaults(handler=run_all)


class _Progress:
    """One stderr line per file as it is written, skipped or fails."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0

    def __call__(self, outcome: GenerationOutcome) -> None:
        self.done += 1
        detail = {"written": f"written ({outcome.calls} call{'s' if outcome.calls != 1 else ''})",
                  "skipped": "exists, kept", "error": f"ERROR: {outcome.error}"}[outcome.status]
        print(f"[{self.done:>3}/{self.total}] {outcome.scenario_id} {outcome.name}: {detail} -> {outcome.path}",
              file=sys.stderr, flush=True)


def _generator(args: argparse.Namespace, client_holder: list[LLMClient], total: int) -> DataGenerator:
    from ..llm import LLMClient, load_model_config
    from ..mpcbench import DataGenerator, load_prompts, load_schemas

    config = load_model_config(args.config)
    model = args.model or config.data_generation_model
    if not model:
        raise ConfigError(f"{args.config}: $.data_generation_model is not set (or pass --model)")
    if args.max_repairs < 0:
        raise InputError("--max-repairs must be 0 or more")
    client = LLMClient(config)
    client.check_models([model])
    client_holder.append(client)
    return DataGenerator(client, model=model, schemas=load_schemas(str(args.schemas_dir)),
                         prompts=load_prompts(args.prompts), data_dir=args.data_dir,
                         max_repairs=args.max_repairs, force=args.force, on_outcome=_Progress(total))


def _scenario(args: argparse.Namespace):
    from ..mpcbench import load_scenario

    path = args.scenarios_dir / f"{args.scenario_id}.json"
    if not path.exists():
        raise InputError(f"{path}: no such scenario (--scenario-id {args.scenario_id!r})")
    return load_scenario(path)


def _finish(outcomes: list[GenerationOutcome]) -> int:
    written = sum(o.status == "written" for o in outcomes)
    skipped = sum(o.status == "skipped" for o in outcomes)
    errors = [o for o in outcomes if o.status == "error"]
    print(f"generation: {written} written, {skipped} kept, {len(errors)} failed", file=sys.stderr)
    return 1 if errors else 0


def _run(args: argparse.Namespace, total: int, body) -> int:
    import anyio

    holder: list[LLMClient] = []
    generator = _generator(args, holder, total)

    async def main() -> list[GenerationOutcome]:
        async with holder[0]:
            return await body(generator)

    return _finish(anyio.run(main))


def run_world_state(args: argparse.Namespace) -> int:
    scenario = _scenario(args)

    async def body(generator: DataGenerator) -> list[GenerationOutcome]:
        return [(await generator.world_state(scenario))[1]]

    return _run(args, 1, body)


def run_sources(args: argparse.Namespace) -> int:
    scenario = _scenario(args)
    wanted = [s.strip() for s in args.sources.split(",") if s.strip()]
    unknown = sorted(set(wanted) - set(SOURCES))
    if unknown:
        raise InputError(f"--sources: unknown source(s) {', '.join(unknown)}; choose from {', '.join(SOURCES)}")

    async def body(generator: DataGenerator) -> list[GenerationOutcome]:
        world_state, outcome = await generator.world_state(scenario)
        return [outcome, *await generator.sources(scenario, world_state, wanted)]

    return _run(args, 1 + len(wanted), body)


def run_all(args: argparse.Namespace) -> int:
    from ..mpcbench import list_scenarios, load_scenario

    paths = list_scenarios(args.scenarios_dir, args.scenarios)
    if not paths:
        raise InputError(f"{args.scenarios_dir}: no scenario matches --scenarios {args.scenarios!r}")
    scenarios = [load_scenario(p) for p in paths]  # all validated before any call

    async def body(generator: DataGenerator) -> list[GenerationOutcome]:
        return await generator.run(scenarios, concurrency=max(1, args.concurrency))

    return _run(args, len(scenarios) * (1 + len(SOURCES)), body)
