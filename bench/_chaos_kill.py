"""Chaos scenario 1: SIGKILL a budgeted sweep at random moments, resume it, and hold its books against a bill.

Each episode is a fresh sweep directory behind ``BillingProxy`` (it bills every request the seeded sim answers
200, as a provider would, whether or not the client lives to read the reply), under ``--max-cost`` drawn from
the seed. Its rounds are ``mpcbench-async sweep`` child processes: some are killed at a seeded delay after the
round's first request, some inside the proxy at the k-th bill of the round — after the sim answered, before
the reply is relayed: billed and certainly never recorded. Then one uncut run under the budget, then one with
the budget lifted, which must finish the plan. A trial is one kill; it held when, in its episode:

- every billed request has an intent in ``ledger.jsonl`` (per call key: billed ≤ intents), after every round;
- the bill under the budget stays within ``--max-cost`` plus one worst-case call per concurrency slot of each
  stage, and the summary's spent (records plus unsettled intents at their worst case) is never below the bill;
- no record line a round found is gone after the next, and the finished plan has each unit ok exactly once;
- no temporary file is left once a run has ended normally.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from _chaos_common import (
    MAIN,
    Row,
    lost_lines,
    records,
    run_child,
    snapshot,
    sweep_args,
    temp_files,
    traceback_in,
    unit_problems,
)
from anyio.abc import Process

from mpcbench_async.llm import LEDGER
from mpcbench_async.sim import FaultSpec, SimServer
from mpcbench_async.sweep import summarize
from mpcbench_async.testing import BillingProxy, write_workspace

INPUT_PER_1M, OUTPUT_PER_1M, MAX_TOKENS = 100.0, 400.0, 1024
CONCURRENCY, STAGES, TASKS, TRIALS = 4, 2, 8, 3  # agent runs and judgements: a pool of CONCURRENCY units each
KILLS_PER_EPISODE = 3
DEFAULTS = {"retry": {"initial_backoff": 0.01, "max_backoff": 0.05, "max_attempts": 10},
            "prices": {"input_per_1m": INPUT_PER_1M, "output_per_1m": OUTPUT_PER_1M},
            "params": {"max_tokens": MAX_TOKENS}}
EXPECTED = {"runs.jsonl": TASKS * 2 * TRIALS, "judgements.jsonl": TASKS * 2 * TRIALS}  # 2 agent models, 1 judge


async def _round(proxy: BillingProxy, argv: list[str], how: str, rng: random.Random) -> Any:
    """One invocation, killed as ``how`` says (``bill``: at the k-th bill; ``delay``: after a seeded delay)."""
    proxy.round += 1
    proxy.first_request = anyio.Event()
    proxy.kill_at_bill = rng.randint(2, 14) if how == "bill" else None
    delay = rng.uniform(0.05, 1.2)

    async def watch(proc: Process) -> None:
        proxy.child = proc
        if how == "delay":
            await proxy.first_request.wait()
            await anyio.sleep(delay)
            if proc.returncode is None:
                proc.kill()

    child = await run_child(argv, watch=watch)
    proxy.child = None
    proxy.kill_at_bill = None
    return child


def _unlisted(proxy: BillingProxy, out: Path) -> int:
    """Billed requests with no intent in the ledger (per call key: bills beyond the key's intents)."""
    intents = Counter(i["key"] for i in records(out / LEDGER))
    return sum(max(0, n - intents[key]) for key, n in Counter(b.key for b in proxy.billed).items())


def _unrecorded(proxy: BillingProxy, out: Path, round_: int) -> tuple[int, float]:
    """Requests billed in ``round_`` that no ok record of ``calls.jsonl`` holds (by request id), and their cost."""
    ids = {c.get("request_id") for c in records(out / "calls.jsonl") if c.get("status") == "ok"}
    gap = [b for b in proxy.billed if b.round == round_ and b.request_id not in ids]
    return len(gap), sum(b.cost_usd for b in gap)


async def _episode(row: Row, tmp: Path, seed: int, kills: int, totals: dict[str, float]) -> None:
    rng = random.Random(seed)
    budget = round(rng.uniform(6.0, 24.0), 2)
    out = tmp / "out"
    async with SimServer(seed=seed, defaults=FaultSpec(latency_ms=40, latency_sd_ms=30)) as sim:
        async with BillingProxy(sim.base_url, input_per_1m=INPUT_PER_1M, output_per_1m=OUTPUT_PER_1M) as proxy:
            root = write_workspace(tmp / "ws", base_url=proxy.base_url, tasks=TASKS,
                                   agent_models=("sim/oracle-agent", "sim/echo"), defaults=DEFAULTS)
            base = [*MAIN, *sweep_args(root, out, "--trials", str(TRIALS), "--concurrency", str(CONCURRENCY))]
            budgeted = [*base, "--max-cost", str(budget)]
            problems: list[str] = []
            plan = [rng.choice(("bill", "delay")) for _ in range(kills)] + ["none"]
            killed = 0
            for how in plan:
                before = snapshot(out)
                child = await _round(proxy, budgeted, how, rng)
                killed += child.killed
                problems += lost_lines(before, out) + traceback_in(child)
                if _unlisted(proxy, out):
                    problems.append(f"round {proxy.round} ({how}): {_unlisted(proxy, out)} billed requests not in "
                                    "the ledger")
                gap, gap_usd = _unrecorded(proxy, out, proxy.round)
                if gap > totals["gap_calls"]:
                    totals["gap_calls"], totals["gap_usd"] = gap, gap_usd
                if how == "none" and child.code not in (0, 3):
                    problems.append(f"the uncut run under the budget exited {child.code}: {child.stderr[-300:]}")
            billed = sum(b.cost_usd for b in proxy.billed)
            worst_call = max((i.get("worst_usd") or 0.0 for i in records(out / LEDGER)), default=0.0)
            bound = budget + STAGES * CONCURRENCY * worst_call
            spent = summarize(out).directory_calls.cost_usd
            if billed > bound + 1e-9:
                problems.append(f"billed ${billed:.4f} > budget ${budget:.2f} + in-flight bound = ${bound:.4f}")
            if billed > spent + 1e-9:
                problems.append(f"billed ${billed:.4f} but the summary says ${spent:.4f} spent")
            over = billed - budget
            if over > totals["overshoot"]:
                totals["overshoot"], totals["overshoot_bound"] = over, bound - budget
            before = snapshot(out)
            last = await run_child(base)  # the budget lifted: the plan must finish
            problems += lost_lines(before, out) + traceback_in(last)
            if last.code != 0:
                problems.append(f"the last run exited {last.code}: {last.stderr[-300:]}")
            problems += unit_problems(out, EXPECTED)
            if _unlisted(proxy, out):
                problems.append(f"{_unlisted(proxy, out)} billed requests not in the ledger")
            if temp_files(out):
                problems.append(f"temporary files left: {temp_files(out)}")
            calls = records(out / "calls.jsonl")
            totals["billed_usd"] += sum(b.cost_usd for b in proxy.billed)
            totals["billed_calls"] += len(proxy.billed)
            totals["recorded_usd"] += sum(c.get("cost_usd") or 0.0 for c in calls)
            totals["recorded_calls"] += len(calls)
            directory = summarize(out).directory_calls
            totals["unsettled_calls"] += directory.unsettled_calls
            totals["unsettled_usd"] += directory.unsettled_usd
            totals["spent_usd"] += directory.cost_usd
            totals["between_send_and_record"] += proxy.killed_between_send_and_record
            totals["sigkills"] += killed
    row.trial(problems, f"episode with seed {seed} ({kills} kills)", count=kills)


async def run(tmp: Path, seed: int, rounds: int) -> Row:
    """``rounds`` kills, in episodes of up to ``KILLS_PER_EPISODE``."""
    row = Row("SIGKILL under --max-cost, resume")
    totals = dict.fromkeys(("gap_calls", "gap_usd", "overshoot", "overshoot_bound", "billed_usd", "billed_calls",
                            "recorded_usd", "recorded_calls", "unsettled_calls", "unsettled_usd", "spent_usd",
                            "between_send_and_record", "sigkills"), 0.0)
    totals["overshoot"] = float("-inf")
    left, episode = rounds, 0
    while left > 0:
        kills = min(KILLS_PER_EPISODE, left)
        await _episode(row, tmp / f"episode{episode}", seed + episode, kills, totals)
        left -= kills
        episode += 1
    row.worst = (f"{totals['gap_calls']:.0f} billed calls (${totals['gap_usd']:.4f}) unrecorded in one round, all "
                 f"in the ledger; bill − budget ${totals['overshoot']:+.4f} (bound +${totals['overshoot_bound']:.4f})")
    row.figures = totals
    return row


def billed_line(row: Row) -> str:
    t = row.figures
    return (f"Billed vs recorded (all kill episodes): the proxy billed {t['billed_calls']:.0f} requests, "
            f"${t['billed_usd']:.4f}; calls.jsonl holds {t['recorded_calls']:.0f} calls, ${t['recorded_usd']:.4f}; "
            f"the ledger's unsettled intents: {t['unsettled_calls']:.0f} calls, ≤ ${t['unsettled_usd']:.4f}; the "
            f"summaries' spent: ${t['spent_usd']:.4f} (never below the bill). {t['sigkills']:.0f} SIGKILLs, "
            f"{t['between_send_and_record']:.0f} of them between send and record.")
