"""build_plan refuses every bad input of a sweep in one error, before the runner starts and so before any call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mpcbench_async import InputError, build_plan, load_model_config, load_prompts
from mpcbench_async.sweep._job import check_output_dir
from mpcbench_async.testing import write_workspace

BAD_DATE = {"participants": ["ana@x.io"], "duration_minutes": 30, "window_start": "2025-13-01",
            "window_end": "2026-04-03"}


def bad_task(root: Path, task_id: str) -> Path:
    """A planning task of the workspace whose window_start is the issue's month 13."""
    path = root / "tasks" / "planning" / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"task_id": task_id, "scenario_id": "sc_a", "user_prompt": "Find slots.",
                                "answer_requirements": ["Proposes slots."], "facts": {"planning": BAD_DATE}}))
    return path


def plan(root: Path, **kwargs):
    return build_plan(config=load_model_config(root / "model_config.json"),
                      prompts=kwargs.pop("prompts", None) or load_prompts(root / "prompt_config.json"),
                      tasks_dir=root / "tasks", data_dir=root / "data", scenarios_dir=root / "scenarios", **kwargs)


def refusal(root: Path, **kwargs) -> str:
    with pytest.raises(InputError) as caught:
        plan(root, **kwargs)
    return str(caught.value)


def problem(path: Path) -> str:
    return f'{path}: $.facts.planning.window_start: "2025-13-01" is not a date (YYYY-MM-DD)'


class TestBuildPlan:
    def test_one_bad_task_is_its_own_message(self, tmp_path):
        """With one bad task among good ones the error is that task's message alone."""
        root = write_workspace(tmp_path, tasks=2)
        path = bad_task(root, "poison")
        assert problem(path) == refusal(root)

    def test_every_bad_task_is_listed_up_to_ten_then_counted(self, tmp_path):
        """Twelve bad tasks give one error listing ten and counting the rest, not only the first."""
        root = write_workspace(tmp_path, tasks=2)
        paths = sorted(bad_task(root, f"poison{i:02d}") for i in range(12))
        assert ("12 problems in the sweep's inputs; nothing was run:\n"
                + "\n".join(f"  {problem(p)}" for p in paths[:10]) + "\n  … and 2 more") == refusal(root)

    def test_task_data_and_model_problems_come_together(self, tmp_path):
        """A bad sim model, a bad task and a task whose scenario has no data are reported in one error."""
        root = write_workspace(tmp_path, tasks=1, agent_models=("sim/echo?p429=often",))
        path = bad_task(root, "poison")
        orphan = root / "tasks" / "email_reply" / "orphan.json"
        orphan.parent.mkdir(parents=True)
        orphan.write_text(json.dumps({"task_id": "orphan", "scenario_id": "sc_missing", "user_prompt": "Reply.",
                                      "answer_requirements": ["Replies."]}))
        message = refusal(root)
        assert message.startswith("3 problems in the sweep's inputs; nothing was run:\n  model 'sim/echo?p429=often': "
                                  "bad sim options after '?' (Expected `float`, got `str` - at `$.p429`)\n")
        assert f"\n  {problem(path)}\n" in message
        assert message.endswith(f"  {root / 'data' / 'sc_missing_world_state.json'}: missing (generate it with "
                                "`mpcbench-async generate sources`)")

    def test_an_unknown_sim_policy_is_refused(self, tmp_path):
        """A sim model whose policy does not exist is refused naming the available ones."""
        root = write_workspace(tmp_path, tasks=1, agent_models=("sim/oracle",))
        assert refusal(root).startswith("model 'sim/oracle': no sim policy 'sim/oracle'; available: sim/echo, ")

    def test_a_missing_judge_prompt_is_refused_naming_the_file(self, tmp_path):
        """A prompt file without the judge template is refused before any unit, naming the file."""
        root = write_workspace(tmp_path, tasks=1)
        prompts = json.loads((root / "prompt_config.json").read_text())
        del prompts["judge"]
        (root / "prompt_config.json").write_text(json.dumps(prompts))
        assert (f"{root / 'prompt_config.json'}: $.judge is missing (this run needs it; copy it from the shipped "
                "prompt_config.json)") == refusal(root)

    def test_max_turns_below_one_is_refused(self, tmp_path):
        """--max-turns 0 would run no model turn at all; it is a user error."""
        assert "max_turns must be at least 1, got 0" == refusal(write_workspace(tmp_path, tasks=1), max_turns=0)


class TestCheckOutputDir:
    def test_a_regular_file_is_refused(self, tmp_path):
        """--out naming a regular file is refused before the sweep starts."""
        (tmp_path / "out").write_text("x")
        with pytest.raises(InputError) as caught:
            check_output_dir(tmp_path / "out")
        assert f"out: {tmp_path / 'out'} is a file, not a directory" == str(caught.value)

    def test_a_directory_below_a_file_is_refused(self, tmp_path):
        """--out below a regular file cannot be created, and says which file is in the way."""
        (tmp_path / "f").write_text("x")
        with pytest.raises(InputError) as caught:
            check_output_dir(tmp_path / "f" / "out")
        assert f"out: {tmp_path / 'f' / 'out'}: cannot create the directory there, {tmp_path / 'f'} is a file" == (
            str(caught.value))

    def test_an_absent_directory_is_fine(self, tmp_path):
        """A directory that does not exist yet is accepted (the sweep creates it); nothing is created now."""
        assert tmp_path / "new" / "out" == check_output_dir(tmp_path / "new" / "out")
        assert not (tmp_path / "new").exists()


def test_sweep_with_a_bad_dated_task_exits_2_before_any_call(tmp_path):
    """`sweep` with one good and one bad-dated task: one error line naming file and field, exit 2, nothing run."""
    root = write_workspace(tmp_path, tasks=1)
    path = bad_task(root, "poison")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "mpcbench_async", "sweep", "--config", str(root / "model_config.json"),
         "--prompts", str(root / "prompt_config.json"), "--tasks-dir", str(root / "tasks"), "--data-dir",
         str(root / "data"), "--scenarios-dir", str(root / "scenarios"), "--out", str(out)],
        capture_output=True, text=True, timeout=120)
    assert (2, f"error: {problem(path)}\n", "") == (proc.returncode, proc.stderr, proc.stdout)
    assert not out.exists()
