"""The ledger layer: each attempt's intent is durable in the ``CallLedger`` before its request is sent.

Innermost but for the send, inside the limiter slot: from here on a kill cannot
hide a request that may be billed. Its call id goes on the ``Call``, so the
call's record settles the intent. An offline transport sends nothing: no intent.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from .._exceptions import LedgerError
from ..records import CallIntent
from ._budget import worst_case_usd
from ._layer import Call, Layer
from ._ledger import CallLedger

if TYPE_CHECKING:
    from ._wire import WireCompletion

__all__ = ["LedgerLayer"]


class LedgerLayer(Layer):
    """Writes each attempt's intent (call id, key, attempt, model, worst-case cost) to ``ledger`` and waits for it."""

    def __init__(self, ledger: CallLedger) -> None:
        self.ledger = ledger
        self._prefix = os.urandom(6).hex()  # call ids: unique across clients and invocations
        self._count = 0

    async def send(self, call: Call) -> WireCompletion:
        state = call.state
        if state.transport.offline:
            return await self.inner.send(call)
        reservation = call.reservation
        worst = (reservation.amount_usd if reservation is not None
                 else worst_case_usd(state.prices, call.estimated_prompt_tokens, call.max_out))
        call_id = call.call_id
        if call_id is None:
            self._count += 1
            call_id = f"{self._prefix}-{self._count}"
        try:
            await self.ledger.intend(CallIntent(call_id=call_id, key=call.request.key, attempt=call.attempts,
                                                model=call.model, worst_usd=worst, at=time.time()))
        except LedgerError as exc:  # the same failure, naming the endpoint the request was not sent to
            raise LedgerError(exc.detail, model=call.model, endpoint=state.endpoint.url) from exc.__cause__
        call.call_id = call_id  # from here on the call's record settles an intent
        return await self.inner.send(call)
