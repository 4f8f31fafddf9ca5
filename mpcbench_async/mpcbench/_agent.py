"""The agent tool loop: a model answers a task by calling tools over one scenario's data.

Each turn sends the conversation and the tool schemas; every tool call in a
reply is run (a reply may hold several — parallel tool calls) and its result
appended; a reply without tool calls is the final answer. The run stops with
``final``, ``max_turns`` or ``error`` (a model call that failed for good), and
the log keeps the original MPCBench fields plus model, stop reason, usage and
timings. Bad tool arguments, unknown tools and a non-JSON final answer never
end the run; they are visible in the log.

A built-in tool's call runs on the event loop first, for at most the pool's
short budget; past it, and at once for a tool not known to checkpoint, it runs
in a worker thread (``tools._execution``), in this run's own share of the tool
pool: the calls of one reply run concurrently
(up to the share, the rest wait behind them) and their results come back in the
order the model made them. A call past ``tool_timeout_s`` is stopped and
returns an error to the model, and the run goes on; a result over
``tool_result_max_bytes`` of JSON is cut to fit with a marker the model sees.
Each logged call says whether either happened. A call that gets no worker at
all within the pool's wait (every worker busy with other units' calls) ends
the run with ``stop_reason="error"`` and a retryable ``ToolWorkerTimeout``:
the infrastructure failed, not the model, so the runner records an
infrastructure error that a resume runs again.
A call whose arguments are over ``TOOL_ARGUMENTS_MAX_BYTES`` (16 KiB) is not run:
the model gets an error saying so and the log keeps a bounded, marked head of
the arguments (``arguments_truncated``, ``arguments_bytes``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Sequence
from typing import Any, Literal

import anyio
import msgspec
import orjson

from .._exceptions import LLMError, ToolWorkerTimeout
from .._prompts import PromptConfig
from .._redact import mask_secrets, mask_value
from .._replies import (
    ReplyParseError,
    arguments_error,
    arguments_size,
    extract_json_object,
    truncated_arguments,
)
from ..llm import LLMClient
from ..records import Message, ToolCall, Usage, add_cost
from ._data import ScenarioData
from ._task import Task
from .tools import ToolBackend, tool_name
from .tools._execution import (
    MIN_RESULT_MAX_BYTES,
    TOOL_RESULT_MAX_BYTES,
    ToolOutcome,
    ToolPool,
    ToolShare,
    default_tool_pool,
    kept_outcome,
    run_tool,
)

__all__ = ["RawToolCall", "RunLog", "RunTimings", "agent_messages", "run_agent"]

StopReason = Literal["final", "max_turns", "error"]


class RawToolCall(msgspec.Struct, kw_only=True):
    """One tool call as logged: what the model sent and the result it received (capped, when cut)."""

    tool_name: str
    arguments: Any
    result: Any
    result_bytes: int = 0
    """Size of the tool's full result as JSON, before any cap (0 when it timed out)."""
    truncated: bool = False
    """The result was cut to the size cap; ``result`` holds the cut version with its marker."""
    timed_out: bool = False
    """The call ran past its time limit and was stopped; ``result`` is the error the model received."""
    arguments_bytes: int = 0
    """Size of the arguments the model sent, when they were over the cap (0 otherwise)."""
    arguments_truncated: bool = False
    """The arguments were over the cap: the call was not run and ``arguments`` holds their marked head."""


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
    cost_usd: float | None = 0.0  # None: a call had no known price (records/_chat.add_cost)
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


def _masked(outcome: ToolOutcome) -> ToolOutcome:
    """``outcome`` with registered secrets masked in what the model receives and the run log keeps (a tool
    may quote its arguments or its data)."""
    content = mask_secrets(outcome.content)
    if content is outcome.content:
        return outcome
    return msgspec.structs.replace(outcome, content=content, result=mask_value(outcome.result))


async def _all_at_once(coroutines: list[Coroutine[Any, Any, None]]) -> None:
    """Run ``coroutines`` as tasks at once and wait for all: a task group's semantics — a cancelled caller cancels
    them and waits for every one to end (a running tool stops at its next checkpoint); a failure cancels the
    others and is raised, in an ``ExceptionGroup`` as anyio's, once all have ended — without anyio's bookkeeping
    per task and per group (~40 Python calls per LLM call in a sweep, issue 31). The wait is ``asyncio.wait``'s
    ``FIRST_EXCEPTION`` — one future, woken by the task that ends last or fails first, in the same loop turn — without
    its per-task ``ensure_future``, ``iscoroutine`` and sets (~14 Python calls per reply of several calls)."""
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(coroutine) for coroutine in coroutines]
    if not tasks:  # nothing to wait for (``_run_tools`` never hands it none: a reply's calls, more than one)
        return
    woken: asyncio.Future[None] = loop.create_future()
    left, failed = len(tasks), False

    def ended(task: asyncio.Task[None]) -> None:
        nonlocal left, failed
        left -= 1
        if not task.cancelled() and task.exception() is not None:
            failed = True
        if not woken.done() and (failed or not left):
            woken.set_result(None)

    for task in tasks:
        task.add_done_callback(ended)
    try:
        await woken
    except BaseException:  # the caller was cancelled: so are the calls, and they are waited for
        await _cancel_and_wait(tasks)
        raise
    if failed:  # woken by the first failure (every task ended: woken by the last, none failed)
        await _cancel_and_wait(tasks)
        errors = [error for task in tasks if not task.cancelled() and (error := task.exception()) is not None]
        raise BaseExceptionGroup("unhandled errors in a TaskGroup", errors)


async def _cancel_and_wait(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    with anyio.CancelScope(shield=True):
        await asyncio.wait(tasks)


async def _run_tools(backend: ToolBackend, calls: Sequence[ToolCall], sizes: Sequence[int | None], *,
                     share: ToolShare, timeout_s: float | None, max_bytes: int) -> list[ToolOutcome]:
    """The calls of one reply, run concurrently; outcomes in the order the model made the calls.

    ``sizes``: each call's ``arguments_size`` (None: within the cap), measured once by the caller, which logs it too.
    A call refused for its size, or answered from what an identical earlier call left, ends at once, with no task;
    of the others, one alone is awaited as it is, several each in a task. Raises the first ``ToolWorkerTimeout``
    once every call has ended (the others run to their own end).
    """
    outcomes: dict[int, ToolOutcome] = {}
    unserved: list[ToolWorkerTimeout] = []

    async def one(index: int, call: ToolCall) -> None:
        try:
            outcomes[index] = await run_tool(backend, call.function.name, call.function.arguments, share=share,
                                             timeout_s=timeout_s, max_bytes=max_bytes)
        except ToolWorkerTimeout as exc:
            unserved.append(exc)

    # no task for what ends at once: a task each cost ~8 Python calls and the reply an event-loop turn (issue 31)
    running: list[Coroutine[Any, Any, None]] = []
    for index, call in enumerate(calls):
        if (size := sizes[index]) is not None:
            outcomes[index] = _refused(call, size)
        elif (kept := kept_outcome(backend, call.function.name, call.function.arguments, share=share,
                                   max_bytes=max_bytes)) is not None:
            outcomes[index] = kept
        else:
            running.append(one(index, call))
    if len(running) == 1:
        await running[0]
    elif running:
        await _all_at_once(running)
    if unserved:
        raise unserved[0]
    return [outcomes[index] for index in range(len(calls))]


def _refused(call: ToolCall, size: int) -> ToolOutcome:
    """What the model gets for a call whose arguments are over the cap (``size`` bytes): an error, not run."""
    error = {"error": arguments_error(tool_name(call.function.name), size)}
    return ToolOutcome(result=error, content=orjson.dumps(error).decode())


def agent_messages(task: Task, data: ScenarioData, prompts: PromptConfig) -> list[Message]:
    """The system and user messages a run of ``task`` starts with (also what a dry run sizes its prompts by).

    Their texts are a function of the data, the task's prompt and the agent template's two texts: rendered once
    per data and such a key, and kept with the data (every trial of a task starts with the same two; rendering
    them, with the reference now formatted, was ~10 µs a run, issue 31). The ``Message`` objects are new each
    time: a message is mutable.
    """
    template = prompts.agent
    if template is None:
        system, user = _agent_texts(task, data, prompts)  # raises the error naming the file
    else:
        kept: dict[tuple[str, str, str], tuple[str, str]] = data.derived("agent_texts", dict)
        key = (task.user_prompt, template.system, template.user)
        texts = kept.get(key)
        if texts is None:
            texts = kept[key] = _agent_texts(task, data, prompts)
        system, user = texts
    return [Message(role="system", content=system), Message(role="user", content=user)]


def _agent_texts(task: Task, data: ScenarioData, prompts: PromptConfig) -> tuple[str, str]:
    values = {"now": format_now(data), "timezone": data.timezone_name, "user_prompt": task.user_prompt,
              "workday_start": f"{data.workday_start:%H:%M}", "workday_end": f"{data.workday_end:%H:%M}"}
    return prompts.render("agent", "system", **values), prompts.render("agent", "user", **values)


def _check_limits(tool_timeout_s: float | None, tool_result_max_bytes: int) -> None:
    """Reject tool limits no run could work with, naming the parameter."""
    if tool_timeout_s is not None and not tool_timeout_s > 0:
        raise ValueError(f"tool_timeout_s must be a positive number of seconds, got {tool_timeout_s!r}")
    if tool_result_max_bytes < MIN_RESULT_MAX_BYTES:
        raise ValueError(f"tool_result_max_bytes must be at least {MIN_RESULT_MAX_BYTES} "
                         f"(room for the truncation marker), got {tool_result_max_bytes!r}")


async def run_agent(
    client: LLMClient,
    model: str,
    task: Task,
    data: ScenarioData,
    prompts: PromptConfig,
    *,
    max_turns: int = 12,
    key: str = "",
    tool_timeout_s: float | None = None,
    tool_result_max_bytes: int = TOOL_RESULT_MAX_BYTES,
    tool_pool: ToolPool | None = None,
) -> RunLog:
    """Run ``model`` on ``task`` with the nine tools over ``data``; never raises for model failures.

    Tool calls run in this run's own share of ``tool_pool`` (the process-wide pool by default), each stopped
    after ``tool_timeout_s`` seconds of running (the pool's limit, 30 s, by default) and its result limited
    to ``tool_result_max_bytes`` bytes of JSON.
    """
    _check_limits(tool_timeout_s, tool_result_max_bytes)
    share = (tool_pool or default_tool_pool()).share()
    backend = ToolBackend(data)
    tools = backend.schemas()
    messages = agent_messages(task, data, prompts)
    steps: list[str] = []
    raw_calls: list[RawToolCall] = []
    usage = Usage()
    cost: float | None = 0.0
    started = time.perf_counter()
    model_s = tools_s = 0.0
    stop: StopReason = "max_turns"
    final: tuple[str, str, Literal["json", "text", "none"]] = ("", "", "none")
    error: str | None = None
    failure: LLMError | ToolWorkerTimeout | None = None
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
        usage, cost = usage + result.usage, add_cost(cost, result.cost_usd)
        messages.append(Message(role="assistant", content=result.content, tool_calls=result.tool_calls or None))
        if not result.tool_calls:
            stop, final = "final", _final(result.content)
            break
        t1 = time.perf_counter()
        try:
            sizes: list[int | None] = []  # each call's, once: the call is refused on it and logged with it
            for call in result.tool_calls:  # a loop, not a comprehension: no frame of its own (issue 31)
                sizes.append(arguments_size(call.function.arguments))
            outcomes = await _run_tools(backend, result.tool_calls, sizes, share=share, timeout_s=tool_timeout_s,
                                        max_bytes=tool_result_max_bytes)
        except ToolWorkerTimeout as exc:  # the calls never ran: an infrastructure failure, the run ends
            stop, error, failure = "error", str(exc), exc
            tools_s += time.perf_counter() - t1
            break
        for call, tool_outcome, size in zip(result.tool_calls, outcomes, sizes, strict=True):
            outcome = _masked(tool_outcome)
            name = tool_name(call.function.name)
            arguments = (_arguments(call.function.arguments) if size is None
                         else truncated_arguments(call.function.arguments, size))
            steps.append(f"Step {len(steps) + 1}: {name}({orjson.dumps(arguments).decode()})")
            raw_calls.append(RawToolCall(tool_name=name, arguments=arguments, result=outcome.result,
                                         result_bytes=outcome.result_bytes, truncated=outcome.truncated,
                                         timed_out=outcome.timed_out, arguments_bytes=size or 0,
                                         arguments_truncated=size is not None))
            messages.append(Message(role="tool", tool_call_id=call.id, content=outcome.content))
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
