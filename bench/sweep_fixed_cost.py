"""A sweep's fixed CPU (start-up and the end-of-run summary), before vs after, interleaved in one run.

What a sweep pays whatever its size (issue 31 point 2): importing the runner and its libraries, reading the inputs,
the manifest, and the summary rebuilt from the records at the end. Measured in the same kind of child as
``cpu_per_call.py``'s ``sweep`` row (``mpcbench-async sweep`` of the shipped tasks, ``sim/oracle-agent`` +
``sim/judge``, every record and the ledger written, one ``sim serve`` apart), for each tree ("before": a git
worktree put first on ``PYTHONPATH``; "after": this tree), rounds interleaved tree by tree, medians:

- a 1-trial sweep (96 LLM calls): the runner process's whole CPU (``RUSAGE_SELF``), nearly all of it fixed;
- a ``--trials`` sweep: the runner's CPU ÷ its LLM calls (the ``sweep`` row of ``cpu_per_call.py``);
- the summary alone: ``write_summary`` of one ``--trials`` sweep directory (made once, copied afresh to the same
  path for each tree), its CPU around the call in a child that imported the summary's modules first; the trees'
  ``summary.json`` and ``summary.md`` are compared byte for byte (the output says whether they are identical);
- the import of the sweep's modules alone (``python -c "import …"``, the child's whole CPU).

``--instructions N`` adds each tree's instructions of the whole 1-trial sweep process under valgrind (cachegrind, no
cache simulation), the median of N runs: a figure the machine's load does not move (user space only), though the
sweep's own part moves by a few percent from run to run (how replies happen to group per event-loop wake-up); its
imports are the same instructions every time. ``--rounds 0`` leaves the CPU rows out.

    .venv/bin/python bench/sweep_fixed_cost.py --before /tmp/before --rounds 7 --instructions 3
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import orjson  # noqa: E402
from cpu_per_call import REPO, SWEEP, _env, compiled_trees, sweep_child  # noqa: E402

from mpcbench_async.perf import sim_subprocess  # noqa: E402

IMPORTS = "import mpcbench_async.cli, mpcbench_async.cli._sweep, mpcbench_async.sweep._job"

# Run as: python -c SUMMARY DIR; prints {"cpu_s": …}: ``write_summary`` of DIR, its modules imported first.
SUMMARY = r"""
import json, sys, time
from pathlib import Path
import mpcbench_async.report, mpcbench_async.sweep._summary, mpcbench_async.sweep._summary_cache
from mpcbench_async.sweep import write_summary
start = time.process_time()
write_summary(Path(sys.argv[1]))
print(json.dumps({"cpu_s": time.process_time() - start}))
"""


def _child(code: str, args: list[str], root: Path) -> dict[str, float]:
    """The last JSON line ``python -c code args`` printed, run from the temporary directory (see ``run_program``)."""
    proc = subprocess.run([sys.executable, "-c", code, *args], env=_env(root), cwd=tempfile.gettempdir(),
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"child failed:\n{proc.stderr[-2000:]}")
    return orjson.loads(proc.stdout.strip().splitlines()[-1])


def import_cpu(root: Path) -> float:
    """CPU s of a child that imports the sweep's modules and exits."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", IMPORTS], env=_env(root), cwd=tempfile.gettempdir(), check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def sweep_instructions(root: Path, url: str, concurrency: int, tmp: Path) -> int:
    """Instructions of one whole 1-trial sweep process, under cachegrind."""
    with tempfile.TemporaryDirectory() as out:
        prefix = ("valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}/cg",
                  f"--log-file={out}/log")
        sweep_child(SWEEP, url, 1, concurrency, root, tmp, prefix)
        found = re.search(r"I\s+refs:\s+([\d,]+)", Path(f"{out}/log").read_text())
    if found is None:
        raise SystemExit("cachegrind gave no instruction count")
    return int(found.group(1).replace(",", ""))


def long_sweep_dir(url: str, trials: int, concurrency: int, tmp: Path) -> Path:
    """A ``trials``-trial sweep directory written by this tree, for the summary rows."""
    config = tmp / "summary_config.json"
    config.write_bytes(orjson.dumps({"agent_models": ["sim/oracle-agent"], "judge_models": ["sim/judge"],
                                     "defaults": {"base_url": url, "limits": {"max_concurrency": concurrency}}}))
    out = tmp / "long_sweep"
    subprocess.run([sys.executable, "-m", "mpcbench_async", "sweep", "--config", str(config), "--prompts",
                    str(REPO / "prompt_config.json"), "--tasks-dir", str(REPO / "tasks"), "--data-dir",
                    str(REPO / "data"), "--trials", str(trials), "--concurrency", str(concurrency), "--out", str(out),
                    "--quiet"], cwd=tmp, capture_output=True, check=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, default=None, help="source tree of the 'before' code (a worktree)")
    parser.add_argument("--trials", type=int, default=40, help="trials of the long sweep (default: 40)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--instructions", type=int, default=0, metavar="N",
                        help="also count each tree's instructions of a 1-trial sweep under valgrind: the median of N "
                             "runs (default: 0, none)")
    args = parser.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind on PATH")
    codes = compiled_trees(args.before)
    samples: dict[tuple[str, str], list[float]] = {}

    def note(row: str, label: str, value: float) -> None:
        samples.setdefault((row, label), []).append(value)
        print(f"{row:9} {label:6} {value:.6g}", file=sys.stderr, flush=True)

    instructions: dict[str, float] = {}
    identical = True
    with sim_subprocess() as url, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        long_dir = long_sweep_dir(url, args.trials, args.concurrency, tmp) if args.rounds else tmp
        counts: dict[str, list[int]] = {label: [] for label, _ in codes}
        for _ in range(args.instructions):
            for label, root in codes:
                counts[label].append(sweep_instructions(root, url, args.concurrency, tmp))
                print(f"instr     {label:6} {counts[label][-1]}", file=sys.stderr, flush=True)
        if args.instructions:
            instructions = {label: statistics.median(values) for label, values in counts.items()}
        for _ in range(args.rounds):
            written: dict[str, tuple[bytes, bytes]] = {}
            for label, root in codes:
                note("import", label, import_cpu(root))
                figures, _, _ = sweep_child(SWEEP, url, 1, args.concurrency, root, tmp)
                note("sweep1", label, figures["self_s"])
                figures, calls, _ = sweep_child(SWEEP, url, args.trials, args.concurrency, root, tmp)
                note("sweepN", label, figures["self_s"] / calls)
                copy = tmp / "summary"  # one path for every tree: the summary names its directory
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(long_dir, copy)
                note("summary", label, _child(SUMMARY, [str(copy)], root)["cpu_s"])
                written[label] = ((copy / "summary.json").read_bytes(), (copy / "summary.md").read_bytes())
            identical = identical and len(set(written.values())) == 1

    def med(row: str, label: str) -> float:
        return statistics.median(samples[(row, label)])

    before = f" --before {args.before}" if args.before else ""
    print(f"#### A sweep's fixed CPU — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, 1-minute load "
          f"average {os.getloadavg()[0]:.1f} at the end. Command: `python bench/sweep_fixed_cost.py{before} --trials "
          f"{args.trials} --concurrency {args.concurrency} --rounds {args.rounds}"
          f"{f' --instructions {args.instructions}' if args.instructions else ''}`. Medians of {args.rounds} "
          "interleaved rounds.\n")
    labels = [label for label, _ in codes]
    print("| figure | " + " | ".join(labels) + (" | after ÷ before |" if len(labels) == 2 else " |"))
    print("|---|" + "---:|" * (len(labels) + (len(labels) == 2)))
    rows = [("import", "import of the sweep's modules alone, CPU ms", 1e3),
            ("sweep1", "1-trial sweep (96 LLM calls), runner CPU ms", 1e3),
            ("sweepN", f"{args.trials}-trial sweep, runner CPU µs per LLM call", 1e6),
            ("summary", f"`write_summary` of a {args.trials}-trial sweep, CPU ms", 1e3)]
    for row, title, scale in rows if args.rounds else ():
        values = [med(row, label) for label in labels]
        ratio = f" | {values[1] / values[0]:.2f}×" if len(values) == 2 else ""
        print(f"| {title} | " + " | ".join(f"{v * scale:.0f}" for v in values) + ratio + " |")
    if instructions:
        values = [float(instructions[label]) for label in labels]
        ratio = f" | {values[1] / values[0]:.2f}×" if len(values) == 2 else ""
        print(f"| 1-trial sweep, instructions (M, valgrind, median of {args.instructions}) | "
              + " | ".join(f"{v / 1e6:,.0f}" for v in values) + ratio + " |")
    if len(labels) == 2 and args.rounds:
        print(f"\nsummary.json and summary.md written by both trees from the same directory: "
              f"{'byte-identical' if identical else 'DIFFERENT'} in every round.")


if __name__ == "__main__":
    main()
