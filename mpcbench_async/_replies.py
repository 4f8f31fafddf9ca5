"""Reading model replies: one JSON object from a reply (fenced, bare, or wrapped in prose), and the size cap
on a tool call's arguments.

Tool arguments are capped (``TOOL_ARGUMENTS_MAX_BYTES``) because a model can send megabytes of them and every
agent loop logs them twice or more (the call, the step text, the trace): before the cap, 1 MB of arguments made
a 20–26 MB record. A call over the cap is not run; the model gets ``arguments_error`` as the tool's result (so it
can retry with less) and records keep ``truncated_arguments``, a bounded head with a marker.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = ["TOOL_ARGUMENTS_MAX_BYTES", "ReplyParseError", "arguments_error", "arguments_size",
           "extract_json_object", "truncated_arguments"]

TOOL_ARGUMENTS_MAX_BYTES = 16 * 1024
"""Cap on one tool call's arguments: bytes (UTF-8) of the JSON text the model sent. The tools take a few short
strings and numbers (the largest arguments in the original levels benchmark's published runs are 35 bytes);
16 KiB leaves room for a long JQL query or a list of many people."""
ARGUMENTS_HEAD_CHARS = 200
"""How many leading characters of oversized arguments a record keeps."""

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


def arguments_size(arguments: str, max_bytes: int = TOOL_ARGUMENTS_MAX_BYTES) -> int | None:
    """The size in bytes of ``arguments`` when it is over ``max_bytes``; None when it fits."""
    if len(arguments) * 4 <= max_bytes:  # a character is at most 4 bytes of UTF-8: no need to encode
        return None
    size = len(arguments.encode("utf-8", "surrogatepass"))
    return size if size > max_bytes else None


def truncated_arguments(arguments: str, size: int, max_bytes: int = TOOL_ARGUMENTS_MAX_BYTES) -> str:
    """What a record keeps of oversized ``arguments``: their first characters and a marker saying what was cut."""
    return (f"{arguments[:ARGUMENTS_HEAD_CHARS]}… [truncated: {size:,} bytes of arguments, over the "
            f"{max_bytes:,}-byte limit; the call was not run]")


def arguments_error(tool: str, size: int, max_bytes: int = TOOL_ARGUMENTS_MAX_BYTES) -> str:
    """The error the model gets for a call whose arguments are over the cap."""
    return (f"the arguments of {tool} are {size:,} bytes; at most {max_bytes:,} are accepted, so the call was not "
            "run. Call it again with shorter arguments (a shorter query, fewer names)")
