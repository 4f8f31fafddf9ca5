"""The call ledger in a burst of replies: how long each intent waits for its commit while the loop is busy.

A sweep's requests come in waves: 64 replies land within a few ms, and each worker processes its reply (CPU on
the event loop) before its next request's intent goes to the ledger. Here ``--tasks`` tasks each spin
``--cpu-ms`` of CPU, then ``await ledger.intend(...)`` (``fsync=True``, on the disk of ``--dir``); ``--bursts``
bursts, 50 ms apart. Reports the mean and p90 wait for a commit, the mean time from the burst's start to a
task's return, and the commits. Run it per tree for before/after, interleaved:

    for i in 1 2 3; do for t in /tmp/before /work/hNN; do
        PYTHONPATH=$t .venv/bin/python bench/ledger_burst.py --label $t; done; done
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from mpcbench_async.llm import CallLedger
from mpcbench_async.records import CallIntent


async def bursts(directory: Path, count: int, tasks: int, cpu_s: float) -> tuple[list[float], list[float], int]:
    """Each intent's wait, each burst's mean start-to-return, and the commits."""
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        ledger = CallLedger(Path(tmp) / "ledger.jsonl")
        waits: list[float] = []
        spans: list[float] = []

        async def one(number: int) -> float:
            end = time.perf_counter() + cpu_s
            while time.perf_counter() < end:  # the reply's processing: the loop is busy
                pass
            asked = time.perf_counter()
            await ledger.intend(CallIntent(call_id=f"p-{number}", key="run-0/turn0", attempt=1, model="m",
                                           worst_usd=0.1, at=1.0))
            returned = time.perf_counter()
            waits.append(returned - asked)
            return returned

        for burst in range(count):
            start = time.perf_counter()
            returns = await asyncio.gather(*(one(burst * tasks + i) for i in range(tasks)))
            spans.append(statistics.fmean(returns) - start)
            await asyncio.sleep(0.05)
        ledger.close()
        return waits, spans, ledger.stats.commits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bursts", type=int, default=60)
    parser.add_argument("--tasks", type=int, default=64)
    parser.add_argument("--cpu-ms", type=float, default=0.3)
    parser.add_argument("--dir", type=Path, default=Path.cwd(), help="where the ledger file goes (its disk)")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    waits, spans, commits = asyncio.run(bursts(args.dir, args.bursts, args.tasks, args.cpu_ms / 1000))
    print(f"{args.label}: wait mean {statistics.fmean(waits) * 1e3:.2f} ms, p90 "
          f"{sorted(waits)[len(waits) * 9 // 10] * 1e3:.2f} ms; burst start to mean return "
          f"{statistics.fmean(spans) * 1e3:.2f} ms; {commits} commits")


if __name__ == "__main__":
    main()
