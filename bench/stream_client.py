"""An independent minimal streaming client: the yardstick for ``profile endpoint`` (bench/profile_crosscheck.py).

It shares no code with mpcbench_async's client (raw aiohttp, its own SSE parsing), so a bug in the
project's streaming path or its statistics shows up as a disagreement rather than being measured twice.

What it sends: ``POST {base_url}/chat/completions`` with ``stream: true`` and
``stream_options: {"include_usage": true}``, one user message, ``max_tokens``; no retries, no limiter,
no connection cap. Load is either closed-loop (``concurrency`` workers, each sending its next request as
soon as its previous one ends) or open-loop (arrivals at ``rate`` per second, Poisson with a seeded
generator or evenly spaced, each arrival sent at once whatever is in flight). Sending stops at
``warmup + duration`` seconds after the start; requests in flight then are finished.

What it records, per request (``time.perf_counter``): the send time, the time of every SSE ``data:``
line, the time of the first one carrying a non-empty ``delta.content`` (time to first token, TTFT,
is that minus the send time), the end of the stream, and the output tokens from the final usage chunk
(the count of content chunks when the server sends none).

What it reports, over the measured window ``[start + warmup, start + warmup + duration]`` (warm-up
and the drain after sending stops are left out): requests completed in the window / its length
(requests/s), their output tokens / its length (output tok/s), and TTFT (p50, mean), TPOT
((end - first token) / (tokens - 1), p50) and end-to-end latency (p50, mean) of those requests.

    .venv/bin/python bench/stream_client.py http://127.0.0.1:8765/v1 \\
        --model 'sim/echo?latency_ms=50&tokens_per_s=200&output_tokens=64' --concurrency 4 --duration 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from dataclasses import asdict, dataclass, field

import aiohttp


@dataclass
class Timing:
    """One request's timestamps (perf_counter seconds) and outcome."""

    sent: float
    chunks: list[float] = field(default_factory=list)
    first_token: float | None = None
    end: float | None = None
    output_tokens: int = 0
    error: str | None = None

    @property
    def ttft(self) -> float | None:
        return None if self.first_token is None else self.first_token - self.sent

    @property
    def tpot(self) -> float | None:
        if self.first_token is None or self.end is None or self.output_tokens < 2:
            return None
        return (self.end - self.first_token) / (self.output_tokens - 1)


@dataclass
class StreamRun:
    """Figures over the measured window, and the per-request timings they came from.

    ``requests``: successful requests that ended in the window; ``errors``: failed requests (all of
    them); ``excluded``: successful requests that ended in the warm-up or after sending stopped.
    """

    load: str
    window_s: float
    requests: int
    errors: int
    excluded: int
    requests_per_s: float
    output_tokens_per_s: float
    ttft_p50_s: float | None
    ttft_mean_s: float | None
    tpot_p50_s: float | None
    e2e_p50_s: float | None
    e2e_mean_s: float | None
    timings: list[Timing]

    def figures(self) -> dict[str, object]:
        """Everything but the per-request timings (what the CLI prints)."""
        return {k: v for k, v in asdict(self).items() if k != "timings"}


async def one_request(session: aiohttp.ClientSession, url: str, model: str, prompt: str, max_tokens: int) -> Timing:
    """Send one streaming chat request; timestamp every SSE data line."""
    body = {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
            "stream": True, "stream_options": {"include_usage": True}}
    timing = Timing(sent=time.perf_counter())
    content_chunks = 0
    usage_tokens: int | None = None
    try:
        async with session.post(url, json=body) as resp:
            if resp.status != 200:
                timing.error = f"HTTP {resp.status}"
                await resp.read()
                return timing
            async for raw in resp.content:  # one SSE line per iteration
                now = time.perf_counter()
                line = raw.strip()
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    break
                timing.chunks.append(now)
                chunk = json.loads(data)
                if chunk.get("usage"):
                    usage_tokens = chunk["usage"]["completion_tokens"]
                for choice in chunk.get("choices") or ():
                    if (choice.get("delta") or {}).get("content"):
                        content_chunks += 1
                        if timing.first_token is None:
                            timing.first_token = now
    except (TimeoutError, aiohttp.ClientError, ValueError) as exc:
        timing.error = f"{type(exc).__name__}: {exc}"
        return timing
    timing.end = time.perf_counter()
    timing.output_tokens = usage_tokens if usage_tokens is not None else content_chunks
    return timing


async def run(base_url: str, model: str, *, concurrency: int | None = None, rate: float | None = None,
              poisson: bool = True, duration: float = 10.0, warmup: float = 0.0, prompt: str = "hello",
              max_tokens: int = 64, seed: int = 0) -> StreamRun:
    """Drive the endpoint closed-loop (``concurrency``) or open-loop (``rate``); figures over the window."""
    if (concurrency is None) == (rate is None):
        raise ValueError("give exactly one of concurrency and rate")
    url = base_url.rstrip("/") + "/chat/completions"
    timings: list[Timing] = []
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        start = time.perf_counter()
        stop = start + warmup + duration

        async def send() -> None:
            timings.append(await one_request(session, url, model, prompt, max_tokens))

        if concurrency is not None:
            async def worker() -> None:
                while time.perf_counter() < stop:
                    await send()

            await asyncio.gather(*(worker() for _ in range(concurrency)))
            load = f"concurrency {concurrency}"
        else:
            assert rate is not None
            rng = random.Random(seed)
            tasks = []
            offset = 0.0  # of the next arrival from the start; constant ones as n / rate, so no rounding drift
            while start + offset < stop:
                await asyncio.sleep(max(0.0, start + offset - time.perf_counter()))
                tasks.append(asyncio.create_task(send()))
                offset = offset + rng.expovariate(rate) if poisson else len(tasks) / rate
            await asyncio.gather(*tasks)
            load = f"rate {rate:g}/s"
    return summarize(timings, load=load, window=(start + warmup, stop))


def summarize(timings: list[Timing], *, load: str, window: tuple[float, float]) -> StreamRun:
    """Figures of the requests that ended inside ``window`` (perf_counter seconds)."""
    lo, hi = window
    ok = [t for t in timings if t.error is None and t.end is not None]
    done = [t for t in ok if lo <= t.end <= hi]
    length = hi - lo

    def p50(values: list[float]) -> float | None:
        return statistics.median(values) if values else None

    ttfts = [t.ttft for t in done if t.ttft is not None]
    tpots = [t.tpot for t in done if t.tpot is not None]
    e2es = [t.end - t.sent for t in done if t.end is not None]
    return StreamRun(
        load=load, window_s=length, requests=len(done), errors=sum(t.error is not None for t in timings),
        excluded=len(ok) - len(done),
        requests_per_s=len(done) / length, output_tokens_per_s=sum(t.output_tokens for t in done) / length,
        ttft_p50_s=p50(ttfts), ttft_mean_s=statistics.fmean(ttfts) if ttfts else None, tpot_p50_s=p50(tpots),
        e2e_p50_s=p50(e2es), e2e_mean_s=statistics.fmean(e2es) if e2es else None, timings=timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base_url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8765/v1")
    parser.add_argument("--model", required=True)
    load = parser.add_mutually_exclusive_group(required=True)
    load.add_argument("--concurrency", type=int)
    load.add_argument("--rate", type=float, help="requests per second (open loop)")
    parser.add_argument("--constant", action="store_true", help="evenly spaced arrivals instead of Poisson")
    parser.add_argument("--duration", type=float, default=10.0, help="measured window, seconds")
    parser.add_argument("--warmup", type=float, default=0.0, help="seconds sent before the window opens")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    result = asyncio.run(run(args.base_url, args.model, concurrency=args.concurrency, rate=args.rate,
                             poisson=not args.constant, duration=args.duration, warmup=args.warmup,
                             max_tokens=args.max_tokens, seed=args.seed))
    print(json.dumps(result.figures(), indent=2))


if __name__ == "__main__":
    main()
