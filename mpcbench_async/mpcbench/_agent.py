"""The agent tool loop: a model answers a task by calling tools over one scenario's data.

Each turn sends the conversation and the tool schemas; every tool call in a
reply is run (a reply may hold several — parallel tool calls) and its result
appended; a reply without tool calls is the final answer. The run stops with
``final``, ``max_turns`` or ``error`` (a model call that failed for good), and
the log keeps the original MPCBench fields plus model, stop reason, usage and
timings. Bad tool arguments, unknown tools and a non-JSON final answer never
end the run; they are visible in the log.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import msgspec
import orjson

from .._exceptions import LLMError
from ..llm import LLMClient
from ..records import Message, Usage
from ._data import ScenarioData
from .._replies import ReplyParseError, extract_json_object
from .._prompts import PromptConfig
from ._task import Task
from .tools import ToolBackend, tool_name

__all__ = ["RawToolCall", "RunLog", "RunTimings", "run_agent"]

StopReason = Literal["final", "max_turns", "error"]


class RawToolCall(msgspec.Struct, kw_only=True):
    tool_name: str
    arguments: Any
    result: Any


class RunTimings(msgspec.Struct, kw_only=True):
    total_s: float = 0.0
    model_s: float = 0.0
    tools_s: float = 0.0


class RunLog(msgspec.Struct, kw_only=True, omit_defaults=False):
    """One agent run (the seed's run-log fields first)."""

    task_id: str
    task_type: str
    user_prompt: str
    tool_trace_steps: list[str]
    raw_tool_calls: list[RawToolCall]
    final_answer: str
    rationale: str
    scenario_id: str
    model: str
    stop_reason: StopReason
    usage: Usage
    timings: RunTimings
    key: str = ""
    turns: int = 0
    cost_usd: float = 0.0
    final_answer_format: Literal["json", "text", "none"] = "json"
    error: str | None = None
    error_class: str | None = None
    retryable: bool = False


def format_now(data: ScenarioData) -> str:
    """The reference now as the agent is told it, e.g. ``Monday 2025-11-17 10:12 (Asia/Seoul, UTC+09:00)``."""
    now = data.reference_now
    offset = now.strftime("%z")
    return f"{now:%A %Y-%m-%d %H:%M} ({data.timezone_name}, UTC{offset[:3]}:{offset[3:]})"


def _arguments(raw: str) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw  # kept verbatim: the log shows exactly what the model sent


def _final(content: str | None) -> tuple[str, str, Literal["json", "text", "none"]]:
    """``(final_answer, rationale, format)`` from the last reply, tolerating prose and fences."""
    if not content or not content.strip():
        return "", "", "none"
    try:
        doc = extract_json_object(content)
    except ReplyParseError:
        return content.strip(), "", "text"
    if "final_answer" not in doc:
        return content.strip(), "", "text"
    answer = doc["final_answer"]
    answer = answer if isinstance(answer, str) else orjson.dumps(answer).decode()
    rationale = doc.get("rationale", "")
    rationale = rationale if isinstance(rationale, str) else orjson.dumps(rationale).decode()
    return answer, rationale, "json"


async def run_agent(
    client: LLMClient,
    model: str,
    task: Task,
    data: ScenarioData,
    prompts: PromptConfig,
    *,
    max_turns: int = 12,
    key: str = "",
) -> RunLog:
    """Run ``model`` on ``task`` with the nine tools over ``data``; never raises for model failures."""
    backend = ToolBackend(data)
    tools = backend.schemas()
    values = {"now": format_now(data), "timezone": data.timezone_name, "user_prompt": task.user_prompt,
              "workday_start": f"{data.workday_start:%H:%M}", "workday_end": f"{data.workday_end:%H:%M}"}
    messages = [Message(role="system", content=prompts.render("agent", "system", **values)),
                Message(role="user", content=prompts.render("agent", "user", **values))]
    steps: list[str] = []
    raw_calls: list[RawToolCall] = []
    usage, cost = Usage(), 0.0
    started = time.perf_counter()
    model_s = tools_s = 0.0
    stop: StopReason = "max_turns"
    final = ("", "", "none")
    error: str | None = None
    failure: LLMError | None = None
    turns = 0
    for turn in range(max_turns):
        turns = turn + 1
        t0 = time.perf_counter()
        try:
            result = await client.chat(model, messages, tools, key=f"{key}/turn{turn}")
        except LLMError as exc:
            stop, error, failure = "error", str(exc), exc
            model_s += time.perf_counter() - t0
            break
        model_s += time.perf_counter() - t0
        usage, cost = usage + result.usage, cost + result.cost_usd
        messages.append(Message(role="assistant", content=result.content, tool_calls=result.tool_calls or None))
        if not result.tool_calls:
            stop, final = "final", _final(result.content)
            break
        t1 = time.perf_counter()
        for call in result.tool_calls:
            name = tool_name(call.function.name)
            arguments = _arguments(call.function.arguments)
            outcome = backend.call(call.function.name, call.function.arguments)
            steps.append(f"Step {len(steps) + 1}: {name}({orjson.dumps(arguments).decode()})")
            raw_calls.append(RawToolCall(tool_name=name, arguments=arguments, result=outcome))
            messages.append(Message(role="tool", tool_call_id=call.id, content=orjson.dumps(outcome).decode()))
        tools_s += time.perf_counter() - t1
    else:
        last = next((m.content for m in reversed(messages) if m.role == "assistant" and m.content), None)
        final = _final(last)
    answer, rationale, fmt = final
    return RunLog(
        task_id=task.task_id, task_type=task.task_type or "", user_prompt=task.user_prompt,
        tool_trace_steps=steps, raw_tool_calls=raw_calls, final_answer=answer, rationale=rationale,
        scenario_id=task.scenario_id, model=model, stop_reason=stop, usage=usage,
        timings=RunTimings(total_s=time.perf_counter() - started, model_s=model_s, tools_s=tools_s),
        key=key, turns=turns, cost_usd=cost, final_answer_format=fmt, error=error,
        error_class=type(failure).__name__ if failure else None, retryable=bool(failure and failure.retryable),
    )
