"""The breaker layer: a model whose endpoint failed too many calls in a row fails fast (``CircuitBreaker``).

Outside the retries because the breaker counts failed *calls*, not attempts: a
call that succeeds on its third attempt resets the count. It leaves the breaker
on the ``Call`` so the retry layer below refuses a retry at once when the breaker
opened meanwhile (``CircuitOpenError``, nothing sent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._exceptions import LedgerError, LLMError
from ._layer import Call, Layer

if TYPE_CHECKING:
    from ._wire import WireCompletion

__all__ = ["BreakerLayer"]


class BreakerLayer(Layer):
    """Refuses calls of a model whose breaker is open; counts each finished call on the breaker."""

    async def send(self, call: Call) -> WireCompletion:
        breaker = call.breaker = call.state.breaker
        try:
            if breaker.cause is not None:  # open: ``check`` refuses the call (a closed one costs no call)
                breaker.check()
            completion = await self.inner.send(call)
        except LLMError as exc:
            if not isinstance(exc, LedgerError):  # the endpoint never saw it: no evidence either way
                breaker.after_call(exc)
            raise
        if breaker.consecutive or breaker.cause is not None:  # else ``after_call(None)`` changes nothing
            breaker.after_call(None)
        return completion
