"""The transport interface: one method that sends a chat request and returns a completion.

Like httpx's ``AsyncBaseTransport``: ``complete(endpoint, request) -> WireCompletion``
plus ``aclose()``. Transports do no retrying, limiting or accounting (the client
does); they only produce a reply (over HTTP, from a handler or from a store) and
convert every failure into the ``LLMError`` tree. The registry (``_registry``)
creates them by name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import msgspec

from .._exceptions import LLMConnectionError, LLMTimeoutError
from ._wire import WireCompletion

__all__ = ["ChatRequest", "Endpoint", "Transport"]


class Endpoint(msgspec.Struct, kw_only=True, frozen=True):
    """Where and how to call one configured model (the key never leaves this object)."""

    model: str
    api_model: str
    base_url: str
    api_key: str | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    connect_s: float = 10.0
    read_s: float = 120.0

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def connect_timeout(self) -> LLMConnectionError:
        """The error both transports raise when no connection opened within ``connect_s``."""
        return LLMConnectionError(f"could not connect within the connect timeout of {self.connect_s:g} s "
                                  "(timeouts.connect_s)", model=self.model, endpoint=self.url)

    def read_timeout(self) -> LLMTimeoutError:
        """The error both transports raise when the reply stalled for ``read_s``."""
        return LLMTimeoutError(f"no reply within the read timeout of {self.read_s:g} s (timeouts.read_s)",
                               model=self.model, endpoint=self.url)

    def __repr__(self) -> str:  # never show the key
        return f"Endpoint(model={self.model!r}, url={self.url!r})"


class ChatRequest(msgspec.Struct, kw_only=True, frozen=True):
    """One request: the JSON body as a dict and as the bytes to send, plus its key."""

    body: dict[str, Any]
    payload: bytes
    key: str


class Transport(ABC):
    """Sends one chat-completion request.

    ``name`` marks the call records of the calls it served. ``offline`` transports
    never reach the endpoint, so the client resolves no API key and starts no sim for them.
    """

    name: ClassVar[str]
    offline: bool = False

    @abstractmethod
    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        """Send ``request``; return the decoded completion or raise an ``LLMError``."""

    async def aclose(self) -> None:  # noqa: B027 - an optional hook: a transport without connections keeps it
        """Release pooled connections."""
