"""Extracting one JSON object from a model reply: fenced, bare, or wrapped in prose."""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = ["ReplyParseError", "extract_json_object"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)


class ReplyParseError(ValueError):
    """The reply holds no decodable JSON object; the message says why (it goes back to the model)."""


def _candidates(text: str) -> list[str]:
    found = [m.group(1).strip() for m in _FENCE.finditer(text)]
    stripped = text.strip()
    found.append(stripped)
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        found.append(stripped[start:end + 1])
    return found


def extract_json_object(text: str | None) -> dict[str, Any]:
    """The first JSON object in ``text``: inside code fences, the whole text, or its outermost braces."""
    if not text or not text.strip():
        raise ReplyParseError("the reply is empty; answer with one JSON object")
    last_error = ""
    for candidate in _candidates(text):
        try:
            value = orjson.loads(candidate)
        except orjson.JSONDecodeError as exc:
            last_error = str(exc)
            continue
        if isinstance(value, dict):
            return value
        last_error = f"expected a JSON object, got {type(value).__name__}"
    raise ReplyParseError(f"the reply is not a JSON object ({last_error})")
