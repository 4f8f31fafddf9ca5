"""Hand-written sweep directories for summary tests, in the shapes the runner writes (see sweep/_records.py)."""

from __future__ import annotations

from pathlib import Path

import orjson


def run(key: str, *, model: str = "m", task: str = "t1", trial: int = 0, status: str = "ok", checks: str = "",
        retryable: bool = False, error_class: str | None = None, error_message: str | None = None,
        started: float = 0.0, finished: float = 0.0) -> dict:
    """An agent run record; ``checks`` is a string of outcomes: ``p`` pass, ``f`` fail, ``n`` n/a."""
    outcome = {"p": "pass", "f": "fail", "n": "n/a"}
    record = {"key": key, "status": status, "task_id": task, "task_type": "planning", "scenario_id": "s",
              "model": model, "trial": trial, "retryable": retryable,
              "checks": [{"name": f"c{i}", "status": outcome[c], "detail": ""} for i, c in enumerate(checks)],
              "started_at": started, "finished_at": finished, "kind": "agent_run"}
    if status == "ok":
        record["run"] = {"stop_reason": "final"}
    else:
        record |= {"error_class": error_class, "error_message": error_message}
    return record


def judgement(key: str, run_key: str, *, ars: int | None = 4, sgr: int = 3, model: str = "m", judge: str = "j",
              status: str = "ok", retryable: bool = False, error_class: str | None = None,
              error_message: str | None = None, started: float = 0.0, finished: float = 0.0) -> dict:
    """A judge record; ``ars=None`` is an unscored verdict."""
    record = {"key": key, "run_key": run_key, "status": status, "task_id": "t1", "task_type": "planning",
              "agent_model": model, "judge_model": judge, "trial": 0, "retryable": retryable,
              "started_at": started, "finished_at": finished, "kind": "judge"}
    if status != "ok":
        record |= {"error_class": error_class, "error_message": error_message,
                   "judgement": {"verdict": "error"}}
    elif ars is None:
        record["judgement"] = {"verdict": "unscored"}
    else:
        record["judgement"] = {"verdict": "scored", "scores": {
            "answer_requirements_satisfaction": {"score": ars, "justification": "x"},
            "source_grounded_reasoning": {"score": sgr, "justification": "x"}}}
    return record


def case(key: str, case_id: str, *, model: str = "m", score: float = 1.0, passed: bool = True, status: str = "ok",
         retryable: bool = False, error_class: str | None = None, error_message: str | None = None) -> dict:
    """A tariff case record (``TariffCaseRecord``) with the score fields the summary reads."""
    record = {"key": key, "status": status, "case_id": case_id, "mode": "live", "model": model,
              "retryable": retryable, "kind": "tariff_case"}
    if status == "ok":
        record["score"] = {"case_id": case_id, "case_type": "positive", "difficulty": "easy", "score": score,
                           "passed": passed, "threshold": 0.8, "status": "accepted"}
    else:
        record |= {"error_class": error_class, "error_message": error_message}
    return record


def call(key: str, *, model: str = "m", tokens: int = 100, cost: float = 0.0, started: float = 0.0,
         status: str = "ok", latency: float = 0.5, error_message: str | None = None) -> dict:
    """An LLM call record (``LLMCallRecord``)."""
    record = {"model": model, "key": key, "status": status, "started_at": started, "latency_s": latency,
              "usage": {"prompt_tokens": tokens, "completion_tokens": 0, "total_tokens": tokens},
              "cost_usd": cost}
    if error_message is not None:
        record |= {"error_class": "LLMError", "error_message": error_message}
    return record


def write(path: Path, *records: dict | bytes) -> None:
    """One line per record; ``bytes`` are written as they are (for lines that are not valid records)."""
    path.write_bytes(b"".join((r if isinstance(r, bytes) else orjson.dumps(r)) + b"\n" for r in records))
