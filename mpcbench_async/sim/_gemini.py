"""The sim's Gemini endpoints (``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent``):
translated at the server's edge.

A ``generateContent`` request becomes the chat-completions request the policies read; the policy's completion
becomes a ``generateContent`` reply (or, with ``alt=sse``, a stream of partial replies), and an error Google's
error shape (``{"error": {"code", "message", "status"}}``; a 429 is ``RESOURCE_EXHAUSTED`` with a ``RetryInfo``
detail). Written apart from the client's mapping (``llm/_gemini``), as ``_anthropic`` is, so a test against the sim
checks one translation against another.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["chat_request", "error_reply", "generate_reply", "reply_events"]

_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def chat_request(model: str, body: dict[str, Any]) -> dict[str, Any]:
    """A ``generateContent`` request for ``model`` (from the URL) as a chat request. ``ValueError`` when malformed."""
    if not isinstance(body.get("contents"), list):
        raise ValueError("contents: a list of Content is required")
    messages: list[dict[str, Any]] = []
    system = body.get("systemInstruction")
    if system:
        messages.append({"role": "system", "content": "".join(p.get("text", "") for p in system.get("parts", []))})
    pending: list[str] = []  # ids handed out to the model's function calls, in order, for their responses
    for n, content in enumerate(body["contents"]):
        parts = content.get("parts") or []
        if content.get("role") == "model":
            text = "".join(p.get("text", "") for p in parts if "text" in p)
            calls: list[dict[str, Any]] = [{"id": f"call_{n}_{i}", "type": "function",
                      "function": {"name": p["functionCall"]["name"],
                                   "arguments": orjson.dumps(p["functionCall"].get("args", {})).decode()}}
                     for i, p in enumerate(p for p in parts if "functionCall" in p)]
            pending = [c["id"] for c in calls]
            messages.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        for i, p in enumerate(p for p in parts if "functionResponse" in p):
            response = p["functionResponse"].get("response", {})
            content_text = response.get("content") if isinstance(response.get("content"), str) \
                else orjson.dumps(response).decode()
            messages.append({"role": "tool", "tool_call_id": pending[i] if i < len(pending) else f"call_{n}_{i}",
                             "content": content_text})
        text = "".join(p.get("text", "") for p in parts if "text" in p)
        if text or not any("functionResponse" in p for p in parts):
            messages.append({"role": "user", "content": text})
    chat: dict[str, Any] = {"model": model, "messages": messages}
    declarations = [d for tool in body.get("tools") or () for d in tool.get("functionDeclarations") or ()]
    if declarations:
        chat["tools"] = [{"type": "function", "function": {"name": d["name"], "description": d.get("description", ""),
                                                            "parameters": d.get("parameters", {})}}
                         for d in declarations]
    config = body.get("generationConfig") or {}
    for key, name in (("temperature", "temperature"), ("topP", "top_p"), ("maxOutputTokens", "max_tokens")):
        if key in config:
            chat[name] = config[key]
    return chat


def generate_reply(completion: dict[str, Any]) -> dict[str, Any]:
    """A policy's chat completion as a ``generateContent`` reply."""
    choice = completion["choices"][0]
    message = choice["message"]
    parts: list[dict[str, Any]] = [{"text": message["content"]}] if message.get("content") else []
    parts += [{"functionCall": {"name": c["function"]["name"],
                                "args": orjson.loads(c["function"]["arguments"] or "{}")}}
              for c in message.get("tool_calls") or ()]
    usage = completion.get("usage") or {}
    prompt, output = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": _FINISH.get(choice.get("finish_reason") or "stop", "STOP"), "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": output,
                              "totalTokenCount": prompt + output},
            "modelVersion": completion["model"], "responseId": completion["id"]}


def reply_events(reply: dict[str, Any], *, chunk_chars: int = 4) -> list[bytes]:
    """The ``alt=sse`` stream of ``reply``: text in pieces of ``chunk_chars``, each function call whole (as the API
    sends them), the finish reason and usage on the last event."""
    def event(parts: list[dict[str, Any]], last: bool) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": reply["modelVersion"],
                                 "responseId": reply["responseId"]}
        if last:
            candidate["finishReason"] = reply["candidates"][0]["finishReason"]
            chunk["usageMetadata"] = reply["usageMetadata"]
        return b"data: " + orjson.dumps(chunk) + b"\r\n\r\n"

    pieces: list[list[dict[str, Any]]] = []
    for part in reply["candidates"][0]["content"]["parts"]:
        if "text" in part:
            text = part["text"]
            pieces += [[{"text": text[i:i + chunk_chars]}] for i in range(0, len(text), chunk_chars)]
        else:
            pieces.append([part])
    pieces = pieces or [[]]
    return [event(parts, n == len(pieces) - 1) for n, parts in enumerate(pieces)]


def error_reply(status: int, body: bytes) -> tuple[int, bytes]:
    """An error reply (the chat endpoint's shape) in Google's error shape; a 429 says when to retry in a
    ``RetryInfo`` detail."""
    try:
        message = orjson.loads(body)["error"]["message"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")
    error: dict[str, Any] = {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}
    if status == 429:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}]
    return status, orjson.dumps({"error": error})
