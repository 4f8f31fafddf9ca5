"""Trials that repeat themselves run each distinct tool call and each distinct answer's checks once (issue 31).

The sim's oracle gives the same calls and the same answer in every trial of a task, as models at temperature 0
often do. The built-in tools and the checks are pure functions of the scenario's data and their inputs, so the
second trial's calls are answered from what the first kept (``runtime.Memo``) and its records are the same.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from mpcbench_async.llm import load_model_config
from mpcbench_async.mpcbench import MPCBenchSuite, build_plan, load_prompts
from mpcbench_async.mpcbench.tools import ToolPool, _execution
from mpcbench_async.runner import Runner
from mpcbench_async.runtime import read_jsonl
from tests.conftest import REPO
from tests.sweep.test_tool_isolation import ORACLE, TASKS


async def test_a_second_trial_of_the_oracle_is_answered_from_what_the_first_kept(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(_execution, "_default_pool", ToolPool())
    config, prompts = load_model_config(REPO / "model_config.json"), load_prompts(REPO / "prompt_config.json")
    plan = build_plan(config=config, prompts=prompts, tasks_dir=REPO / "tasks", data_dir=REPO / "data",
                      scenarios_dir=REPO / "scenarios", task_glob=TASKS, agent_models=[ORACLE],
                      judge_models=["sim/judge"], trials=2)
    suite = MPCBenchSuite(plan, prompts)
    # One unit at a time: two trials of a task running at once may both miss and both compute (the first kept
    # stays), which is correct but would make the counts below depend on the interleaving.
    async with Runner(config, out_dir=tmp_path, concurrency=1) as runner:
        await runner.run(suite)

    runs, _ = read_jsonl(tmp_path / "runs.jsonl")
    by_trial = {trial: {r["task_id"]: (r["status"], r["checks"], r["run"]["final_answer"],
                                       [(c["tool_name"], c["arguments"], c["result"])
                                        for c in r["run"]["raw_tool_calls"]])
                        for r in runs if r["trial"] == trial} for trial in (0, 1)}
    assert (10, by_trial[0]) == (len(by_trial[0]), by_trial[1])  # same records, every one of the 10 tasks
    calls = [(r["scenario_id"], c["tool_name"], orjson.dumps(c["arguments"], option=orjson.OPT_SORT_KEYS))
             for r in runs for c in r["run"]["raw_tool_calls"]]
    memos = [data._derived["tool_outcomes"] for data in plan.data.values() if "tool_outcomes" in data._derived]
    assert len(calls) - len(set(calls)) == sum(memo.hits for memo in memos)  # each distinct call ran once
    assert 10 == suite.stages[0]._checked.hits  # each task's answer was read once
