"""``sim/judge`` and ``sim/lazy-agent``: offline baselines for MPCBench evaluation.

``sim/judge`` applies a fixed rubric to the judge input it receives (the ``JUDGE_INPUT`` block
of the prompt) and nothing else — never data files — so identical runs always get identical
scores, and each score's justification says which rule set it.

* source_grounded_reasoning — the share of the answer's concrete claims (proposed slots, dates,
  quantities, issue keys, addresses, people's names) the tool results support
  (``_judge_grounding``): 0 with no tool calls and specific claims, 1 with nothing checkable,
  else ``round(5 × grounded share)``, at least 1.
* answer_requirements_satisfaction — a base for a final, concrete, grounded answer that delivers
  its task type's output, capped by the rules a wrong answer breaks: a non-answer, a different
  task type, placeholders or empty sections, and for planning a slot that conflicts with the
  calendar, falls on a weekend, in another week or on another day than the request names, or
  lasts the wrong time, or a participant left out; for an e-mail reply an answer about another
  issue, no or a contradicted time frame, or a promise where caution is asked; for a report an
  invented or stale figure (``_judge_rules``).

What the judge knows of the scenario (timezone, free slots, events, people, the meeting request)
comes from the tool results alone (``_judge_evidence``).

``sim/lazy-agent`` answers at once, without tools, with a plausible but ungrounded reply in the
required JSON format.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import orjson

from ...sim import Reply
from ._judge_rules import Reading, read_answer, satisfaction

__all__ = ["judge", "judge_scores", "lazy_agent"]

_BLOCK = re.compile(r"JUDGE_INPUT:\s*```json\s*(.*?)```", re.S)


def _grounding(reading: Reading) -> tuple[int, str]:
    """The source_grounded_reasoning score and its justification."""
    found, calls = reading.claims, reading.evidence.calls
    if not reading.answer.strip():
        return 0, "[empty] no answer"
    if calls == 0:
        return (0 if found else 1), f"no tool calls; {len(found)} specific claim(s) with no source"
    if not found:
        return 1, f"{calls} tool call(s) but the answer states nothing that can be traced to them"
    share = reading.grounded_share
    missing = [f"{c.kind} {c.text!r}" for c in found if not c.grounded]
    why = f"{round(share * 100)}% of {len(found)} concrete claim(s) appear in the results of {calls} tool call(s)"
    return max(1, round(5 * share)), why + (f"; not found: {', '.join(missing[:5])}" if missing else "")


def judge_scores(judge_input: dict[str, Any]) -> dict[str, Any]:
    """The rubric's scores and justifications for one judge input."""
    reading = read_answer(judge_input)
    grounded, why_g = _grounding(reading)
    satisfied, why_s = satisfaction(judge_input, reading)
    return {"answer_requirements_satisfaction": {"score": int(satisfied), "justification": why_s},
            "source_grounded_reasoning": {"score": int(grounded), "justification": why_g}}


def judge(request: dict[str, Any]) -> Reply:
    """Score the JUDGE_INPUT block of the conversation's first user message."""
    text = " ".join(str(m.get("content") or "") for m in request["messages"] if m.get("role") == "user")
    match = _BLOCK.search(text)
    if not match:
        return Reply(content="sim/judge: no JUDGE_INPUT block found")
    return Reply(content=_judged(match.group(1)))


@lru_cache(maxsize=1024)
def _judged(block: str) -> str:
    """The reply to one JUDGE_INPUT block, remembered: the rubric reads nothing else, so the trials of a task that
    gave the same answer get the same reply, and the sim's CPU per judge call (1–2 ms of answer parsing, the
    sim's bottleneck in a 10k-unit sweep of identical trials) is spent once per distinct input."""
    try:
        judge_input = orjson.loads(block)
    except orjson.JSONDecodeError as exc:
        return f"sim/judge: JUDGE_INPUT is not JSON ({exc})"
    return orjson.dumps(judge_scores(judge_input)).decode()


def lazy_agent(request: dict[str, Any]) -> Reply:
    """Answer at once, without tools: generic and ungrounded, in the required format."""
    prompt = next((str(m.get("content") or "") for m in reversed(request["messages"]) if m.get("role") == "user"), "")
    answer = ("Thanks for the question. Based on what I usually see, the team is working on it and I would "
              "suggest following up early next week; I can share more details once I have checked. "
              f"(Request: {prompt[:160]})")
    return Reply(content=orjson.dumps({"final_answer": answer,
                                       "rationale": "Answered from general experience without looking anything up."}
                                      ).decode())
