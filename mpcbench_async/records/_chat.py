"""Chat-completion records: messages, tool calls, tool schemas, usage and results.

These are the shapes the runner persists and sends; they mirror the OpenAI chat
format so a message list can go to any OpenAI-compatible endpoint unchanged.
Unknown fields are rejected on decode (these are our own records; wire replies
from servers are decoded leniently in ``llm``).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = [
    "ChatResult",
    "FunctionCall",
    "FunctionSchema",
    "Message",
    "ToolCall",
    "ToolSchema",
    "Usage",
    "add_cost",
]

Role = Literal["system", "user", "assistant", "tool"]


class _Record(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, frozen=True):
    """Base for records: keyword-only, defaults omitted on the wire, strict decode, immutable."""


class FunctionCall(_Record, frozen=True):
    """The function part of a tool call: name and JSON-encoded arguments."""

    name: str
    arguments: str = "{}"


class ToolCall(_Record, frozen=True):
    """One tool call requested by the model."""

    id: str
    function: FunctionCall
    type: Literal["function"] = "function"


class Message(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, weakref=True):
    """One chat message (the one mutable record here). ``tool_call_id`` links a tool reply to its call.

    Weakly referenceable: ``LLMClient`` keeps a message's encoded bytes while it lives (``llm/_request.py``)."""

    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class FunctionSchema(_Record, frozen=True):
    """A tool's name, description and JSON-Schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = msgspec.field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None


class ToolSchema(_Record, frozen=True):
    """A tool offered to the model."""

    function: FunctionSchema
    type: Literal["function"] = "function"


class Usage(_Record, frozen=True):
    """Token usage of one call (or a sum of calls)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )


class ChatResult(_Record, frozen=True):
    """What one ``LLMClient.chat`` call returns.

    ``latency_s`` covers the successful attempt only; ``attempts`` counts every
    attempt including failed ones; ``cost_usd`` comes from the model's prices:
    ``None`` (``null``) when the model has no known price, never a made-up $0
    (a cache hit or a free ``sim/`` model does cost 0.0). A streamed reply also carries ``ttft_s``
    and ``tpot_s`` (see ``LLMCallRecord``).
    """

    model: str
    content: str | None = None
    tool_calls: list[ToolCall] = msgspec.field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = msgspec.field(default_factory=Usage)
    latency_s: float = 0.0
    ttft_s: float | None = None
    tpot_s: float | None = None
    attempts: int = 1
    cost_usd: float | None = 0.0


def add_cost(total: float | None, cost: float | None) -> float | None:
    """``total + cost``, or ``None`` once either is unknown: one unpriced call makes a run's or judgement's total
    unknown, so a reader shows ``unknown`` rather than a sum that silently counts that call as $0."""
    return None if total is None or cost is None else total + cost
