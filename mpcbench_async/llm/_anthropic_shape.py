"""The Anthropic Messages API's request and reply shapes, mapped to and from the project's chat shape.

Kept apart from the HTTP transport (``_anthropic``) so that anything else that speaks the Messages shape (a batch
of Message Batches requests, say) maps the same way:

- the request (``to_anthropic``): ``system`` messages become the top-level ``system``; an assistant's tool calls
  become ``tool_use`` blocks (arguments decoded to ``input``); ``tool`` messages become ``tool_result`` blocks of one
  user message (consecutive results together, as the API requires); tools get an ``input_schema``; ``max_tokens``,
  which the API requires, defaults to ``DEFAULT_MAX_TOKENS``; with ``prompt_cache`` the stable prefix (the system
  prompt and the tools) is marked ``cache_control: ephemeral``;
- the reply (``from_anthropic``): text blocks join into the content, ``tool_use`` blocks become tool calls
  (``input`` encoded back to arguments), ``stop_reason`` maps to a finish reason, and usage counts cache reads and
  writes as prompt tokens (``cached_tokens``: the reads, priced as cached input; ``cache_write_tokens``: the
  writes, priced at the cache-write rate).
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["DEFAULT_MAX_TOKENS", "content_text", "from_anthropic", "to_anthropic", "tool_input"]

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
                      "content": content_text(m.get("content"))}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list) \
                    and all(b.get("type") == "tool_result" for b in out[-1]["content"]):
                out[-1]["content"].append(result)  # one user message holds every result of the turn
            else:
                out.append({"role": "user", "content": [result]})
        elif role == "assistant" and m.get("tool_calls"):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m["content"]}] if m.get("content") else []
            blocks += [{"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                        "input": tool_input(c["function"].get("arguments"))} for c in m["tool_calls"]]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": "assistant" if role == "assistant" else "user",
                        "content": content_text(m.get("content"))})
    return out


def content_text(content: Any) -> str:
    """A message's content as text (of content parts, the text ones)."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def tool_input(arguments: str | None) -> Any:
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
    read, written = usage.get("cache_read_input_tokens") or 0, usage.get("cache_creation_input_tokens") or 0
    prompt = (usage.get("input_tokens") or 0) + read + written
    completion = usage.get("output_tokens") or 0
    return {"id": message.get("id", ""), "model": message.get("model", ""),
            "choices": [{"index": 0, "message": reply,
                         "finish_reason": _FINISH.get(message.get("stop_reason") or "", "stop")}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": read, "cache_write_tokens": written}}}
