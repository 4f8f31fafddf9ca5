"""``profile endpoint``: throughput and latency of one model across concurrency levels.

At each level C, C workers send requests back to back for a fixed duration
(prompt of about N tokens, at most K output tokens) through ``LLMClient`` with
the model's concurrency cap set to C, adaptation off and retries off, so errors
and 429s are counted as the endpoint returns them. The knee is the lowest
concurrency reaching 90% of the peak request rate.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import anyio
import msgspec

from .._exceptions import LLMError, RateLimitError
from .._numbers import Quantiles
from ..llm import LLMClient, ModelConfig
from ..records import Message
from ._svg import line_chart

__all__ = ["EndpointProfile", "LevelResult", "profile_endpoint", "render_endpoint_profile"]


class LevelResult(msgspec.Struct, kw_only=True):
    concurrency: int
    requests: int
    ok: int
    errors: int
    rate_limited: int
    duration_s: float
    requests_per_s: float
    output_tokens_per_s: float
    latency_p50_s: float | None
    latency_p95_s: float | None
    latency_p99_s: float | None
    error_rate: float
    rate_limited_rate: float


class EndpointProfile(msgspec.Struct, kw_only=True):
    model: str
    prompt_tokens: int
    max_tokens: int
    duration_s: float
    levels: list[LevelResult]
    peak_requests_per_s: float
    knee_concurrency: int | None


async def _level(config: ModelConfig, model: str, concurrency: int, duration: float, prompt: str, max_tokens: int,
                 sim_base_url: str | None) -> LevelResult:
    tuned = config.with_overrides(model, {"limits": {"max_concurrency": concurrency, "adaptive": False},
                                          "retry": {"max_attempts": 1}})
    latencies = Quantiles(exact=True)
    counts = {"requests": 0, "ok": 0, "errors": 0, "rate_limited": 0, "output_tokens": 0}
    messages = [Message(role="user", content=prompt)]
    async with LLMClient(tuned, sim_base_url=sim_base_url) as client:
        client.check_models([model])
        deadline = time.perf_counter() + duration

        async def worker(index: int) -> None:
            n = 0
            while time.perf_counter() < deadline:
                n += 1
                counts["requests"] += 1
                try:
                    result = await client.chat(model, messages, key=f"profile-{concurrency}-{index}-{n}",
                                               max_tokens=max_tokens)
                except RateLimitError:
                    counts["rate_limited"] += 1
                    counts["errors"] += 1
                    continue
                except LLMError:
                    counts["errors"] += 1
                    continue
                counts["ok"] += 1
                counts["output_tokens"] += result.usage.completion_tokens
                latencies.add(result.latency_s)

        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for index in range(concurrency):
                tg.start_soon(worker, index)
        elapsed = time.perf_counter() - started
    total = max(1, counts["requests"])
    return LevelResult(
        concurrency=concurrency, requests=counts["requests"], ok=counts["ok"], errors=counts["errors"],
        rate_limited=counts["rate_limited"], duration_s=round(elapsed, 3),
        requests_per_s=round(counts["ok"] / elapsed, 2),
        output_tokens_per_s=round(counts["output_tokens"] / elapsed, 1),
        latency_p50_s=latencies.quantile(0.5), latency_p95_s=latencies.quantile(0.95),
        latency_p99_s=latencies.quantile(0.99),
        error_rate=round(counts["errors"] / total, 4), rate_limited_rate=round(counts["rate_limited"] / total, 4))


async def profile_endpoint(
    config: ModelConfig, model: str, *, concurrencies: Sequence[int] = (1, 4, 16, 64, 256), duration: float = 10.0,
    prompt_tokens: int = 200, max_tokens: int = 64, sim_base_url: str | None = None,
    progress: Callable[[LevelResult], None] | None = None,
) -> EndpointProfile:
    """Measure each concurrency level in turn; return the levels, the peak and the knee."""
    words = "the quick brown fox jumps over the lazy dog and counts the tokens it sees".split()
    prompt = " ".join(words[i % len(words)] for i in range(max(1, prompt_tokens * 3 // 4)))
    levels = []
    for concurrency in concurrencies:
        level = await _level(config, model, concurrency, duration, prompt, max_tokens, sim_base_url)
        levels.append(level)
        if progress:
            progress(level)
    peak = max((lv.requests_per_s for lv in levels), default=0.0)
    knee = next((lv.concurrency for lv in levels if peak and lv.requests_per_s >= 0.9 * peak), None)
    return EndpointProfile(model=model, prompt_tokens=prompt_tokens, max_tokens=max_tokens, duration_s=duration,
                           levels=levels, peak_requests_per_s=peak, knee_concurrency=knee)


def render_endpoint_profile(profile: EndpointProfile) -> tuple[str, str]:
    """(Markdown, SVG of throughput and p95 latency against concurrency)."""
    lines = [f"# Endpoint profile: `{profile.model}`", "",
             f"Prompt ≈ {profile.prompt_tokens} tokens, max {profile.max_tokens} output tokens, "
             f"{profile.duration_s:g} s per level; retries off. Peak {profile.peak_requests_per_s:.1f} req/s; knee "
             f"(lowest concurrency reaching 90% of peak): {profile.knee_concurrency}.", "",
             "| concurrency | requests | req/s | output tok/s | p50 s | p95 s | p99 s | errors | 429 rate |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for lv in profile.levels:
        lines.append(f"| {lv.concurrency} | {lv.requests} | {lv.requests_per_s:.1f} | {lv.output_tokens_per_s:.0f} | "
                     f"{lv.latency_p50_s} | {lv.latency_p95_s} | {lv.latency_p99_s} | {100 * lv.error_rate:.1f}% | "
                     f"{100 * lv.rate_limited_rate:.1f}% |")
    svg = line_chart(f"{profile.model}: throughput and p95 latency", "concurrency (log scale)",
                     [("requests/s", [(lv.concurrency, lv.requests_per_s) for lv in profile.levels]),
                      ("p95 latency s", [(lv.concurrency, lv.latency_p95_s or 0.0) for lv in profile.levels])],
                     log_x=True)
    return "\n".join(lines) + "\n", svg


