"""The sim's Gemini endpoints (``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent``).

Translated at the server's edge, as ``_anthropic`` is, and written apart from the client's mapping (``llm/_gemini``):
a ``generateContent`` request becomes the chat request the policies read, the policy's completion a
``GenerateContentResponse`` (or its ``alt=sse`` chunks), and an error Google's shape (``{"error": {"code",
"message", "status"}}``: a 429 is ``RESOURCE_EXHAUSTED``).
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["chat_request", "error_reply", "reply_chunks", "reply_of"]

_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def chat_request(model: str, body: dict[str, Any]) -> dict[str, Any]:
    """A ``generateContent`` body (its model from the URL) as a chat request. ``ValueError`` when malformed."""
    if not isinstance(body.get("contents"), list):
        raise ValueError("* GenerateContentRequest.contents: contents is not specified")
    messages: list[dict[str, Any]] = []
    system = body.get("systemInstruction")
    if system:
        messages.append({"role": "system", "content": "".join(p.get("text", "") for p in system.get("parts", []))})
    calls = 0
    for content in body["contents"]:
        parts = content.get("parts") or []
        if content.get("role") == "model":
            text = "".join(p.get("text", "") for p in parts if "text" in p)
            tool_calls = []
            for p in parts:
                if "functionCall" in p:
                    tool_calls.append({"id": f"g{calls}", "type": "function",
                                       "function": {"name": p["functionCall"]["name"],
                                                    "arguments": orjson.dumps(p["functionCall"].get("args", {}))
                                                    .decode()}})
                    calls += 1
            messages.append({"role": "assistant", "content": text or None,
                             **({"tool_calls": tool_calls} if tool_calls else {})})
            continue
        answered = calls - sum(1 for p in parts if "functionResponse" in p)
        for p in parts:
            if "functionResponse" in p:
                response = p["functionResponse"].get("response") or {}
                content_text = response.get("content", response)
                messages.append({"role": "tool", "tool_call_id": f"g{answered}",
                                 "content": content_text if isinstance(content_text, str)
                                 else orjson.dumps(content_text).decode()})
                answered += 1
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
    if config.get("maxOutputTokens"):
        chat["max_tokens"] = config["maxOutputTokens"]
    return chat


def reply_of(completion: dict[str, Any]) -> dict[str, Any]:
    """A policy's chat completion as a ``GenerateContentResponse``."""
    choice = completion["choices"][0]
    message = choice["message"]
    parts: list[dict[str, Any]] = [{"text": message["content"]}] if message.get("content") else []
    parts += [{"functionCall": {"name": c["function"]["name"], "args": orjson.loads(c["function"]["arguments"] or
                                                                                     "{}")}}
              for c in message.get("tool_calls") or ()]
    usage = completion.get("usage") or {}
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": _FINISH.get(choice.get("finish_reason") or "stop", "STOP"), "index": 0}],
            "usageMetadata": {"promptTokenCount": usage.get("prompt_tokens", 0),
                              "candidatesTokenCount": usage.get("completion_tokens", 0),
                              "totalTokenCount": usage.get("total_tokens", 0)},
            "modelVersion": completion["model"], "responseId": completion["id"].removeprefix("chatcmpl-")}


def reply_chunks(reply: dict[str, Any], *, chunk_chars: int = 8) -> list[bytes]:
    """The ``alt=sse`` stream of ``reply``: its text in chunks, function calls whole in the last, usage at the end."""
    candidate = reply["candidates"][0]
    parts = candidate["content"]["parts"]
    text = "".join(p.get("text", "") for p in parts if "text" in p)
    calls = [p for p in parts if "functionCall" in p]
    pieces: list[list[dict[str, Any]]] = [[{"text": text[i:i + chunk_chars]}]
                                          for i in range(0, len(text), chunk_chars)]
    if calls or not pieces:
        pieces.append(calls or [{"text": ""}])
    out = []
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        chunk: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": piece}, "index": 0,
                                                 **({"finishReason": candidate["finishReason"]} if last else {})}],
                                 "modelVersion": reply["modelVersion"], "responseId": reply["responseId"]}
        if last:
            chunk["usageMetadata"] = reply["usageMetadata"]
        out.append(b"data: " + orjson.dumps(chunk) + b"\r\n\r\n")
    return out


def error_reply(status: int, body: bytes) -> bytes:
    """An error reply (the chat endpoint's shape) in Google's error shape."""
    try:
        message = orjson.loads(body)["error"]["message"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")
    return orjson.dumps({"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}})
