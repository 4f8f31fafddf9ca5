"""The generic reply policies of the simulated provider (``sim/echo``, ``sim/scripted``) and ``Reply``.

A policy sees exactly what a real model sees — the request's messages, tools and
parameters — and returns a ``Reply``. It never reads the runner's files. The
registry (``_registry``) imports this module on its first lookup.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import orjson

from ._registry import register_policy

__all__ = ["Reply", "echo", "scripted"]


class Reply(msgspec.Struct, kw_only=True):
    """A policy's answer: text, or tool calls (``[{"name", "arguments"}]``), or both."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] = msgspec.field(default_factory=list)
    finish_reason: str | None = None


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


@register_policy("echo")
def echo(request: dict[str, Any]) -> Reply:
    """Echo the last user message (at most ``max_tokens`` × 4 characters)."""
    last = next((m for m in reversed(request["messages"]) if m.get("role") == "user"), None)
    text = _text(last) if last else ""
    limit = request.get("max_tokens") or request.get("max_completion_tokens") or 64
    return Reply(content=f"echo: {text}"[: max(1, int(limit) * 4)])


_SCRIPT_MARKER = re.compile(r"SIM_SCRIPT:\s*")


@register_policy("scripted")
def scripted(request: dict[str, Any]) -> Reply:
    """Replay a script embedded in the first system/user message after ``SIM_SCRIPT:``.

    The script is a JSON list of steps, ``{"content": ...}`` or
    ``{"tool_calls": [{"name": ..., "arguments": {...} | "raw string"}]}``; the
    step played is the number of assistant messages already in the conversation
    (the last step repeats). Tests use it to drive tool loops exactly.
    """
    messages = request["messages"]
    script: list[dict[str, Any]] | None = None
    for message in messages:
        text = _text(message)
        match = _SCRIPT_MARKER.search(text)
        if match:
            try:
                script, _ = json.JSONDecoder().raw_decode(text, match.end())
            except json.JSONDecodeError as exc:
                return Reply(content=f"scripted: SIM_SCRIPT is not a JSON list ({exc})")
            break
    if not script:
        return Reply(content="scripted: no SIM_SCRIPT in the conversation")
    step = script[min(sum(1 for m in messages if m.get("role") == "assistant"), len(script) - 1)]
    calls = [
        {
            "name": call["name"],
            "arguments": call["arguments"] if isinstance(call.get("arguments"), str)
            else orjson.dumps(call.get("arguments", {})).decode(),
        }
        for call in step.get("tool_calls", [])
    ]
    return Reply(content=step.get("content"), tool_calls=calls)
