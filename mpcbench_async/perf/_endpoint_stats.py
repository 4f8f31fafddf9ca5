"""The figures of one ``profile endpoint`` level, computed from its requests' samples.

Kept apart from the driver that sends the requests so that the window
(warm-up/cool-down), the percentiles and the goodput arithmetic can be checked
exactly on synthetic samples, without a clock or an endpoint.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import msgspec

from .._numbers import Quantiles

__all__ = ["SLO_KEYS", "ErrorClass", "LevelResult", "Percentiles", "RequestSample", "error_classes", "in_window",
           "keeps_up", "measured", "meets_slo", "summarize", "ttft_cdf"]

SLO_KEYS = ("e2e", "tpot", "ttft")


class RequestSample(msgspec.Struct, kw_only=True, frozen=True):
    """One request as the profile saw it: when it started and ended (seconds from the level's start) and its timings.

    ``e2e_s`` is the duration of the request as sent (send to last byte); ``ttft_s``,
    ``tpot_s``, ``itl_s`` and ``stream_end_s`` (last token to the stream's end) come from the streamed reply
    (``None``/empty when not streamed).
    """

    start_s: float
    end_s: float
    ok: bool
    rate_limited: bool = False
    output_tokens: int = 0
    e2e_s: float | None = None
    ttft_s: float | None = None
    tpot_s: float | None = None
    itl_s: tuple[float, ...] = ()
    stream_end_s: float | None = None
    error_class: str | None = None
    error_message: str | None = None


class ErrorClass(msgspec.Struct, kw_only=True, frozen=True):
    """How many measured requests of a level failed with one error class, and the provider's message (masked).

    ``message`` is the first such request's: the provider's own words (``Incorrect API key
    provided: …``, ``The model … does not exist``), already masked of secrets by the client.
    """

    error_class: str
    count: int
    message: str


TOP_ERROR_CLASSES = 3  # the classes a level keeps: enough to say why, short enough to read on one screen


def error_classes(samples: Sequence[RequestSample]) -> list[ErrorClass]:
    """The ``TOP_ERROR_CLASSES`` commonest error classes of the failed ``samples``, most first (ties by name)."""
    counts: dict[str, int] = {}
    messages: dict[str, str] = {}
    for sample in samples:
        if not sample.ok:
            name = sample.error_class or "Error"
            counts[name] = counts.get(name, 0) + 1
            messages.setdefault(name, sample.error_message or "")
    ranked = sorted(counts, key=lambda name: (-counts[name], name))[:TOP_ERROR_CLASSES]
    return [ErrorClass(error_class=name, count=counts[name], message=messages[name]) for name in ranked]


class Percentiles(msgspec.Struct, kw_only=True, frozen=True):
    """Nearest-rank percentiles and the mean of a latency, in seconds (rounded to 1 µs)."""

    p50: float
    p90: float
    p95: float
    p99: float
    mean: float

    @classmethod
    def of(cls, values: Iterable[float]) -> Percentiles | None:
        """The percentiles of ``values``; ``None`` when there are none."""
        quantiles = Quantiles(values, exact=True)
        if not quantiles.n:
            return None
        total = math.fsum(value * count for value, count in quantiles.counts.items())

        def at(q: float) -> float:
            value = quantiles.quantile(q)
            assert value is not None  # not empty
            return value

        return cls(p50=at(0.5), p90=at(0.9), p95=at(0.95), p99=at(0.99), mean=round(total / quantiles.n, 6))


class LevelResult(msgspec.Struct, kw_only=True):
    """One load level: closed-loop at ``concurrency`` workers, or open-loop at ``rate`` requests/s.

    The counts and latencies are of the measured requests (``excluded`` started in the warm-up
    or finished in the cool-down); the rates are over the ``duration_s`` seconds between the
    warm-up and the cool-down, each request counted by the share of its run inside them (see
    ``summarize``). Rates count successful requests; ``sent_requests_per_s`` is the rate a
    rate level's schedule actually sent after the warm-up (a Poisson draw's count is not
    exactly ``rate``).
    ``ttft``, ``tpot``, ``itl`` (all inter-token gaps of all requests) and ``e2e`` are in
    seconds; the streamed ones are ``None`` when streaming was off.
    ``goodput_requests_per_s`` counts the requests meeting every SLO, ``slo_met_fraction``
    their share of the measured requests (errors never meet them); both ``None`` without
    SLOs. ``capped`` counts the requests of a rate level that found ``max_in_flight`` at the
    cap and waited; ``unsent`` those still waiting when the level ended (never sent);
    ``oversaturated``: a rate level was capped or did not keep up (``keeps_up``).
    ``error_classes``: why measured requests failed, the commonest classes first (``error_classes``).
    ``mean_in_flight``: requests in flight at the endpoint on average over the window — each
    request's E2E (from sending to its last byte, as the client timed it) inside the window,
    summed, over the window's length (Little's law) — what a closed loop of C workers should
    keep at C, where ``max_in_flight`` (requests inside the profile's call) is C by construction.
    """

    concurrency: int | None = None
    rate: float | None = None
    sent_requests_per_s: float | None = None
    requests: int
    ok: int
    errors: int
    rate_limited: int
    excluded: int = 0
    duration_s: float
    requests_per_s: float
    output_tokens_per_s: float
    e2e: Percentiles | None = None
    ttft: Percentiles | None = None
    tpot: Percentiles | None = None
    itl: Percentiles | None = None
    stream_end: Percentiles | None = None
    goodput_requests_per_s: float | None = None
    slo_met_fraction: float | None = None
    error_rate: float
    rate_limited_rate: float
    max_in_flight: int = 0
    mean_in_flight: float | None = None
    capped: int = 0
    unsent: int = 0
    oversaturated: bool = False
    error_classes: list[ErrorClass] = msgspec.field(default_factory=list)

    @property
    def load(self) -> str:
        """The level's load as a reader names it: ``c=16`` or ``8 req/s``."""
        return f"c={self.concurrency}" if self.concurrency is not None else f"{self.rate:g} req/s"


def measured(samples: Sequence[RequestSample], warmup_s: float, cooldown_s: float,
             duration_s: float) -> list[RequestSample]:
    """The samples that count: not started in the first ``warmup_s`` s nor ended in the last ``cooldown_s`` s.

    The level's last ``cooldown_s`` seconds end at ``duration_s`` (when sending stops);
    with a cool-down, a request still running then ends inside it and is excluded.
    """
    return [s for s in samples if s.start_s >= warmup_s and (cooldown_s <= 0 or s.end_s <= duration_s - cooldown_s)]


def in_window(sample: RequestSample, start: float, end: float) -> float:
    """The share of ``sample``'s run (start to end) inside ``[start, end]``; an instant one counts whole if inside.

    Summed over a level's requests and divided by the window's length it is the rate at which
    they ran there, unbiased whatever their phase: a closed loop of C workers whose requests
    take L seconds sums to exactly C × window / L, however many requests straddle either edge.
    """
    length = sample.end_s - sample.start_s
    if length <= 0:
        return 1.0 if start <= sample.start_s <= end else 0.0
    return max(0.0, min(sample.end_s, end) - max(sample.start_s, start)) / length


def keeps_up(samples: Sequence[RequestSample], warmup_s: float, duration_s: float) -> bool:
    """Whether an open-loop level's endpoint completed at least 90% of what it was sent (less one request).

    Measured while sending (after the warm-up), so neither the drain after it nor a
    Poisson draw's count matters: a server that keeps up completes, in any stretch of
    time, what was sent one latency earlier; one that does not completes less while its
    queue (and the latency) grows. The latency is the median E2E of the requests sent in
    the first quarter of the window, before a queue could build: the successful requests
    that ended in ``[warmup_s + lag, duration_s]`` against those sent in
    ``[warmup_s, duration_s - lag)``.
    """
    quarter = warmup_s + (duration_s - warmup_s) / 4
    early = Percentiles.of(s.e2e_s for s in samples
                           if s.ok and s.e2e_s is not None and warmup_s <= s.start_s < quarter)
    lag = early.p50 if early is not None else 0.0
    done = sum(s.ok and warmup_s + lag <= s.end_s <= duration_s for s in samples)
    due = sum(warmup_s <= s.start_s < duration_s - lag for s in samples)
    return done >= 0.9 * due - 1


def meets_slo(sample: RequestSample, slo: Mapping[str, float]) -> bool:
    """A successful request within every limit of ``slo`` (keys of ``SLO_KEYS``, seconds).

    A missing figure fails its limit, except the TPOT of a reply of at most one token
    (there is no time per output token to exceed).
    """
    if not sample.ok:
        return False
    figures = {"e2e": sample.e2e_s, "ttft": sample.ttft_s, "tpot": sample.tpot_s}
    for key, limit in slo.items():
        value = figures[key]
        if value is None:
            if key == "tpot" and sample.output_tokens <= 1 and sample.ttft_s is not None:
                continue
            return False
        if value > limit:
            return False
    return True


def summarize(every: Sequence[RequestSample], *, duration_s: float, warmup_s: float = 0.0, cooldown_s: float = 0.0,
              slo: Mapping[str, float] | None = None, concurrency: int | None = None, rate: float | None = None,
              scheduled: Sequence[float] | None = None, max_in_flight: int = 0, capped: int = 0,
              unsent: int = 0) -> LevelResult:
    """The figures of a level that sent requests for ``duration_s`` s, from ``every`` request's sample.

    Counts and latencies are of the ``measured`` samples. Rates (requests/s, output tokens/s,
    goodput) are over the window from the warm-up's end to the cool-down's start, each request
    (of ``every``) counted by the share of its run inside it (``in_window``): unbiased however
    long a request takes and whatever the phase of the workers (all start at 0 in a closed
    loop), where counting whole requests started or ended in the window is off by up to one
    request per worker. ``scheduled``: when a rate level's requests were due (seconds from its
    start), for the rate it sent. A rate level is over-saturated when its cap was hit or it
    did not keep up (``keeps_up``, over every sample).
    """
    slo = slo or {}
    samples = measured(every, warmup_s, cooldown_s, duration_s)
    window_s = duration_s - warmup_s - cooldown_s
    window_end = duration_s - cooldown_s
    share = {id(s): in_window(s, warmup_s, window_end) for s in every}
    ok = [s for s in samples if s.ok]
    ran_ok = [s for s in every if s.ok]
    sent = None if scheduled is None else sum(warmup_s <= t < window_end for t in scheduled) / window_s
    rate_limited = sum(s.rate_limited for s in samples)
    requests, window = len(samples), max(window_s, 1e-9)
    meeting = {id(s) for s in every if meets_slo(s, slo)} if slo else set()
    met = math.fsum(share[key] for key in meeting) if slo else None
    return LevelResult(
        concurrency=concurrency, rate=rate, sent_requests_per_s=None if sent is None else round(sent, 2),
        requests=requests, ok=len(ok), errors=requests - len(ok),
        rate_limited=rate_limited, excluded=len(every) - requests, duration_s=round(window_s, 3),
        requests_per_s=round(math.fsum(share[id(s)] for s in ran_ok) / window, 2),
        output_tokens_per_s=round(math.fsum(s.output_tokens * share[id(s)] for s in ran_ok) / window, 1),
        e2e=Percentiles.of(s.e2e_s for s in ok if s.e2e_s is not None),
        ttft=Percentiles.of(s.ttft_s for s in ok if s.ttft_s is not None),
        tpot=Percentiles.of(s.tpot_s for s in ok if s.tpot_s is not None),
        itl=Percentiles.of(gap for s in ok for gap in s.itl_s),
        stream_end=Percentiles.of(s.stream_end_s for s in ok if s.stream_end_s is not None),
        goodput_requests_per_s=None if met is None else round(met / window, 2),
        slo_met_fraction=None if not slo else round(sum(id(s) in meeting for s in samples) / max(1, requests), 4),
        error_rate=round((requests - len(ok)) / max(1, requests), 4),
        rate_limited_rate=round(rate_limited / max(1, requests), 4),
        max_in_flight=max_in_flight, mean_in_flight=_mean_in_flight(every, warmup_s, window_end, window),
        capped=capped, unsent=unsent,
        oversaturated=rate is not None and (capped > 0 or not keeps_up(every, warmup_s, duration_s)),
        error_classes=error_classes(samples))


def _mean_in_flight(every: Sequence[RequestSample], start: float, end: float, window: float) -> float | None:
    """Σ of each timed request's E2E inside ``[start, end]`` over the window; None when no request was timed."""
    timed = [s for s in every if s.e2e_s is not None]
    if not timed:
        return None
    inside = math.fsum(max(0.0, min(s.end_s, end) - max(s.end_s - (s.e2e_s or 0.0), start)) for s in timed)
    return round(inside / window, 2)


def ttft_cdf(ttfts: Sequence[float], points: int = 100) -> list[tuple[float, float]]:
    """(value, fraction at or below it) of ``ttfts``, thinned evenly to at most ``points`` points (the maximum kept)."""
    values = sorted(ttfts)
    n = len(values)
    picks = sorted({-(-i * n // points) - 1 for i in range(1, points + 1)}) if n else []
    return [(round(values[i], 4), round((i + 1) / n, 4)) for i in picks]
