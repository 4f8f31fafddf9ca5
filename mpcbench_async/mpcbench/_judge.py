"""Judge input and the LLM judge: two axes scored 0–5, validated, never silently zero.

The judge sees only what the run recorded — the prompt, the answer, the
rationale and the step-indexed tool trace — plus the task's
``answer_requirements``. Its reply must be
``{answer_requirements_satisfaction: {score, justification}, source_grounded_reasoning: {…}}``
with integer scores 0–5; a malformed reply is sent back with the problem, and
after the last attempt the judgement is ``unscored`` (never 0) with the error class
``UnparsableJudgement``: the sweep counts it as an error and says why, where a
silent "unscored" let a judge that never returns JSON give a clean result.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
import orjson

from .._exceptions import LLMError
from .._prompts import PromptConfig
from .._replies import ReplyParseError, extract_json_object
from ..llm import LLMClient
from ..records import Message, Usage, add_cost
from ._agent import RunLog
from ._task import Task

__all__ = ["UNPARSABLE_JUDGEMENT", "AxisScore", "JudgeScores", "Judgement", "build_judge_input", "judge_messages",
           "run_judge"]

AXES = ("answer_requirements_satisfaction", "source_grounded_reasoning")
UNPARSABLE_JUDGEMENT = "UnparsableJudgement"  # the error class of a judge that never replied with scores


class AxisScore(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    score: Annotated[int, msgspec.Meta(ge=0, le=5)]
    justification: str


class JudgeScores(msgspec.Struct, kw_only=True):
    """The judge's reply (extra keys a model adds are ignored)."""

    answer_requirements_satisfaction: AxisScore
    source_grounded_reasoning: AxisScore


class Judgement(msgspec.Struct, kw_only=True):
    """One judge model's verdict on one run."""

    task_id: str
    scenario_id: str
    agent_model: str
    judge_model: str
    verdict: Literal["scored", "unscored", "error"]
    scores: JudgeScores | None = None
    attempts: int = 0
    problems: list[str] = []
    usage: Usage = msgspec.field(default_factory=Usage)
    cost_usd: float | None = 0.0  # None: a call had no known price (records/_chat.add_cost)
    error: str | None = None
    error_class: str | None = None
    retryable: bool = False


def build_judge_input(run: RunLog, task: Task) -> dict[str, Any]:
    """The seed's judge-input fields: run log essentials, requirements and a step-indexed tool trace."""
    return {
        "task_id": run.task_id,
        "task_type": run.task_type,
        "user_prompt": run.user_prompt,
        "answer_requirements": list(task.answer_requirements),
        "final_answer": run.final_answer,
        "rationale": run.rationale,
        "stop_reason": run.stop_reason,
        "tool_trace_steps": list(run.tool_trace_steps),
        "tool_trace": [{"step": i + 1, "tool_name": c.tool_name, "arguments": c.arguments, "result": c.result}
                       for i, c in enumerate(run.raw_tool_calls)],
    }


def _validate(content: str | None) -> tuple[JudgeScores | None, str | None]:
    try:
        doc = extract_json_object(content)
    except ReplyParseError as exc:
        return None, str(exc)
    try:
        return msgspec.convert(doc, JudgeScores), None
    except msgspec.ValidationError as exc:
        return None, f"invalid judge output: {exc}"


def judge_messages(judge_input: dict[str, Any], prompts: PromptConfig) -> list[Message]:
    """The system and user messages of a judge's first attempt (also what a dry run sizes its prompts by)."""
    input_json = orjson.dumps(judge_input, option=orjson.OPT_INDENT_2).decode()
    return [Message(role="system", content=prompts.render("judge", "system")),
            Message(role="user", content=prompts.render("judge", "user", judge_input_json=input_json))]


async def run_judge(
    client: LLMClient,
    judge_model: str,
    judge_input: dict[str, Any],
    prompts: PromptConfig,
    *,
    agent_model: str,
    scenario_id: str,
    max_attempts: int = 3,
    key: str = "",
    messages: list[Message] | None = None,
) -> Judgement:
    """Ask ``judge_model`` to score ``judge_input``; validated, retried; when it never complies, ``unscored`` with
    the error class ``UNPARSABLE_JUDGEMENT`` and a message quoting the last problem. ``messages``: the first
    attempt's, when the caller rendered them already (``judge_messages(judge_input, prompts)``)."""
    if messages is None:
        messages = judge_messages(judge_input, prompts)
    judgement = Judgement(task_id=str(judge_input.get("task_id", "")), scenario_id=scenario_id,
                          agent_model=agent_model, judge_model=judge_model, verdict="unscored")
    for attempt in range(max_attempts):
        judgement.attempts = attempt + 1
        try:
            result = await client.chat(judge_model, messages, key=f"{key}/try{attempt}")
        except LLMError as exc:
            judgement.verdict, judgement.retryable = "error", exc.retryable
            judgement.error, judgement.error_class = str(exc), type(exc).__name__
            return judgement
        judgement.usage = judgement.usage + result.usage
        judgement.cost_usd = add_cost(judgement.cost_usd, result.cost_usd)
        judgement.scores, problem = _validate(result.content)
        if judgement.scores is not None:
            judgement.verdict = "scored"
            return judgement
        judgement.problems.append(problem or "")
        messages = [*messages, Message(role="assistant", content=result.content or ""),
                    Message(role="user", content=prompts.render("repair", "user", problems=f"- {problem}"))]
    judgement.error_class = UNPARSABLE_JUDGEMENT
    judgement.error = (f"judge {judge_model} gave no parsable judgement in {max_attempts} "
                       f"tr{'y' if max_attempts == 1 else 'ies'}; the last reply: {judgement.problems[-1]}")
    return judgement
