"""Replay verification of the original's recorded GPT-4o runs (issue 23, points 2, 4 and 5).

Every recorded assistant turn is replayed through this project's agent loop with its tools on today's data; the
tool results, the parsed ``pred`` and the ``metrics`` must come out as recorded on every line whose world still
matches the data, and the lines recorded against an older world must be named as such.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpcbench_async._prompts import load_prompts
from mpcbench_async.levels import ToolOptions, instance_index, load_all, render_verdicts, verify_file
from tests.conftest import REPO

# file → (lines, lines whose world matches today's data, tool calls on those lines)
EXPECTED = {
    "eval_L1_exp1_gpt-4o_20260202_143441.jsonl": (5, 5, 20),
    "eval_L1_gpt-4o_20260118_155321.jsonl": (4, 4, 18),
    "eval_L2_exp1_gpt-4o_20260202_143539.jsonl": (5, 0, 0),
    "eval_L2_exp1_gpt-4o_20260202_154055.jsonl": (5, 5, 20),
    "eval_L2_gpt-4o_20260118_155356.jsonl": (5, 5, 30),
    "eval_L3_exp1_gpt-4o_20260202_144409.jsonl": (5, 0, 0),
    "eval_L3_exp1_gpt-4o_20260202_150024.jsonl": (5, 0, 0),
    "eval_L3_exp1_gpt-4o_20260202_150645.jsonl": (5, 0, 0),
    "eval_L3_exp1_gpt-4o_20260202_154154.jsonl": (5, 0, 0),
    "eval_L3_exp1_gpt-4o_20260202_155426.jsonl": (5, 5, 94),
    "eval_L3_gpt-4o_20260118_155451.jsonl": (5, 5, 73),
}


@pytest.fixture(scope="module")
def index(upstream: Path):
    return instance_index(load_all(upstream))


@pytest.fixture(scope="module")
def prompts():
    return load_prompts(REPO / "prompt_config.json")


async def test_every_world_matching_line_reproduces_its_tools_pred_and_metrics(results, index, prompts):
    """All 11 files: every line whose world matches reproduces every tool result, its pred and its metrics; the
    counts of matching lines and calls are exactly these."""
    assert [p.name for p in results] == sorted(EXPECTED)
    for path in results:
        verdict = await verify_file(path, index, prompts)
        lines, matching, calls = EXPECTED[path.name]
        assert (len(verdict.lines), len(verdict.matching), sum(v.tool_calls for v in verdict.matching)) == (
            lines, matching, calls), path.name
        assert all(v.same_tools == v.tool_calls and v.same_pred and v.same_metrics for v in verdict.matching)
        assert verdict.ok, render_verdicts([verdict])


async def test_older_world_lines_are_named_with_the_reason_and_still_replay_their_pred(results, index, prompts):
    """The February 14:35 level-2 run predates a regeneration of its instances (gold and prompt changed); the
    14:44 level-3 run quotes a task thread text since rewritten: each line says so, and its pred and its metrics
    against its own recorded gold still come out the same."""
    by_name = {p.name: p for p in results}
    l2 = await verify_file(by_name["eval_L2_exp1_gpt-4o_20260202_143539.jsonl"], index, prompts)
    assert [v.world for v in l2.lines] == ["older"] * 5
    assert "recorded gold differs from today's oracle" in (l2.lines[1].why_older or "")
    l3 = await verify_file(by_name["eval_L3_exp1_gpt-4o_20260202_144409.jsonl"], index, prompts)
    assert [v.older_calls for v in l3.lines] == [1, 1, 1, 1, 1]
    assert "1 tool result(s) quote data today's world lacks" in (l3.lines[0].why_older or "")
    assert all(v.same_pred and v.same_metrics for v in [*l2.lines, *l3.lines])
    table = render_verdicts([l2, l3])
    assert "older world  eval_L2_exp1_gpt-4o_20260202_143539.jsonl:2 instance_level2_exp1_001" in table
    assert "MISMATCH" not in table


async def test_runs_recorded_with_the_latest_tool_code_verify_too(results, index, prompts):
    """With ``head_policy_doc`` (the latest code's ``{"doc_id", "title", "text"}``) the published runs'
    ``{"doc_id", "text", "tags": {}}`` still verify: both shapes were the original's, at two versions."""
    path = next(p for p in results if p.name == "eval_L2_gpt-4o_20260118_155356.jsonl")
    verdict = await verify_file(path, index, prompts, tool_options=ToolOptions(head_policy_doc=True))
    assert verdict.ok and sum(v.same_tools for v in verdict.matching) == 30


async def test_a_tool_result_of_another_shape_is_a_named_mismatch(results, index, prompts, tmp_path):
    """A recorded policy document without its ``tags`` key is neither version's shape: that call is named as a
    mismatch (not blamed on an older world) and the file fails."""
    path = next(p for p in results if p.name == "eval_L2_gpt-4o_20260118_155356.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for message in lines[2]["trace"]:
        if message["role"] == "tool" and '"primary_policy_doc"' in message["content"] and "text" in message["content"]:
            content = json.loads(message["content"])
            del content["tags"]
            message["content"] = json.dumps(content, ensure_ascii=False)
    tampered = tmp_path / path.name
    tampered.write_text("".join(json.dumps(line) + "\n" for line in lines))
    verdict = await verify_file(tampered, index, prompts)
    assert not verdict.ok
    assert [v.world for v in verdict.lines] == ["matches"] * 5
    assert [v.tool_calls - v.same_tools for v in verdict.lines] == [0, 0, 1, 0, 0]
    assert "MISMATCH     eval_L2_gpt-4o_20260118_155356.jsonl:3 instance_level2_test_C: tool call" in render_verdicts(
        [verdict])


async def test_a_changed_pred_is_a_named_mismatch(results, index, prompts, tmp_path):
    """A recorded pred edited by hand no longer matches the replay: the line is named with both preds."""
    path = next(p for p in results if p.name == "eval_L1_exp1_gpt-4o_20260202_143441.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[1]["pred"] = lines[1]["pred"][:1]
    tampered = tmp_path / path.name
    tampered.write_text("".join(json.dumps(line) + "\n" for line in lines))
    verdict = await verify_file(tampered, index, prompts)
    assert [v.same_pred for v in verdict.lines] == [True, False, True, True, True]
    assert "MISMATCH     eval_L1_exp1_gpt-4o_20260202_143441.jsonl:2 instance_level1_exp1_001: pred differs" in (
        render_verdicts([verdict]))


async def test_an_oracle_that_disagrees_with_todays_label_is_a_mismatch_not_an_older_world(results, index, prompts,
                                                                                         monkeypatch):
    """Today's gold is the data's own label: an oracle of this project that gave another one (here one that drops a
    candidate) leaves the lines world-matching and names each as a mismatch, so the file fails."""
    from mpcbench_async.levels import _verify

    real = _verify.solve

    def dropping(world, instance):
        result = real(world, instance)
        result.feasible_candidates = result.feasible_candidates[1:]
        return result

    monkeypatch.setattr(_verify, "solve", dropping)
    path = next(p for p in results if p.name == "eval_L1_gpt-4o_20260118_155321.jsonl")
    verdict = await verify_file(path, index, prompts)
    assert [(v.world, v.reproduced) for v in verdict.lines] == [("matches", False)] * 4
    assert not verdict.ok
    assert "MISMATCH     eval_L1_gpt-4o_20260118_155321.jsonl:1 instance_level1_test_A: this project's oracle " \
           "differs from today's label" in render_verdicts([verdict])


async def test_tool_results_pair_by_position_so_a_repeated_call_id_hides_nothing(results, index, prompts, tmp_path):
    """Two calls sharing one id: the first one's tampered result is still compared (and named), not shadowed."""
    path = next(p for p in results if p.name == "eval_L1_gpt-4o_20260118_155321.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    trace = lines[0]["trace"]
    calls = [c for m in trace if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    tools = [m for m in trace if m["role"] == "tool"]
    for call, message in zip(calls, tools, strict=True):
        call["id"] = message["tool_call_id"] = "call_0"
    first = json.loads(tools[0]["content"])
    other = "2026-01-19T10:00:00"  # a value today's data holds: not an older world's, so a plain mismatch
    first[next(iter(first))] = other
    tools[0]["content"] = json.dumps(first)
    tampered = tmp_path / path.name
    tampered.write_text("".join(json.dumps(line) + "\n" for line in lines))
    verdict = await verify_file(tampered, index, prompts)
    line = verdict.lines[0]
    assert (line.tool_calls, line.same_tools, line.reproduced) == (len(tools), len(tools) - 1, False)
