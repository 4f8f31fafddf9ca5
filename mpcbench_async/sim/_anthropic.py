"""The sim's Anthropic Messages endpoint (``POST /v1/messages``): translated at the server's edge.

A request in the Messages shape becomes the chat-completions request the policies read; the policy's completion
becomes a Messages reply (or its event stream), and an error the Messages error shape (``{"type": "error",
"error": {"type", "message"}}``; a 503 is Anthropic's 529 ``overloaded_error``). Written apart from the client's
mapping (``llm/_anthropic``) on purpose: a test of the client against the sim then checks one translation against
another, not a translation against itself.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["chat_request", "error_reply", "message_events", "message_reply"]

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal"}
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
                529: "overloaded_error"}


def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """A Messages request as the chat-completions request the sim's policies read. ``ValueError`` when malformed."""
    if not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list):
        raise ValueError("request body must be JSON with a string 'model' and a list 'messages'")
    if not isinstance(body.get("max_tokens"), int):
        raise ValueError("max_tokens: Field required")
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        text = system if isinstance(system, str) else "\n\n".join(b.get("text", "") for b in system)
        messages.append({"role": "system", "content": text})
    for m in body["messages"]:
        messages += _chat_messages(m)
    chat: dict[str, Any] = {"model": body["model"], "messages": messages, "max_tokens": body["max_tokens"]}
    if body.get("tools"):
        chat["tools"] = [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                                            "parameters": t.get("input_schema", {})}}
                         for t in body["tools"]]
    for name in ("temperature", "top_p", "stream"):
        if name in body:
            chat[name] = body[name]
    return chat


def _chat_messages(m: dict[str, Any]) -> list[dict[str, Any]]:
    content = m.get("content")
    if isinstance(content, str):
        return [{"role": m.get("role", "user"), "content": content}]
    blocks = content if isinstance(content, list) else []
    if m.get("role") == "assistant":
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        calls = [{"id": b["id"], "type": "function",
                  "function": {"name": b["name"], "arguments": orjson.dumps(b.get("input", {})).decode()}}
                 for b in blocks if b.get("type") == "tool_use"]
        return [{"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})}]
    out = [{"role": "tool", "tool_call_id": b.get("tool_use_id", ""), "content": _result_text(b.get("content"))}
           for b in blocks if b.get("type") == "tool_result"]
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    return out + ([{"role": "user", "content": text}] if text else [])


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


def message_reply(completion: dict[str, Any]) -> dict[str, Any]:
    """A policy's chat completion as a Messages reply."""
    choice = completion["choices"][0]
    message = choice["message"]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message["content"]}] if message.get("content") else []
    blocks += [{"type": "tool_use", "id": "toolu_" + c["id"].removeprefix("call_"), "name": c["function"]["name"],
                "input": orjson.loads(c["function"]["arguments"] or "{}")} for c in message.get("tool_calls") or ()]
    usage = completion.get("usage") or {}
    return {"id": "msg_" + completion["id"].removeprefix("chatcmpl-"), "type": "message", "role": "assistant",
            "model": completion["model"], "content": blocks,
            "stop_reason": _STOP.get(choice.get("finish_reason") or "stop", "end_turn"), "stop_sequence": None,
            "usage": {"input_tokens": usage.get("prompt_tokens", 0), "output_tokens": usage.get("completion_tokens", 0),
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


def message_events(message: dict[str, Any], *, chunk_chars: int = 4) -> list[bytes]:
    """The Messages stream of ``message``: text in deltas of ``chunk_chars``, a tool's input as JSON deltas."""
    def event(kind: str, data: dict[str, Any]) -> bytes:
        return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **data}) + b"\n\n"

    start = {**message, "content": [], "stop_reason": None,
             "usage": {**message["usage"], "output_tokens": 1}}
    out = [event("message_start", {"message": start}), event("ping", {})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            out.append(event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}}))
            text = block["text"]
            out += [event("content_block_delta", {"index": index, "delta": {"type": "text_delta",
                                                                             "text": text[i:i + chunk_chars]}})
                    for i in range(0, len(text), chunk_chars)]
        else:
            out.append(event("content_block_start", {"index": index, "content_block": {**block, "input": {}}}))
            raw = orjson.dumps(block["input"]).decode()
            out += [event("content_block_delta", {"index": index, "delta": {"type": "input_json_delta",
                                                                             "partial_json": raw[i:i + 16]}})
                    for i in range(0, len(raw), 16)]
        out.append(event("content_block_stop", {"index": index}))
    out.append(event("message_delta", {"delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                       "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
    out.append(event("message_stop", {}))
    return out


def error_reply(status: int, body: bytes) -> tuple[int, bytes]:
    """An error reply (the chat endpoint's shape) in the Messages error shape; a 503 becomes Anthropic's 529."""
    try:
        message = orjson.loads(body)["error"]["message"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")
    status = 529 if status == 503 else status
    kind = _ERROR_TYPES.get(status, "api_error")
    return status, orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})
