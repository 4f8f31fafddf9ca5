"""What the write-ahead call ledger costs on the hot path (issue 25 point 1).

The same workload as ``bench client`` — N one-message ``sim/echo`` calls through the full
``LLMClient`` path (limiter, retry loop, accounting, a call record per call) at concurrency C,
against a sim in its own process — run three ways, interleaved (A B C A B C …):

- ``off``: no ledger (the client before this change);
- ``fsync``: ``CallLedger(fsync=True)``, what a sweep uses: every intent durable (``fdatasync``)
  before its request leaves, group-committed in a worker thread;
- ``flush``: ``CallLedger(fsync=False)``: each intent written to the OS inline (survives a kill of
  the process, not of the machine).

Reports requests/s, client CPU µs per call (``time.process_time`` of this process / calls), the
median added to each call's latency (latency of the call minus the sim's), and the ledger's
commits (intents per disk flush). The ledger file goes to ``--dir`` (default: a temporary
directory under ``reports/``, on the disk sweeps write to), because the cost is the disk's.

    .venv/bin/python bench/call_ledger.py --concurrency 1,16,64,256 --requests 2000 --repeats 3
    .venv/bin/python bench/call_ledger.py --latency-ms 200 --concurrency 64,256   # a real model's latency
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio

from mpcbench_async.llm import CallLedger, LLMClient, ModelConfig
from mpcbench_async.perf import sim_subprocess
from mpcbench_async.records import Message
from mpcbench_async.runtime import WorkerPool

MODES = ("off", "fsync", "flush")


async def one_run(base_url: str, mode: str, concurrency: int, requests: int, tag: str,
                  directory: Path) -> tuple[float, float, float, int, int]:
    """(wall s, CPU s, median call latency s, intents, commits) for ``requests`` calls at ``concurrency``."""
    config = ModelConfig.from_dict({"defaults": {
        "limits": {"max_concurrency": concurrency, "adaptive": False}, "params": {"max_tokens": 16},
        "prices": {"input_per_1m": 0.15, "output_per_1m": 0.6}}})
    messages = [Message(role="user", content="Summarise the status of project ALPHA in one line.")]
    path = directory / f"ledger-{tag}.jsonl"
    ledger = None if mode == "off" else CallLedger(path, fsync=mode == "fsync")
    latencies: list[float] = []
    async with LLMClient(config, sim_base_url=base_url, ledger=ledger) as client:

        async def call(i: int) -> None:
            sent = time.perf_counter()
            await client.chat("sim/echo", messages, key=f"{tag}-{i}")
            if i >= 0:
                latencies.append(time.perf_counter() - sent)

        async with WorkerPool(call, concurrency=concurrency).stream(range(-concurrency, 0)) as warm:
            async for _ in warm:
                pass
        before = (ledger.stats.intents, ledger.stats.commits) if ledger else (0, 0)
        wall0, cpu0 = time.perf_counter(), time.process_time()
        async with WorkerPool(call, concurrency=concurrency).stream(range(requests)) as results:
            async for _ in results:
                pass
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    if ledger is not None:
        ledger.close()
        path.unlink()
    intents = ledger.stats.intents - before[0] if ledger else 0
    commits = ledger.stats.commits - before[1] if ledger else 0
    return wall, cpu, statistics.median(latencies), intents, commits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", default="1,16,64,256")
    parser.add_argument("--requests", type=int, default=2000, help="calls per run (a quarter at concurrency 1)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=0.0, help="the sim's service time per call")
    parser.add_argument("--dir", type=Path, default=None, help="where the ledger files go (default: under reports/)")
    args = parser.parse_args()
    base = args.dir or Path("reports")
    base.mkdir(parents=True, exist_ok=True)
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(dir=base, prefix="ledger-bench-") as tmp, \
            sim_subprocess(["--latency-ms", str(args.latency_ms)] if args.latency_ms else []) as url:
        directory = Path(tmp)
        for concurrency in concurrencies:
            n = args.requests if concurrency > 1 else max(200, args.requests // 4)
            samples: dict[str, list[tuple[float, float, float, int, int]]] = {mode: [] for mode in MODES}
            for repeat in range(args.repeats):
                for mode in MODES:
                    sample = anyio.run(one_run, url, mode, concurrency, n, f"{mode}-{concurrency}-{repeat}",
                                       directory)
                    samples[mode].append(sample)
                    wall, cpu, latency, intents, commits = sample
                    print(f"{mode:5s} c={concurrency:<4d} run {repeat + 1}/{args.repeats}: {n / wall:8.0f} req/s "
                          f"{cpu / n * 1e6:6.0f} µs CPU/call  p50 {latency * 1e3:6.2f} ms  "
                          f"{intents / commits if commits else 0:5.1f} intents/commit", file=sys.stderr)
            for mode in MODES:
                runs = samples[mode]
                rows.append((concurrency, mode, n, statistics.median(n / r[0] for r in runs),
                             statistics.median(r[1] / n * 1e6 for r in runs),
                             statistics.median(r[2] * 1e3 for r in runs),
                             statistics.median(r[3] / r[4] if r[4] else 0.0 for r in runs)))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"#### Call ledger cost — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {cores} cores, Python {sys.version.split()[0]}, {platform.system()} "
          f"{platform.release()}. Command: `python bench/call_ledger.py {' '.join(sys.argv[1:])}`. Sim in its own "
          f"process ({args.latency_ms:g} ms per call); ledger on {base.resolve()}; medians of {args.repeats} "
          "interleaved runs.\n")
    print("| concurrency | ledger | calls | req/s | vs off | CPU µs/call | p50 call ms | intents/commit |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    off = {c: rps for c, mode, _, rps, *_ in rows if mode == "off"}
    for concurrency, mode, n, rps, cpu, p50, per_commit in rows:
        ratio = f"{rps / off[concurrency]:.2f}×"
        batch = "–" if mode == "off" else ("1 (inline)" if mode == "flush" else f"{per_commit:.1f}")
        print(f"| {concurrency} | {mode} | {n} | {rps:,.0f} | {ratio} | {cpu:,.0f} | {p50:.2f} | {batch} |")


if __name__ == "__main__":
    main()
