"""``run-task``, ``judge-input``, ``judge``, ``run-and-judge``: MPCBench evaluation, seed-compatible.

File names follow the original MPCBench: ``<logs>/<task_id>__agent-<M>_run.json``,
``…_judge_input.json`` and ``…__judge-<J>_judge_result.json``, with model names
sanitised for the file system.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._exceptions import ConfigError, InputError
from .._resources import workspace_path
from . import _exit
from ._paths import output_dir

if TYPE_CHECKING:
    from ..llm import LLMClient, ModelConfig
    from ..mpcbench import Judgement, RunLog
    from ._commands import Commands

# Heavy imports live in the handlers: building a command's parser must stay cheap for its --help (issue 13).


_SCENARIO_HELP = "scenario for a task that names none (original MPCBench task files)"


def _common(parser: argparse.ArgumentParser, *, data: bool = True) -> None:
    parser.add_argument("--config", type=Path, default=Path("model_config.json"), help="default: model_config.json")
    parser.add_argument("--prompts", type=Path, default=Path("prompt_config.json"), help="default: prompt_config.json")
    parser.add_argument("--logs-dir", type=output_dir, default=Path("logs"), help="where run logs go (default: logs/)")
    if data:
        parser.add_argument("--data-dir", type=Path, default=workspace_path("data"), help="default: data/")
        parser.add_argument("--scenarios-dir", type=Path, default=workspace_path("scenarios"),
                            help="default: scenarios/")
        parser.add_argument("--max-turns", type=int, default=12, help="model turns per run (default: 12)")


def add_run_task(commands: Commands) -> None:
    run = commands.add_parser("run-task",
                              description="Run an agent model on a task with the nine tools over the scenario's "
                              "data; writes <logs>/<task_id>__agent-<M>_run.json.")
    run.add_argument("--task", type=Path, required=True)
    run.add_argument("--scenario-id", default=None, help=_SCENARIO_HELP)
    run.add_argument("--agent-model", required=True)
    _common(run)
    run.set_defaults(handler=cmd_run_task)


def add_judge_input(commands: Commands) -> None:
    judge_input = commands.add_parser("judge-input",
                                      description="Build the judge input (run log essentials, the task's "
                                      "answer_requirements, step-indexed tool trace) from a run log.")
    judge_input.add_argument("--log", type=Path, required=True, help="a *_run.json file")
    judge_input.add_argument("--output", type=Path, default=None, help="default: beside the log, *_judge_input.json")
    judge_input.add_argument("--task", type=Path, default=None, help="the task file (default: found by task_id)")
    judge_input.add_argument("--tasks-dir", type=Path, default=workspace_path("tasks"))
    judge_input.set_defaults(handler=cmd_judge_input)


def add_judge(commands: Commands) -> None:
    judge = commands.add_parser("judge",
                                description="Score a judge input on both axes (0-5); writes "
                                "…__judge-<J>_judge_result.json beside the input.")
    judge.add_argument("--input", type=Path, required=True)
    judge.add_argument("--model", required=True)
    judge.add_argument("--output", type=Path, default=None)
    _common(judge, data=False)
    judge.set_defaults(handler=cmd_judge)


def add_run_and_judge(commands: Commands) -> None:
    both = commands.add_parser("run-and-judge",
                               description="Run every agent model of the config on a task and score each run "
                               "with every judge model, concurrently; prints a score table.")
    both.add_argument("--task", type=Path, required=True)
    both.add_argument("--scenario-id", default=None, help=_SCENARIO_HELP)
    both.add_argument("--agent-models", default=None, help="comma-separated (default: agent_models of the config)")
    both.add_argument("--judge-models", default=None, help="comma-separated (default: judge_models of the config)")
    _common(both)
    both.set_defaults(handler=cmd_run_and_judge)


def _write(path: Path, value: Any) -> None:
    import msgspec
    import orjson

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(msgspec.to_builtins(value), option=orjson.OPT_INDENT_2) + b"\n")


def _client(args: argparse.Namespace, models: list[str], config: ModelConfig | None = None) -> LLMClient:
    """The command's client for ``models`` (checked), printing each retry on stderr as it starts its wait: a dead
    endpoint or a gateway's 500s must not leave a command sitting silent through a minute of backoff."""
    from ..llm import LLMClient, load_model_config

    client = LLMClient(config or load_model_config(args.config))
    client.check_models(models)
    client.add_retry_listener(lambda event: print(event.describe(), file=sys.stderr, flush=True))
    return client


def run_log_path(logs: Path, task_id: str, agent: str) -> Path:
    from ..runtime import safe_name

    return logs / f"{safe_name(task_id)}__agent-{safe_name(agent)}_run.json"


def cmd_run_task(args: argparse.Namespace) -> int:
    import anyio
    import msgspec

    from ..mpcbench import load_prompts, load_task, load_task_data, run_agent, run_checks

    task = load_task(args.task, scenario_id=args.scenario_id)
    data = load_task_data(task, args.data_dir, args.scenarios_dir)
    prompts = load_prompts(args.prompts)
    client = _client(args, [args.agent_model])

    async def main() -> RunLog:
        async with client:
            return await run_agent(client, args.agent_model, task, data, prompts, max_turns=args.max_turns,
                                   key=f"run/{task.task_id}/{args.agent_model}")

    run = anyio.run(main)
    out = run_log_path(args.logs_dir, task.task_id, args.agent_model)
    payload = msgspec.to_builtins(run) | {"checks": msgspec.to_builtins(run_checks(task, run.final_answer, data))}
    _write(out, payload)
    print(f"{task.task_id} {args.agent_model}: stop={run.stop_reason} turns={run.turns} "
          f"tool_calls={len(run.raw_tool_calls)} cost_usd={_cost(run.cost_usd)} -> {out}")
    if run.stop_reason == "error":
        print(f"run failed: {run.error_class}: {run.error}", file=sys.stderr)
        return _exit.FAILED
    return _exit.OK


def _find_task(task_id: str, tasks_dir: Path) -> Path:
    import orjson

    for path in sorted(tasks_dir.glob("*/*.json")):
        try:
            if orjson.loads(path.read_bytes()).get("task_id") == task_id:
                return path
        except (OSError, orjson.JSONDecodeError):
            continue
    raise InputError(f"{tasks_dir}: no task with task_id {task_id!r} (pass --task PATH)")


def cmd_judge_input(args: argparse.Namespace) -> int:
    import orjson

    from ..mpcbench import RunLog, build_judge_input, load_task
    from ..records import decode_json

    try:
        raw = args.log.read_bytes()
    except OSError as exc:
        raise InputError(f"{args.log}: cannot read run log ({exc.strerror})") from exc
    data = orjson.loads(raw) if raw.strip().startswith(b"{") else None
    if not isinstance(data, dict):
        raise InputError(f"{args.log}: not a JSON run log")
    data.pop("checks", None)
    run = decode_json(orjson.dumps(data), RunLog, source=str(args.log))
    task_path = args.task or _find_task(run.task_id, args.tasks_dir)
    task = load_task(task_path, scenario_id=run.scenario_id)
    out = args.output or args.log.with_name(args.log.name.replace("_run.json", "_judge_input.json"))
    _write(out, build_judge_input(run, task) | {"scenario_id": run.scenario_id, "agent_model": run.model})
    print(f"judge input -> {out}")
    return 0


def cmd_judge(args: argparse.Namespace) -> int:
    import anyio
    import orjson

    from ..mpcbench import load_prompts, run_judge
    from ..runtime import safe_name

    try:
        judge_input = orjson.loads(args.input.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InputError(f"{args.input}: cannot read judge input ({exc})") from exc
    for field in ("task_id", "final_answer", "answer_requirements", "tool_trace"):
        if field not in judge_input:
            raise InputError(f"{args.input}: $.{field} is missing (build it with `mpcbench-async judge-input`)")
    prompts = load_prompts(args.prompts)
    client = _client(args, [args.model])

    async def main() -> Judgement:
        async with client:
            return await run_judge(client, args.model, judge_input, prompts,
                                   agent_model=str(judge_input.get("agent_model", "")),
                                   scenario_id=str(judge_input.get("scenario_id", "")),
                                   key=f"judge/{judge_input['task_id']}/{args.model}")

    judgement = anyio.run(main)
    stem = args.input.name.replace("_judge_input.json", "")
    out = args.output or args.input.with_name(f"{stem}__judge-{safe_name(args.model)}_judge_result.json")
    _write(out, judgement)
    print(_score_line(judgement) + f" -> {out}")
    if judgement.error_class is not None:  # a failed call, or no parsable judgement in every try
        print(f"judge failed: {judgement.error_class}: {judgement.error}", file=sys.stderr)
        return _exit.FAILED
    return _exit.OK


def _score_line(j: Judgement) -> str:
    head = f"{j.task_id} agent={j.agent_model} judge={j.judge_model}: "
    if j.scores is None:
        return head + f"{j.verdict} cost_usd={_cost(j.cost_usd)}"
    return head + (f"ARS={j.scores.answer_requirements_satisfaction.score} "
                   f"SGR={j.scores.source_grounded_reasoning.score} cost_usd={_cost(j.cost_usd)}")


def _cost(cost_usd: float | None) -> str:
    """A run's or judgement's cost as printed: ``unknown`` when a call had no known price, never $0."""
    return "unknown" if cost_usd is None else f"{cost_usd:.4f}"


def _models(value: str | None, default: list[str], what: str, config: Path) -> list[str]:
    models = [m.strip() for m in value.split(",") if m.strip()] if value else list(default)
    if not models:
        raise ConfigError(f"{config}: $.{what} is empty (or pass --{what.replace('_', '-')})")
    return models


def cmd_run_and_judge(args: argparse.Namespace) -> int:
    import anyio
    import msgspec

    from ..llm import load_model_config
    from ..mpcbench import evaluate_task, load_prompts, load_task, load_task_data
    from ..runtime import safe_name

    config = load_model_config(args.config)
    agents = _models(args.agent_models, config.agent_models, "agent_models", args.config)
    judges = _models(args.judge_models, config.judge_models, "judge_models", args.config)
    task = load_task(args.task, scenario_id=args.scenario_id)
    data = load_task_data(task, args.data_dir, args.scenarios_dir)
    prompts = load_prompts(args.prompts)
    client = _client(args, agents + judges, config)
    rows: list[tuple[str, list[Judgement], int, int, float | None]] = []
    failures: list[str] = []

    async def one(agent: str) -> None:
        evaluation = await evaluate_task(client, task, data, prompts, agent_model=agent, judge_models=judges,
                                         max_turns=args.max_turns, key=f"rj/{task.task_id}/{agent}")
        log_path = run_log_path(args.logs_dir, task.task_id, agent)
        _write(log_path, msgspec.to_builtins(evaluation.run) | {"checks": msgspec.to_builtins(evaluation.checks)})
        for judgement in evaluation.judgements:
            _write(log_path.with_name(log_path.name.replace(
                "_run.json", f"__judge-{safe_name(judgement.judge_model)}_judge_result.json")), judgement)
        applied = [c for c in evaluation.checks if c.status != "n/a"]  # n/a checks had nothing to verify
        run = evaluation.run
        if run.stop_reason == "error":
            failures.append(f"run failed: {agent}: {run.error_class}: {run.error}")
        failures.extend(f"judge failed: {agent} judged by {j.judge_model}: {j.error_class}: {j.error}"
                        for j in evaluation.judgements if j.error_class is not None)
        rows.append((agent, evaluation.judgements, sum(c.passed for c in applied), len(applied), run.cost_usd))

    async def main() -> None:
        async with client, anyio.create_task_group() as tg:
            for agent in agents:
                tg.start_soon(one, agent)

    anyio.run(main)
    print(f"{task.task_id} ({task.task_type}, scenario {task.scenario_id})")
    print(f"{'agent':28} {'judge':20} {'ARS':>4} {'SGR':>4} {'checks':>7} {'run $':>8} {'judge $':>8}")
    for agent, judgements, passed, total, run_cost in sorted(rows, key=lambda row: row[0]):
        for j in judgements:
            ars = str(j.scores.answer_requirements_satisfaction.score) if j.scores else j.verdict
            sgr = str(j.scores.source_grounded_reasoning.score) if j.scores else "-"
            print(f"{agent:28} {j.judge_model:20} {ars:>4} {sgr:>4} {passed:>3}/{total:<3} "
                  f"{_cost(run_cost):>8} {_cost(j.cost_usd):>8}")
    sys.stdout.flush()
    for line in sorted(failures):
        print(line, file=sys.stderr)
    return _exit.FAILED if failures else _exit.OK
