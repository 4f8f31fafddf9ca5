"""Start-up time: ``import mpcbench_async`` and ``mpcbench-async --help`` (issue 13: ≤ 120 ms and ≤ 150 ms).

Each command runs in a fresh interpreter (this venv's Python), ``--runs`` times, interleaved
across the trees measured (``--baseline DIR``, e.g. an earlier commit unpacked with
``git archive``, then this checkout), so machine noise hits every tree alike. Reports the
median wall time and the median CPU time (user + system of the child) per command, with
the bare interpreter start as the floor. ``-X importtime`` shows where the time goes.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMMANDS = {
    "python (bare interpreter)": ["-c", "pass"],
    "import mpcbench_async": ["-c", "import mpcbench_async"],
    # what the mpcbench-async console script runs
    "mpcbench-async --help": ["-c", "import sys; from mpcbench_async.cli import main; sys.exit(main())", "--help"],
}


def _run(args: list[str], tree: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one child ``python args`` importing the package from ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, cwd=tree, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(trees: dict[str, Path], runs: int) -> dict[tuple[str, str], tuple[float, float]]:
    """Median (wall, CPU) in ms per (tree, command), every run interleaved over trees and commands."""
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for tree in trees.values():  # compile every tree (as an install does) and warm the page cache first
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "mpcbench_async")], check=True)
        for args in COMMANDS.values():
            _run(args, tree)
    for _ in range(runs):
        for name, tree in trees.items():
            for label, args in COMMANDS.items():
                samples.setdefault((name, label), []).append(_run(args, tree))
    return {key: (1000 * statistics.median(w for w, _ in values), 1000 * statistics.median(c for _, c in values))
            for key, values in samples.items()}


def render(results: dict[tuple[str, str], tuple[float, float]], runs: int, command: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"#### Start-up — {stamp}", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"{platform.system()} {platform.release()}. Command: `{command}`.",
             f"Fresh interpreter per run; medians of {runs} interleaved runs (wall; CPU = child user + system).", "",
             "| tree | command | wall ms | CPU ms |", "|---|---|---:|---:|"]
    lines += [f"| {tree} | {label} | {wall:.0f} | {cpu:.0f} |" for (tree, label), (wall, cpu) in results.items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per command and tree (default: 10)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another source tree to measure beside this checkout (e.g. `git archive HEAD`)")
    parser.add_argument("--out", type=Path, default=None, help="also append the table to this file")
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve()} if args.baseline else {}
    trees["this checkout"] = REPO
    table = render(measure(trees, args.runs), args.runs, "python bench/startup.py " + " ".join(sys.argv[1:]))
    print(table)
    if args.out:
        with args.out.open("a", encoding="utf-8") as fh:
            fh.write("\n" + table)


if __name__ == "__main__":
    main()
