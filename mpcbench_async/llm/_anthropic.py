"""The Anthropic Messages API as a transport: the project's chat request in, its completion shape out.

Everything above the transport speaks one shape (OpenAI's chat completions: messages, tool calls, usage), so the
agent loop, checks, judges, cache, budgets, prices and records work unchanged for a ``"provider": "anthropic"``
model. This module maps at the edge, both ways:

- the request: ``system`` messages become the top-level ``system``; an assistant's tool calls become ``tool_use``
  blocks (arguments decoded to ``input``); ``tool`` messages become ``tool_result`` blocks of one user message
  (consecutive results together, as the API requires); tools get an ``input_schema``; ``max_tokens``, which the
  API requires, defaults to ``DEFAULT_MAX_TOKENS``; with ``prompt_cache`` the stable prefix (the system prompt and
  the tools) is marked ``cache_control: ephemeral``;
- the reply: text blocks join into the content, ``tool_use`` blocks become tool calls (``input`` encoded back to
  arguments), ``stop_reason`` maps to a finish reason, and usage counts cache reads and writes as prompt tokens
  (``cached_tokens``: the reads, priced as cached input);
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

import aiohttp
import orjson

from .._exceptions import BadResponseError, LLMConnectionError
from ..runtime import unit_attempt_headers
from ._stream import SSEParser
from ._transport import ChatRequest, Endpoint, Transport
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
DEFAULT_MAX_TOKENS = 4096
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
           "pause_turn": "stop", "refusal": "content_filter"}
_CACHED = {"type": "ephemeral"}


def to_anthropic(body: dict[str, Any], *, prompt_cache: bool = False) -> dict[str, Any]:
    """A chat-completions request body as a Messages API body (see the module docstring)."""
    system = [m["content"] for m in body["messages"] if m.get("role") == "system" and m.get("content")]
    out: dict[str, Any] = {"model": body["model"], "messages": _messages(body["messages"]),
                           "max_tokens": body.get("max_tokens") or body.get("max_completion_tokens")
                           or DEFAULT_MAX_TOKENS}
    if system:
        block: dict[str, Any] = {"type": "text", "text": "\n\n".join(system)}
        out["system"] = [{**block, "cache_control": _CACHED}] if prompt_cache else [block]
    tools = [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
              "input_schema": t["function"].get("parameters") or {"type": "object", "properties": {}}}
             for t in body.get("tools") or () if t.get("type", "function") == "function"]
    if tools:
        if prompt_cache:
            tools[-1] = {**tools[-1], "cache_control": _CACHED}
        out["tools"] = tools
    choice = body.get("tool_choice")
    if choice in ("auto", "none", "required") or isinstance(choice, dict):
        out["tool_choice"] = ({"type": "any"} if choice == "required" else {"type": choice} if isinstance(choice, str)
                              else {"type": "tool", "name": choice.get("function", {}).get("name", "")})
    for name in ("temperature", "top_p", "stream"):
        if body.get(name) is not None:
            out[name] = body[name]
    if body.get("stop"):
        out["stop_sequences"] = [body["stop"]] if isinstance(body["stop"], str) else list(body["stop"])
    return out


def _messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m.get("role")
        if role == "system":
            continue
        if role == "tool":
            result = {"type": "tool_result", "tool_use_id": m.get("tool_call_id", ""),
                      "content": _text(m.get("content"))}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list) \
                    and all(b.get("type") == "tool_result" for b in out[-1]["content"]):
                out[-1]["content"].append(result)  # one user message holds every result of the turn
            else:
                out.append({"role": "user", "content": [result]})
        elif role == "assistant" and m.get("tool_calls"):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m["content"]}] if m.get("content") else []
            blocks += [{"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                        "input": _input(c["function"].get("arguments"))} for c in m["tool_calls"]]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": "assistant" if role == "assistant" else "user", "content": _text(m.get("content"))})
    return out


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts: the text ones
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _input(arguments: str | None) -> Any:
    """A tool call's arguments as the API's ``input`` object (text that is no JSON object travels as a string)."""
    try:
        value = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"value": value}


def from_anthropic(message: dict[str, Any]) -> dict[str, Any]:
    """A Messages API reply as a chat completion (builtins; ``completion_from_builtins`` makes it a
    ``WireCompletion``)."""
    blocks = message.get("content") or []
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    calls = [{"id": b.get("id", ""), "type": "function",
              "function": {"name": b.get("name", ""), "arguments": orjson.dumps(b.get("input") or {}).decode()}}
             for b in blocks if b.get("type") == "tool_use"]
    reply: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        reply["tool_calls"] = calls
    usage = message.get("usage") or {}
    read = usage.get("cache_read_input_tokens") or 0
    prompt = (usage.get("input_tokens") or 0) + read + (usage.get("cache_creation_input_tokens") or 0)
    completion = usage.get("output_tokens") or 0
    return {"id": message.get("id", ""), "model": message.get("model", ""),
            "choices": [{"index": 0, "message": reply,
                         "finish_reason": _FINISH.get(message.get("stop_reason") or "", "stop")}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": read}}}


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
                self.message["content"][index]["input"] = _input(self.partial.pop(index) or "{}")
        elif kind == "message_delta":
            self.message.update(data.get("delta") or {})
            self.message["usage"].update(data.get("usage") or {})
        elif kind == "message_stop":
            self.stopped = True

    def timing(self) -> StreamTiming:
        if not self.times:
            return StreamTiming(ttft_s=round(time.perf_counter() - self.started, 6), itl_s=[], chunks=0)
        gaps = [round(b - a, 6) for a, b in zip(self.times, self.times[1:], strict=False)]
        return StreamTiming(ttft_s=round(self.times[0] - self.started, 6), itl_s=gaps, chunks=len(self.times))


class AnthropicTransport(Transport):
    """POST to ``{base_url}/messages`` with ``x-api-key`` and ``anthropic-version``; map both ways."""

    name = "anthropic"

    def __init__(self, *, prompt_cache: bool = False) -> None:
        self._session: aiohttp.ClientSession | None = None
        self.prompt_cache = prompt_cache

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=30),
                                                  skip_auto_headers=("User-Agent",))
        return self._session

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
        timeout = aiohttp.ClientTimeout(sock_connect=endpoint.connect_s, sock_read=endpoint.read_s)
        try:
            async with self._get_session().post(url, data=orjson.dumps(body), headers=headers,
                                                timeout=timeout) as response:
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
        except aiohttp.ConnectionTimeoutError as exc:
            raise endpoint.connect_timeout() from exc
        except aiohttp.ServerTimeoutError as exc:
            raise endpoint.read_timeout() from exc
        except aiohttp.ClientPayloadError as exc:
            raise BadResponseError(f"truncated reply ({exc})", model=endpoint.model, endpoint=url) from exc
        except (aiohttp.ClientConnectionError, aiohttp.ClientResponseError) as exc:
            raise LLMConnectionError(f"connection failed ({type(exc).__name__}: {exc})", model=endpoint.model,
                                     endpoint=url) from exc

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

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


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
