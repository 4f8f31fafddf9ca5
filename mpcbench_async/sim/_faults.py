"""Fault injection and load shape for the simulated provider.

A ``FaultSpec`` is set for the whole server and can be overridden per model by a
query-string suffix on the model name, e.g.
``sim/echo?latency_ms=200&p429=0.1&p503=0.05`` (unknown or mistyped fields are
rejected with HTTP 400 naming the field).

Two ways to inject faults:

* ``fault=<kind>&fail_first=N`` — deterministic: the first N requests for each
  idempotency key get ``<kind>``; later ones succeed. Used by tests.
* ``p429``, ``p500``, ``p502``, ``p503``, ``pdrop``, ``ptimeout``, ``ptruncate``,
  ``pmalformed``, ``pcut`` — probabilities, drawn from a generator seeded by
  (server seed, key, attempt number, unit attempt), so a run's faults do not
  depend on scheduling order. The attempt number counts this server's requests
  with the key (a client's retries of one call); the unit attempt is the
  ``X-Mpcbench-Unit-Attempt`` header (the runner sends it for a unit that runs
  again on resume: how many records it already has), so a resumed unit draws
  anew — an embedded sim is a new server every invocation, and without it would
  fail the unit exactly as before, forever — while the same invocations with the
  same seed draw the same faults. Without the header (a first run) the draws are
  those of earlier versions.

Fault kinds: ``429 500 502 503`` (error statuses; 429/503 carry
``retry-after-ms``/``Retry-After`` when configured), ``400 401 403 404 422``
(permanent errors), ``501`` (an HTML error page, as a plain web server sends
for POST), ``505``, ``drop`` (connection closed with no reply), ``timeout``
(connection held open ``hang_s`` without a reply), ``truncate`` (body cut short
of its Content-Length), ``malformed`` (200 with a body that is not JSON),
``html`` (200 with a web page, as when ``base_url`` points at a web UI), ``cut``
(a streamed reply broken off after half its events: no ``[DONE]``, connection
closed; a non-streamed reply is truncated).

Streaming: a request with ``"stream": true`` is answered with ``text/event-stream``
``chat.completion.chunk`` events (a role chunk, the content in tokens of ~4
characters — as many chunks as the ``completion_tokens`` reported —, tool-call
deltas, a finish chunk, a usage chunk when ``stream_options.include_usage``, then
``data: [DONE]``). ``latency_ms`` is the time before the first token (TTFT) and
``tokens_per_s`` the pace after it: one token every ``1/tokens_per_s`` s (0: all
at once); a non-streamed reply waits for its last token too. ``output_tokens=N``
makes every reply's content exactly N tokens (filler words appended or the text
cut; tool calls add theirs), as vLLM's ``ignore_eos`` does for load tests.

``batch_latency_s``, ``batch_expiry_s`` and ``batch_reject`` shape the Batch API (``_batch``).

``tokenizer=words`` counts prompt tokens as letter runs (up to 6), digit runs (up
to 3) and single other characters, closer to a BPE count than the default 4 bytes a
token, so the bytes per token vary with the text as real ones do.

``rpm``/``tpm`` are enforced with a token bucket per model that holds
``rate_window_s`` seconds of the rate and refills continuously: the default 60
is a per-minute bucket (``rpm`` requests at most back to back); ``1`` plays a
provider that meters per second (a bucket of ``rpm/60``, so a burst of more than
a second's worth earns 429s although the minute's budget is not spent).
``rate_meter=fixed`` counts fixed windows of ``rate_window_s`` instead (as many
gateways do: so many requests per whole second or minute of the clock), each
whole again all at once at its end (``_meters``); ``rate_meter=log`` a sliding log
(at most ``rate_window_s`` seconds of the rate within any trailing ``rate_window_s``
seconds, each request's place free again that long after it, the reset when the
oldest leaves). ``rate_share=0.4`` plays another
client on the same key taking 40% of the rate the whole time (a bucket refills at
60% of it; a fixed window is spent 40% of the way by its end), and
``rate_start=empty`` a meter spent before the first request (a key just drained):
the headers report the meter as it is, the limit the whole one.
``rate_headers`` says how replies report the buckets: ``openai`` (default:
``x-ratelimit-limit/remaining/reset-<kind>``, reset as a duration), ``anthropic``
(``anthropic-ratelimit-<kind>-limit/remaining/reset``, reset as an RFC 3339 time)
or ``none`` (nothing, on 200s and 429s alike: a provider that only rejects).
``rate_hint`` is the wait a bucket's 429 asks for — the time until the request
would fit: ``both`` (default: ``retry-after-ms`` and ``Retry-After`` in whole
seconds, rounded up), ``ms``, ``seconds`` or ``none``.

``api_key=KEY`` (server-wide, in ``SimServer(defaults=...)``) makes the server check credentials
first, as a provider does: a request carrying any other key (or none) gets 401 ``Incorrect API
key provided: <the key sent>``, quoting it whole, so tests see that what reaches a user
(terminal, reports, logs) has it masked.

``echo_auth=true`` makes every error body quote the request's credentials
(the ``Authorization``/``api-key``/``x-api-key`` headers and the bare key), as
some proxies do: tests use it to prove that no key reaches a record or a log.
``echo_shapes=true`` adds the key in eleven shapes (prefix-less, a substring,
split, percent-encoded, base64 at three alignments, base64url: ``_leaks``) and
``quote_key=true`` makes every 200 reply's content quote the key in those shapes.
"""

from __future__ import annotations

import random
from typing import Annotated, Literal
from urllib.parse import parse_qsl

import msgspec

__all__ = ["FaultKind", "FaultSpec", "choose_fault", "latency_seconds", "split_model_name"]

FaultKind = Literal[
    "429", "500", "502", "503", "400", "401", "403", "404", "422", "501", "505",
    "drop", "timeout", "truncate", "malformed", "html", "cut",
]

_RANDOM_FAULTS: tuple[tuple[str, FaultKind], ...] = (
    ("p429", "429"),
    ("p500", "500"),
    ("p502", "502"),
    ("p503", "503"),
    ("pdrop", "drop"),
    ("ptimeout", "timeout"),
    ("ptruncate", "truncate"),
    ("pmalformed", "malformed"),
    ("pcut", "cut"),
)


class FaultSpec(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Latency, rate limits and faults for a server or one model."""

    latency_ms: float = 0.0
    latency_sd_ms: float = 0.0
    rpm: int | None = None
    tpm: int | None = None
    rate_window_s: Annotated[float, msgspec.Meta(gt=0)] = 60.0
    rate_meter: Literal["bucket", "fixed", "log"] = "bucket"
    rate_share: Annotated[float, msgspec.Meta(ge=0, lt=1)] = 0.0
    rate_start: Literal["full", "empty"] = "full"
    rate_headers: Literal["openai", "anthropic", "none"] = "openai"
    rate_hint: Literal["both", "ms", "seconds", "none"] = "both"
    fault: FaultKind | None = None
    fail_first: int = 0
    p429: float = 0.0
    p500: float = 0.0
    p502: float = 0.0
    p503: float = 0.0
    pdrop: float = 0.0
    ptimeout: float = 0.0
    ptruncate: float = 0.0
    pmalformed: float = 0.0
    pcut: float = 0.0
    retry_after_ms: int | None = None
    retry_after: str | None = None
    hang_s: float = 300.0
    echo_auth: bool = False
    echo_shapes: bool = False
    quote_key: bool = False
    api_key: str | None = None
    tokenizer: Literal["bytes", "words"] = "bytes"
    tokens_per_s: Annotated[float, msgspec.Meta(ge=0)] = 0.0
    output_tokens: Annotated[int, msgspec.Meta(ge=1)] | None = None
    batch_latency_s: Annotated[float, msgspec.Meta(ge=0)] = 0.0
    batch_expiry_s: Annotated[float, msgspec.Meta(gt=0)] = 86400.0
    batch_reject: bool = False

    def with_overrides(self, query: str) -> FaultSpec:
        """This spec with fields from a query string (``a=1&b=2``) replaced."""
        if not query:
            return self
        fields = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=True))
        merged = msgspec.structs.asdict(self) | fields
        return msgspec.convert(merged, FaultSpec, strict=False)


def split_model_name(model: str) -> tuple[str, str]:
    """``"sim/echo?p429=0.1"`` → ``("sim/echo", "p429=0.1")``."""
    base, _, query = model.partition("?")
    return base, query


def choose_fault(spec: FaultSpec, *, seed: int, key: str, attempt: int, unit_attempt: int = 0) -> FaultKind | None:
    """The fault (or ``None``) for the ``attempt``-th request (0-based) with ``key`` of the unit's ``unit_attempt``-th
    try (0: its first run)."""
    if spec.fault is not None and attempt < spec.fail_first:
        return spec.fault
    draw = random.Random(f"{seed}:{key}:{attempt}" + (f":{unit_attempt}" if unit_attempt else "")).random()
    for field, kind in _RANDOM_FAULTS:
        draw -= getattr(spec, field)
        if draw < 0:
            return kind
    return None


def latency_seconds(spec: FaultSpec, *, seed: int, key: str, attempt: int) -> float:
    """The simulated service time for one request (normal, clipped at zero)."""
    if spec.latency_sd_ms <= 0:
        return spec.latency_ms / 1000.0
    rng = random.Random(f"latency:{seed}:{key}:{attempt}")
    return max(0.0, rng.gauss(spec.latency_ms, spec.latency_sd_ms)) / 1000.0

