"""Sweep scaling: wall time, units/s, peak RSS and resume time at 1k / 10k / 100k agent runs.

Agents are ``sim/echo`` (one call per run, no tools) and the judge is
``sim/judge``, both at a fixed simulated latency (default 200 ms), served by a
sim in its own process. Each size runs ``mpcbench-async sweep`` in a child
process (peak RSS from ``wait4``), then reruns it to time the resume of a
finished sweep. The Little's-law bound is ⌈runs / concurrency⌉ × latency for
the agent stage plus one latency for the last judge (judges overlap the
runs); the ratio wall/bound shows the runner's own overhead. Also compares a
small sweep run sequentially (concurrency 1, as the original MPCBench ran)
with the runner at full concurrency. ``--tasks`` sets the split of runs into tasks × trials (10 × N/10 by
default; issue 31 also asks for 100 × N/100). The sweeps run the package importable from the working directory
(``-m``), so running this script from inside another tree (a ``git worktree`` of an earlier commit) measures that
tree.

    .venv/bin/python bench/sweep_scaling.py --sizes 1000,10000,100000
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path

from mpcbench_async.perf import sim_subprocess
from mpcbench_async.testing import write_workspace

CPU: list[float] = []  # each sweep child's CPU s (user + system; wait4 adds an embedded sim child's)


def run_sweep(root: Path, out: Path, trials: int, concurrency: int) -> tuple[float, float, int]:
    """Run one sweep in a child process; return (wall s, peak RSS MiB, exit code); its CPU s goes to ``CPU``."""
    cmd = [sys.executable, "-m", "mpcbench_async", "sweep", "--config", str(root / "model_config.json"),
           "--prompts", str(root / "prompt_config.json"), "--tasks-dir", str(root / "tasks"),
           "--data-dir", str(root / "data"), "--trials", str(trials), "--concurrency", str(concurrency),
           "--out", str(out), "--quiet"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    CPU.append(usage.ru_utime + usage.ru_stime)
    if code != 0:
        sys.stderr.write(proc.stderr.read().decode()[-2000:] if proc.stderr else "")
    return wall, usage.ru_maxrss / 1024, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="agent runs per sweep; a size given more than once runs that many fresh sweeps")
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--embedded", action="store_true",
                        help="no base_url: the runner starts its embedded sim (a child process by default), the "
                             "latency in the model names (sim/echo?latency_ms=…)")
    parser.add_argument("--tasks", type=int, default=10, help="tasks of the workspace; trials = runs / tasks")
    parser.add_argument("--sequential-units", type=int, default=20,
                        help="agent runs for the sequential vs concurrent comparison")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    latency_query = f"?latency_ms={args.latency_ms:g}" if args.embedded else ""
    with (nullcontext(None) if args.embedded else sim_subprocess(["--latency-ms", str(args.latency_ms)])) as base_url, \
            tempfile.TemporaryDirectory() as tmp:
        root = write_workspace(Path(tmp) / "ws", base_url=base_url, tasks=args.tasks,
                               agent_models=[f"sim/echo{latency_query}"], judge_models=[f"sim/judge{latency_query}"],
                               defaults={"limits": {"max_concurrency": args.concurrency * 2}})
        for index, units in enumerate(sizes):  # a size given twice is run twice, each a fresh sweep
            trials = max(1, units // args.tasks)
            out = Path(tmp) / f"out{index}-{units}"
            wall, rss, code = run_sweep(root, out, trials, args.concurrency)
            cpu = CPU[-1]
            resume, resume_rss, _ = run_sweep(root, out, trials, args.concurrency)
            resume_cpu = CPU[-1]
            calls = 2 * units
            latency = args.latency_ms / 1000
            bound = math.ceil(units / args.concurrency) * latency + latency  # agent waves, then the last judge
            rows.append((units, calls, wall, units / wall, rss, resume, bound, code))
            print(f"{units:>7} runs: wall {wall:7.1f} s  {units / wall:7.1f} runs/s  peak RSS {rss:6.0f} MiB  "
                  f"resume {resume:5.2f} s (CPU {resume_cpu:.2f} s, peak RSS {resume_rss:.0f} MiB)  "
                  f"bound {bound:6.1f} s  ratio {wall / bound:4.2f}  runner CPU {cpu:6.1f} s  "
                  f"exit {code}",
                  file=sys.stderr, flush=True)
        n = args.sequential_units
        seq_out, par_out = Path(tmp) / "seq", Path(tmp) / "par"
        seq_wall, _, _ = run_sweep(root, seq_out, max(1, n // args.tasks), 1)
        par_wall, _, _ = run_sweep(root, par_out, max(1, n // args.tasks), args.concurrency)
    print(f"### Sweep scaling — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. Command: "
          f"`python bench/sweep_scaling.py --sizes {args.sizes} --latency-ms {args.latency_ms:g} "
          f"--concurrency {args.concurrency} --tasks {args.tasks}{' --embedded' if args.embedded else ''}`. "
          f"Agent sim/echo + judge sim/judge at {args.latency_ms:g} ms each, "
          f"{'the embedded sim (no base_url)' if args.embedded else 'sim in its own process'}; one run of each size.\n")
    print("| agent runs | LLM calls | wall s | runs/s | peak RSS MiB | resume s | Little bound s | wall/bound |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for units, calls, wall, rate, rss, resume, bound, _ in rows:
        print(f"| {units:,} | {calls:,} | {wall:.1f} | {rate:.1f} | {rss:.0f} | {resume:.2f} | {bound:.1f} | "
              f"{wall / bound:.2f} |")
    print(f"\nSequential (concurrency 1) vs runner (concurrency {args.concurrency}) on {n} runs + {n} judgements: "
          f"{seq_wall:.1f} s vs {par_wall:.1f} s — speed-up {seq_wall / par_wall:.1f}×.")


if __name__ == "__main__":
    main()
