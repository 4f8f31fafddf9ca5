"""``labels export``: people's labels of a shipped sweep as a calibration set the judge tests can read, whose rebuilt
judge inputs score exactly as the sweep's judge scored them."""

from __future__ import annotations

import copy
import shutil

import orjson

from mpcbench_async.cli import main
from mpcbench_async.labels import Label, append_labels
from mpcbench_async.mpcbench._sim._judge_policy import judge_scores
from mpcbench_async.sweep import kept_runs

ARS = "axis:answer_requirements_satisfaction"


def judge_input(found: dict, case: dict) -> dict:
    """As tests/mpcbench/test_sim_judge_policy.py builds one from its labelled set."""
    built = copy.deepcopy(found["bases"][case["base"]])
    built.update({k: v for k, v in case.items() if k not in ("id", "base", "band", "rule")})
    built["tool_trace_steps"] = [f"Step {s['step']}: {s['tool_name']}({orjson.dumps(s['arguments']).decode()})"
                                 for s in built["tool_trace"]]
    return built


def test_the_calibration_set_holds_each_labelled_run_in_the_judge_set_format(shipped, tmp_path, capsys):
    out = tmp_path / "sweep"
    shutil.copytree(shipped, out)
    rows = kept_runs(out)
    human = {r.key: 1 + i % 5 for i, r in enumerate(rows[:-1])}
    append_labels(out, [Label(run_key=k, item=ARS, value=v, annotator="Ada", at="t", reason=f"because {v}")
                        for k, v in human.items()])
    append_labels(out, [Label(run_key=rows[-1].key, item="outcome", value="wrong", annotator="Bo", at="t"),
                        Label(run_key="run-0000000000000000", item=ARS, value=2, annotator="Bo", at="t")])
    target = tmp_path / "calibration.json"
    assert 0 == main(["labels", "export", str(out), "--out", str(target)])
    captured = capsys.readouterr()
    assert f"labels export: {len(human)} case(s) in {target} (2 warning(s))" in captured.out
    assert ["warning: labels.jsonl: 1 label(s) of run run-0000000000000000, which this sweep does not keep (a run "
            "of another experiment, or of a directory the labels were copied from): kept in the file, not counted",
            f"warning: labels.jsonl: run {rows[-1].key} has no answer_requirements_satisfaction score from a person: "
            "not a calibration case"] == captured.err.splitlines()
    found = orjson.loads(target.read_bytes())
    assert {"about", "bases", "cases", "labels"} == set(found)
    bands = {1: "<=2", 2: "<=2", 3: "3", 4: ">=4", 5: ">=4"}
    assert sorted((k, k, bands[v]) for k, v in human.items()) == sorted(
        (c["id"], c["base"], c["band"]) for c in found["cases"])
    for case in found["cases"]:
        note = found["labels"][case["id"]]
        assert ("Ada", f"because {human[case['id']]}", {ARS: human[case["id"]]}) == (
            note["annotator"], note["reason"], note["labels"])
        # the rebuilt judge input is what the sweep's judge scored: sim/judge gives it the same scores again
        scores = judge_scores(judge_input(found, case))
        assert note["judges"]["sim/judge"] == {axis: scores[axis]["score"] for axis in scores}


def test_a_task_no_longer_there_is_reported_not_exported(shipped, tmp_path, capsys):
    out = tmp_path / "sweep"
    shutil.copytree(shipped, out)
    row = kept_runs(out)[0]
    append_labels(out, [Label(run_key=row.key, item=ARS, value=4, annotator="Ada", at="t")])
    empty = tmp_path / "tasks" / "planning"
    empty.mkdir(parents=True)
    assert 0 == main(["labels", "export", str(out), "--tasks-dir", str(tmp_path / "tasks"),
                      "--out", str(tmp_path / "c.json")])
    assert [f"warning: labels.jsonl: run {row.key} is left out: its task {row.task_id} is not in "
            f"{tmp_path / 'tasks'}"] == capsys.readouterr().err.splitlines()
    assert [] == orjson.loads((tmp_path / "c.json").read_bytes())["cases"]
