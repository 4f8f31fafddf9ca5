"""Chaos scenario 3: the disk fills up under one of a sweep's files; the sweep says so, loses nothing, and resumes.

Without root there is no small tmpfs to fill, so the child sweep's ``os.write`` — the system call every JSONL
writer uses — is replaced before ``main`` runs (``mpcbench_async.testing.full_disk_write``): writes to one
file, drawn from the seed among ``runs.jsonl``, ``judgements.jsonl``, ``calls.jsonl`` and ``ledger.jsonl``,
take a seeded number of writes, then half of the next, then fail with ENOSPC. A trial held when the sweep exits
2 with one ``error:`` line naming that file and no traceback — for ``ledger.jsonl``, by design
(``llm._ledger``), exit 1 with the units whose intents could not be written as infrastructure errors (their
requests were never sent), their error records naming the ledger —, the file's records read back
whole (no torn or bad line), and the same command, rerun on a disk with room, exits 0 with every earlier record
kept and each unit ok exactly once.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from _chaos_common import (
    UNIT_FILES,
    Row,
    lost_lines,
    records,
    run_child,
    snapshot,
    sweep_args,
    traceback_in,
    unit_problems,
)

from mpcbench_async.runtime import read_jsonl
from mpcbench_async.testing import write_workspace

TASKS = 4
FULL = ("import os, sys\nfrom mpcbench_async.testing import full_disk_write\n"
        "os.write = full_disk_write(int(sys.argv[1]), sys.argv[2])\n"
        "from mpcbench_async.cli import main\nraise SystemExit(main(sys.argv[3:]))")
LEDGER = "ledger.jsonl"
# The most writes to allow: fewer than the sweep makes (the ledger group-commits: a write may carry many intents).
FILES = {"runs.jsonl": 7, "judgements.jsonl": 7, "calls.jsonl": 24, "ledger.jsonl": 8}


async def run(tmp: Path, seed: int, rounds: int) -> Row:
    row = Row("disk full (ENOSPC), resume")
    rng = random.Random(seed)
    names = list(FILES)
    for trial in range(rounds):
        name = names[trial % len(names)] if rounds >= len(names) else rng.choice(names)
        writes = rng.randint(1, FILES[name])
        root = write_workspace(tmp / f"t{trial}" / "ws", tasks=TASKS, agent_models=("sim/oracle-agent", "sim/echo"))
        out = tmp / f"t{trial}" / "out"
        args = sweep_args(root, out)
        full = await run_child([sys.executable, "-c", FULL, str(writes), name, *args])
        problems = traceback_in(full)
        if name == LEDGER:  # its units' requests were not sent: infrastructure errors naming the ledger
            named = [r for file in UNIT_FILES for r in records(out / file) if r.get("error_class") == "LedgerError"
                     and f"call ledger {out / name} (OSError: No space left on device)" in r.get("error_message", "")]
            expected = 1
        else:
            named = [line for line in full.stderr.splitlines() if line.startswith(f"error: {out / name}: disk full")]
            expected = 2
        if full.code != expected or not named or (expected == 2 and len(named) > 1):
            problems.append(f"exit {full.code}, stdout ends {full.stdout[-300:]!r}, stderr ends "
                            f"{full.stderr[-300:]!r}: no one error line naming {name}")
        written, report = read_jsonl(out / name) if (out / name).exists() else ([], None)
        if report is not None and (report.torn_tail or report.bad_lines):
            problems.append(f"{name} holds a torn or bad line after the disk filled: {report}")
        before = snapshot(out)
        again = await run_child([sys.executable, "-m", "mpcbench_async", *args])
        problems += traceback_in(again) + lost_lines(before, out)
        if again.code != 0:
            problems.append(f"the rerun exited {again.code}: {again.stderr[-300:]}")
        problems += unit_problems(out, {"runs.jsonl": TASKS * 2, "judgements.jsonl": TASKS * 2})
        row.trial(problems, f"trial {trial} ({name} full after {writes} writes, {len(written)} records kept)")
    row.worst = ("every trial: exit 2 naming the file (ledger.jsonl: exit 1, unsent calls retryable), resume exit 0"
                 if row.held == row.tried else
                 f"{row.tried - row.held} trials did not hold")
    return row
