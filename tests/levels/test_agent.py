"""The levels agent loop: a tool call's arguments are capped before the tool runs and in the trace."""

from __future__ import annotations

import json
from pathlib import Path

from mpcbench_async._prompts import load_prompts
from mpcbench_async.levels._agent import ReplaySource, run_levels_agent
from tests.levels.test_tools import instance, world

PROMPTS = load_prompts(Path(__file__).resolve().parents[2] / "prompt_config.json")


def tool_turn(call_id: str, name: str, arguments: str) -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}


async def test_oversized_arguments_get_an_error_and_a_bounded_trace():
    """1 MB of arguments is not run: the tool message says why (the loop goes on to the answer), and the trace
    keeps a marked head of the arguments, not the megabyte."""
    big = json.dumps({"min_capacity": 4, "note": "x" * 1_000_000})
    final = '```json\n{"candidates": [{"start": "2026-01-19T09:00:00+09:00", "end": "2026-01-19T10:00:00+09:00"}]}\n```'
    trace = [tool_turn("c1", "list_rooms", big), tool_turn("c2", "list_rooms", '{"min_capacity": 4}'),
             {"role": "assistant", "content": final}]
    run = await run_levels_agent(ReplaySource(trace), world(), instance(), PROMPTS)
    tool_messages = [json.loads(m["content"]) for m in run.trace if m["role"] == "tool"]
    assert ("final", 3) == (run.stop_reason, run.turns)
    assert {"error": f"the arguments of list_rooms are {len(big):,} bytes; at most 16,384 are accepted, so the "
                     "call was not run. Call it again with shorter arguments (a shorter query, fewer names)"
            } == tool_messages[0]
    assert "error" not in tool_messages[1]
    recorded = [m["tool_calls"][0]["function"]["arguments"] for m in run.trace if m.get("tool_calls")]
    assert [big[:200] + f"… [truncated: {len(big):,} bytes of arguments, over the 16,384-byte limit; the call was "
            "not run]", '{"min_capacity": 4}'] == recorded
    assert len(json.dumps(run.trace)) < 8_000
