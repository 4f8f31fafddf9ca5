"""The sim baselines on the project's tasks, and the original MPCBench's data and tasks."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from mpcbench_async.llm import LLMClient
from mpcbench_async.mpcbench import (
    build_judge_input,
    list_tasks,
    load_prompts,
    load_task,
    load_task_data,
    run_agent,
    run_checks,
    run_judge,
)
from mpcbench_async.mpcbench._data import load_scenario_data
from mpcbench_async.mpcbench.tools import ToolBackend
from tests.conftest import REPO, reference_dir

PROMPTS = load_prompts(REPO / "prompt_config.json")


async def evaluate(client, task_path: Path, agent: str, *, scenario_id=None, data_dir=REPO / "data"):
    task = load_task(task_path, scenario_id=scenario_id)
    data = load_task_data(task, data_dir, REPO / "scenarios")
    run = await run_agent(client, agent, task, data, PROMPTS, key=f"{agent}/{task.task_id}")
    judgement = await run_judge(client, "sim/judge", build_judge_input(run, task), PROMPTS, agent_model=agent,
                                scenario_id=task.scenario_id, key=f"j/{agent}/{task.task_id}")
    return task, run, run_checks(task, run.final_answer, data), judgement


class TestProjectTasks:
    async def test_oracle_agent_solves_every_task(self, sim):
        """sim/oracle-agent ends every task with a final answer that passes every check; judge mean ≥ 4 on both axes."""
        paths = list_tasks(REPO / "tasks")
        assert 12 <= len(paths)
        ars, sgr = [], []
        async with LLMClient(sim_base_url=sim.base_url) as client:
            for path in paths:
                task, run, checks, judgement = await evaluate(client, path, "sim/oracle-agent")
                assert ("final", None) == (run.stop_reason, run.error), task.task_id
                assert [] == [c.detail for c in checks if not c.passed], task.task_id
                assert checks, task.task_id
                ars.append(judgement.scores.answer_requirements_satisfaction.score)
                sgr.append(judgement.scores.source_grounded_reasoning.score)
        assert statistics.fmean(ars) >= 4.0
        assert statistics.fmean(sgr) >= 4.0

    async def test_lazy_agent_is_not_grounded(self, sim):
        """sim/lazy-agent answers without tools; its grounding score averages at most 2."""
        sgr = []
        async with LLMClient(sim_base_url=sim.base_url) as client:
            for path in list_tasks(REPO / "tasks"):
                _, run, _, judgement = await evaluate(client, path, "sim/lazy-agent")
                assert ([], "final") == (run.raw_tool_calls, run.stop_reason)
                sgr.append(judgement.scores.source_grounded_reasoning.score)
        assert statistics.fmean(sgr) <= 2.0


REFERENCE_SCENARIOS = ["scenario_A", "scenario_noise05_depth05", "scenario_noise0_depth0", "scenario_noise0_depth1",
                       "scenario_noise1_depth0", "scenario_noise1_depth1"]
TOOL_CALLS = [
    ("Slack_search_messages", {"query": "meeting next week"}),
    ("Slack_search_messages", {"query": "", "limit": 5}),
    ("GoogleContacts_SearchContactsByName", {"name": "a"}),
    ("GoogleCalendar_ListEvents", {"start_date": "this_week", "end_date": "+14d"}),
    ("Gmail_SearchThreads", {"query": "update"}),
    ("GoogleDrive_gdrive_search", {"query": "report"}),
    ("Jira_SearchIssuesWithJql", {"jql": "status != Done ORDER BY updated DESC"}),
]


class TestReferenceData:
    @pytest.mark.parametrize("scenario_id", REFERENCE_SCENARIOS)
    def test_every_tool_answers_without_error(self, scenario_id):
        """On the original LLM-written data every tool returns a result, never an error."""
        data = load_scenario_data(reference_dir("mpcbench_v1", "data"), scenario_id)
        backend = ToolBackend(data)
        emails = [c["email"] for c in data.source("contacts").get("contacts", [])][:3]
        calls = TOOL_CALLS + [
            ("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree", {"email_addresses": emails, "start_date": "next_week"}),
            ("Gmail_GetThread", {"thread_id": data.source("gmail")["threads"][0]["id"]}),
            ("GoogleDrive_gdrive_read_file", {"file_id": data.source("drive")["files"][0]["id"]}),
        ]
        for name, arguments in calls:
            result = backend.call(name, json.dumps(arguments))
            assert "error" not in result, (name, result)

    async def test_every_original_task_runs_and_is_judged(self, sim):
        """Every original task completes with the sim agents and judge (scenario from the file name)."""
        tasks_dir = reference_dir("mpcbench_v1", "tasks")
        data_dir = reference_dir("mpcbench_v1", "data")
        async with LLMClient(sim_base_url=sim.base_url) as client:
            for path in sorted(tasks_dir.glob("*/*.json")):
                scenario = (path.stem.replace("_planning_task", "") if path.stem.startswith("scenario_")
                            else "scenario_A")
                for agent in ("sim/oracle-agent", "sim/lazy-agent"):
                    _, run, _, judgement = await evaluate(client, path, agent, scenario_id=scenario,
                                                          data_dir=data_dir)
                    assert ("final", "scored") == (run.stop_reason, judgement.verdict), (path.name, agent)
