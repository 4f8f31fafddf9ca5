"""The ``record`` and ``replay`` transports: write replies to a ``CallStore``, and serve them back offline.

``RecordTransport(inner, store)`` forwards each request to ``inner`` and appends the
pair to the store when a reply arrived (failures are not recorded; the client
retries them as usual). ``ReplayTransport(store)`` answers from the store without
any network I/O; a request it has no reply for is a ``ReplayMissError`` (permanent:
retrying cannot help). The client's limits, retries, breaker, call records and
accounting apply to both exactly as to a network transport.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.to_thread

from .._exceptions import ConfigError, ReplayMissError
from ._store import CallStore, StoreIndex, request_hash
from ._transport import ChatRequest, Endpoint, Transport
from ._wire import WireCompletion

__all__ = ["RecordTransport", "ReplayTransport"]

_EXCERPT_CHARS = 60


class RecordTransport(Transport):
    """Send through ``inner``; append every successful request/reply pair to ``store``."""

    name = "record"

    def __init__(self, inner: Transport, store: CallStore) -> None:
        self.inner = inner
        self.store = store
        self.offline = inner.offline

    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        completion = await self.inner.complete(endpoint, request)
        self.store.append(request, completion)
        return completion

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            self.store.close()


def _first_user_message(body: dict[str, Any]) -> str:
    """The start of the request's first user message, to recognise a missed request by."""
    for message in body.get("messages") or ():
        if isinstance(message, dict) and message.get("role") == "user":
            text = str(message.get("content") or "")
            return repr(text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "…")
    return "(none)"


class ReplayTransport(Transport):
    """Serve recorded replies from ``store`` by request hash; never touch the network."""

    name = "replay"
    offline = True

    def __init__(self, store: CallStore) -> None:
        if not store.path.is_file():
            raise ConfigError(f"{store.path}: replay store not found (record one with the 'record' transport)")
        self.store = store
        self._index: StoreIndex | None = None
        self._loading = anyio.Lock()

    async def _loaded(self) -> StoreIndex:
        """The store's index, read once in a worker thread on first use."""
        if self._index is None:
            async with self._loading:
                if self._index is None:
                    self._index = await anyio.to_thread.run_sync(self.store.load)
        return self._index

    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        index = await self._loaded()
        digest = request_hash(request.body)
        completion = index.find(digest, request.key)
        if completion is None:
            raise ReplayMissError(
                f"no recorded reply for request {digest} (first user message: {_first_user_message(request.body)}); "
                "record it into this store with the 'record' transport",
                model=endpoint.model, endpoint=f"replay store {self.store.path}")
        return completion
