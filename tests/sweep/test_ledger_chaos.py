"""Chaos: SIGKILL a budgeted sweep at random moments, resume it, and check the bill (issue 25 point 1).

An accounting proxy (``mpcbench_async.testing.BillingProxy``) stands between the sweep and the seeded sim, as a
provider's billing would: it bills every request the sim answers 200 — by the reply's usage at the configured
prices — whether or not the client is still there to read the reply (it keeps going when the client dies, like a
provider that finished generating). A
`mpcbench-async sweep --max-cost` child process is killed (SIGKILL) in several rounds and resumed:

- some rounds kill at a seeded random delay after the round's first request;
- some kill inside the proxy at the k-th bill of the round, after the sim answered and before the reply is
  relayed: a request billed and certainly never recorded (between send and record).

The last round runs uncut. Then, from the files alone, with ``-s`` printing the figures:

- every billed request has an intent in ``ledger.jsonl`` (per call key, billed ≤ intents): 0 unrecorded paid calls;
- every billed request is either settled by an ok record in ``calls.jsonl`` (same ``request_id``) or one of the
  key's unsettled intents;
- the billed total never exceeds ``--max-cost`` plus one worst-case call per concurrency slot;
- the summary's spend (records + unsettled at their worst case) is never below the billed total, and its
  unsettled line matches the ledger.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

from mpcbench_async.llm import LEDGER, SettledCalls, unsettled_calls
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import FaultSpec, SimServer
from mpcbench_async.sweep import summarize
from mpcbench_async.testing import BillingProxy, write_workspace

CLI = "import sys; from mpcbench_async.cli import main; raise SystemExit(main(sys.argv[1:]))"
SEED = 2025
INPUT_PER_1M, OUTPUT_PER_1M, MAX_TOKENS = 100.0, 400.0, 1024  # the sim's replies stay far below MAX_TOKENS
MAX_COST = 30.0
CONCURRENCY = 4
STAGES = 2  # agent runs and judgements: each stage has its own pool of CONCURRENCY units, one call in flight each


def command(root: Path, out: Path) -> list[str]:
    return [sys.executable, "-c", CLI, "sweep", "--config", str(root / "model_config.json"),
            "--prompts", str(root / "prompt_config.json"), "--tasks-dir", str(root / "tasks"),
            "--data-dir", str(root / "data"), "--scenarios-dir", str(root / "scenarios"), "--trials", "3",
            "--concurrency", str(CONCURRENCY), "--max-cost", str(MAX_COST), "--out", str(out), "--quiet"]


def unsettled_now(out: Path) -> int:
    """Calls in the ledger no record settles, as the files stand."""
    calls, _ = read_jsonl(out / "calls.jsonl") if (out / "calls.jsonl").exists() else ([], None)
    return len(unsettled_calls(out / LEDGER, SettledCalls(call.get("call_id") for call in calls)))


async def run_round(proxy: BillingProxy, cmd: list[str], how: str, rng: random.Random,
                    out: Path) -> dict[str, Any]:
    """One invocation of the sweep, killed as ``how`` says (``delay``, ``bill``) or left to finish (``none``)."""
    proxy.round += 1
    proxy.first_request = anyio.Event()
    proxy.kill_at_bill = rng.randint(2, 14) if how == "bill" else None
    delay = rng.uniform(0.05, 1.2) if how == "delay" else None
    started = time.perf_counter()
    async with await anyio.open_process(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        proxy.child = proc

        async def kill_after_delay() -> None:
            await proxy.first_request.wait()
            assert delay is not None
            await anyio.sleep(delay)
            if proc.returncode is None:
                proc.send_signal(signal.SIGKILL)

        async with anyio.create_task_group() as tg:
            if delay is not None:
                tg.start_soon(kill_after_delay)
            code = await proc.wait()
            tg.cancel_scope.cancel()
    proxy.child = None
    return {"round": proxy.round, "how": how, "exit": code, "bills": proxy.bills_this_round(),
            "s": time.perf_counter() - started, "unsettled": unsettled_now(out)}


class TestChaos:
    async def test_killed_and_resumed_sweeps_never_hide_a_billed_call_nor_pass_the_budget(self, tmp_path):
        rng = random.Random(SEED)
        defaults = {"retry": {"initial_backoff": 0.01, "max_backoff": 0.05, "max_attempts": 10},
                    "prices": {"input_per_1m": INPUT_PER_1M, "output_per_1m": OUTPUT_PER_1M},
                    "params": {"max_tokens": MAX_TOKENS}}
        out = tmp_path / "out"
        plan = ["bill", "delay", "bill", "delay", "bill", "none"]  # a bill-kill first: the budget has room then
        rounds = []
        with anyio.fail_after(240):
            async with SimServer(seed=SEED, defaults=FaultSpec(latency_ms=40, latency_sd_ms=30)) as sim:
                proxy = BillingProxy(sim.base_url, input_per_1m=INPUT_PER_1M, output_per_1m=OUTPUT_PER_1M)
                await proxy.start()
                try:
                    root = write_workspace(tmp_path, base_url=proxy.base_url, tasks=8,
                                           agent_models=("sim/oracle-agent", "sim/echo"), defaults=defaults)
                    cmd = command(root, out)
                    for how in plan:
                        rounds.append(await run_round(proxy, cmd, how, rng, out))
                finally:
                    await proxy.stop()

        calls, _ = read_jsonl(out / "calls.jsonl")
        intents, _ = read_jsonl(out / LEDGER)
        settled = SettledCalls(call["call_id"] for call in calls)
        open_calls = unsettled_calls(out / LEDGER, settled)
        billed = proxy.billed
        billed_usd = sum(b.cost_usd for b in billed)
        recorded_usd = sum(call["cost_usd"] for call in calls)
        unsettled_usd = sum(i.worst_usd or 0.0 for i in open_calls)
        worst_call = max(i["worst_usd"] for i in intents)

        recorded_ids = {call.get("request_id") for call in calls if call["status"] == "ok"}
        unrecorded = Counter(b.key for b in billed if b.request_id not in recorded_ids)  # paid, not in calls.jsonl
        intents_per_key = Counter(i["key"] for i in intents)
        open_per_key = Counter(i.key for i in open_calls)
        not_in_ledger = sum(max(0, n - intents_per_key[key]) for key, n in Counter(b.key for b in billed).items())
        unexplained = sum(max(0, n - open_per_key[key]) for key, n in unrecorded.items())

        summary = summarize(out)
        bound = MAX_COST + STAGES * CONCURRENCY * worst_call
        print(f"\nchaos (seed {SEED}, --max-cost {MAX_COST}, concurrency {CONCURRENCY} × {STAGES} stages):")
        before = 0
        for r in rounds:
            print(f"  round {r['round']}: kill={r['how']:<5} exit={r['exit']:<4} billed requests={r['bills']:<4} "
                  f"left unsettled={r['unsettled'] - before:<3} {r['s']:.1f} s")
            before = r["unsettled"]
        print(f"  billed by the proxy:     {len(billed)} requests, ${billed_usd:.4f}")
        print(f"  recorded (calls.jsonl):  {len(calls)} calls, ${recorded_usd:.4f}; billed but unrecorded: "
              f"{sum(unrecorded.values())} requests")
        print(f"  unsettled (ledger.jsonl): {len(open_calls)} calls, ≤ ${unsettled_usd:.4f}")
        print(f"  summary spent:           ${summary.directory_calls.cost_usd:.4f} "
              f"({summary.directory_calls.unsettled_text()})")
        print(f"  budget ${MAX_COST:.4f}; bound with {STAGES * CONCURRENCY} worst-case calls in flight "
              f"(${worst_call:.4f} each): ${bound:.4f}")
        print(f"  billed requests with no intent in the ledger: {not_in_ledger}; unrecorded and not unsettled: "
              f"{unexplained}; killed between send and record: {proxy.killed_between_send_and_record}")

        assert (0, 0) == (not_in_ledger, unexplained)
        assert billed_usd <= bound
        assert billed_usd <= summary.directory_calls.cost_usd + 1e-9  # the sweep never reports less than was billed
        assert (len(open_calls), round(unsettled_usd, 6)) == (summary.directory_calls.unsettled_calls,
                                                             summary.directory_calls.unsettled_usd)
        assert 0 < proxy.killed_between_send_and_record <= min(len(open_calls), sum(unrecorded.values()))
        assert sum(r["how"] != "none" and r["exit"] == -signal.SIGKILL for r in rounds) >= 1
        assert rounds[-1]["exit"] in (0, 3)
