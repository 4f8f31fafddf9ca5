"""The records layer: one ``LLMCallRecord`` per sent call, ok or failed, and the priced ``ChatResult``.

Outside the breaker and retries so a call that took several attempts is one record
with its attempts, waits and latency; inside the budget so the budget settles at
the price this layer computed.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import msgspec

from .._exceptions import LLMError
from ._accounting import Accounting, priced
from ._layer import Call, Layer

if TYPE_CHECKING:
    from ._wire import WireCompletion

__all__ = ["RecordsLayer"]


class RecordsLayer(Layer):
    """Prices each reply, counts it in the model's totals and hands its record to ``accounting``'s sink."""

    def __init__(self, accounting: Accounting) -> None:
        self.accounting = accounting

    async def send(self, call: Call) -> WireCompletion:
        call.started_at = time.time()
        state = call.state
        try:
            completion = await self.inner.send(call)
        except LLMError as exc:
            self.accounting.record(state.totals, call.record(transport=state.transport.name, error=exc))
            raise
        result, cost, cached_tokens, reasoning_tokens = priced(call, completion)
        record = call.record(transport=state.transport.name, usage=result.usage, cost_usd=cost,
                             cached_tokens=cached_tokens, reasoning_tokens=reasoning_tokens,
                             stream=completion.stream, completion=completion)
        call.result = msgspec.structs.replace(result, latency_s=call.latency_s, attempts=call.attempts,
                                              cost_usd=cost, ttft_s=record.ttft_s, tpot_s=record.tpot_s)
        self.accounting.record(state.totals, record)
        return completion
