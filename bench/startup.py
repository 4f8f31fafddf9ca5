"""Start-up time: ``import mpcbench_async``, ``mpcbench-async --help`` and one command's ``--help``.

Targets: issue 13, ≤ 120 ms and ≤ 150 ms; issue 31, ``--help`` CPU ≤ 2× the bare interpreter's
in a wheel install. Each command runs in a fresh interpreter, ``--runs`` times, interleaved
across the trees measured (``--baseline DIR``, e.g. an earlier commit unpacked with
``git archive``, then this checkout), so machine noise hits every tree alike. Reports the
median wall time and the median CPU time (user + system of the child) per command, and the
CPU as a multiple of the bare interpreter's in the same environment.

By default each tree is imported from its source (``PYTHONPATH``, working directory = the
tree, so the workspace's own files are found). With ``--wheel`` each tree is built into a wheel
and installed into a fresh venv of its own (dependencies: this venv's, through a ``.pth``
line, so nothing is fetched), and every command runs from an empty directory: what a user
of the published package runs, reading every packaged default from the installed copy.
``-X importtime`` shows where the time goes.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import site
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLI = "import sys; from mpcbench_async.cli import main; sys.exit(main())"  # what the console script runs
BARE = "python (bare interpreter)"
# The floor of any argparse command line: a parser like the program's (a paragraph of description, two options, 16
# commands with a line of help each) printing its --help, from argparse alone (argparse, re, gettext, locale, textwrap).
ARGPARSE_ALONE = """\
import argparse
parser = argparse.ArgumentParser(prog="cli", description="A runner of benchmarks. " * 20, epilog="exit codes: 0 ok")
parser.add_argument("--log-format", choices=("console", "json"), default="console", help="log output format")
parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"), help="log level")
commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
commands._choices_actions += [commands._ChoicesPseudoAction(f"command{i}", (), "what the command does " * 3)
                              for i in range(16)]
parser.parse_args(["--help"])
"""
COMMANDS = {
    BARE: ["-c", "pass"],
    "argparse alone: a 16-command --help (the floor)": ["-c", ARGPARSE_ALONE],
    "import mpcbench_async": ["-c", "import mpcbench_async"],
    "mpcbench-async --help": ["-c", CLI, "--help"],
    "mpcbench-async sweep --help": ["-c", CLI, "sweep", "--help"],
}


@dataclass(frozen=True)
class Setup:
    """How to run one tree: which Python, from which directory, with which environment."""

    python: Path
    cwd: Path
    env: dict[str, str]


def source_setup(tree: Path) -> Setup:
    """``tree`` imported from its source, run from the tree itself (byte-compiled first, as an install is)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "mpcbench_async")], check=True)
    return Setup(Path(sys.executable), tree, dict(os.environ, PYTHONPATH=str(tree)))


def wheel_setup(tree: Path, work: Path) -> Setup:
    """``tree`` built into a wheel and installed alone into a fresh venv; commands run from an empty directory."""
    work.mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"), str(tree)],
                   check=True)
    (wheel,) = (work / "dist").glob("mpcbench_async-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    # The dependencies are this venv's; a path line in a .pth adds the directory without running its .pth files
    # (so this checkout's editable install stays out).
    (purelib / "_bench_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(purelib), str(wheel)],
                   check=True)
    subprocess.run([python, "-m", "compileall", "-q", str(purelib / "mpcbench_async")], check=True)
    empty = work / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return Setup(python, empty, env)


def _run(args: list[str], setup: Setup) -> tuple[float, float]:
    """Wall and CPU seconds of one child ``python args`` in ``setup``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([setup.python, *args], env=setup.env, cwd=setup.cwd, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(setups: dict[str, Setup], runs: int) -> dict[tuple[str, str], tuple[float, float]]:
    """Median (wall, CPU) in ms per (tree, command), every run interleaved over trees and commands."""
    for setup in setups.values():  # warm the page cache first
        for args in COMMANDS.values():
            _run(args, setup)
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(runs):
        for name, setup in setups.items():
            for label, args in COMMANDS.items():
                samples.setdefault((name, label), []).append(_run(args, setup))
    return {key: (1000 * statistics.median(w for w, _ in values), 1000 * statistics.median(c for _, c in values))
            for key, values in samples.items()}


def render(results: dict[tuple[str, str], tuple[float, float]], runs: int, command: str, *, wheel: bool) -> str:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    where = ("each tree installed from its wheel into a fresh venv, run from an empty directory" if wheel
             else "each tree imported from its source, run from the tree")
    lines = [f"#### Start-up — {stamp}", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"{platform.system()} {platform.release()}. Command: `{command}`.",
             f"Fresh interpreter per run, {where}; medians of {runs} interleaved runs (wall; CPU = child user + "
             "system; × bare = CPU ÷ the bare interpreter's CPU in the same environment).", "",
             "| tree | command | wall ms | CPU ms | × bare |", "|---|---|---:|---:|---:|"]
    for (tree, label), (wall, cpu) in results.items():
        bare = results[(tree, BARE)][1]
        lines.append(f"| {tree} | {label} | {wall:.0f} | {cpu:.0f} | {cpu / bare:.1f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per command and tree (default: 10)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another source tree to measure beside this checkout (e.g. `git archive HEAD`)")
    parser.add_argument("--wheel", action="store_true",
                        help="install each tree from its wheel into a fresh venv and run from an empty directory")
    parser.add_argument("--out", type=Path, default=None, help="also append the table to this file")
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve()} if args.baseline else {}
    trees["this checkout"] = REPO
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        setups = {name: wheel_setup(tree, Path(tmp) / str(i)) if args.wheel else source_setup(tree)
                  for i, (name, tree) in enumerate(trees.items())}
        table = render(measure(setups, args.runs), args.runs, "python bench/startup.py " + " ".join(sys.argv[1:]),
                       wheel=args.wheel)
    print(table)
    if args.out:
        with args.out.open("a", encoding="utf-8") as fh:
            fh.write("\n" + table)


if __name__ == "__main__":
    main()
