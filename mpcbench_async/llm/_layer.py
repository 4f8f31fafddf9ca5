"""What a client layer is: one job around the inner layer's ``send``, linked once per client (``LLMClient(layers=)``).

``LLMClient.chat`` builds one ``Call`` per request and hands it to the outermost
layer; each layer does its one job and awaits ``self.inner.send(call)``, and the
innermost one (``TransportSend``) sends the request. The chain is linked once per
client (``link``): a call allocates no layer objects, and each layer is one plain
coroutine call on the way down — the hot path of issue 31 stays what it was.
Layers talk to each other only through the ``Call`` (its timing, the budget's
reservation, the ledger's call id, the priced result).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from .._exceptions import LLMError
from ..records import ChatResult, LLMCallRecord, Usage

if TYPE_CHECKING:
    from ..runtime import Deadline
    from ._breaker import CircuitBreaker
    from ._budget import Reservation
    from ._transport import ChatRequest
    from ._wire import StreamTiming, WireCompletion

__all__ = ["Call", "Layer", "link"]


class Call(msgspec.Struct, kw_only=True):
    """One ``chat`` call on its way through the layers: its request, its timing and what layers left for others.

    A msgspec struct so making one per call runs no Python ``__init__`` (counted by ``tests/llm/test_call_costs``).
    ``state`` is the client's per-model state (settings, endpoint, limiter, breaker, estimator, totals).
    """

    state: Any
    model: str
    request: ChatRequest
    cache_extra: Mapping[str, Any] | None = None
    estimated_prompt_tokens: int = 0
    max_out: int = 0
    started_at: float = 0.0
    attempts: int = 0
    queued_s: float = 0.0
    retry_wait_s: float = 0.0
    latency_s: float = 0.0
    deadline: Deadline | None = None  # set by the first send: the call's deadline runs from there
    breaker: CircuitBreaker | None = None  # set by a breaker layer: a retry below it checks it before each attempt
    reservation: Reservation | None = None  # the budget's hold, if a budget layer made one
    call_id: str | None = None  # set once an intent of the call is in the ledger: its record settles it
    priced: tuple[ChatResult, float | None, int, int] | None = None  # the reply priced once (``_accounting``)
    result: ChatResult | None = None  # the result the records layer made of the reply

    def record(self, *, transport: str, usage: Usage | None = None, cost_usd: float | None = 0.0,
               cached_tokens: int = 0, reasoning_tokens: int = 0, error: LLMError | None = None,
               stream: StreamTiming | None = None, completion: WireCompletion | None = None) -> LLMCallRecord:
        """The call's record: how it went, with TTFT/TPOT/ITL of a streamed reply."""
        ttft = tpot = itl = stream_end = None
        if stream is not None and stream.chunks:  # no token chunk at all: no first token to time
            # TPOT: the time from the first token to the last per further token. The time after the last token
            # (usage chunk, [DONE], a gateway's close) is no token's and is kept apart, as stream_end_s.
            ttft, itl = stream.ttft_s, stream.itl_s
            tokens = usage.completion_tokens if usage is not None else 0
            tokens_s = math.fsum(itl)
            tpot = tokens_s / (tokens - 1) if tokens > 1 else None
            stream_end = round(max(0.0, self.latency_s - ttft - tokens_s), 6)
        elif stream is not None:
            itl = []
        record = LLMCallRecord(
            model=self.model, key=self.request.key, status="error" if error else "ok", attempts=self.attempts,
            started_at=self.started_at, latency_s=self.latency_s, queued_s=self.queued_s,
            retry_wait_s=self.retry_wait_s, usage=usage or Usage(),
            estimated_prompt_tokens=self.estimated_prompt_tokens, cost_usd=cost_usd, transport=transport)
        # The fields most calls leave at their defaults are set only when they are not: each keyword more cost the
        # record's construction ~50 ns (all 23 given: 1.1 µs). The record is the same, and so are its bytes: the
        # encoder leaves out a value that *is* the default object, so the floats given always (a call's 0.0 is
        # another object than the field's default, and has always been written) are given here too.
        if stream is not None:
            record.ttft_s, record.tpot_s, record.stream_end_s, record.itl_s = ttft, tpot, stream_end, itl
        if cached_tokens:
            record.cached_tokens = cached_tokens
        if reasoning_tokens:
            record.reasoning_tokens = reasoning_tokens
        if error:
            record.error_class, record.error_message = type(error).__name__, str(error)
        if self.call_id is not None:
            record.call_id = self.call_id
        if completion is not None:
            record.request_id, record.response_id = completion.request_id, completion.id or None
        return record


class Layer:
    """One job around ``inner``: override ``send``, do the job, ``return await self.inner.send(call)``.

    A layer instance belongs to one client: ``link`` sets its ``inner`` when the client builds its chain.
    """

    inner: Layer

    async def send(self, call: Call) -> WireCompletion:
        """The reply to ``call``: by default, what the inner layer answers."""
        return await self.inner.send(call)


def link(layers: Sequence[Layer], innermost: Layer) -> Layer:
    """Chain ``layers`` outermost first around ``innermost``; return the outermost (``innermost`` if none)."""
    head = innermost
    for layer in reversed(layers):
        layer.inner = head
        head = layer
    return head
