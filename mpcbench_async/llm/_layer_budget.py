"""The budget layer: reserve the call's worst case before anything is sent, settle it on the reply.

Outside the records layer so it settles at the cost the reply was priced at, and
outside the limiter so a refused call (``BudgetExceeded``) never waits for a slot.
A call that was sent (its intent is in the ledger) and then cancelled keeps its
worst case as spent: it may be billed. A failed call is not billed: released.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._exceptions import LLMError
from ._accounting import priced
from ._budget import Budget
from ._layer import Call, Layer

if TYPE_CHECKING:
    from ._wire import WireCompletion

__all__ = ["BudgetLayer"]


class BudgetLayer(Layer):
    """Holds each call's worst case on ``budget`` (``where`` names the config in its refusals)."""

    def __init__(self, budget: Budget, where: str) -> None:
        self.budget = budget
        self.where = where

    async def send(self, call: Call) -> WireCompletion:
        budget = self.budget
        reservation = call.reservation = budget.reserve(call.model, call.state.prices, call.estimated_prompt_tokens,
                                                        call.max_out, where=self.where)
        try:
            completion = await self.inner.send(call)
            budget.settle(reservation, priced(call, completion)[1] or 0.0)
        except BaseException as exc:
            if call.call_id is not None and not isinstance(exc, LLMError):
                budget.keep(reservation)  # sent, then cancelled: it may be billed, and its intent stays unsettled
            else:
                budget.release(reservation)  # failed (not billed) or never sent
            raise
        return completion
