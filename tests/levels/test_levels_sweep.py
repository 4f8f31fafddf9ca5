"""``sweep --suite levels`` as a library call: records, summary, resume, invalid data and odd models.

Each test drives ``run_sweep`` against the seeded ``sim`` fixture (a workspace whose sim models point at it), so
the requests a sweep makes are counted at the server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mpcbench_async import levels
from mpcbench_async._exceptions import InputError
from mpcbench_async.levels._agent import MAX_TURNS
from mpcbench_async.runner import Outcome
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import SweepOptions, run_sweep
from mpcbench_async.testing import write_workspace
from tests.sweep_options import sweep_options

L1_TEST = ["instance_level1_test_A", "instance_level1_test_B", "instance_level1_test_C", "instance_level1_test_D"]


def options(root: Path, out: Path, data: Path, **changes: Any) -> SweepOptions:
    """A levels-only sweep of ``data`` level 1 into ``out`` with the workspace ``root``'s config and prompts."""
    changes.setdefault("models", ["sim/oracle-agent"])
    changes.setdefault("levels", [1])
    return sweep_options(config=root / "model_config.json", prompts=root / "prompt_config.json", out=out,
                        suites=["levels"], levels_data=data, handle_signals=False, **changes)


def records(out: Path) -> list[dict[str, Any]]:
    lines, _ = read_jsonl(out / "levels.jsonl")
    return lines


def level1_copy(upstream: Path, dest: Path, *, world: dict[str, Any] | None = None,
                change: Any = None, split: str = "test") -> Path:
    """A data folder holding the reference level-1 world and instances of ``split`` (no oracle file), with
    ``world`` replacing the world and ``change(instances)`` applied to the instance lines."""
    source = upstream / "generate" / "output"
    dest.mkdir(parents=True)
    world = world if world is not None else json.loads((source / f"world_level1_{split}.json").read_bytes())
    (dest / f"world_level1_{split}.json").write_text(json.dumps(world), encoding="utf-8")
    lines = [json.loads(line) for line in (source / f"instances_level1_{split}.jsonl").read_text().splitlines()
             if line.strip()]
    if change is not None:
        change(lines)
    (dest / f"instances_level1_{split}.jsonl").write_text("".join(json.dumps(i) + "\n" for i in lines),
                                                          encoding="utf-8")
    return dest


@pytest.fixture
def root(sim: SimServer, tmp_path: Path) -> Path:
    """A workspace whose sim models are served by the ``sim`` fixture (so its counts are the sweep's requests)."""
    return write_workspace(tmp_path / "ws", base_url=sim.base_url)


class TestReferenceData:
    async def test_oracle_agent_on_level1_test_scores_every_instance_and_a_rerun_makes_no_request(
            self, upstream, root, sim, tmp_path):
        """Imported reference data, level 1 test, ``sim/oracle-agent``: one ok record per instance, each an exact
        match whose gold is the oracle file's candidates; levels_summary.md is written and appended to summary.md;
        an identical second run asks the sim nothing, writes no record and reports the same outcome."""
        data, out = tmp_path / "lv", tmp_path / "out"
        levels.import_data(upstream, data)
        result = await run_sweep(options(root, out, data, levels_splits=["test"]))
        first = records(out)
        requests = sim.stats.total_received
        again = await run_sweep(options(root, out, data, levels_splits=["test"]))

        assert (Outcome(units=4, ok=4), False) == (result.outcome, result.interrupted)
        assert (again.outcome, requests, first) == (result.outcome, sim.stats.total_received, records(out))
        assert 0 < requests
        assert L1_TEST == sorted(r["instance_id"] for r in first)
        oracle = {line["instance_id"]: line for line in map(json.loads, (data / "oracle_level1_test.jsonl")
                                                             .read_text().splitlines())}
        for record in first:
            assert ("ok", 1, "test", "sim/oracle-agent", 0, "final") == (
                record["status"], record["level"], record["split"], record["model"], record["trial"],
                record["stop_reason"])
            assert {"f1": 1.0, "precision": 1.0, "recall": 1.0, "exact_match": True} == record["metrics"]
            assert [[c["start"], c["end"]] for c in oracle[record["instance_id"]]["feasible_candidates"]] == (
                record["gold"])
            assert record["gold"] == record["pred"]
        table = (out / "levels_summary.md").read_text(encoding="utf-8")
        rows = [line for line in table.splitlines() if line.startswith("| 1 |")]
        assert 1 == len(rows)
        assert rows[0].startswith("| 1 | sim/oracle-agent | test | 4 | 4 | 1.00 [1.00, 1.00] | 100% | pass^1 1.00 |")
        assert rows[0].endswith("| — | — |")  # no published cell for a sim model
        assert table in (out / "summary.md").read_text(encoding="utf-8")
        assert (out / "levels_summary.json").is_file()

    async def test_trials_give_a_record_per_instance_and_trial_and_pass_k_in_the_summary(
            self, upstream, root, tmp_path):
        """trials=2: two ok records per instance (trials 0 and 1) with eight distinct keys; the summary row counts
        8 runs of 4 instances and shows pass^1 and pass^2."""
        data = level1_copy(upstream, tmp_path / "lv")
        out = tmp_path / "out"
        result = await run_sweep(options(root, out, data, trials=2))
        got = records(out)
        assert Outcome(units=8, ok=8) == result.outcome
        assert sorted((i, t) for i in L1_TEST for t in (0, 1)) == sorted((r["instance_id"], r["trial"]) for r in got)
        assert 8 == len({r["key"] for r in got})
        rows = [line for line in (out / "levels_summary.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("| 1 |")]
        assert 1 == len(rows)
        assert rows[0].startswith("| 1 | sim/oracle-agent | test | 4 | 8 | 1.00 [1.00, 1.00] | 100% | "
                                  "pass^1 1.00, pass^2 1.00 |")
        summary = json.loads((out / "levels_summary.json").read_bytes())
        assert {"pass^1": 1.0, "pass^2": 1.0} == summary["rows"][0]["pass_k"]


class TestBadData:
    async def test_an_invalid_instance_is_one_error_record_and_the_others_run(self, upstream, root, tmp_path):
        """An instance whose duration_min is "thirty" gets exactly one error record, InvalidInstance, whose message
        names the file, the line and $.slots.duration_min; the other three are ok; the sweep ends normally."""
        def corrupt(lines: list[dict[str, Any]]) -> None:
            lines[1]["slots"]["duration_min"] = "thirty"

        data = level1_copy(upstream, tmp_path / "lv", change=corrupt)
        out = tmp_path / "out"
        result = await run_sweep(options(root, out, data))
        got = records(out)
        assert Outcome(units=4, ok=3, failed=1) == result.outcome
        bad = [r for r in got if r["instance_id"] == "instance_level1_test_B"]
        assert 1 == len(bad)
        assert ("error", "InvalidInstance") == (bad[0]["status"], bad[0]["error_class"])
        assert (f"{data / 'instances_level1_test.jsonl'}:2: $.slots.duration_min: must be a positive number of "
                "minutes, got 'thirty'") == bad[0]["error_message"]
        others = sorted((r["instance_id"], r["status"]) for r in got if r["instance_id"] != "instance_level1_test_B")
        assert [(i, "ok") for i in L1_TEST if i != "instance_level1_test_B"] == others

    async def test_the_sweep_summary_names_a_levels_error(self, upstream, root, tmp_path):
        """A levels sweep that ends with an error record (here InvalidInstance) says so in its summary: the error
        class appears in summary.md / summary.json, which do not claim every record is ok."""
        def corrupt(lines: list[dict[str, Any]]) -> None:
            lines[1]["slots"]["duration_min"] = "thirty"

        out = tmp_path / "out"
        result = await run_sweep(options(root, out, level1_copy(upstream, tmp_path / "lv", change=corrupt)))
        assert 1 == result.outcome.failed
        summary_md = (out / "summary.md").read_text(encoding="utf-8")
        assert "None: every counted record is ok." not in summary_md
        assert "InvalidInstance" in summary_md
        [group] = json.loads((out / "summary.json").read_bytes())["errors"]
        assert (group["error_class"], group["count"], group["files"]) == ("InvalidInstance", 1, {"levels.jsonl": 1})
        assert "$.slots.duration_min" in group["example"]
        assert group["hint"].startswith("a levels instance does not fit the schema")

    async def test_a_broken_world_is_refused_before_anything_is_written(self, upstream, root, tmp_path):
        """A world whose timezone is "Mars/Base" is an InputError naming the world file and $.timezone; the output
        directory is not even created, so no levels.jsonl."""
        world = json.loads((upstream / "generate" / "output" / "world_level1_test.json").read_bytes())
        world["timezone"] = "Mars/Base"
        data = level1_copy(upstream, tmp_path / "lv", world=world)
        out = tmp_path / "out"
        with pytest.raises(InputError) as caught:
            await run_sweep(options(root, out, data))
        assert (f"{data / 'world_level1_test.json'}: $.timezone: 'Mars/Base' is not an IANA time zone"
                == str(caught.value))
        assert not (out / "levels.jsonl").exists()
        assert not out.exists()

    async def test_no_data_says_to_import_it(self, root, tmp_path):
        """An empty data folder, or one that does not exist, is an InputError ending with how to import the data."""
        (tmp_path / "empty").mkdir()
        for data in (tmp_path / "empty", tmp_path / "absent"):
            with pytest.raises(InputError) as caught:
                await run_sweep(options(root, tmp_path / "out", data))
            assert str(caught.value).startswith(f"{data}: ")
            assert str(caught.value).endswith("; import the data first: mpcbench-async levels import PATH/TO/MPCBench")
        assert not (tmp_path / "out").exists()


class TestOddModels:
    async def test_a_model_that_never_answers_in_json_scores_zero_per_instance(self, upstream, root, sim, tmp_path):
        """``sim/echo`` (its final message holds no candidates): each instance is an ok record with pred [] after
        15 turns (stop_reason max_turns) and F1 0.0 — recorded per instance, not a crash; 15 requests each."""
        data = level1_copy(upstream, tmp_path / "lv")
        out = tmp_path / "out"
        result = await run_sweep(options(root, out, data, models=["sim/echo"]))
        got = records(out)
        assert Outcome(units=4, ok=4) == result.outcome
        assert 4 * MAX_TURNS == sim.stats.total_received
        assert [(i, "ok", [], "max_turns", 15, 0.0, False) for i in L1_TEST] == sorted(
            (r["instance_id"], r["status"], r["pred"], r["stop_reason"], r["turns"], r["metrics"]["f1"],
             r["metrics"]["exact_match"]) for r in got)
        assert all(len(r["gold"]) > 0 for r in got)

    async def test_an_unknown_tool_gets_an_error_tool_message_and_the_loop_goes_on(self, upstream, root, tmp_path):
        """``sim/scripted`` with a script in the task text: turn 1 calls a tool that does not exist and gets
        '{"error": "Unknown tool: frobnicate"}' as its tool message; turn 2's answer is the gold, so the record is
        ok, final after 2 turns, an exact match."""
        oracle = json.loads((upstream / "generate" / "output" / "oracle_level1_test.jsonl").read_text()
                            .splitlines()[0])
        final = "```json\n" + json.dumps({"candidates": oracle["feasible_candidates"]}) + "\n```"
        script = [{"tool_calls": [{"name": "frobnicate", "arguments": {"x": 1}}]}, {"content": final}]

        def scripted(lines: list[dict[str, Any]]) -> None:
            del lines[1:]
            lines[0]["task_text"] += " SIM_SCRIPT: " + json.dumps(script)

        data = level1_copy(upstream, tmp_path / "lv", change=scripted)
        out = tmp_path / "out"
        result = await run_sweep(options(root, out, data, models=["sim/scripted"]))
        [record] = records(out)
        assert Outcome(units=1, ok=1) == result.outcome
        assert ("instance_level1_test_A", "ok", "final", 2, True) == (
            record["instance_id"], record["status"], record["stop_reason"], record["turns"],
            record["metrics"]["exact_match"])
        roles = [m["role"] for m in record["trace"]]
        assert ["user", "assistant", "tool", "assistant"] == roles
        call = record["trace"][1]["tool_calls"][0]
        assert ("frobnicate", '{"x":1}') == (call["function"]["name"], call["function"]["arguments"])
        assert {"role": "tool", "tool_call_id": call["id"], "content": '{"error": "Unknown tool: frobnicate"}'} == (
            record["trace"][2])
