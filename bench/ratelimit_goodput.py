"""Rate-limit goodput: the runner's limiter vs the openai SDK and aiolimiter, against an enforced RPM/TPM.

A sim in its own process enforces ``--rpm`` and ``--tpm`` per model (token
buckets, 429 with ``retry-after-ms``/``Retry-After`` and ``x-ratelimit-*``).
Its buckets hold ``--window-s`` seconds of the rate: 60 (a provider metering
per minute) or 1 (one metering per second, a bucket of ``rpm/60``). The same
closed-loop workload — ``--workers`` workers sending one request after another
for ``--duration`` seconds — is driven by each client of ``--clients``:

* ``runner``: ``LLMClient`` configured with the published per-minute limits
  (sliding-window RPM/TPM, paced, sized by the replies' ``x-ratelimit-*``
  headers; adaptive concurrency; its retry loop);
* ``runner-no-headers``: the same with the headers ignored (as before they were used);
* ``sdk``: ``AsyncOpenAI`` with its default retry behaviour and no limiter;
* ``aiolimiter``: ``AsyncOpenAI`` (default retries) behind two ``aiolimiter.AsyncLimiter``s set to
  the published limits, RPM and TPM per 60 s, as they are usually configured;
* ``aiolimiter-1s``: the same set per second (``rpm/60`` per 1 s), for a user who knows the bucket.

Goodput is successful requests per second after the warm-up, as a share of
the allowed steady rate (the binding one of RPM and TPM); the 429 share is
rejected requests over all requests the sim received.

    .venv/bin/python bench/ratelimit_goodput.py --rpm 600 --tpm 60000 --duration 180
    .venv/bin/python bench/ratelimit_goodput.py --window-s 1 --duration 150 --warmup 30
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import urllib.request
from datetime import UTC, datetime

import anyio

from mpcbench_async.llm import LLMClient, ModelConfig
from mpcbench_async.perf import sim_subprocess
from mpcbench_async.records import Message
from mpcbench_async.runtime import ModelLimiter

PROMPT = "Summarise the weekly status of the launch in one short sentence. " * 6
MAX_TOKENS = 40


def sim_stats(base_url: str) -> dict:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/sim/stats") as response:
        return json.loads(response.read())


def reset(base_url: str) -> None:
    request = urllib.request.Request(base_url.removesuffix("/v1") + "/sim/reset", method="POST")
    urllib.request.urlopen(request).read()


async def drive(send, workers: int, duration: float) -> list[float]:
    """Closed loop: each worker sends, waits for the outcome, sends again; returns success times."""
    successes: list[float] = []
    start = time.perf_counter()
    deadline = start + duration

    async def worker(index: int) -> None:
        n = 0
        while time.perf_counter() < deadline:
            n += 1
            with anyio.move_on_after(max(0.0, deadline - time.perf_counter())):
                if await send(f"w{index}-{n}"):
                    successes.append(time.perf_counter() - start)

    async with anyio.create_task_group() as tg:
        for index in range(workers):
            tg.start_soon(worker, index)
    return successes


class HeadersIgnored(ModelLimiter):
    """The runner's limiter as if the provider sent no ``x-ratelimit-*`` headers."""

    def observe(self, headers) -> None:
        super().observe(None)


async def runner_workload(base_url: str, model: str, rpm: int, tpm: int, workers: int, duration: float,
                          use_headers: bool = True):
    config = ModelConfig.from_dict({"models": {model: {"base_url": base_url, "limits": {
        "max_concurrency": workers, "rpm": rpm, "tpm": tpm, "adaptive": True}}}})
    factory = None if use_headers else (lambda _model, limits: HeadersIgnored(limits))
    async with LLMClient(config, limiter_factory=factory) as client:
        async def send(key: str) -> bool:
            try:
                await client.chat(model, [Message(role="user", content=PROMPT)], key=key, max_tokens=MAX_TOKENS)
                return True
            except Exception:
                return False

        return await drive(send, workers, duration)


async def sdk_workload(base_url: str, model: str, workers: int, duration: float, limits=None):
    """The openai SDK (default retries); with ``limits`` = (requests, tokens, token cost), behind aiolimiter."""
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="unused")  # default retries (2) and backoff

    async def send(key: str) -> bool:
        try:
            if limits is not None:
                requests, tokens, cost = limits
                await tokens.acquire(cost)
                await requests.acquire()
            await client.chat.completions.create(model=model, messages=[{"role": "user", "content": PROMPT}],
                                                 max_tokens=MAX_TOKENS, extra_headers={"Idempotency-Key": key})
            return True
        except openai.OpenAIError:
            return False

    try:
        return await drive(send, workers, duration)
    finally:
        await client.close()


def aiolimiters(rpm: int, tpm: int, cost: int, period: float):
    """aiolimiter's leaky buckets for the published limits, over ``period`` seconds (60: as published)."""
    from aiolimiter import AsyncLimiter

    return AsyncLimiter(rpm * period / 60, period), AsyncLimiter(tpm * period / 60, period), cost


CLIENTS = {
    "runner": "mpcbench-async LLMClient (limits + headers + adaptive)",
    "runner-no-headers": "mpcbench-async LLMClient, headers ignored",
    "sdk": "openai AsyncOpenAI (default retries)",
    "aiolimiter": "aiolimiter AsyncLimiter(rpm, 60) + (tpm, 60) + AsyncOpenAI",
    "aiolimiter-1s": "aiolimiter AsyncLimiter(rpm/60, 1) + (tpm/60, 1) + AsyncOpenAI",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rpm", type=int, default=600)
    parser.add_argument("--tpm", type=int, default=60000)
    parser.add_argument("--duration", type=float, default=180.0)
    parser.add_argument("--workers", type=int, default=64)
    parser.add_argument("--warmup", type=float, default=60.0)
    parser.add_argument("--window-s", type=float, default=60.0,
                        help="seconds of the rate the sim's buckets hold (60: per minute; 1: per second)")
    parser.add_argument("--clients", default=",".join(CLIENTS), help=f"comma-separated, of {', '.join(CLIENTS)}")
    args = parser.parse_args()
    clients = args.clients.split(",")
    unknown = sorted(set(clients) - set(CLIENTS))
    if unknown:
        parser.error(f"unknown --clients {', '.join(unknown)}; choose from {', '.join(CLIENTS)}")
    model = "sim/echo" if args.window_s == 60 else f"sim/echo?rate_window_s={args.window_s:g}"
    # A request's TPM cost as the sim counts it: ~bytes/4 of the body plus max_tokens.
    body_tokens = len(json.dumps({"model": model, "messages": [{"role": "user", "content": PROMPT}],
                                  "max_tokens": MAX_TOKENS})) // 4 + MAX_TOKENS
    allowed = min(args.rpm / 60, args.tpm / 60 / body_tokens)
    rows = []
    load_before = os.getloadavg()[0]
    with sim_subprocess(["--rpm", str(args.rpm), "--tpm", str(args.tpm)]) as base_url:
        workloads = {
            "runner": lambda: runner_workload(base_url, model, args.rpm, args.tpm, args.workers, args.duration),
            "runner-no-headers": lambda: runner_workload(base_url, model, args.rpm, args.tpm, args.workers,
                                                         args.duration, use_headers=False),
            "sdk": lambda: sdk_workload(base_url, model, args.workers, args.duration),
            "aiolimiter": lambda: sdk_workload(base_url, model, args.workers, args.duration,
                                               aiolimiters(args.rpm, args.tpm, body_tokens, 60.0)),
            "aiolimiter-1s": lambda: sdk_workload(base_url, model, args.workers, args.duration,
                                                  aiolimiters(args.rpm, args.tpm, body_tokens, 1.0)),
        }
        for client in clients:
            name = CLIENTS[client]
            reset(base_url)
            successes = anyio.run(workloads[client])
            stats = sim_stats(base_url)
            statuses = stats.get("statuses", {})
            received = sum(statuses.values())
            after = [t for t in successes if t >= args.warmup]
            goodput = len(after) / max(1e-9, args.duration - args.warmup)
            rows.append((name, len(successes), received, statuses.get("429", 0), goodput))
            print(f"{name}: {len(successes)} ok, {received} received, {statuses.get('429', 0)} × 429, goodput "
                  f"{goodput:.2f}/s of {allowed:.2f}/s", flush=True)
    print(f"\n### Rate-limit goodput — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    bucket = "per minute" if args.window_s == 60 else f"in buckets of {args.window_s:g} s of the rate"
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores (1-minute load average {load_before:.1f} at the "
          f"start, {os.getloadavg()[0]:.1f} at the end), Python {platform.python_version()}. Command: "
          f"`python bench/ratelimit_goodput.py --rpm {args.rpm} --tpm {args.tpm} --window-s {args.window_s:g} "
          f"--duration {args.duration:g} --warmup {args.warmup:g} --workers {args.workers} --clients "
          f"{args.clients}`. Sim enforces RPM {args.rpm} and TPM {args.tpm} {bucket} (a request costs "
          f"≈{body_tokens} tokens), so the allowed steady rate is {allowed:.2f} requests/s; goodput is measured "
          f"after a {args.warmup:g} s warm-up.\n")
    print("| client | successes | requests at the sim | 429s | 429 share | goodput req/s | share of allowed |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, ok, received, limited, goodput in rows:
        print(f"| {name} | {ok} | {received} | {limited} | {100 * limited / max(1, received):.1f}% | {goodput:.2f} | "
              f"{100 * goodput / allowed:.0f}% |")


if __name__ == "__main__":
    main()
