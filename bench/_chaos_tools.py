"""Chaos scenario 6: one unit's pathological tool calls change no other unit's result, and the sweep exits at once.

``bench/tool_isolation.py``'s pair of sweeps over shipped tasks: a baseline with ``sim/oracle-agent`` alone, and
a chaos sweep that adds ``sim/chaos-agent``, whose first reply on ``sc01_planning`` makes a seeded number of
parallel free-slot searches over two thousand years of every attendee (4–12; 2–4 with ``--quick``; each would
run for many seconds, the tool limit, ``TOOL_TIMEOUT_S`` here, stops it). A trial held when every oracle unit's
status, checks, tool results and judge scores are the same in both sweeps, both exit 0, and each child process
exits within ``EXIT_S`` of ``main()`` returning (its summary written and printed).
"""

from __future__ import annotations

import random
from pathlib import Path

import anyio
import tool_isolation
from _chaos_common import Row

TOOL_TIMEOUT_S = 5.0
EXIT_S = 2.0
TASKS, QUICK_TASKS = "sc0[1-4]*", "sc01*"


async def run(tmp: Path, seed: int, rounds: int, quick: bool) -> Row:
    row = Row("pathological tools in one unit")
    rng = random.Random(seed)
    most_differ, slowest_exit, units = 0, 0.0, 0
    for trial in range(rounds):
        calls = rng.randint(2, 4) if quick else rng.randint(4, 12)
        result = await anyio.to_thread.run_sync(tool_isolation.pair, tmp / f"t{trial}", calls, TOOL_TIMEOUT_S,
                                                QUICK_TASKS if quick else TASKS)
        problems = [f"{len(result.differ)} of {len(result.before)} neighbour units changed: {result.differ[:3]}"
                    ] if result.differ else []
        if (result.base_code, result.chaos_code) != (0, 0):
            problems.append(f"exit codes {result.base_code} (baseline) and {result.chaos_code} (chaos)")
        if max(result.base_exit, result.chaos_exit) > EXIT_S:
            problems.append(f"exited {max(result.base_exit, result.chaos_exit):.2f} s after its summary")
        if not result.chaos_calls or not all(c.get("timed_out") for c in result.chaos_calls):
            problems.append("the chaos unit's calls did not all run to their limit: the scenario did not bite")
        most_differ = max(most_differ, len(result.differ))
        slowest_exit = max(slowest_exit, result.base_exit, result.chaos_exit)
        units = len(result.before)
        row.trial(problems, f"trial {trial} ({calls} pathological calls)")
    row.worst = (f"{most_differ} of {units} neighbour units changed; slowest exit {slowest_exit:.2f} s after the "
                 "summary")
    return row
