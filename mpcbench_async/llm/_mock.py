"""``MockTransport(handler)``: answer requests with a function, for tests (httpx's ``MockTransport``).

The handler takes ``(endpoint, request)`` and returns the reply, sync or async:
a ``WireCompletion`` or a dict holding an OpenAI chat-completion body, which is
decoded exactly as a server's reply would be (no ``choices`` is a
``BadResponseError``). To simulate a failure it raises an ``LLMError``
(``ServerError``, ``RateLimitError``…). Nothing else changes: the client still
applies limits, retries, the breaker, call records and accounting. Usage::

    def handler(endpoint: Endpoint, request: ChatRequest) -> dict:
        return {"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}

    client = LLMClient(config, transport=MockTransport(handler))
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from ._transport import ChatRequest, Endpoint, Transport
from ._wire import WireCompletion, completion_from_builtins

__all__ = ["MockHandler", "MockTransport"]

_Reply: TypeAlias = WireCompletion | dict[str, Any]
MockHandler: TypeAlias = Callable[[Endpoint, ChatRequest], _Reply | Awaitable[_Reply]]


class MockTransport(Transport):
    """Every request is answered by ``handler``; nothing goes over the network."""

    name = "mock"
    offline = True

    def __init__(self, handler: MockHandler) -> None:
        self.handler = handler

    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        reply = self.handler(endpoint, request)
        if inspect.isawaitable(reply):
            reply = await reply
        return completion_from_builtins(reply, model=endpoint.model, endpoint=endpoint.url)
