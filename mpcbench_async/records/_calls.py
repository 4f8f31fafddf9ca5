"""The per-call log record written for every LLM call (``calls.jsonl``)."""

from __future__ import annotations

from typing import Literal

import msgspec

from ._chat import Usage

__all__ = ["LLMCallRecord"]


class LLMCallRecord(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """One model call as it happened: who, which unit, how long, how many tries.

    ``started_at`` is wall-clock epoch seconds (for timelines); ``queued_s`` is the
    time spent waiting on the model's limiter, ``retry_wait_s`` the time slept
    between attempts, ``latency_s`` the duration of the final attempt. ``transport``
    names the transport that served the call (omitted on the wire for ``native``,
    so records written before the field existed read as ``native``).

    ``estimated_prompt_tokens`` is the client's estimate made before sending (its
    TPM reservation and budget worst case), beside the count the reply reported in
    ``usage``. ``cost_usd`` is what the call spent: ``None`` (``null``) when the model's price
    is unknown, never a made-up $0. ``cached_tokens`` and ``reasoning_tokens`` are
    the parts of the prompt and completion the provider reported as served from its
    prompt cache and spent reasoning (priced at their own rates). A reply served
    from the response cache (``cached``) sent nothing and spent $0; ``value_usd``
    keeps what it cost when it was first fetched.

    A streamed call (``stream: true``) also records ``ttft_s`` (time to its first content,
    reasoning or tool-call chunk), ``itl_s`` (the gaps between successive such chunks,
    microsecond-rounded) and ``tpot_s`` (time per output token after the first: ``(latency_s -
    ttft_s) / (completion_tokens - 1)``, vLLM's definition; null with fewer than 2 completion
    tokens), all of its final attempt; ``ttft_s`` and ``tpot_s`` are null (``itl_s`` empty) when
    no such chunk arrived.
    """

    model: str
    key: str
    status: Literal["ok", "error"]
    attempts: int = 1
    started_at: float = 0.0
    latency_s: float = 0.0
    queued_s: float = 0.0
    retry_wait_s: float = 0.0
    ttft_s: float | None = None
    tpot_s: float | None = None
    itl_s: list[float] | None = None
    usage: Usage = msgspec.field(default_factory=Usage)
    estimated_prompt_tokens: int = 0
    cost_usd: float | None = 0.0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cached: bool = False
    value_usd: float | None = None
    error_class: str | None = None
    error_message: str | None = None
    transport: str = "native"
    kind: Literal["llm_call"] = "llm_call"
