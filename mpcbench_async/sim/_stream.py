"""The sim's streamed replies: a completion as OpenAI ``chat.completion.chunk`` events, written at a token pace.

The events are those of an OpenAI stream: a role chunk, the output in token chunks, a
finish chunk, a usage chunk (when ``stream_options.include_usage``) and ``data: [DONE]``.
The output (content, then each tool call's name and arguments) is split into exactly
``completion_tokens`` pieces of ~4 characters, so a client counting token chunks counts
the tokens the usage reports; a tool call's first piece carries its id and name, the
later ones its argument fragments. ``write_stream`` sends the first token at once (the
reply's latency was spent before) and one more every ``1/tokens_per_s`` s, on a fixed
schedule so sleep overshoots do not add up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import orjson
from aiohttp import web

__all__ = ["fixed_length", "stream_events", "write_stream"]

_FILLER = " lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt"


def fixed_length(content: str | None, tokens: int) -> str:
    """``content`` made exactly ``tokens`` sim tokens (4 characters each): filler words appended, or cut."""
    text = content or ""
    want = 4 * tokens
    while len(text) < want:
        text += _FILLER
    return text[:want]


def _token_deltas(message: Mapping[str, Any], tokens: int) -> list[dict[str, Any]]:
    """The message's output in ``tokens`` deltas: its content, then its tool calls (name and arguments)."""
    content: str = message.get("content") or ""
    calls: list[dict[str, Any]] = message.get("tool_calls") or []
    spans: list[tuple[int, int]] = []
    end = len(content)
    for call in calls:
        function = call["function"]
        spans.append((end, end + len(function["name"]) + len(function["arguments"])))
        end = spans[-1][1]
    deltas: list[dict[str, Any]] = []
    opened: set[int] = set()
    for piece in range(tokens):
        lo, hi = piece * end // tokens, (piece + 1) * end // tokens
        delta: dict[str, Any] = {}
        if lo < len(content):
            delta["content"] = content[lo:hi]
        parts: list[dict[str, Any]] = []
        for index, (start, stop) in enumerate(spans):
            if lo >= stop or hi <= start:
                continue
            function = calls[index]["function"]
            skip = start + len(function["name"])  # the name goes whole into the call's first delta
            arguments = function["arguments"][max(lo - skip, 0):max(min(hi, stop) - skip, 0)]
            if index in opened:
                parts.append({"index": index, "function": {"arguments": arguments}})
            else:
                opened.add(index)
                parts.append({"index": index, "id": calls[index]["id"], "type": "function",
                              "function": {"name": function["name"], "arguments": arguments}})
        if parts:
            delta["tool_calls"] = parts
        deltas.append(delta)
    return deltas


def stream_events(completion: Mapping[str, Any], *, include_usage: bool) -> tuple[list[bytes], int]:
    """The SSE events of a non-streamed ``completion`` (first choice), and how many of them are token chunks.

    The token chunks follow the first event (the role chunk); the finish chunk, usage and
    ``[DONE]`` follow them.
    """
    choice = completion["choices"][0]
    message = choice["message"]
    usage = completion["usage"]
    head = {"id": completion["id"], "object": "chat.completion.chunk", "created": completion["created"],
            "model": completion["model"]}

    def event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        return b"data: " + orjson.dumps({**head, "choices": choices, **extra}) + b"\n\n"

    role = {"role": "assistant", "content": None if message.get("content") is None else ""}
    deltas = _token_deltas(message, usage["completion_tokens"])
    events = [event([{"index": 0, "delta": role, "finish_reason": None}])]
    events += [event([{"index": 0, "delta": delta, "finish_reason": None}]) for delta in deltas]
    events.append(event([{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]))
    if include_usage:
        events.append(event([], usage=usage))
    events.append(b"data: [DONE]\n\n")
    return events, len(deltas)


async def write_stream(request: web.Request, headers: Mapping[str, str], events: list[bytes], tokens: int, *,
                       tokens_per_s: float, cut: bool) -> web.StreamResponse:
    """Send ``events`` (``tokens`` token chunks after the first) paced at ``tokens_per_s`` (0: all at once).

    ``cut`` sends the first half of the events and closes the connection (no ``[DONE]``,
    no end of the chunked body), raising ``CancelledError``: the handler is done.
    """
    response = web.StreamResponse(status=200, headers={**headers, "Content-Type": "text/event-stream",
                                                       "Cache-Control": "no-cache"})
    await response.prepare(request)
    gap = 1.0 / tokens_per_s if tokens_per_s else 0.0
    last = max(tokens - 1, 0) * gap
    offsets = [0.0, *(k * gap for k in range(tokens))] + [last] * (len(events) - tokens - 1)
    sent = events[:len(events) // 2] if cut else events
    loop = asyncio.get_running_loop()
    start = loop.time()
    pending = b""
    for offset, data in zip(offsets, sent, strict=False):
        wait = start + offset - loop.time()
        if wait > 0:
            if pending:
                await response.write(pending)
                pending = b""
            await asyncio.sleep(wait)
        pending += data
    if pending:
        await response.write(pending)
    if cut:
        if request.transport is not None:
            request.transport.close()  # flushes what was written, then closes: the body breaks off
        raise asyncio.CancelledError
    await response.write_eof()
    return response
