"""The per-call log record written for every LLM call (``calls.jsonl``) and the intent written before it is sent."""

from __future__ import annotations

from typing import Literal

import msgspec

from ._chat import Usage

__all__ = ["CallIntent", "LLMCallRecord"]


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
    microsecond-rounded), ``tpot_s`` (time per output token after the first: ``(last token -
    first token) / (completion_tokens - 1)``; null with fewer than 2 completion tokens) and
    ``stream_end_s`` (from the last token to the end of the stream: the usage chunk, ``[DONE]``,
    the connection's close — a gateway can add hundreds of ms there, which is no token's time), all of its
    final attempt; ``ttft_s``, ``tpot_s`` and ``stream_end_s`` are null (``itl_s`` empty) when no
    such chunk arrived.

    ``call_id`` names the call in the call ledger (``ledger.jsonl``, see ``CallIntent``): the record of
    a call whose requests were announced there settles them; it is omitted for calls that sent nothing
    (a response-cache hit, a call refused before its first request) and for clients without a ledger.
    ``request_id`` is the provider's id of the final attempt's request (its ``x-request-id`` or
    ``request-id`` response header) and ``response_id`` the completion's own ``id``, each where the
    provider gives one: what a provider's usage export or support desk knows the call by.
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
    stream_end_s: float | None = None
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
    call_id: str | None = None
    request_id: str | None = None
    response_id: str | None = None
    kind: Literal["llm_call"] = "llm_call"


class CallIntent(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One request about to be sent: a line of the call ledger (``ledger.jsonl``), durable before it leaves.

    ``call_id`` names the call (unique across invocations: a random prefix per client and a counter);
    ``key`` is the call's key (its unit's key, then ``/turnN`` and the like: the ``Idempotency-Key``
    sent); ``attempt`` counts the call's requests from 1 (a retried call announces each request);
    ``worst_usd`` is the most the request can cost — estimated prompt tokens at the input rate plus the
    output cap at the dearer output rate, the amount a budget reserves — and ``null`` when that has no
    bound (no known price, or no output cap); ``at`` is wall-clock epoch seconds.

    The call's ``LLMCallRecord`` in ``calls.jsonl`` (same ``call_id``) settles every intent of it: its
    ``attempts`` are the intents it covers. An intent without a settling record is *unsettled*: sent,
    and its reply never recorded (the process was killed, or the call cancelled, while it was in
    flight), so the provider may have billed it; readers count it at ``worst_usd``.
    """

    call_id: str
    key: str
    attempt: int
    model: str
    worst_usd: float | None
    at: float
