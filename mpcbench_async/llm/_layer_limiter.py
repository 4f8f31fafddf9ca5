"""The limiter layer: each attempt waits for a slot of the model's limiter, which learns from the reply.

Inside the retries so every attempt is paced (RPM, TPM at the estimated prompt
plus ``max_tokens``, concurrency); outside the ledger so an intent is written only
once the request may leave. The limiter itself (``runtime.Limiter``: a local
``ModelLimiter`` or a Ray worker's share) is the model's, unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._exceptions import RateLimitError
from ._layer import Call, Layer

if TYPE_CHECKING:
    from ._wire import WireCompletion

__all__ = ["LimiterLayer"]


class LimiterLayer(Layer):
    """Holds a limiter slot around each attempt; feeds the limiter the reply's ``x-ratelimit-*`` headers and 429s."""

    async def send(self, call: Call) -> WireCompletion:
        limiter = call.state.limiter
        async with limiter.slot(call.estimated_prompt_tokens + call.max_out) as ticket:
            call.queued_s += ticket.queued_s
            try:
                completion = await self.inner.send(call)
            except RateLimitError as exc:
                limiter.observe(exc.headers, ticket)
                limiter.on_rate_limited(ticket)
                raise
            limiter.observe(completion.rate_limit_headers, ticket)
            await limiter.on_success()
            return completion
