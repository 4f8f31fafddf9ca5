"""Judges online vs in provider batches on one sweep: cost, scores and wall time (issue 29 point 3, acceptance).

The same sweep (a ``write_workspace`` of ``--tasks`` tasks, two sim agents, the
``sim/judge`` judge, ``--trials`` trials) runs twice against one seeded sim on
loopback: judges online, then ``--batch judge`` (the sim's OpenAI Batch API,
batches finishing at their first poll). Prices are real table rates given in the
config: the agents at gpt-4o-mini's, the judge at gpt-4.1's ($2 / $8 per 1M), the
batch tier at the table's 50 % discount. Scores must be equal record for record;
cost is read from ``calls.jsonl`` (what the summary reports). Wall time here is
the runner's, with batches that finish at once: a provider's batch takes minutes
to hours (``--dry-run`` shows that bound), so the wall-time column shows only
what gathering into batches costs the runner.

    .venv/bin/python bench/batch_cost.py --tasks 40 --trials 2 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mpcbench_async.mpcbench import MPCBenchInputs  # noqa: E402
from mpcbench_async.runner import RunChoice  # noqa: E402
from mpcbench_async.runtime import read_jsonl  # noqa: E402
from mpcbench_async.sim import SimServer  # noqa: E402
from mpcbench_async.sweep import Output, SweepOptions, run_sweep  # noqa: E402
from mpcbench_async.testing import write_workspace  # noqa: E402

AGENT_PRICES = {"input_per_1m": 0.15, "output_per_1m": 0.60}  # gpt-4o-mini
JUDGE_PRICES = {"input_per_1m": 2.00, "output_per_1m": 8.00}  # gpt-4.1
BATCH = {"max_wait_s": 0.5, "poll_s": 0.05, "poll_max_s": 1.0}


def workspace(root: Path, base_url: str, tasks: int, batch: bool) -> Path:
    ws = write_workspace(root, base_url=base_url, tasks=tasks, defaults={"prices": AGENT_PRICES})
    config = orjson.loads((ws / "model_config.json").read_bytes())
    config["models"] = {"sim/judge": {"prices": JUDGE_PRICES, **({"batch": BATCH} if batch else {})}}
    (ws / "model_config.json").write_bytes(orjson.dumps(config))
    return ws


async def one(tmp: Path, sim: SimServer, tasks: int, trials: int, batch: bool) -> dict[str, Any]:
    ws = workspace(tmp / ("ws-batch" if batch else "ws-online"), sim.base_url, tasks, batch)
    out = tmp / ("batch" if batch else "online")
    started = time.perf_counter()
    await run_sweep(SweepOptions(
        config=ws / "model_config.json", prompts=ws / "prompt_config.json", run=RunChoice(trials=trials),
        output=Output(out=out, certificate=False),
        inputs=[MPCBenchInputs(tasks_dir=ws / "tasks", data_dir=ws / "data", scenarios_dir=ws / "scenarios")],
        handle_signals=False))
    wall = time.perf_counter() - started
    calls, _ = read_jsonl(out / "calls.jsonl")
    judgements, _ = read_jsonl(out / "judgements.jsonl")
    return {"wall": wall, "cost": sum(c["cost_usd"] or 0.0 for c in calls),
            "judge_cost": sum(c["cost_usd"] or 0.0 for c in calls if c["model"] == "sim/judge"),
            "judge_calls": sum(1 for c in calls if c["model"] == "sim/judge"),
            # by what was judged: unit keys hash the workspace's paths, which differ between runs
            "scores": {(j["task_id"], j["agent_model"], j["trial"]): (j["judgement"] or {}).get("scores")
                       for j in judgements}}


async def main(args: argparse.Namespace) -> None:
    rows: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    batches = 0
    for _ in range(args.repeats):
        for batch in (False, True):  # interleaved, so the machine's noise falls on both alike
            with tempfile.TemporaryDirectory() as tmp:
                async with SimServer(seed=11) as sim:
                    rows[batch].append(await one(Path(tmp), sim, args.tasks, args.trials, batch))
                    batches = max(batches, sum(sim.stats.batch_creates.values()))
    online = rows[False][0]
    equal = all(r["scores"] == online["scores"] for r in rows[False] + rows[True])
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"1-minute load average {os.getloadavg()[0]:.1f} at the end. Command: `python bench/batch_cost.py "
          f"--tasks {args.tasks} --trials {args.trials} --repeats {args.repeats}`. Medians of {args.repeats} "
          f"interleaved runs; {len(online['scores'])} judgements, {online['judge_calls']} judge calls, "
          f"{batches} batches; scores equal record for record: {'yes' if equal else 'NO'}.\n")
    print("| judges | judge cost USD | sweep cost USD | judge cost vs online | sweep cost vs online | wall s |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, runs in (("online", rows[False]), ("batch", rows[True])):
        judge = statistics.median(r["judge_cost"] for r in runs)
        total = statistics.median(r["cost"] for r in runs)
        print(f"| {label} | {judge:.4f} | {total:.4f} | {judge / online['judge_cost'] - 1:+.0%} | "
              f"{total / online['cost'] - 1:+.0%} | {statistics.median(r['wall'] for r in runs):.1f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    anyio.run(main, parser.parse_args())
