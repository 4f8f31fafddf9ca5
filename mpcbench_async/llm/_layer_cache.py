"""The cache layer: a repeated request is answered from the ``ResponseCache`` without going further.

Outermost by default, so a hit starts no provider, reserves no budget, takes no
limiter slot and writes no ledger intent: nothing is sent, $0 is spent. Only a
reply that came back through every inner layer is stored.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import msgspec

from ..records import LLMCallRecord
from ._accounting import Accounting, priced
from ._cache import ResponseCache, cache_digest
from ._layer import Call, Layer

if TYPE_CHECKING:
    from ._wire import WireCompletion

__all__ = ["CacheLayer"]


class CacheLayer(Layer):
    """Answers repeats from ``cache`` (recorded through ``accounting`` as cached), stores fresh replies."""

    def __init__(self, cache: ResponseCache, accounting: Accounting) -> None:
        self.cache = cache
        self.accounting = accounting

    async def send(self, call: Call) -> WireCompletion:
        cache = self.cache
        if cache.mode == "off":
            return await self.inner.send(call)
        state = call.state
        digest = cache_digest(state.cache_endpoint, call.request.body, call.cache_extra,
                              headers=state.endpoint.headers)
        hit = await cache.get(digest)
        if hit is not None:
            self._answer(call, hit)
            return hit
        completion = await self.inner.send(call)
        await cache.put(digest, call.model, completion)
        return completion

    def _answer(self, call: Call, completion: WireCompletion) -> None:
        """A reply served by the cache: nothing sent, $0 spent, its original cost kept as its value."""
        result, value, cached_tokens, reasoning_tokens = priced(call, completion)
        state = call.state
        self.accounting.record(state.totals, LLMCallRecord(
            model=call.model, key=call.request.key, status="ok", attempts=0, started_at=time.time(),
            usage=result.usage, cost_usd=0.0, cached_tokens=cached_tokens, reasoning_tokens=reasoning_tokens,
            cached=True, value_usd=value, transport=state.transport.name))
        call.result = msgspec.structs.replace(result, latency_s=0.0, attempts=0, cost_usd=value or 0.0)
