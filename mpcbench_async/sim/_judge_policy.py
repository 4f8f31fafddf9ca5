"""``sim/judge`` and ``sim/lazy-agent``: offline baselines for MPCBench evaluation.

``sim/judge`` applies a fixed rubric to the judge input it receives (the
``JUDGE_INPUT`` block of the prompt), so identical runs always get identical
scores:

* source_grounded_reasoning — the share of concrete claims in the answer
  (dates, times, numbers, e-mail addresses, capitalised names) that appear in
  the tool results: 0 with no tool calls and specific claims, else
  ``round(5 × grounded share)``, at least 1 when tools were used;
* answer_requirements_satisfaction — 0 for no answer; otherwise 1, +1 for a
  final (not cut-off) answer, +1 when it states concrete facts, +1 when those
  are at least 80% grounded, +1 when the answer covers the requirements'
  key terms (at least 30% of their distinctive words).

``sim/lazy-agent`` answers at once, without tools, with a plausible but
ungrounded reply in the required JSON format.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ._policies import Reply, register_policy

__all__ = ["grounded_share", "judge_scores"]

_BLOCK = re.compile(r"JUDGE_INPUT:\s*```json\s*(.*?)```", re.S)
_CLAIM = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}\b|[\w.+-]+@[\w-]+\.[\w.]+|\b[A-Z][A-Z0-9]+-\d+\b|-?\d+(?:\.\d+)?%?"
    r"|\b[A-Z][a-z]+ [A-Z][a-z]+\b"
)
_WORD = re.compile(r"[a-z][a-z]+")
_STOP = set("the and that with from this answer answers should must user about which their there other into "
            "more than most when what where while also only each every over under".split())


def _claims(text: str) -> list[str]:
    return [c for c in _CLAIM.findall(text) if len(c) > 1]


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower())


def grounded_share(answer: str, evidence: str) -> tuple[int, float]:
    """(number of claims, share of them found in ``evidence``); 1.0 when there are none."""
    claims = _claims(answer)
    if not claims:
        return 0, 1.0
    corpus = _normal(evidence)
    found = sum(1 for c in claims if _normal(c).rstrip("%") in corpus)
    return len(claims), found / len(claims)


def judge_scores(judge_input: dict[str, Any]) -> dict[str, Any]:
    """The rubric's scores and justifications for one judge input."""
    answer = str(judge_input.get("final_answer") or "")
    trace = judge_input.get("tool_trace") or []
    evidence = orjson.dumps([step.get("result") for step in trace if isinstance(step, dict)]).decode()
    claims, share = grounded_share(answer, evidence)
    calls = len(trace)
    if not answer.strip():
        grounded, why_g = 0, "no answer"
    elif calls == 0:
        grounded = 0 if claims else 1
        why_g = f"no tool calls; {claims} specific claim(s) with no source"
    else:
        grounded = max(1, round(5 * share))
        why_g = f"{round(share * 100)}% of {claims} concrete claim(s) appear in the results of {calls} tool call(s)"
    requirements = " ".join(str(r) for r in judge_input.get("answer_requirements") or ())
    terms = {w for w in _WORD.findall(requirements.lower()) if len(w) >= 5 and w not in _STOP}
    said = set(_WORD.findall((answer + " " + str(judge_input.get("rationale") or "")).lower()))
    coverage = len(terms & said) / len(terms) if terms else 1.0
    if not answer.strip():
        satisfied, why_s = 0, "no final answer"
    else:
        satisfied = 1 + (judge_input.get("stop_reason") == "final") + (claims > 0) \
            + (claims > 0 and calls > 0 and share >= 0.8) + (coverage >= 0.3)
        why_s = (f"stop={judge_input.get('stop_reason')}; {claims} concrete fact(s); grounded {round(share * 100)}%; "
                 f"requirement terms covered {round(coverage * 100)}%")
    return {"answer_requirements_satisfaction": {"score": int(satisfied), "justification": why_s},
            "source_grounded_reasoning": {"score": int(grounded), "justification": why_g}}


@register_policy("judge")
def judge(request: dict[str, Any]) -> Reply:
    """Score the JUDGE_INPUT block of the conversation's first user message."""
    text = " ".join(str(m.get("content") or "") for m in request["messages"] if m.get("role") == "user")
    match = _BLOCK.search(text)
    if not match:
        return Reply(content="sim/judge: no JUDGE_INPUT block found")
    try:
        judge_input = orjson.loads(match.group(1))
    except orjson.JSONDecodeError as exc:
        return Reply(content=f"sim/judge: JUDGE_INPUT is not JSON ({exc})")
    return Reply(content=orjson.dumps(judge_scores(judge_input)).decode())


@register_policy("lazy-agent")
def lazy_agent(request: dict[str, Any]) -> Reply:
    """Answer at once, without tools: generic and ungrounded, in the required format."""
    prompt = next((str(m.get("content") or "") for m in reversed(request["messages"]) if m.get("role") == "user"), "")
    answer = ("Thanks for the question. Based on what I usually see, the team is working on it and I would "
              "suggest following up early next week; I can share more details once I have checked. "
              f"(Request: {prompt[:160]})")
    return Reply(content=orjson.dumps({"final_answer": answer,
                                       "rationale": "Answered from general experience without looking anything up."}
                                      ).decode())
