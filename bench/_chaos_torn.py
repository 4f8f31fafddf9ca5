"""Chaos scenario 4: a finished sweep's JSONL files are torn or polluted between rounds; each resume repairs exactly.

One sweep runs to the end; then, each trial, one of ``runs.jsonl``, ``judgements.jsonl``, ``calls.jsonl`` and
``ledger.jsonl`` is damaged as a crash or a careless hand would leave it — cut at a seeded byte inside its last
records, random bytes appended with no newline, the first half of one of its own records appended, or a garbage
line appended (newline included) — and the same command is rerun. A trial held when the rerun exits 0 with no
traceback, runs again exactly the units whose ok records the damage destroyed (no more, no fewer; a run made
again is judged again, and its earlier judgement is then stale: the summary leaves it out), and its summary
counts each unit once.
"""

from __future__ import annotations

import random
from pathlib import Path

from _chaos_common import MAIN, Row, current_judgements, ok_keys, run_child, sweep_args, traceback_in, unit_problems

from mpcbench_async.testing import write_workspace

TASKS, TRIALS = 4, 2
FILES = ("runs.jsonl", "judgements.jsonl", "calls.jsonl", "ledger.jsonl")
DAMAGES = ("cut", "bytes", "half record", "garbage line")
EXPECTED = {"runs.jsonl": TASKS * 2 * TRIALS, "judgements.jsonl": TASKS * 2 * TRIALS}


def damage(path: Path, how: str, rng: random.Random) -> str:
    """Damage ``path`` as ``how`` says; return what was done."""
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    if how == "cut":
        keep = len(lines) - rng.randint(1, min(3, len(lines)))
        at = sum(len(line) for line in lines[:keep]) + rng.randint(1, len(lines[keep]) - 2)
        path.write_bytes(data[:at])
        return f"cut at byte {at} of {len(data)} (inside record {keep + 1} of {len(lines)})"
    if how == "bytes":
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))).replace(b"\n", b"")
        path.write_bytes(data + junk)
        return f"{len(junk)} random bytes appended"
    if how == "half record":
        line = rng.choice(lines).rstrip(b"\n")
        path.write_bytes(data + line[: len(line) // 2])
        return f"half of a record ({len(line) // 2} bytes) appended"
    path.write_bytes(data + b'{"key": "garbage", "status": \x00 not json}\n')
    return "a garbage line appended"


async def run(tmp: Path, seed: int, rounds: int) -> Row:
    row = Row("torn / garbage JSONL tails, resume")
    rng = random.Random(seed)
    root = write_workspace(tmp / "ws", tasks=TASKS, agent_models=("sim/oracle-agent", "sim/echo"))
    out = tmp / "out"
    argv = [*MAIN, *sweep_args(root, out, "--trials", str(TRIALS))]
    first = await run_child(argv)
    if first.code != 0:
        row.trial([f"the first sweep exited {first.code}: {first.stderr[-300:]}"], "setup")
        return row
    most = 0
    for trial in range(rounds):
        name, how = FILES[trial % len(FILES)], DAMAGES[(trial // len(FILES) + trial) % len(DAMAGES)]
        before, current = ok_keys(out), current_judgements(out)
        done = damage(out / name, how, rng)
        damaged = ok_keys(out)
        destroyed = {n: set(before[n]) - set(damaged[n]) for n in before}
        # Judged again: a judgement no longer of its unit's latest run (that run lost, or the current judgement cut
        # with a stale one of an earlier run left).
        destroyed["judgements.jsonl"] = current - current_judgements(out)
        child = await run_child(argv)
        after = ok_keys(out)
        rerun = {n: {k for k, c in after[n].items() if c > damaged[n][k]} for n in after}
        problems = traceback_in(child) + unit_problems(out, EXPECTED)
        if child.code != 0:
            problems.append(f"the resume exited {child.code}: {child.stderr[-300:]}")
        for n in after:
            if rerun[n] != destroyed[n]:
                problems.append(f"{n}: {len(destroyed[n])} ok records destroyed, {len(rerun[n])} units run again")
        most = max(most, sum(len(keys) for keys in destroyed.values()))
        row.trial(problems, f"trial {trial} ({name}: {done})")
    row.worst = f"up to {most} ok records destroyed by one damage, each unit run again exactly once"
    return row
