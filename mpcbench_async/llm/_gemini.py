"""Google's Gemini API (``generateContent``, ``streamGenerateContent?alt=sse``) as a transport, mapped at the edge.

As for Anthropic (``_anthropic``), everything above the transport keeps the one chat shape. The request: system
messages become ``systemInstruction``; turns become ``contents`` with roles ``user`` and ``model``; an assistant's
tool calls become ``functionCall`` parts (arguments decoded to ``args``) and tool messages ``functionResponse`` parts
(named by the call they answer, the result under ``response.content``); tools become ``functionDeclarations``;
``max_tokens``, ``temperature``, ``top_p`` and ``stop`` go into ``generationConfig``. The reply: text parts join into
the content, ``functionCall`` parts become tool calls (ids made up when the API sends none), the finish reason maps,
and ``usageMetadata`` gives the tokens (``cachedContentTokenCount``: cached input). A stream's chunks are folded into
the same reply, timed as other streams are. The key travels in ``x-goog-api-key`` (never in the URL).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import aiohttp
import orjson

from .._exceptions import BadResponseError, LLMConnectionError
from ..runtime import unit_attempt_headers
from ._anthropic import _input, _text
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

__all__ = ["GeminiTransport", "from_gemini", "to_gemini"]

_FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter", "RECITATION": "content_filter",
           "PROHIBITED_CONTENT": "content_filter", "BLOCKLIST": "content_filter", "SPII": "content_filter"}


def to_gemini(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions request body as a ``generateContent`` body (the model goes in the URL)."""
    names: dict[str, str] = {}  # tool call id -> function name: a functionResponse is named by its call
    contents: list[dict[str, Any]] = []
    system = [m["content"] for m in body["messages"] if m.get("role") == "system" and m.get("content")]
    for m in body["messages"]:
        role = m.get("role")
        if role == "system":
            continue
        if role == "tool":
            part = {"functionResponse": {"name": names.get(m.get("tool_call_id", ""), "tool"),
                                         "response": {"content": _text(m.get("content"))}}}
            if contents and contents[-1]["role"] == "user" and "functionResponse" in contents[-1]["parts"][0]:
                contents[-1]["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
        elif role == "assistant":
            parts: list[dict[str, Any]] = [{"text": m["content"]}] if m.get("content") else []
            for call in m.get("tool_calls") or ():
                names[call["id"]] = call["function"]["name"]
                parts.append({"functionCall": {"name": call["function"]["name"],
                                               "args": _input(call["function"].get("arguments"))}})
            contents.append({"role": "model", "parts": parts or [{"text": ""}]})
        else:
            contents.append({"role": "user", "parts": [{"text": _text(m.get("content"))}]})
    out: dict[str, Any] = {"contents": contents}
    if system:
        out["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
    declarations = [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
                     **({"parameters": t["function"]["parameters"]} if t["function"].get("parameters") else {})}
                    for t in body.get("tools") or () if t.get("type", "function") == "function"]
    if declarations:
        out["tools"] = [{"functionDeclarations": declarations}]
    config = {key: body[name] for name, key in (("temperature", "temperature"), ("top_p", "topP"))
              if body.get(name) is not None}
    if body.get("max_tokens") or body.get("max_completion_tokens"):
        config["maxOutputTokens"] = body.get("max_tokens") or body.get("max_completion_tokens")
    if body.get("stop"):
        config["stopSequences"] = [body["stop"]] if isinstance(body["stop"], str) else list(body["stop"])
    if config:
        out["generationConfig"] = config
    return out


def from_gemini(reply: dict[str, Any]) -> dict[str, Any]:
    """A ``generateContent`` reply (or the fold of a stream's chunks) as a chat completion (builtins)."""
    candidates = reply.get("candidates") or [{}]
    candidate = candidates[0]
    parts = (candidate.get("content") or {}).get("parts") or []
    text = "".join(p.get("text", "") for p in parts if "text" in p and not p.get("thought"))
    prefix = f"call_{reply['responseId']}_" if reply.get("responseId") else "call_"  # unique across the turns
    calls = [{"id": p["functionCall"].get("id") or f"{prefix}{i}", "type": "function",
              "function": {"name": p["functionCall"].get("name", ""),
                           "arguments": orjson.dumps(p["functionCall"].get("args") or {}).decode()}}
             for i, p in enumerate(q for q in parts if "functionCall" in q)]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    finish = "tool_calls" if calls else _FINISH.get(candidate.get("finishReason") or "STOP", "stop")
    usage = reply.get("usageMetadata") or {}
    prompt, completion = usage.get("promptTokenCount") or 0, usage.get("candidatesTokenCount") or 0
    return {"id": reply.get("responseId", ""), "model": reply.get("modelVersion", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": usage.get("totalTokenCount") or prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": usage.get("cachedContentTokenCount") or 0}}}


class _Folded:
    """A stream's chunks folded into one reply: text parts joined, function calls kept, the last usage."""

    def __init__(self, started: float) -> None:
        self.started, self.times = started, list[float]()
        self.text, self.calls, self.last = "", list[dict[str, Any]](), dict[str, Any]()

    def chunk(self, data: dict[str, Any]) -> None:
        self.last = {**self.last, **{k: v for k, v in data.items() if k != "candidates"}}
        for candidate in (data.get("candidates") or [])[:1]:
            parts = (candidate.get("content") or {}).get("parts") or []
            if parts:
                self.times.append(time.perf_counter())
            self.text += "".join(p.get("text", "") for p in parts if "text" in p and not p.get("thought"))
            self.calls += [p for p in parts if "functionCall" in p]
            if candidate.get("finishReason"):
                self.last["finishReason"] = candidate["finishReason"]

    def reply(self) -> dict[str, Any]:
        parts = ([{"text": self.text}] if self.text else []) + self.calls
        candidate = {"content": {"role": "model", "parts": parts}, "finishReason": self.last.get("finishReason")}
        return {**self.last, "candidates": [candidate]}

    def timing(self) -> StreamTiming:
        if not self.times:
            return StreamTiming(ttft_s=round(time.perf_counter() - self.started, 6), itl_s=[], chunks=0)
        gaps = [round(b - a, 6) for a, b in zip(self.times, self.times[1:], strict=False)]
        return StreamTiming(ttft_s=round(self.times[0] - self.started, 6), itl_s=gaps, chunks=len(self.times))


class GeminiTransport(Transport):
    """POST to ``{base_url}/models/{model}:generateContent`` (or ``:streamGenerateContent?alt=sse``)."""

    name = "gemini"

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=30),
                                                  skip_auto_headers=("User-Agent",))
        return self._session

    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        model = quote(str(request.body.get("model", endpoint.api_model)), safe="")
        stream = request.body.get("stream") is True
        url = (endpoint.base_url.rstrip("/") + f"/models/{model}:"
               + ("streamGenerateContent?alt=sse" if stream else "generateContent"))
        headers = {"Content-Type": "application/json", "User-Agent": "mpcbench-async", "Idempotency-Key": request.key,
                   **unit_attempt_headers(), **endpoint.headers}
        if endpoint.api_key:
            headers["x-goog-api-key"] = endpoint.api_key
        started = time.perf_counter()
        timeout = aiohttp.ClientTimeout(sock_connect=endpoint.connect_s, sock_read=endpoint.read_s)
        try:
            async with self._get_session().post(url, data=orjson.dumps(to_gemini(request.body)), headers=headers,
                                                timeout=timeout) as response:
                if response.status != 200:
                    raise error_for_status(response.status, await response.read(), response.headers,
                                           model=endpoint.model, endpoint=url)
                if stream:
                    folded, parser = _Folded(started), SSEParser()
                    async for chunk in response.content.iter_any():
                        for _, data in parser.feed(chunk):
                            folded.chunk(_json(data, endpoint, url))
                    for _, data in parser.close():
                        folded.chunk(_json(data, endpoint, url))
                    reply, timing = folded.reply(), folded.timing()
                else:
                    reply, timing = _json(await response.read(), endpoint, url), None
                if not isinstance(reply, dict) or not reply.get("candidates"):
                    raise BadResponseError(f"not a generateContent reply: {str(reply)[:200]!r}",
                                           model=endpoint.model, endpoint=url)
                completion = completion_from_builtins(from_gemini(reply), model=endpoint.model, endpoint=url)
                completion.stream = timing
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

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _json(data: bytes, endpoint: Endpoint, url: str) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadResponseError(f"undecodable reply ({exc}): {data[:200]!r}", model=endpoint.model,
                               endpoint=url) from exc
