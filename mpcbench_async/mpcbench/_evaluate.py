"""One task end to end: agent run → deterministic checks → judge input → one judgement per judge.

``evaluate_task`` is the building block of ``run-and-judge`` and of sweeps: the
agent run and each judge call go through the shared ``LLMClient`` (and so its
limiters); judges of one run are called concurrently.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import msgspec

from .._exceptions import InputError
from .._prompts import PromptConfig
from ..llm import LLMClient
from ..runtime import safe_name
from ._agent import RunLog, run_agent
from ._checks import CheckResult, run_checks
from ._data import ScenarioData, load_scenario_data
from ._judge import Judgement, build_judge_input, run_judge
from ._scenario import Scenario, load_scenario
from ._task import Task

__all__ = ["TaskEvaluation", "evaluate_task", "load_task_data", "safe_name"]



class TaskEvaluation(msgspec.Struct, kw_only=True):
    run: RunLog
    checks: list[CheckResult]
    judgements: list[Judgement]


def load_task_data(task: Task, data_dir: str | Path, scenarios_dir: str | Path | None = None) -> ScenarioData:
    """The task's scenario data; the scenario file (if present) supplies what old data lacks."""
    scenario: Scenario | None = None
    if scenarios_dir is not None:
        path = Path(scenarios_dir) / f"{task.scenario_id}.json"
        if path.exists():
            try:
                scenario = load_scenario(path)
            except InputError:
                scenario = None  # original scenarios lack reference_now; the data loader derives it
    return load_scenario_data(data_dir, task.scenario_id, scenario=scenario)


async def evaluate_task(
    client: LLMClient,
    task: Task,
    data: ScenarioData,
    prompts: PromptConfig,
    *,
    agent_model: str,
    judge_models: Sequence[str],
    max_turns: int = 12,
    key: str = "",
) -> TaskEvaluation:
    """Run the agent, check its answer, and have every judge score it (concurrently)."""
    run = await run_agent(client, agent_model, task, data, prompts, max_turns=max_turns, key=f"{key}/agent")
    checks = await anyio.to_thread.run_sync(run_checks, task, run.final_answer, data)  # CPU: off the event loop
    judge_input = build_judge_input(run, task)
    judgements: list[Judgement | None] = [None] * len(judge_models)

    async def judge_one(index: int, judge_model: str) -> None:
        judgements[index] = await run_judge(client, judge_model, judge_input, prompts, agent_model=agent_model,
                                            scenario_id=task.scenario_id, key=f"{key}/judge/{judge_model}")

    async with anyio.create_task_group() as tg:
        for index, judge_model in enumerate(judge_models):
            tg.start_soon(judge_one, index, judge_model)
    return TaskEvaluation(run=run, checks=checks, judgements=[j for j in judgements if j is not None])
