"""The chaos harness (issue 25): real ``mpcbench-async sweep`` child processes under six kinds of trouble.

    .venv/bin/python bench/chaos.py [--rounds 4] [--seed 2025] [--quick] [--only kill,faults,…] [--json FILE]

Scenarios (each module's docstring says exactly what a trial is and when it held):

- ``kill`` (``_chaos_kill``): SIGKILL at random moments — also between the provider's answer and the sweep's
  record — under ``--max-cost``, behind an accounting proxy; resume. Held: billed ≤ budget + one worst-case call
  per concurrency slot, every billed call in the ledger, no record lost, each unit ok once, no temporary file.
- ``faults`` (``_chaos_faults``): the embedded sim fails about half of all requests (429, 5xx, drops, timeouts,
  truncated and malformed bodies); rerun. Held: every unit ok within 8 resumes, no record twice.
- ``disk`` (``_chaos_disk``): ENOSPC under one JSONL file. Held: exit 2 with one line naming the file, nothing
  written lost, the rerun finishes.
- ``torn`` (``_chaos_torn``): JSONL tails cut or polluted between rounds. Held: the resume runs again exactly
  the destroyed units.
- ``echo`` (``_chaos_echo``): a server echoing the API key in 12 shapes. Held: 0 key material in any file of the
  sweep directory, stdout or stderr.
- ``tools`` (``_chaos_tools``, ``tool_isolation.py``): one unit's pathological tool calls. Held: 0 neighbour
  results changed, exit within 2 s of the summary.

Trials per scenario scale with ``--rounds`` R: 3R kills (in episodes of up to 3), R fault sweeps, 2R full
disks, 4R damaged files, R echo sweeps, ⌈R/2⌉ tool pairs. ``--quick``: R = 1 with 2 kills and smaller tool
trials (the ``slow`` test ``tests/test_chaos_harness.py`` runs it). The first five scenarios run side by side
(each in its own directories, with its own servers); ``tools``, which times an exit, runs after them, alone.
Prints a Markdown table ``scenario | tried | held | worst`` and the billed-vs-recorded totals; exits 0 when every
trial held, 1 otherwise (listing what broke).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import _chaos_disk
import _chaos_echo
import _chaos_faults
import _chaos_kill
import _chaos_tools
import _chaos_torn
import anyio
import orjson
from _chaos_common import Row

SCENARIOS = ("kill", "faults", "disk", "torn", "echo", "tools")
ALONE = {"tools"}  # it times the exit after the summary: it runs after the others, alone


def plan(rounds: int, quick: bool) -> dict[str, int]:
    """Trials per scenario."""
    if quick:
        return {"kill": 2, "faults": 1, "disk": 1, "torn": 2, "echo": 1, "tools": 1}
    return {"kill": 3 * rounds, "faults": rounds, "disk": 2 * rounds, "torn": 4 * rounds, "echo": rounds,
            "tools": math.ceil(rounds / 2)}


async def run_all(only: list[str], trials: dict[str, int], seed: int, quick: bool, tmp: Path) -> list[Row]:
    runners: dict[str, Callable[[Path, int, int], Awaitable[Row]]] = {
        "kill": _chaos_kill.run, "faults": _chaos_faults.run, "disk": _chaos_disk.run, "torn": _chaos_torn.run,
        "echo": _chaos_echo.run,
        "tools": lambda path, s, n: _chaos_tools.run(path, s, n, quick)}
    rows: dict[str, Row] = {}

    async def one(name: str) -> None:
        started = time.perf_counter()
        row = await runners[name](tmp / name, seed, trials[name])
        row.figures["seconds"] = round(time.perf_counter() - started, 1)
        rows[name] = row
        print(f"{name}: {row.held}/{row.tried} held in {row.figures['seconds']} s", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as tg:  # independent directories and servers: they run side by side
        for name in only:
            if name not in ALONE:
                tg.start_soon(one, name)
    for name in only:  # then the scenarios that time something, each on a machine the others leave alone
        if name in ALONE:
            await one(name)
    return [rows[name] for name in only]


def table(rows: list[Row]) -> str:
    lines = ["| scenario | tried | held | worst |", "|---|---:|---:|---|"]
    lines += [f"| {r.scenario} | {r.tried} | {r.held} | {r.worst} |" for r in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=4, help="R: trials per scenario scale with it (default 4)")
    parser.add_argument("--seed", type=int, default=2025, help="seeds every random choice (default 2025)")
    parser.add_argument("--quick", action="store_true", help="the smallest run of every scenario (about a minute)")
    parser.add_argument("--only", default=",".join(SCENARIOS), help="scenarios to run, comma-separated (default: all)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results to this file as JSON")
    args = parser.parse_args()
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(only) - set(SCENARIOS))
    if unknown or args.rounds < 1:
        parser.error(f"--only: unknown scenarios {unknown}" if unknown else "--rounds must be at least 1")
    trials = plan(args.rounds, args.quick)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mpcbench-chaos-") as tmp:
        rows = anyio.run(run_all, only, trials, args.seed, args.quick, Path(tmp))
    wall = time.perf_counter() - started
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = f"python bench/chaos.py {'--quick' if args.quick else f'--rounds {args.rounds}'} --seed {args.seed}"
    print(f"Chaos harness — {stamp}; `{command}`; {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; {wall:.0f} s.\n")
    print(table(rows))
    kill = next((r for r in rows if r.figures.get("billed_calls") is not None), None)
    if kill is not None:
        print("\n" + _chaos_kill.billed_line(kill))
    failures = [f"{r.scenario}: {f}" for r in rows for f in r.failures]
    if failures:
        print("\nDid not hold:\n" + "\n".join(f"- {f}" for f in failures))
    if args.json:
        args.json.write_bytes(orjson.dumps({"when": stamp, "command": command, "seed": args.seed,
                                            "trials": trials, "seconds": round(wall, 1),
                                            "rows": [vars(r) for r in rows]}, option=orjson.OPT_INDENT_2))
    return 1 if failures or any(r.held != r.tried for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
