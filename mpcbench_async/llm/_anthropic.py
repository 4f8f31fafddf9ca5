"""The Anthropic Messages API as a transport: the project's chat request in, its completion shape out.

Everything above the transport speaks one shape (OpenAI's chat completions: messages, tool calls, usage), so the
agent loop, checks, judges, cache, budgets, prices and records work unchanged for a ``"provider": "anthropic"``
model. This module maps at the edge, both ways:

- the request and the reply: see ``_anthropic_shape`` (the mapping, apart from the HTTP);
- a stream: its events (``message_start``, ``content_block_start``/``delta``/``stop``, ``message_delta``,
  ``message_stop``) assembled into the same reply, timed as the OpenAI stream is (TTFT at the first delta, the
  gaps between deltas).

Errors keep the client's rules (``error_for_status``): 429 with its ``retry-after``, 529 (overloaded) and other 5xx
retried, the rest permanent; ``anthropic-ratelimit-*`` headers pace the model like ``x-ratelimit-*`` ones.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

from .._exceptions import BadResponseError
from ..runtime import unit_attempt_headers
from ._anthropic_shape import DEFAULT_MAX_TOKENS, from_anthropic, to_anthropic, tool_input
from ._provider_http import ProviderHTTPTransport, stream_timing
from ._stream import SSEParser
from ._transport import ChatRequest, Endpoint
from ._wire import (
    StreamTiming,
    WireCompletion,
    completion_from_builtins,
    error_for_status,
    rate_limit_headers,
    request_id_header,
)

__all__ = ["API_VERSION", "DEFAULT_MAX_TOKENS", "AnthropicTransport", "from_anthropic", "to_anthropic"]

API_VERSION = "2023-06-01"


class _StreamedMessage:
    """A Messages stream's events folded into the message they describe, with the delta times."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.message: dict[str, Any] = {"content": [], "usage": {}}
        self.partial: dict[int, str] = {}  # a tool_use block's input JSON, as its deltas arrive
        self.times: list[float] = []
        self.stopped = False

    def event(self, kind: str, data: dict[str, Any]) -> None:
        kind = data.get("type", kind)
        if kind == "message_start":
            start = data.get("message") or {}
            self.message.update({k: v for k, v in start.items() if k != "content"})
            self.message["usage"] = dict(start.get("usage") or {})
        elif kind == "content_block_start":
            self.message["content"].append(dict(data.get("content_block") or {}))
        elif kind == "content_block_delta":
            self.times.append(time.perf_counter())
            index, delta = data.get("index", len(self.message["content"]) - 1), data.get("delta") or {}
            block = self.message["content"][index]
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif delta.get("type") == "input_json_delta":
                self.partial[index] = self.partial.get(index, "") + delta.get("partial_json", "")
        elif kind == "content_block_stop":
            index = data.get("index", len(self.message["content"]) - 1)
            if index in self.partial:
                self.message["content"][index]["input"] = tool_input(self.partial.pop(index) or "{}")
        elif kind == "message_delta":
            self.message.update(data.get("delta") or {})
            self.message["usage"].update(data.get("usage") or {})
        elif kind == "message_stop":
            self.stopped = True

    def timing(self) -> StreamTiming:
        return stream_timing(self.started, self.times)


class AnthropicTransport(ProviderHTTPTransport):
    """POST to ``{base_url}/messages`` with ``x-api-key`` and ``anthropic-version``; map both ways."""

    name = "anthropic"

    def __init__(self, *, prompt_cache: bool = False) -> None:
        super().__init__()
        self.prompt_cache = prompt_cache

    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        url = endpoint.base_url.rstrip("/") + "/messages"
        body = to_anthropic({**request.body, "model": request.body.get("model", endpoint.api_model)},
                            prompt_cache=self.prompt_cache)
        headers = {"Content-Type": "application/json", "User-Agent": "mpcbench-async",
                   "anthropic-version": API_VERSION, "Idempotency-Key": request.key, **unit_attempt_headers(),
                   **endpoint.headers}
        if endpoint.api_key:
            headers["x-api-key"] = endpoint.api_key
        stream = body.get("stream") is True
        started = time.perf_counter()
        async with self._post(endpoint, url, orjson.dumps(body), headers) as response:
            if response.status != 200:
                raise error_for_status(response.status, await response.read(), response.headers,
                                       model=endpoint.model, endpoint=url)
            if stream and "text/event-stream" in response.headers.get("Content-Type", ""):
                folded = await self._read_stream(response.content.iter_any(), started, endpoint, url)
                completion = completion_from_builtins(from_anthropic(folded.message), model=endpoint.model,
                                                      endpoint=url)
                completion.stream = folded.timing()
            else:
                raw = await response.read()
                try:
                    message = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    raise BadResponseError(f"undecodable reply body ({exc}): {raw[:200]!r}",
                                           model=endpoint.model, endpoint=url) from exc
                if not isinstance(message, dict) or message.get("type") != "message":
                    raise BadResponseError(f"not a Messages API reply: {raw[:200]!r}", model=endpoint.model,
                                           endpoint=url)
                completion = completion_from_builtins(from_anthropic(message), model=endpoint.model,
                                                      endpoint=url)
            completion.rate_limit_headers = rate_limit_headers(response.headers)
            completion.request_id = request_id_header(response.headers)
            return completion

    @staticmethod
    async def _read_stream(chunks: AsyncIterator[bytes], started: float, endpoint: Endpoint,
                           url: str) -> _StreamedMessage:
        folded, parser = _StreamedMessage(started), SSEParser()
        async for chunk in chunks:
            for kind, data in parser.feed(chunk):
                _fold(folded, kind, data, endpoint, url)
        for kind, data in parser.close():
            _fold(folded, kind, data, endpoint, url)
        if not folded.stopped:
            raise BadResponseError("the stream ended before message_stop (cut off)", model=endpoint.model,
                                   endpoint=url)
        return folded


def _fold(folded: _StreamedMessage, kind: str, data: bytes, endpoint: Endpoint, url: str) -> None:
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadResponseError(f"undecodable stream event ({exc}): {data[:200]!r}", model=endpoint.model,
                               endpoint=url) from exc
    if kind == "error" or event.get("type") == "error":  # an error inside a 200 stream: overloaded, mostly
        error = event.get("error") or {}
        raise error_for_status(529 if error.get("type") == "overloaded_error" else 500, data, {},
                               model=endpoint.model, endpoint=url)
    if kind != "ping":
        folded.event(kind, event)
