"""Reading a final answer and scoring it, exactly as the original does.

**Parsing** (``parse_answer``) follows the original agent's parser step by step,
because the published numbers depend on it: the text from the first ``{`` to the
last ``}`` is decoded (with trailing commas removed on a second try), else the
whole text; ``candidates`` must be a list; each candidate must be an object with
truthy ``start`` and ``end``, which become strings; a ``room_id`` that is present
and not null makes it a (start, end, room) triple, else a pair. A candidate that
does not fit is skipped. An answer whose JSON is not an object raises
``AnswerError`` (the original's loop then asks the model again), one with no
usable candidate gives ``[]`` (likewise).

**Scoring** (``score``) is set-based: gold and predicted candidates become sets of
tuples of their exact strings, so ``…T09:00:00+09:00`` and ``…T00:00:00Z`` differ and
a repeated candidate counts once; precision, recall, F1 and exact match (equal
sets) follow, with two empty sets scoring 1. ``normalize=True`` (``--normalize``)
compares instants instead: both sides are rewritten as UTC ``YYYY-MM-DDTHH:MM``
before the sets are built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

__all__ = ["AnswerError", "Metrics", "candidate_tuples", "parse_answer", "score"]

Candidate = tuple[str, ...]

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


class AnswerError(ValueError):
    """The final message's JSON is not an object the parser can read (the original's loop asks again)."""


class Metrics(msgspec.Struct, kw_only=True):
    """The original's ``metrics`` of one instance."""

    f1: float
    precision: float
    recall: float
    exact_match: bool


_NO_JSON = object()


def _decode(content: str) -> Any:
    """The answer's JSON as the original finds it. A decoder failure other than bad JSON (an integer over Python's
    digit limit, nesting past the recursion limit) ends the first-to-last-brace attempts; in the whole-text attempt
    it is an ``AnswerError``, as it made the original's loop ask again."""
    text = content.strip()
    match = _OBJECT.search(text)
    if match:
        try:
            for attempt in (match.group(0), _TRAILING_COMMA.sub(r"\1", match.group(0))):
                try:
                    return json.loads(attempt)
                except json.JSONDecodeError:
                    continue
        except (ValueError, RecursionError):
            pass
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return _NO_JSON
    except (ValueError, RecursionError) as exc:
        raise AnswerError(f"the answer's JSON cannot be decoded ({type(exc).__name__})") from None


def parse_answer(content: str) -> list[Candidate]:
    """The candidates of a final message (see the module docstring); ``[]`` when it holds none."""
    data = _decode(content)
    if data is _NO_JSON:
        return []
    if not isinstance(data, dict):
        raise AnswerError(f"the answer's JSON is a {type(data).__name__}, not an object with candidates")
    raw = data.get("candidates", [])
    if not isinstance(raw, list):
        return []
    out: list[Candidate] = []
    for candidate in raw:
        try:
            parsed = _candidate(candidate)
        except (ValueError, RecursionError):  # str() of a value nested past the limit: the original skips it
            continue
        if parsed is not None:
            out.append(parsed)
    return out


def _candidate(candidate: Any) -> Candidate | None:
    if not isinstance(candidate, dict):
        return None
    start, end = candidate.get("start"), candidate.get("end")
    if not start or not end:
        return None
    room = candidate.get("room_id")
    return (_str(start), _str(end)) if room is None else (_str(start), _str(end), _str(room))


def _str(value: Any) -> str:
    """``str(value)`` as Python prints the decoded JSON value (the original's ``str()``)."""
    return value if isinstance(value, str) else str(value)


def candidate_tuples(candidates: Sequence[dict[str, Any]], level: int) -> list[Candidate]:
    """Oracle candidates as tuples: (start, end) at levels 1–2, (start, end, room_id) at level 3."""
    if level == 3:
        return [(c["start"], c["end"], c["room_id"]) for c in candidates]
    return [(c["start"], c["end"]) for c in candidates]


def _instant(text: str) -> str:
    try:
        value = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return text
    if value.tzinfo is None:
        return text
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


def _normalized(candidates: Sequence[Candidate]) -> set[Candidate]:
    return {(_instant(c[0]), _instant(c[1]), *c[2:]) if len(c) >= 2 else c for c in candidates}


def score(gold: Sequence[Candidate], pred: Sequence[Candidate], *, normalize: bool = False) -> Metrics:
    """Set precision, recall, F1 and exact match of ``pred`` against ``gold`` (see the module docstring)."""
    gold_set = _normalized(gold) if normalize else set(gold)
    pred_set = _normalized(pred) if normalize else set(pred)
    if not gold_set and not pred_set:
        return Metrics(f1=1.0, precision=1.0, recall=1.0, exact_match=True)
    hits = len(gold_set & pred_set)
    precision = hits / len(pred_set) if pred_set else 0.0
    recall = hits / len(gold_set) if gold_set else 0.0
    f1 = 2 * (precision * recall) / (precision + recall) if precision + recall else 0.0
    return Metrics(f1=f1, precision=precision, recall=recall, exact_match=gold_set == pred_set)
