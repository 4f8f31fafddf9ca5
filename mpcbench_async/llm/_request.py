"""How a ``chat`` call becomes its ``ChatRequest`` (body, bytes sent, key), each message encoded once.

An agent resends its whole conversation and its tool schemas every turn (a sweep's requests are ~12 KB, about
half of it the nine schemas), so encoding each body whole costs in the square of the turns (issue 31). The bytes
sent are still exactly ``orjson.dumps(body)``, put together from parts encoded once: orjson's compact output of a
dict is ``{``, its ``"key":value`` pairs in insertion order joined by ``,``, then ``}`` (a list likewise, in ``[``
``]``), and a value's encoding depends on that value alone, so joining the parts' bytes gives the same bytes.

- The tool schemas' bytes are kept with their builtins, for the tools object last seen (by identity, as the
  builtins alone were kept before).
- A message's bytes are kept under ``id(message)`` while the message lives (a weak reference's callback drops
  them with it) and used only while that weak reference still points at the message and each of its fields
  still holds the very object that was encoded. ``Message`` is the one mutable record, but those objects are
  strings or ``None``, which cannot change, so the same objects encode to the same bytes. A message of any other
  shape (a subclass, tool calls, a field that is no string) is encoded every time.

A request without tools of one or two messages (a judge's, a single prompt: new messages, sent once) is encoded
whole, as joining parts costs more than it saves there (0.8 µs more on one short message); so is a request whose
params name ``model``, ``messages`` or ``tools`` (they replace the body's own in place). The body dict is built
as before, with fresh builtins of the messages for each request, for the layers and transports that read it.
"""

from __future__ import annotations

import functools
import hashlib
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec
import orjson

from ..records import Message, ToolSchema
from ._config import ModelSettings
from ._transport import ChatRequest

__all__ = ["RequestBuilder"]

_OWN_KEYS = frozenset({"model", "messages", "tools"})
"""The body's own keys: params naming one replace it in place, so that body is encoded whole."""

# one message's kept bytes: (a weak reference to it, its role, content, tool_call_id and name, the bytes)
_Kept = tuple["weakref.ref[Message]", str, "str | None", "str | None", "str | None", bytes]


class RequestBuilder:
    """Builds each call's ``ChatRequest``; keeps the encoded bytes of the tools and of each live message."""

    def __init__(self) -> None:
        self._tools: tuple[Sequence[ToolSchema], Any, bytes] | None = None
        self._kept: dict[int, _Kept] = {}
        self._forget: Callable[..., Any] = self._kept.pop  # a C callable: a freed message runs no Python call

    def build(self, settings: ModelSettings, api_model: str, messages: Sequence[Message],
              tools: Sequence[ToolSchema] | None, params: Mapping[str, Any], key: str | None) -> ChatRequest:
        """The request: ``settings.params`` overridden by ``params``; ``key`` by default a hash of the bytes."""
        merged = {**settings.params, **params}
        if merged.get("stream") is True and "stream_options" not in merged:
            merged["stream_options"] = {"include_usage": True}  # the usage comes in a final chunk only if asked
        if settings.reasoning:
            merged.pop("temperature", None)
            if "max_tokens" in merged:
                merged["max_completion_tokens"] = merged.pop("max_tokens")
        built = msgspec.to_builtins(messages)
        body: dict[str, Any] = {"model": api_model, "messages": built}
        tools_bytes = b""
        if tools:
            encoded_tools = self._tools
            if encoded_tools is None or encoded_tools[0] is not tools:
                tools_builtins = msgspec.to_builtins(tools)
                encoded_tools = self._tools = (tools, tools_builtins, orjson.dumps(tools_builtins))
            body["tools"], tools_bytes = encoded_tools[1], encoded_tools[2]
        body.update(merged)
        if (tools or len(messages) > 2) and _OWN_KEYS.isdisjoint(merged):
            fragments: list[bytes] = []
            kept, forget = self._kept, self._forget
            for message, message_builtins in zip(messages, built):  # noqa: B905 - the same length: built of messages
                entry = kept.get(id(message))
                if (entry is not None and entry[0]() is message and entry[1] is message.role
                        and entry[2] is message.content and entry[3] is message.tool_call_id
                        and entry[4] is message.name and message.tool_calls is None):
                    fragments.append(entry[5])
                    continue
                encoded = orjson.dumps(message_builtins)
                fragments.append(encoded)
                role, content, call_id, name = message.role, message.content, message.tool_call_id, message.name
                if (type(message) is Message and message.tool_calls is None and type(role) is str
                        and (content is None or type(content) is str) and (call_id is None or type(call_id) is str)
                        and (name is None or type(name) is str)):  # strings and None only: it can be kept
                    ident = id(message)
                    kept[ident] = (weakref.ref(message, functools.partial(forget, ident)), role, content,
                                   call_id, name, encoded)
            payload = b"".join((b'{"model":', orjson.dumps(api_model), b',"messages":[', b",".join(fragments),
                                b'],"tools":' if tools else b"]", tools_bytes, b"," if merged else b"",
                                orjson.dumps(merged)[1:]))  # the params' pairs and the closing brace
        else:
            payload = orjson.dumps(body)
        if key is None:
            key = hashlib.blake2b(payload, digest_size=12).hexdigest()
        return ChatRequest(body=body, payload=payload, key=key)
