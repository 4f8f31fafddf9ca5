"""The three-level MPCBench agent loop, as the original runs it, over any source of model replies.

Each turn sends the system prompt, the conversation and the eleven tools. A reply
with tool calls gets one tool message per call (in order) and the loop goes on; a
reply without tool calls is read as the final answer (``parse_answer``): candidates
end the run, while an answer with none, or unreadable JSON, or an empty reply, makes
the loop ask again (the reply stays in the conversation). After ``max_turns``
(the original's 15) the prediction is ``[]``.

The replies come from a ``ReplySource``: a model through ``LLMClient.chat`` (a
sweep), or a recorded trace's assistant turns (``levels verify``), so replay
exercises this very loop. The tools are dictionary look-ups over one small world
(microseconds each), so they run inline rather than in the MPCBench tool pool
(``mpcbench.tools._execution``): each is one pass over one table of the world,
linear in the world and the arguments, so no argument can make a call run long
or hold anything another unit needs — there is nothing to share out or stop.

A call whose arguments are over ``TOOL_ARGUMENTS_MAX_BYTES`` (16 KiB; the original
had no cap) is not run: its tool message is an error saying so, and the trace keeps
a bounded, marked head of those arguments instead of all of them.

Where the original's loop swallowed a failed model call and scored ``[]``, here it
ends the run with ``stop_reason="error"`` and the error:
the runner records it as an infrastructure failure that a resume runs again,
instead of a silent zero in the published mean.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

import msgspec

from .._exceptions import LLMError
from .._prompts import PromptConfig
from .._redact import mask_secrets
from .._replies import arguments_error, arguments_size, truncated_arguments
from ..records import ChatResult, FunctionSchema, Message, ToolSchema, Usage, add_cost
from ._answer import AnswerError, parse_answer
from ._tools import LevelTools, ToolOptions, tool_schemas

__all__ = ["MAX_TURNS", "LevelsRun", "ReplaySource", "ReplySource", "agent_prompts", "run_levels_agent"]

MAX_TURNS = 15
StopReason = Literal["final", "max_turns", "error", "replay_end"]
ReplySource = Callable[[Sequence[Message], Sequence[ToolSchema]], Awaitable[ChatResult]]


class LevelsRun(msgspec.Struct, kw_only=True):
    """One agent run: the original's ``trace`` (user, assistant and tool messages), ``pred``, and how it ended."""

    trace: list[dict[str, Any]]
    pred: list[list[str]]
    stop_reason: StopReason
    turns: int
    usage: Usage = msgspec.field(default_factory=Usage)
    cost_usd: float | None = 0.0
    model_s: float = 0.0
    error: str | None = None
    error_class: str | None = None
    retryable: bool = False


class ReplayEnded(Exception):
    """The recorded trace has no further assistant turn (the original's run stopped there)."""


def agent_prompts(prompts: PromptConfig, instance: dict[str, Any]) -> tuple[str, str]:
    """The system and user prompts for ``instance``, as the original builds them (no world id, no oracle tags)."""
    refs_in = instance.get("sources_ref") or {}
    refs = [f"policy_doc_id: {refs_in['policy_doc_id']}"] if refs_in.get("policy_doc_id") else []
    if refs_in.get("comm_thread_ids"):
        refs.append(f"comm_thread_ids: {refs_in['comm_thread_ids']}")
    participants = (instance.get("slots") or {}).get("participants") or []
    user = prompts.render("levels_agent", "user", task_text=instance.get("task_text", ""),
                          available_refs="\n".join(refs) or "Use list_* tools to discover available resources.",
                          participants=", ".join(participants) or "None")
    return prompts.render("levels_agent", "system"), user


@functools.cache
def _schemas() -> tuple[ToolSchema, ...]:
    """The eleven tools as request records, built once (they are frozen)."""
    return tuple(ToolSchema(function=FunctionSchema(name=f["name"], description=f["description"],
                                                    parameters=f["parameters"]))
                 for f in (s["function"] for s in tool_schemas()))


def _recorded(arguments: str) -> str:
    """The arguments as the trace keeps them: whole, or a marked head when over the cap."""
    size = arguments_size(arguments)
    return arguments if size is None else truncated_arguments(arguments, size)


def _assistant(result: ChatResult) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": result.content or None}
    if result.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": c.type, "function": {
            "name": c.function.name, "arguments": _recorded(c.function.arguments)}} for c in result.tool_calls]
    return message


def _run_tool(tools: LevelTools, name: str, arguments: str) -> str:
    """The tool message content for one call; a call with oversized arguments is refused, not run."""
    if (size := arguments_size(arguments)) is not None:
        return json.dumps({"error": arguments_error(name, size)}, ensure_ascii=False)
    return tools.call(name, arguments)


async def run_levels_agent(reply: ReplySource, world: dict[str, Any], instance: dict[str, Any], prompts: PromptConfig,
                           *, max_turns: int = MAX_TURNS, tool_options: ToolOptions | None = None) -> LevelsRun:
    """Run the loop of the module docstring for ``instance`` of ``world`` with replies from ``reply``."""
    tools = LevelTools(world, instance, tool_options)
    system, user = agent_prompts(prompts, instance)
    messages = [Message(role="system", content=system), Message(role="user", content=user)]
    trace: list[dict[str, Any]] = [{"role": "user", "content": user}]
    schemas = _schemas()
    usage, model_s = Usage(), 0.0
    cost_total: float | None = 0.0

    def ended(reason: StopReason, turns: int, pred: list[list[str]] | None = None, failure: LLMError | None = None
              ) -> LevelsRun:
        return LevelsRun(trace=trace, pred=pred or [], stop_reason=reason, turns=turns, usage=usage,
                         cost_usd=cost_total, model_s=model_s, error=str(failure) if failure else None,
                         error_class=type(failure).__name__ if failure else None,
                         retryable=failure.retryable if failure else False)

    for turn in range(max_turns):
        started = time.perf_counter()
        try:
            result = await reply(messages, schemas)
        except ReplayEnded:
            return ended("replay_end", turn)
        except LLMError as exc:
            return ended("error", turn, failure=exc)
        finally:
            model_s += time.perf_counter() - started
        usage, cost_total = usage + result.usage, add_cost(cost_total, result.cost_usd)
        messages.append(Message(role="assistant", content=result.content or None,
                                tool_calls=list(result.tool_calls) or None))
        trace.append(_assistant(result))
        if result.tool_calls:
            for call in result.tool_calls:
                content = mask_secrets(_run_tool(tools, call.function.name, call.function.arguments))
                messages.append(Message(role="tool", tool_call_id=call.id, content=content))
                trace.append({"role": "tool", "tool_call_id": call.id, "content": content})
            continue
        if result.content:
            try:
                pred = parse_answer(result.content)
            except AnswerError:
                continue
            if pred:
                return ended("final", turn + 1, [list(c) for c in pred])
    return ended("max_turns", max_turns)


class ReplaySource:
    """A recorded trace's assistant turns, served in order as the model's replies (``levels verify``)."""

    def __init__(self, trace: Sequence[dict[str, Any]], model: str = "replay") -> None:
        self.model = model
        self._turns = [m for m in trace if m.get("role") == "assistant"]
        self.served = 0

    async def __call__(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> ChatResult:
        if self.served >= len(self._turns):
            raise ReplayEnded
        turn = self._turns[self.served]
        self.served += 1
        return msgspec.convert({"model": self.model, "content": turn.get("content"),
                                "tool_calls": turn.get("tool_calls") or []}, ChatResult)
