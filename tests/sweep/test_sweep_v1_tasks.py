"""Sweeps over the original MPCBench task files as they are, with the sim agents and judge."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from mpcbench_async._exceptions import InputError
from mpcbench_async.cli import main
from mpcbench_async.llm import load_model_config
from mpcbench_async.mpcbench import MPCBenchSuite, build_plan, load_prompts
from mpcbench_async.runner import Runner
from mpcbench_async.runtime import read_jsonl
from tests.conftest import REPO, reference_dir

# Which scenario each original task runs on: the five noise/depth tasks name theirs in
# data_dependencies.scenario_id; the three scenario_A tasks name none and take the default.
EXPECTED_SCENARIOS = {
    "companyA_planning_v1": "scenario_A",
    "companyA_email_reply_v1": "scenario_A",
    "companyA_weekly_report_v1": "scenario_A",
    "scenario_noise05_depth05_planning_task": "scenario_noise05_depth05",
    "scenario_noise0_depth0_planning_task": "scenario_noise0_depth0",
    "scenario_noise0_depth1_planning_task": "scenario_noise0_depth1",
    "scenario_noise1_depth0_planning_task": "scenario_noise1_depth0",
    "scenario_noise1_depth1_planning_task": "scenario_noise1_depth1",
}
AGENTS = ["sim/oracle-agent", "sim/lazy-agent"]


def v1_dirs() -> dict[str, Path]:
    """The original tasks, data and scenarios folders (skips when the reference is absent)."""
    return {name: reference_dir("mpcbench_v1", name) for name in ("tasks", "data", "scenarios")}


def write_config(tmp_path: Path) -> Path:
    """A model config with the embedded sim agents and judge."""
    path = tmp_path / "model_config.json"
    path.write_bytes(orjson.dumps({"agent_models": AGENTS, "judge_models": ["sim/judge"], "defaults": {}}))
    return path


def ok_records(path: Path) -> list[dict]:
    """Every record of a JSONL file, which must have no torn or bad line."""
    found, report = read_jsonl(path)
    assert (False, 0) == (report.torn_tail, len(report.bad_lines))
    return found


class TestLibrary:
    async def test_every_original_task_runs_and_is_judged_without_error(self, tmp_path):
        """build_plan + Runner over the original folders with --scenario-id scenario_A: 16 ok runs, 16 ok judgements."""
        dirs = v1_dirs()
        config = load_model_config(write_config(tmp_path))
        prompts = load_prompts(REPO / "prompt_config.json")
        plan = build_plan(config=config, prompts=prompts, tasks_dir=dirs["tasks"], data_dir=dirs["data"],
                          scenarios_dir=dirs["scenarios"], scenario_id="scenario_A")
        assert EXPECTED_SCENARIOS == {t.task_id: t.scenario_id for t in plan.tasks.values()}
        async with Runner(config, out_dir=tmp_path / "out") as runner:
            stats = await runner.run(MPCBenchSuite(plan, prompts))
        runs = ok_records(tmp_path / "out" / "runs.jsonl")
        judgements = ok_records(tmp_path / "out" / "judgements.jsonl")
        assert (16, 16, 0) == (len(runs), len(judgements), stats.errors)
        assert {"ok"} == {r["status"] for r in runs + judgements}
        assert {(task, model) for task in EXPECTED_SCENARIOS for model in AGENTS} == {
            (r["task_id"], r["model"]) for r in runs}
        assert EXPECTED_SCENARIOS == {r["task_id"]: r["scenario_id"] for r in runs}

    def test_a_task_naming_no_scenario_needs_the_default(self, tmp_path):
        """Without --scenario-id every task naming no scenario is listed in one error naming its file and fields."""
        dirs = v1_dirs()
        config = load_model_config(write_config(tmp_path))
        with pytest.raises(InputError) as caught:
            build_plan(config=config, prompts=load_prompts(REPO / "prompt_config.json"), tasks_dir=dirs["tasks"],
                       data_dir=dirs["data"], scenarios_dir=dirs["scenarios"])
        unnamed = [dirs["tasks"] / "document_generation" / "document_task.json",
                   dirs["tasks"] / "email_reply" / "email_reply_task.json",
                   dirs["tasks"] / "planning" / "planning_task.json"]
        assert ("3 problems in the sweep's inputs; nothing was run:\n" + "\n".join(
            f"  {path}: the task names no scenario (neither $.scenario_id nor $.data_dependencies.scenario_id is "
            "set); pass --scenario-id, the scenario for tasks that name none" for path in unnamed)) == str(caught.value)


class TestCommandLine:
    def test_sweep_command_runs_the_original_folders(self, tmp_path, capsys):
        """`mpcbench-async sweep --tasks-dir … --scenario-id scenario_A` exits 0 with 16 ok runs and judgements."""
        dirs = v1_dirs()
        out = tmp_path / "out"
        code = main(["sweep", "--config", str(write_config(tmp_path)), "--prompts", str(REPO / "prompt_config.json"),
                     "--tasks-dir", str(dirs["tasks"]), "--data-dir", str(dirs["data"]),
                     "--scenarios-dir", str(dirs["scenarios"]), "--scenario-id", "scenario_A", "--out", str(out),
                     "--quiet"])
        runs = ok_records(out / "runs.jsonl")
        judgements = ok_records(out / "judgements.jsonl")
        assert 0 == code
        assert (16, 16) == (len(runs), len(judgements))
        assert {"ok"} == {r["status"] for r in runs + judgements}
        assert f"written to {out}/" in capsys.readouterr().out
