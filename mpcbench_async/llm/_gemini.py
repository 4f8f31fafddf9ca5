"""The Gemini API (``generateContent`` / ``streamGenerateContent``) as a transport: chat request in, completion out.

Like ``_anthropic``, this maps at the edge so everything above the transport keeps its one shape:

- the request: ``system`` messages become ``systemInstruction``; user and assistant messages become ``contents``
  (roles ``user`` and ``model``) of ``parts``; an assistant's tool calls become ``functionCall`` parts (arguments
  decoded to ``args``); ``tool`` messages become ``functionResponse`` parts of one user turn, named after the call
  they answer (the API pairs results by name); tools become ``functionDeclarations``; sampling settings go in
  ``generationConfig``;
- the reply: the first candidate's text parts join into the content, ``functionCall`` parts become tool calls,
  ``finishReason`` maps to a finish reason, ``usageMetadata`` to usage (``cachedContentTokenCount`` as cached
  prompt tokens, thinking tokens as completion tokens: both are billed as output);
- a stream (``?alt=sse``): each event is a partial reply; text parts concatenate, the last usage and finish reason
  win. TTFT is the first event with content, the gaps are between such events.

Gemini sends no rate-limit headers; its 429 (``RESOURCE_EXHAUSTED``) says when to retry in a ``RetryInfo`` detail
(``retryDelay``), which is read as the ``retry-after`` the client already honours.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import orjson

from .._exceptions import BadResponseError
from ..runtime import unit_attempt_headers
from ._anthropic_shape import content_text, tool_input
from ._provider_http import ProviderHTTPTransport, stream_timing
from ._stream import SSEParser
from ._transport import ChatRequest, Endpoint
from ._wire import StreamTiming, WireCompletion, completion_from_builtins, error_for_status, request_id_header

__all__ = ["GeminiTransport", "from_gemini", "to_gemini"]

_FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter", "RECITATION": "content_filter",
           "BLOCKLIST": "content_filter", "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
           "IMAGE_SAFETY": "content_filter"}
_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def to_gemini(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions request body as a ``generateContent`` body (see the module docstring); the model goes in
    the URL, not the body."""
    system = [content_text(m.get("content")) for m in body["messages"]
              if m.get("role") == "system" and m.get("content")]
    out: dict[str, Any] = {"contents": _contents(body["messages"])}
    if system:
        out["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
    declarations = [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
                     **({"parameters": t["function"]["parameters"]} if t["function"].get("parameters") else {})}
                    for t in body.get("tools") or () if t.get("type", "function") == "function"]
    if declarations:
        out["tools"] = [{"functionDeclarations": declarations}]
    choice = body.get("tool_choice")
    if isinstance(choice, str) and choice in _MODES:
        out["toolConfig"] = {"functionCallingConfig": {"mode": _MODES[choice]}}
    elif isinstance(choice, dict):
        out["toolConfig"] = {"functionCallingConfig": {
            "mode": "ANY", "allowedFunctionNames": [choice.get("function", {}).get("name", "")]}}
    config: dict[str, Any] = {}
    for name, key in (("temperature", "temperature"), ("top_p", "topP"), ("seed", "seed")):
        if body.get(name) is not None:
            config[key] = body[name]
    if limit := body.get("max_tokens") or body.get("max_completion_tokens"):
        config["maxOutputTokens"] = limit
    if body.get("stop"):
        config["stopSequences"] = [body["stop"]] if isinstance(body["stop"], str) else list(body["stop"])
    if config:
        out["generationConfig"] = config
    return out


def _contents(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # a tool call's id → its function's name, for the result that answers it
    for m in messages:
        role = m.get("role")
        if role == "system":
            continue
        if role == "tool":
            call_id = m.get("tool_call_id", "")
            part = {"functionResponse": {"name": names.get(call_id, call_id),
                                         "response": {"content": content_text(m.get("content"))}}}
            if out and out[-1]["role"] == "user" and all("functionResponse" in p for p in out[-1]["parts"]):
                out[-1]["parts"].append(part)  # one user turn holds every result of the turn
            else:
                out.append({"role": "user", "parts": [part]})
        elif role == "assistant":
            parts: list[dict[str, Any]] = [{"text": m["content"]}] if m.get("content") else []
            for call in m.get("tool_calls") or ():
                names[call["id"]] = call["function"]["name"]
                parts.append({"functionCall": {"name": call["function"]["name"],
                                               "args": tool_input(call["function"].get("arguments"))}})
            out.append({"role": "model", "parts": parts or [{"text": ""}]})
        else:
            out.append({"role": "user", "parts": [{"text": content_text(m.get("content"))}]})
    return out


def from_gemini(reply: dict[str, Any], *, reply_id: str = "") -> dict[str, Any]:
    """A ``generateContent`` reply as a chat completion (builtins). Tool calls get ids ``call_{n}`` unless the
    reply names them (Gemini pairs results by name; the agent loop pairs them by id)."""
    candidates = reply.get("candidates") or [{}]
    candidate = candidates[0]
    parts = (candidate.get("content") or {}).get("parts") or []
    text = "".join(p.get("text", "") for p in parts if "text" in p and not p.get("thought"))
    calls = [{"id": p["functionCall"].get("id") or f"call_{n}", "type": "function",
              "function": {"name": p["functionCall"].get("name", ""),
                           "arguments": orjson.dumps(p["functionCall"].get("args") or {}).decode()}}
             for n, p in enumerate(p for p in parts if "functionCall" in p)]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    blocked = (reply.get("promptFeedback") or {}).get("blockReason")
    finish = "tool_calls" if calls else "content_filter" if blocked else _FINISH.get(
        candidate.get("finishReason") or "STOP", "stop")
    usage = reply.get("usageMetadata") or {}
    prompt = usage.get("promptTokenCount") or 0
    completion = (usage.get("candidatesTokenCount") or 0) + (usage.get("thoughtsTokenCount") or 0)
    return {"id": reply.get("responseId") or reply_id, "model": reply.get("modelVersion", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": usage.get("cachedContentTokenCount") or 0}}}


class _StreamedReply:
    """A ``streamGenerateContent`` SSE stream folded into one reply, with the times of its content events."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.parts: list[dict[str, Any]] = []
        self.reply: dict[str, Any] = {}
        self.finish: str | None = None
        self.times: list[float] = []

    def event(self, chunk: dict[str, Any]) -> None:
        candidate = (chunk.get("candidates") or [{}])[0]
        parts = (candidate.get("content") or {}).get("parts") or []
        if parts:
            self.times.append(time.perf_counter())
        for part in parts:
            if "text" in part and self.parts and "text" in self.parts[-1] \
                    and bool(part.get("thought")) == bool(self.parts[-1].get("thought")):
                self.parts[-1] = {**self.parts[-1], "text": self.parts[-1]["text"] + part["text"]}
            else:
                self.parts.append(dict(part))
        self.finish = candidate.get("finishReason") or self.finish
        self.reply.update({k: v for k, v in chunk.items() if k != "candidates"})

    def folded(self) -> dict[str, Any]:
        return {**self.reply, "candidates": [{"content": {"role": "model", "parts": self.parts},
                                              "finishReason": self.finish}]}

    def timing(self) -> StreamTiming:
        return stream_timing(self.started, self.times)


def retry_hint(status: int, body: bytes, headers: Any) -> dict[str, str]:
    """The reply's headers, plus a ``retry-after`` from a 429's ``RetryInfo.retryDelay`` when none was sent."""
    out = dict(headers)
    if status != 429 or any(k.lower() == "retry-after" for k in out):
        return out
    try:
        details = orjson.loads(body)["error"].get("details") or []
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return out
    for detail in details:
        if isinstance(detail, dict) and (match := _DELAY.match(str(detail.get("retryDelay", "")))):
            out["retry-after"] = match.group(1)
    return out


class GeminiTransport(ProviderHTTPTransport):
    """POST to ``{base_url}/models/{model}:generateContent`` (``:streamGenerateContent?alt=sse`` when streaming)
    with ``x-goog-api-key``; map both ways."""

    name = "gemini"


    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        model = str(request.body.get("model") or endpoint.api_model)
        stream = request.body.get("stream") is True
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        url = f"{endpoint.base_url.rstrip('/')}/models/{quote(model, safe='')}:{method}"
        headers = {"Content-Type": "application/json", "User-Agent": "mpcbench-async", "Idempotency-Key": request.key,
                   **unit_attempt_headers(), **endpoint.headers}
        if endpoint.api_key:
            headers["x-goog-api-key"] = endpoint.api_key
        started = time.perf_counter()
        async with self._post(endpoint, url, orjson.dumps(to_gemini(request.body)), headers) as response:
            if response.status != 200:
                raw = await response.read()
                raise error_for_status(response.status, raw, retry_hint(response.status, raw, response.headers),
                                       model=endpoint.model, endpoint=url)
            if stream and "text/event-stream" in response.headers.get("Content-Type", ""):
                folded = await _read_stream(response.content.iter_any(), started, endpoint, url)
                completion = completion_from_builtins(from_gemini(folded.folded()), model=endpoint.model,
                                                      endpoint=url)
                completion.stream = folded.timing()
            else:
                raw = await response.read()
                reply = _decode(raw, endpoint, url)
                if "candidates" not in reply and "promptFeedback" not in reply:
                    raise BadResponseError(f"not a generateContent reply: {raw[:200]!r}", model=endpoint.model,
                                           endpoint=url)
                completion = completion_from_builtins(from_gemini(reply), model=endpoint.model, endpoint=url)
            completion.request_id = request_id_header(response.headers)
            return completion


def _decode(raw: bytes, endpoint: Endpoint, url: str) -> dict[str, Any]:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadResponseError(f"undecodable reply ({exc}): {raw[:200]!r}", model=endpoint.model,
                               endpoint=url) from exc
    if not isinstance(value, dict):
        raise BadResponseError(f"not a generateContent reply: {raw[:200]!r}", model=endpoint.model, endpoint=url)
    return value


async def _read_stream(chunks: AsyncIterator[bytes], started: float, endpoint: Endpoint, url: str) -> _StreamedReply:
    folded, parser = _StreamedReply(started), SSEParser()
    async for chunk in chunks:
        for _kind, data in parser.feed(chunk):
            folded.event(_decode(data, endpoint, url))
    for _kind, data in parser.close():
        folded.event(_decode(data, endpoint, url))
    if folded.finish is None:
        raise BadResponseError("the stream ended before a finishReason (cut off)", model=endpoint.model,
                               endpoint=url)
    return folded
