"""The runtime engine's own cost per unit: a ``Pipeline`` of units that do nothing, before vs after.

N no-op units (each returns its record at once) go through ``runtime.Pipeline`` at concurrency C, one stage
and two (each first-stage record asks for one second-stage unit), records and done-indexes written to a
temporary directory: what is measured is the engine alone — the pool's producer, workers and channels, the cancel
scope per unit, the record's line and index entry, the events, the follow-up hand-off. Each figure comes from a
child process of "before" (a git worktree put first on ``PYTHONPATH``) and of "after" (this tree), interleaved:

- Python calls per unit (``sys.setprofile``, the loop's thread) and event-loop iterations per unit (deterministic);
- CPU µs per unit (``time.process_time`` around the run; medians of ``--repeats``: the load moves it);
- with ``--instructions``: instructions per unit under valgrind's cachegrind (no cache simulation), the process's
  count at N units minus at N/4, over the units between — a figure the machine's load does not move.

    .venv/bin/python bench/engine_per_unit.py --before /tmp/before --units 4000 --repeats 5 --instructions
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parent.parent

# Run as: python -c CODE units concurrency stages profile; prints {"calls": …, "iterations": …, "cpu_s": …}.
CHILD = r'''
import asyncio, sys, tempfile, time
from pathlib import Path
from typing import Literal
from mpcbench_async.records import UnitRecord
from mpcbench_async.runtime import Pipeline, Stage

units, concurrency, stages, profile = (int(a) for a in sys.argv[1:5])

class NoOp(UnitRecord, kw_only=True):
    kind: Literal["noop"] = "noop"

async def done(key, unit):
    return NoOp(key=key, status="ok")

def failed(key, unit, exc):
    raise exc

async def main():
    out = Path(tempfile.mkdtemp())
    chain = [Stage(out / "a.jsonl", NoOp, done, failed, follow_up_keys=lambda k: [k + "/next"],
                   follow_ups=lambda r: [(r.key + "/next", None)]), Stage(out / "b.jsonl", NoOp, done, failed)]
    pipeline = Pipeline(chain if stages == 2 else [Stage(out / "a.jsonl", NoOp, done, failed)],
                        concurrency=concurrency)
    loop = asyncio.get_running_loop()
    run_once, counts = loop._run_once, {"calls": 0, "iterations": 0}
    def counted():
        counts["iterations"] += 1
        run_once()
    def on_call(frame, event, arg):
        if event == "call":
            counts["calls"] += 1
    loop._run_once = counted
    if profile:
        sys.setprofile(on_call)
    start = time.process_time()
    await pipeline.run(lambda: ((f"u{i}", i) for i in range(units)))
    counts["cpu_s"] = time.process_time() - start
    sys.setprofile(None)
    print(counts)

asyncio.run(main())
'''


def _env(code_root: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(code_root) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def run(code_root: Path, units: int, concurrency: int, stages: int, profile: bool) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(units), str(concurrency), str(stages), str(int(profile))],
                         env=_env(code_root), cwd=tempfile.gettempdir(),  # not the checkout: it would come first
                         capture_output=True, text=True, check=True)
    figures = orjson.loads(out.stdout.strip().splitlines()[-1].replace("'", '"'))
    return {name: value / (units * stages) for name, value in figures.items()}


def instructions(code_root: Path, units: int, concurrency: int, stages: int) -> float:
    counts = []
    for n in (units // 4, units):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/cg",
                                  sys.executable, "-c", CHILD, str(n), str(concurrency), str(stages), "0"],
                                 env=_env(code_root), cwd=tmp, capture_output=True, text=True, check=False)
        found = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
        if out.returncode != 0 or found is None:
            raise SystemExit(f"child under valgrind failed:\n{out.stderr[-2000:]}")
        counts.append(int(found.group(1).replace(",", "")))
    return (counts[1] - counts[0]) / ((units - units // 4) * stages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="source tree of the 'before' code (a worktree)")
    parser.add_argument("--units", type=int, default=4000, help="first-stage units per run (default: 4000)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per row (default: 5)")
    parser.add_argument("--instructions", action="store_true", help="also count instructions per unit (valgrind)")
    args = parser.parse_args()
    codes: list[tuple[str, Path]] = [("after", REPO)]
    if args.before is not None:
        codes.insert(0, ("before", args.before.resolve()))
    print("| stages | code | Python calls per unit | loop iterations per unit | CPU µs per unit (median) |"
          + (" instructions per unit |" if args.instructions else ""))
    print("|---|---|---:|---:|---:|" + ("---:|" if args.instructions else ""))
    for stages in (1, 2):
        cpu: dict[str, list[float]] = {label: [] for label, _ in codes}
        for _ in range(args.repeats):
            for label, root in codes:
                cpu[label].append(run(root, args.units, args.concurrency, stages, False)["cpu_s"])
        for label, root in codes:
            counted = run(root, args.units, args.concurrency, stages, True)
            row = (f"| {stages} | {label} | {counted['calls']:.1f} | {counted['iterations']:.3f} | "
                   f"{statistics.median(cpu[label]) * 1e6:.1f} |")
            if args.instructions:
                row += f" {instructions(root, args.units, args.concurrency, stages):,.0f} |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
