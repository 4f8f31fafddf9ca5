"""Rate-limit goodput: the runner's limiter vs the openai SDK's default retries, against an enforced RPM/TPM.

A sim in its own process enforces ``--rpm`` and ``--tpm`` per model (token
buckets, 429 with ``retry-after-ms``/``Retry-After`` and ``x-ratelimit-*``).
The same closed-loop workload — ``--workers`` workers sending one request after
another for ``--duration`` seconds — is driven by (a) ``LLMClient`` configured
with the published limits (sliding-window RPM/TPM, adaptive concurrency, its
retry loop) and (b) ``AsyncOpenAI`` with its default retry behaviour. Goodput
is successful requests per second after the first minute (warm-up), as a share
of the allowed steady rate (the binding one of RPM and TPM); the 429 share is
rejected requests over all requests the sim received.

    .venv/bin/python bench/ratelimit_goodput.py --rpm 600 --tpm 60000 --duration 180
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import urllib.request
from datetime import UTC, datetime

import anyio

from mpcbench_async.llm import LLMClient, ModelConfig
from mpcbench_async.perf import sim_subprocess
from mpcbench_async.records import Message

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


async def runner_workload(base_url: str, model: str, rpm: int, tpm: int, workers: int, duration: float):
    config = ModelConfig.from_dict({"models": {model: {"base_url": base_url, "limits": {
        "max_concurrency": workers, "rpm": rpm, "tpm": tpm, "adaptive": True}}}})
    async with LLMClient(config) as client:
        async def send(key: str) -> bool:
            try:
                await client.chat(model, [Message(role="user", content=PROMPT)], key=key, max_tokens=MAX_TOKENS)
                return True
            except Exception:
                return False

        return await drive(send, workers, duration)


async def sdk_workload(base_url: str, model: str, workers: int, duration: float):
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="unused")  # default retries (2) and backoff

    async def send(key: str) -> bool:
        try:
            await client.chat.completions.create(model=model, messages=[{"role": "user", "content": PROMPT}],
                                                 max_tokens=MAX_TOKENS, extra_headers={"Idempotency-Key": key})
            return True
        except openai.OpenAIError:
            return False

    try:
        return await drive(send, workers, duration)
    finally:
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rpm", type=int, default=600)
    parser.add_argument("--tpm", type=int, default=60000)
    parser.add_argument("--duration", type=float, default=180.0)
    parser.add_argument("--workers", type=int, default=64)
    parser.add_argument("--warmup", type=float, default=60.0)
    args = parser.parse_args()
    model = "sim/echo"
    # A request's TPM cost as the sim counts it: ~bytes/4 of the body plus max_tokens.
    body_tokens = len(json.dumps({"model": model, "messages": [{"role": "user", "content": PROMPT}],
                                  "max_tokens": MAX_TOKENS})) // 4 + MAX_TOKENS
    allowed = min(args.rpm / 60, args.tpm / 60 / body_tokens)
    rows = []
    with sim_subprocess(["--rpm", str(args.rpm), "--tpm", str(args.tpm)]) as base_url:
        for name, workload in (("mpcbench-async LLMClient (limits + adaptive)",
                                lambda: runner_workload(base_url, model, args.rpm, args.tpm, args.workers,
                                                        args.duration)),
                               ("openai AsyncOpenAI (default retries)",
                                lambda: sdk_workload(base_url, model, args.workers, args.duration))):
            reset(base_url)
            successes = anyio.run(workload)
            stats = sim_stats(base_url)
            statuses = stats.get("statuses", {})
            received = sum(statuses.values())
            after = [t for t in successes if t >= args.warmup]
            goodput = len(after) / max(1e-9, args.duration - args.warmup)
            rows.append((name, len(successes), received, statuses.get("429", 0), goodput))
            print(f"{name}: {len(successes)} ok, {received} received, {statuses.get('429', 0)} × 429, goodput "
                  f"{goodput:.2f}/s of {allowed:.2f}/s", flush=True)
    print(f"\n### Rate-limit goodput — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, Python {platform.python_version()}. Command: `python "
          f"bench/ratelimit_goodput.py --rpm {args.rpm} --tpm {args.tpm} --duration {args.duration:g} --workers "
          f"{args.workers}`. Sim enforces RPM {args.rpm} and TPM {args.tpm} (a request costs ≈{body_tokens} tokens), "
          f"so the allowed steady rate is {allowed:.2f} requests/s; goodput is measured after a "
          f"{args.warmup:g} s warm-up.\n")
    print("| client | successes | requests at the sim | 429s | 429 share | goodput req/s | share of allowed |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, ok, received, limited, goodput in rows:
        print(f"| {name} | {ok} | {received} | {limited} | {100 * limited / max(1, received):.1f}% | {goodput:.2f} | "
              f"{100 * goodput / allowed:.0f}% |")


if __name__ == "__main__":
    main()
