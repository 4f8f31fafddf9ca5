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

**Signals** (``--calls N``): the same ``LLMClient`` before and after a change, in one run. ``N`` calls
arrive open-loop at ``--offered`` × a bucket of ``--rate`` requests per second (default: 600 calls at 2 ×
20/s), each call a task (default limits: ``max_concurrency`` 32, nothing else unless the mode says), and
run to their end: success or failure. Modes (``--modes``):

* ``headers``: a 1-s bucket, its limit only in the replies' ``x-ratelimit-*`` headers (no ``rpm`` configured);
* ``no-headers``: the same bucket, no headers at all (429s with ``retry-after-ms``/``Retry-After`` only);
* ``configured``: no headers, ``rpm`` configured at the bucket's rate (``60 × rate``);
* ``per-minute``: a bucket holding the minute (``60 × rate``), headers on, nothing configured;
* ``fixed``: fixed 1-s windows (``rate_meter=fixed``: whole again all at once at each second's end, as many gateways
  count), headers on and stamped as a request arrives, replies 50 ms later, nothing configured;
* ``fixed-no-headers``: the same windows, no headers at all.

``--before REF`` runs each mode first with the code of git ``REF`` (a worktree on ``PYTHONPATH``, in a child
process), then with this tree's, against the same sim (this tree's) reset in between. The 429s and requests
are counted at the sim. "limit used" is successes per second (from the first call to the last success) over
the bucket's rate; a full bucket at the start can lift it above 100%. ``--convoy`` adds the limiter's own cost:
64 tasks × 2,000 slots through a ``ModelLimiter`` (nothing configured, body one checkpoint), CPU µs and
event-loop iterations per slot beyond the body's.

    .venv/bin/python bench/ratelimit_goodput.py --calls 600 --before HEAD~3 --convoy
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import anyio
import anyio.lowlevel

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


MODES = {
    "headers": "1-s bucket, limit in x-ratelimit-* headers only",
    "no-headers": "1-s bucket, no headers (429 + retry hint only)",
    "configured": "1-s bucket, no headers, rpm configured",
    "per-minute": "per-minute bucket, headers, nothing configured",
    "fixed": "fixed 1-s windows, headers, 50 ms replies",
    "fixed-no-headers": "fixed 1-s windows, no headers, 50 ms replies",
}


def mode_setup(mode: str, rate: float) -> tuple[str, dict]:
    """The sim model name (its bucket options) and the client's limits for ``mode``."""
    rpm = round(rate * 60)
    if mode == "headers":
        return f"sim/echo?rpm={rpm}&rate_window_s=1", {}
    if mode == "no-headers":
        return f"sim/echo?rpm={rpm}&rate_window_s=1&rate_headers=none", {}
    if mode == "configured":
        return f"sim/echo?rpm={rpm}&rate_window_s=1&rate_headers=none", {"rpm": rpm}
    if mode == "per-minute":
        return f"sim/echo?rpm={rpm}", {}
    if mode == "fixed":
        return f"sim/echo?rpm={rpm}&rate_window_s=1&rate_meter=fixed&latency_ms=50", {}
    if mode == "fixed-no-headers":
        return f"sim/echo?rpm={rpm}&rate_window_s=1&rate_meter=fixed&latency_ms=50&rate_headers=none", {}
    raise ValueError(mode)


async def open_loop(base_url: str, model: str, limits: dict, calls: int, per_s: float) -> dict:
    """``calls`` calls started at ``per_s`` a second, each run to its end; outcomes and timing (child side)."""
    config = ModelConfig.from_dict({"models": {model: {"base_url": base_url, "limits": limits}}})
    ok: list[float] = []
    failed: dict[str, int] = {}
    cpu = time.process_time()
    async with LLMClient(config) as client:
        start = time.perf_counter()

        async def one(i: int) -> None:
            try:
                await client.chat(model, [Message(role="user", content=PROMPT)], key=f"c{i}", max_tokens=MAX_TOKENS)
                ok.append(time.perf_counter() - start)
            except Exception as exc:
                failed[type(exc).__name__] = failed.get(type(exc).__name__, 0) + 1

        async with anyio.create_task_group() as tg:
            for i in range(calls):
                await anyio.sleep(max(0.0, start + i / per_s - time.perf_counter()))
                tg.start_soon(one, i)
    return {"ok": len(ok), "failed": failed, "span_s": max(ok, default=0.0),
            "cpu_ms_per_call": 1000 * (time.process_time() - cpu) / calls}


async def convoy(tasks: int = 64, slots: int = 2000) -> dict:
    """CPU µs and event-loop iterations per slot through a ModelLimiter at ``tasks`` concurrent, over a bare body."""
    from mpcbench_async.runtime import LimitSettings

    ticks = 0
    running = True

    async def ticker() -> None:
        nonlocal ticks
        while running:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    async def measure(limiter) -> tuple[float, int]:
        nonlocal ticks

        async def worker() -> None:
            for _ in range(slots // tasks):
                if limiter is None:
                    await anyio.lowlevel.checkpoint()
                else:
                    async with limiter.slot():
                        await anyio.lowlevel.checkpoint()

        ticks = 0
        cpu = time.process_time()
        async with anyio.create_task_group() as tg:
            for _ in range(tasks):
                tg.start_soon(worker)
        return time.process_time() - cpu, ticks

    async with anyio.create_task_group() as outer:
        outer.start_soon(ticker)
        limiter = ModelLimiter(LimitSettings(max_concurrency=tasks))
        limiter.observe(None)  # past the first reply
        bare = min([await measure(None) for _ in range(5)])
        through = min([await measure(limiter) for _ in range(5)])
        running = False
    n = (slots // tasks) * tasks
    return {"cpu_us_per_slot": 1e6 * (through[0] - bare[0]) / n, "loop_iterations_per_slot": (through[1] - bare[1]) / n}


def child(spec: dict) -> None:
    """Run one measurement with whatever ``mpcbench_async`` is importable; print its JSON."""
    if spec["what"] == "convoy":
        result = anyio.run(convoy)
    else:
        result = anyio.run(open_loop, spec["base_url"], spec["model"], spec["limits"], spec["calls"], spec["per_s"])
    print(json.dumps(result))


def run_child(spec: dict, pythonpath: str | None) -> dict:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def worktree(ref: str) -> tuple[str, str]:
    """A detached git worktree of ``ref`` (removed by ``drop_worktree``) and the commit it names."""
    repo = Path(__file__).resolve().parent.parent
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", ref], check=True, capture_output=True,
                            text=True).stdout.strip()
    path = tempfile.mkdtemp(prefix=f"ratelimit-before-{commit}-")
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "-f", path, commit], check=True,
                   capture_output=True)
    return path, commit


def drop_worktree(path: str) -> None:
    repo = Path(__file__).resolve().parent.parent
    subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", path], check=False, capture_output=True)


def signals_main(args: argparse.Namespace) -> None:
    """Before/after over the modes, one run, one table."""
    modes = args.modes.split(",")
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        raise SystemExit(f"unknown --modes {', '.join(unknown)}; choose from {', '.join(MODES)}")
    versions: list[tuple[str, str | None]] = []
    tree = None
    if args.before:
        tree, commit = worktree(args.before)
        versions.append((f"before ({commit})", tree))
    head = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent.parent), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent.parent), "status", "--porcelain",
                            "mpcbench_async"], capture_output=True, text=True).stdout.strip()
    versions.append((f"after ({head}{'+changes' if dirty else ''})", None))
    per_s = args.offered * args.rate
    rows = []
    load_before = os.getloadavg()[0]
    try:
        with sim_subprocess([]) as base_url:
            for mode in modes:
                model, limits = mode_setup(mode, args.rate)
                for label, path in versions:
                    reset(base_url)
                    result = run_child({"what": "calls", "base_url": base_url, "model": model, "limits": limits,
                                        "calls": args.calls, "per_s": per_s}, path)
                    statuses = sim_stats(base_url).get("statuses", {})
                    rows.append((mode, label, result, sum(statuses.values()), statuses.get("429", 0)))
                    print(f"{mode} {label}: {result} {statuses}", file=sys.stderr, flush=True)
            convoys = [(label, run_child({"what": "convoy"}, path)) for label, path in versions] if args.convoy else []
    finally:
        if tree is not None:
            drop_worktree(tree)
    print(f"\n#### Rate limits from any signal — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores (1-minute load average {load_before:.1f} at the "
          f"start, {os.getloadavg()[0]:.1f} at the end), Python {platform.python_version()}. Command: "
          f"`python bench/ratelimit_goodput.py --calls {args.calls} --rate {args.rate:g} --offered {args.offered:g} "
          f"--modes {args.modes}{' --before ' + args.before if args.before else ''}"
          f"{' --convoy' if args.convoy else ''}`. {args.calls} calls arrive at {per_s:g}/s against a bucket of "
          f"{args.rate:g} requests/s (1-s buckets hold {args.rate:g}; the per-minute one {60 * args.rate:g}); sim in "
          f"its own process, 429s and requests counted there; client limits default (max_concurrency 32) unless "
          f"the mode configures rpm.\n")
    print("| mode | code | ok | failed | requests at the sim | 429s | 429s per success | span s | limit used "
          "| client CPU ms/call |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for mode, label, result, received, limited in rows:
        ok = result["ok"]
        failed = sum(result["failed"].values())
        kinds = ", ".join(f"{n} {name}" for name, n in sorted(result["failed"].items()))
        used = ok / max(1e-9, result["span_s"]) / args.rate
        print(f"| {MODES[mode]} | {label} | {ok} | {failed}{f' ({kinds})' if kinds else ''} | {received} | "
              f"{limited} | {limited / max(1, ok):.3f} | {result['span_s']:.1f} | {100 * used:.0f}% | "
              f"{result['cpu_ms_per_call']:.2f} |")
    if convoys:
        print("\n| limiter at 64 concurrent tasks, nothing configured | CPU µs per slot | event-loop iterations per "
              "slot |")
        print("|---|---:|---:|")
        for label, result in convoys:
            print(f"| {label} | {result['cpu_us_per_slot']:.1f} | {result['loop_iterations_per_slot']:.2f} |")


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(json.loads(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rpm", type=int, default=600)
    parser.add_argument("--tpm", type=int, default=60000)
    parser.add_argument("--duration", type=float, default=180.0)
    parser.add_argument("--workers", type=int, default=64)
    parser.add_argument("--warmup", type=float, default=60.0)
    parser.add_argument("--window-s", type=float, default=60.0,
                        help="seconds of the rate the sim's buckets hold (60: per minute; 1: per second)")
    parser.add_argument("--clients", default=",".join(CLIENTS), help=f"comma-separated, of {', '.join(CLIENTS)}")
    signals = parser.add_argument_group("signals (--calls): this client before and after a change, open loop")
    signals.add_argument("--calls", type=int, default=None, help="run the signals comparison with N calls")
    signals.add_argument("--rate", type=float, default=20.0, help="the sim bucket's requests per second")
    signals.add_argument("--offered", type=float, default=2.0, help="arrivals as a multiple of --rate")
    signals.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    signals.add_argument("--before", default=None, metavar="REF", help="git ref whose code is the 'before' rows")
    signals.add_argument("--convoy", action="store_true", help="also measure the limiter's own cost per slot")
    args = parser.parse_args()
    if args.calls is not None:
        signals_main(args)
        return
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
