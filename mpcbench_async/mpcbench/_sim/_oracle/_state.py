"""The oracle agent's view of the conversation, and the readers and replies every task shares.

``State`` holds what the conversation has shown so far — the system prompt's reference now, the
user's request, and every tool call's arguments and result, by tool — which is all a real model
sees. Beside it: building tool calls and the final answer, splitting words, and the vocabularies
(stop words, done statuses) the planning, e-mail and report modules read with.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import orjson

from ....sim import Reply

__all__ = ["DONE", "EMAIL", "STOP", "WORD", "State", "final", "tool_call", "words"]

_NOW = re.compile(r"Current date and time: \w+ (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}) \(([^,]+), UTC([+-]\d{2}:\d{2})\)")
WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
STOP = frozenset("the a an and or to of for in on at with about is are be we you i it this that our your re fwd "
                 "hi hello thanks please when will can could would what which how draft reply email write "
                 "customer asking question find few possible time slots mentioned".split())
DONE = ("done", "closed", "resolved", "released")


class State:
    """What the conversation has shown so far: the request and every tool result, by tool."""

    def __init__(self, request: dict[str, Any]) -> None:
        messages = request["messages"]
        self.system = next((str(m.get("content") or "") for m in messages if m.get("role") == "system"), "")
        self.prompt = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
        self.turn = sum(1 for m in messages if m.get("role") == "assistant")
        calls: dict[str, tuple[str, Any]] = {}
        for m in messages:
            for call in m.get("tool_calls") or ():
                calls[call["id"]] = (call["function"]["name"], _loads(call["function"]["arguments"]))
        self.results: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        for m in messages:
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                name, arguments = calls[m["tool_call_id"]]
                args = arguments if isinstance(arguments, dict) else {}
                self.results.setdefault(name, []).append((args, _loads(m.get("content") or "null")))
        match = _NOW.search(self.system)
        self.today = date.fromisoformat(match.group(1)) if match else date.today()
        self.tz_name = match.group(3) if match else ""

    def ran(self, tool: str) -> bool:
        return tool in self.results

    def all(self, tool: str) -> list[dict[str, Any]]:
        return [result for _, result in self.results.get(tool, []) if isinstance(result, dict)]

    def items(self, tool: str, field: str) -> list[dict[str, Any]]:
        """Every dict in the ``field`` list of every result of ``tool``."""
        return [item for result in self.all(tool) for item in result.get(field) or () if isinstance(item, dict)]


def _loads(text: Any) -> Any:
    try:
        return orjson.loads(text) if isinstance(text, str | bytes) else text
    except orjson.JSONDecodeError:
        return None


def tool_call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": orjson.dumps({k: v for k, v in arguments.items() if v is not None}).decode()}


def final(answer: str, rationale: str) -> Reply:
    return Reply(content=orjson.dumps({"final_answer": answer, "rationale": rationale}).decode())


def words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text)]
