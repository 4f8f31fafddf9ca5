"""Tool calls off the event loop: a bounded thread pool, a time limit per call, a size cap per result.

Tools are plain CPU-bound Python over in-memory data, and a pathological query (a free-slot search over
years, a search matching every message) can take seconds and build megabytes. ``run_tool`` runs one call
in a thread of a ``ToolPool`` so the event loop — every other unit, limiter and timeout — keeps going,
and stops waiting after ``timeout_s``: the model gets ``{"error": "... took longer than N s; ..."}`` and
the run continues. A Python thread cannot be killed, so a call past its limit finishes in the background
and its result is dropped; it keeps its pool thread until then, which is how the pool's size bounds the
number of such threads (a call still queued when its limit passes never starts). A result larger than
``max_bytes`` of JSON is cut to fit by ``cap_result``, stays valid JSON and says so to the model.

The pool waits through ``asyncio`` (the package runs on asyncio: its HTTP transport is aiohttp).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio
import msgspec
import orjson

from ._backend import ToolBackend, tool_name

__all__ = ["TOOL_RESULT_MAX_BYTES", "TOOL_THREADS", "TOOL_TIMEOUT_S", "ToolOutcome", "ToolPool", "cap_result",
           "default_tool_pool", "run_tool"]

T = TypeVar("T")

TOOL_TIMEOUT_S = 30.0
"""Default time limit of one tool call, seconds (a normal call takes milliseconds)."""
TOOL_RESULT_MAX_BYTES = 64 * 1024
"""Default cap on one tool result, bytes of JSON as the model receives it."""
MIN_RESULT_MAX_BYTES = 1024
"""The smallest cap accepted: below it the truncation marker itself would not fit."""
TOOL_THREADS = 8
"""Default size of the process-wide tool pool: tool calls running (or abandoned and still running) at once."""
MARKER_RESERVE = 200
"""Bytes kept free for the truncation marker on the first fitting attempt (a longer note takes the rest
from the content on the next)."""
MIN_PART = 64
"""A list item or dict value is shortened into a budget only this large or larger; below, it is left out."""
NOTED_CUTS = 3
"""How many of the places that were shortened the note names."""
NOTED_PATH = 80
"""Longest path the note prints in full (keys come from the data and may be long); longer ones keep their end."""


class ToolOutcome(msgspec.Struct, kw_only=True, frozen=True):
    """One tool call as the agent logs it and the model receives it."""

    result: dict[str, Any]
    content: str
    """``result`` as the JSON text of the tool message."""
    result_bytes: int = 0
    """Size of the tool's full result as JSON, before any cap (0 when it timed out)."""
    truncated: bool = False
    timed_out: bool = False


class ToolPool:
    """At most ``threads`` tool calls run at once, each in a worker thread; the others wait in a queue.

    A call that outlives its time limit keeps its thread until it finishes (threads cannot be killed),
    so abandoned calls count against the same bound and can never pile up without limit.
    """

    def __init__(self, threads: int = TOOL_THREADS) -> None:
        if threads < 1:
            raise ValueError(f"a tool pool needs at least 1 thread, got {threads}")
        self.threads = threads
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="mpcbench-tool")

    async def run(self, fn: Callable[[], T], *, timeout_s: float) -> T:
        """``fn()`` in a pool thread; ``TimeoutError`` after ``timeout_s`` (the thread's result is then dropped)."""
        with anyio.fail_after(timeout_s):
            # Cancelling the awaited future cancels the pool's future: a call still queued never starts.
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    def close(self, *, wait: bool = False) -> None:
        """Drop queued calls and free the threads as their calls finish (``wait`` blocks until they have)."""
        self._executor.shutdown(wait=wait, cancel_futures=True)


_default_pool: ToolPool | None = None


def default_tool_pool() -> ToolPool:
    """The process-wide pool every agent run shares unless given its own (one bound for the whole process)."""
    global _default_pool
    if _default_pool is None:
        _default_pool = ToolPool()
    return _default_pool


def _size(value: Any) -> int:
    return len(orjson.dumps(value))


def _cut(path: str, what: str) -> str:
    """One place that was shortened, as the note names it (bounded, so the note always fits its reserve)."""
    shown = path if len(path) <= NOTED_PATH else "…" + path[-(NOTED_PATH - 1):]
    return f"{shown}: {what}"


def _fit_text(text: str, budget: int, path: str, cuts: list[str]) -> str | None:
    """The longest prefix of ``text`` whose JSON fits ``budget`` (escapes make bytes and characters differ)."""
    if budget < 2:
        return None
    lo, hi = 0, len(text)
    while lo < hi:  # binary search on the number of characters kept
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if _size(text[:mid]) <= budget else (lo, mid - 1)
    cuts.append(_cut(path, f"{lo:,} of {len(text):,} characters"))
    return text[:lo]


def _fit_list(items: list[Any], budget: int, path: str, cuts: list[str]) -> list[Any] | None:
    """The leading items that fit ``budget`` whole (order is rank), then the next one shortened if room is left."""
    if budget < 2:
        return None
    kept: list[Any] = []
    noted = len(cuts)  # this list's own cut is named before any inside its last item
    used = 2  # the brackets
    for index, item in enumerate(items):
        comma = 1 if kept else 0
        size = _size(item)
        if used + comma + size <= budget:
            kept.append(item)
            used += comma + size
            continue
        room = budget - used - comma
        part = _fit(item, room, f"{path}[{index}]", cuts) if room >= MIN_PART else None
        if part is not None:
            kept.append(part)
        break
    cuts.insert(noted, _cut(path, f"{len(kept):,} of {len(items):,} items"))
    return kept


def _fit_dict(doc: dict[str, Any], budget: int, path: str, cuts: list[str]) -> dict[str, Any] | None:
    """Small values stay whole; the budget left is shared evenly among the large ones, which are shortened."""
    if budget < 2:
        return None
    entries = sorted(((len(orjson.dumps(key)) + 2, _size(value), key) for key, value in doc.items()),
                     key=lambda entry: entry[0] + entry[1])
    room = budget - 1  # 2 for the braces, less the comma the first entry counts but does not have
    fitted: dict[str, Any] = {}
    for left, (overhead, size, key) in zip(range(len(entries), 0, -1), entries, strict=True):
        share = room // left
        if overhead + size <= share:
            fitted[key], room = doc[key], room - overhead - size
            continue
        value = (_fit(doc[key], share - overhead, f"{path}.{key}", cuts)
                 if share - overhead >= MIN_PART else None)
        if value is None:
            cuts.append(_cut(f"{path}.{key}", "left out"))
            continue
        fitted[key], room = value, room - overhead - _size(value)
    return {key: fitted[key] for key in doc if key in fitted}


def _fit(value: Any, budget: int, path: str, cuts: list[str]) -> Any:
    """``value`` shortened so its JSON fits ``budget`` bytes, noting each cut; ``None`` when nothing fits."""
    if _size(value) <= budget:
        return value
    if isinstance(value, str):
        return _fit_text(value, budget, path, cuts)
    if isinstance(value, list):
        return _fit_list(value, budget, path, cuts)
    if isinstance(value, dict):
        return _fit_dict(value, budget, path, cuts)
    return None  # a number or a literal too large for what is left


def cap_result(result: dict[str, Any], max_bytes: int) -> dict[str, Any]:
    """``result`` cut to at most ``max_bytes`` of JSON with ``truncated`` and a note naming what was shortened.

    Lists keep their leading items (tools rank their results), texts their beginning, and small fields
    (counts, ids, notes) stay whole; the note tells the model the sizes and to narrow its query.
    """
    full = _size(result)
    budget = max_bytes - MARKER_RESERVE
    while True:  # a note longer than the reserve gives back its overshoot from the content on a second pass
        cuts: list[str] = []
        fitted = _fit(result, budget, "$", cuts) or {}
        shown = "; ".join(cuts[:NOTED_CUTS]) + ("; …" if len(cuts) > NOTED_CUTS else "")
        capped = {**fitted, "truncated": True,
                  "truncation_note": f"result cut to {_size(fitted):,} bytes of {full:,} ({shown}); "
                                     "narrow your query to see the rest"}
        size = _size(capped)
        if size <= max_bytes:
            return capped
        budget -= size - max_bytes


def _capped(result: dict[str, Any], max_bytes: int) -> ToolOutcome:
    """The outcome of a finished call, its result cut to ``max_bytes`` when larger (run in the pool thread)."""
    encoded = orjson.dumps(result)
    if len(encoded) <= max_bytes:
        return ToolOutcome(result=result, content=encoded.decode(), result_bytes=len(encoded))
    capped = cap_result(result, max_bytes)
    return ToolOutcome(result=capped, content=orjson.dumps(capped).decode(), result_bytes=len(encoded),
                       truncated=True)


def _error(message: str, *, timed_out: bool = False) -> ToolOutcome:
    result = {"error": message}
    return ToolOutcome(result=result, content=orjson.dumps(result).decode(), timed_out=timed_out)


def _call(backend: ToolBackend, name: str, arguments: str | dict[str, Any] | None, max_bytes: int) -> ToolOutcome:
    """Run the tool and size its result (in the pool thread: both can be heavy)."""
    result = backend.call(name, arguments)
    try:
        return _capped(result, max_bytes)
    except orjson.JSONEncodeError as exc:  # e.g. data nested deeper than JSON encoders go
        return _error(f"{tool_name(name)} built a result that cannot be sent as JSON ({exc}); "
                      "narrow the query or use another tool")


async def run_tool(backend: ToolBackend, name: str, arguments: str | dict[str, Any] | None, *, pool: ToolPool,
                   timeout_s: float, max_bytes: int) -> ToolOutcome:
    """One tool call in ``pool``, bounded by ``timeout_s`` and ``max_bytes``; never raises for the tool's sake."""
    try:
        return await pool.run(lambda: _call(backend, name, arguments, max_bytes), timeout_s=timeout_s)
    except TimeoutError:
        return _error(f"{tool_name(name)} took longer than {timeout_s:g} s; its result was dropped. Narrow the "
                      "query (a shorter date range, fewer people, a more specific search) and try again",
                      timed_out=True)
