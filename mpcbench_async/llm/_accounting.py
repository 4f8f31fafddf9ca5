"""Pricing a reply and counting a call: shared by the records layer (sent calls) and the cache layer (hits).

Apart from both layers because a reply is priced once per call (``Call.priced``)
whichever layer asks first — the records layer for the record, the budget layer
to settle — and every record, sent or cached, lands in the same per-model totals
and ``call_sink``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from ..records import ChatResult, LLMCallRecord, Usage
from ._wire import to_chat_result

if TYPE_CHECKING:
    from ._layer import Call
    from ._wire import WireCompletion

__all__ = ["Accounting", "ModelTotals", "priced"]


class ModelTotals(msgspec.Struct, kw_only=True):
    """Running totals for one model within one client; ``cost_usd`` is ``None`` once a reply had no known price."""

    calls: int = 0
    errors: int = 0
    attempts: int = 0
    cached: int = 0
    usage: Usage = msgspec.field(default_factory=Usage)
    cost_usd: float | None = 0.0


def priced(call: Call, completion: WireCompletion) -> tuple[ChatResult, float | None, int, int]:
    """The reply as a ``ChatResult``, its cost (``None``: price unknown) and its cached/reasoning token counts.

    Computed once per call; the model's token estimate is calibrated by the reply on the way.
    """
    if call.priced is not None:
        return call.priced
    state = call.state
    result = to_chat_result(completion, model=call.model)
    usage = result.usage
    wire = completion.usage
    # the token details, when the reply has any (without them the cached, reasoning and cache-write counts are 0)
    details = wire if wire is not None and (wire.prompt_tokens_details is not None
                                            or wire.completion_tokens_details is not None) else None
    cached_tokens, reasoning_tokens = details.cached_and_reasoning() if details is not None else (0, 0)
    state.estimator.observe(len(call.request.payload), usage.prompt_tokens)
    cost = None if state.prices is None else state.prices.cost(
        usage.prompt_tokens, usage.completion_tokens, cached_tokens=cached_tokens,
        reasoning_tokens=reasoning_tokens,
        cache_write_tokens=details.cache_writes() if details is not None else 0)
    call.priced = result, cost, cached_tokens, reasoning_tokens
    return call.priced


class Accounting:
    """Adds each call's record to its model's totals and hands it to ``sink`` (e.g. a JSONL writer)."""

    def __init__(self, sink: Callable[[LLMCallRecord], None] | None) -> None:
        self.sink = sink

    def record(self, totals: ModelTotals, record: LLMCallRecord) -> None:
        totals.calls += 1
        totals.attempts += record.attempts
        totals.usage = totals.usage + record.usage
        totals.cached += record.cached
        totals.errors += record.status == "error"
        if totals.cost_usd is not None:
            totals.cost_usd = None if record.cost_usd is None else totals.cost_usd + record.cost_usd
        if self.sink is not None:
            self.sink(record)
