"""The report of ``profile endpoint``: a Markdown summary and two SVG charts with axes and ticks.

The charts answer the two questions serving engineers ask of a profile: how
latency grows with the throughput achieved (E2E and TTFT p50/p95 against req/s),
and how TTFT is spread at the heaviest load (its CDF).
"""

from __future__ import annotations

from ._endpoint_profile import EndpointProfile
from ._endpoint_stats import LevelResult, Percentiles
from ._svg import xy_chart

__all__ = ["render_endpoint_profile", "render_ttft_cdf"]


def _ms(p: Percentiles | None, digits: int = 1) -> str:
    """p50 / p90 / p95 / p99 in ms; ``digits=3`` shows µs (TPOT and ITL are a few ms: 0.1 ms would hide changes)."""
    return "–" if p is None else " / ".join(f"{1000 * v:.{digits}f}" for v in (p.p50, p.p90, p.p95, p.p99))


def _or_dash(value: float | None, fmt: str) -> str:
    return "–" if value is None else format(value, fmt)


def _settings(profile: EndpointProfile) -> list[str]:
    """The paragraph saying how the levels were measured."""
    streamed = "streamed" if profile.stream else "not streamed (TTFT, TPOT and ITL not measured)"
    text = (f"Mode `{profile.mode}`. Prompt ≈ {profile.prompt_tokens} tokens, max {profile.max_tokens} output "
            f"tokens, {profile.duration_s:g} s per level, {streamed}; retries off.")
    if profile.arrivals is not None:
        text += f" Rate levels: {profile.arrivals} arrivals (seed {profile.seed})."
    window = [f"started in the first {profile.warmup_s:g} s"] if profile.warmup_s else []
    window += [f"ended in the last {profile.cooldown_s:g} s"] if profile.cooldown_s else []
    if window:
        text += f" Requests {' or '.join(window)} of a level are excluded from the counts and latencies."
    text += (" Rates count each request by the share of its run inside the measured window (so requests straddling"
             " its edges count in part).")
    if profile.slo:
        limits = ", ".join(f"{key} ≤ {limit:g} s" for key, limit in sorted(profile.slo.items()))
        text += f" Goodput: successful requests meeting every SLO ({limits})."
    summary = f"Peak {profile.peak_requests_per_s:.1f} req/s"
    if profile.knee_concurrency is not None:
        summary += f"; knee (lowest concurrency reaching 90% of peak): {profile.knee_concurrency}"
    if profile.saturation_requests_per_s is not None:
        summary += f"; saturation throughput (sweep): {profile.saturation_requests_per_s:.1f} req/s"
    return [text, "", summary + "."]


def _throughput_row(lv: LevelResult) -> str:
    met = "–" if lv.slo_met_fraction is None else f"{100 * lv.slo_met_fraction:.1f}%"
    return (f"| {lv.load} | {_or_dash(lv.sent_requests_per_s, '.2f')} | {lv.requests} | {lv.ok} | {lv.errors} | "
            f"{lv.rate_limited} | {lv.excluded} | "
            f"{lv.requests_per_s:.2f} | {lv.output_tokens_per_s:.0f} | {_or_dash(lv.goodput_requests_per_s, '.2f')} | "
            f"{met} | {lv.max_in_flight} | {_or_dash(lv.mean_in_flight, '.1f')} | "
            f"{lv.capped}{f' ({lv.unsent} unsent)' if lv.unsent else ''} | "
            f"{'yes' if lv.oversaturated else ''} |")


def _cell(text: str) -> str:
    """``text`` on one line of a Markdown table (a provider's message may hold pipes and newlines)."""
    return " ".join(text.split()).replace("|", "\\|")


def _errors(profile: EndpointProfile) -> list[str]:
    """The table of why requests failed, per level (the commonest classes, with the provider's message)."""
    rows = [f"| {lv.load} | {err.error_class} | {err.count} | {_cell(err.message)} |"
            for lv in profile.levels for err in lv.error_classes]
    if not rows:
        return []
    return ["Why requests failed (the commonest error classes of each level, with the provider's message):", "",
            "| load | error class | requests | message |", "|---|---|---:|---|", *rows, ""]


def render_endpoint_profile(profile: EndpointProfile) -> tuple[str, str]:
    """(Markdown, SVG of E2E and TTFT p50/p95 latency against the achieved request rate)."""
    lines = [f"# Endpoint profile: `{profile.model}`", "", *_settings(profile), "",
             "| load | sent req/s | requests | ok | errors | 429s | excluded | req/s | output tok/s | goodput req/s | "
             "SLO met | max in flight | mean in flight | capped | over-saturated |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
             *(_throughput_row(lv) for lv in profile.levels), "", *_errors(profile),
             "Latency in ms, p50 / p90 / p95 / p99 (ITL: every gap between tokens of every request; TPOT: first to "
             "last token per further token; stream end: last token to the stream's end, which TPOT leaves out; "
             "TPOT and ITL to the µs):", "",
             "| load | TTFT | TPOT | ITL | stream end | E2E |", "|---|---|---|---|---|---|",
             *(f"| {lv.load} | {_ms(lv.ttft)} | {_ms(lv.tpot, 3)} | {_ms(lv.itl, 3)} | {_ms(lv.stream_end)} | "
               f"{_ms(lv.e2e)} |"
               for lv in profile.levels)]
    by_rate = sorted(profile.levels, key=lambda lv: lv.requests_per_s)

    def curve(pick: str, metric: str) -> list[tuple[float, float]]:
        return [(lv.requests_per_s, getattr(getattr(lv, metric), pick)) for lv in by_rate
                if getattr(lv, metric) is not None]

    svg = xy_chart(f"{profile.model}: latency against throughput", "achieved requests/s", "latency (s)",
                   [("E2E p50", curve("p50", "e2e")), ("E2E p95", curve("p95", "e2e")),
                    ("TTFT p50", curve("p50", "ttft")), ("TTFT p95", curve("p95", "ttft"))])
    return "\n".join(lines) + "\n", svg


def render_ttft_cdf(profile: EndpointProfile) -> str:
    """SVG of the TTFT distribution (CDF) at the heaviest level; the axes only, with a note, when not streamed."""
    title = f"{profile.model}: TTFT distribution" + (f" at {profile.ttft_cdf_level}" if profile.ttft_cdf_level else "")
    return xy_chart(title, "time to first token (s)", "fraction of requests", [("TTFT CDF", profile.ttft_cdf)],
                    step=True, empty="no TTFT measured (not streamed)")
