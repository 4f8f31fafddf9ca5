"""Agents online vs in lock-step batch waves on one sweep: cost, scores, wall time vs the wave bound (issue 29 point 4).

The same sweep (a ``write_workspace`` of ``--tasks`` tasks, the multi-turn
``sim/oracle-agent`` and the one-turn ``sim/lazy-agent``, the ``sim/judge`` judge,
``--trials`` trials, every run at once: ``--concurrency`` above the run count)
runs against one seeded sim on loopback three ways: online; ``--batch judge``;
``--batch agent --batch judge``. Prices are real table rates given in the config:
the agents at gpt-4.1-mini's ($0.40 / $1.60 per 1M), the judge at gpt-4.1's ($2 /
$8), the batch tier at the table's 50 % discount. Scores must be equal record for
record; cost is read from ``calls.jsonl``. The sim's batches take
``--batch-latency`` seconds of real time (a provider's take minutes to hours), so
the agents' wall time can be set against the bound the sweep prints: the longest
run's turns × the mean batch latency.

    .venv/bin/python bench/batch_agent.py --tasks 40 --trials 2 --repeats 3 --batch-latency 1.0
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

import anyio
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mpcbench_async.mpcbench import MPCBenchInputs  # noqa: E402
from mpcbench_async.runner import Limits, RunChoice  # noqa: E402
from mpcbench_async.runtime import read_jsonl  # noqa: E402
from mpcbench_async.sim import FaultSpec, SimServer  # noqa: E402
from mpcbench_async.sweep import Output, SweepOptions, run_sweep  # noqa: E402
from mpcbench_async.testing import write_workspace  # noqa: E402

AGENTS = ("sim/oracle-agent", "sim/lazy-agent")
AGENT_PRICES = {"input_per_1m": 0.40, "output_per_1m": 1.60}  # gpt-4.1-mini
JUDGE_PRICES = {"input_per_1m": 2.00, "output_per_1m": 8.00}  # gpt-4.1
BATCH = {"max_wait_s": 5.0, "poll_s": 0.05, "poll_max_s": 0.2}  # waves close when every run waits, well before 5 s
JUDGE_BATCH = {**BATCH, "max_wait_s": 0.5}  # judges are no wave members: their batches go at the age limit
Kind = Literal["agent", "judge"]
MODES: dict[str, tuple[Kind, ...]] = {"online": (), "batch judge": ("judge",), "batch agent+judge": ("agent", "judge")}


def workspace(root: Path, base_url: str, tasks: int, kinds: tuple[Kind, ...]) -> Path:
    """The workspace, with the bench's poll settings on each model the mode batches (``--batch`` names them too)."""
    ws = write_workspace(root, base_url=base_url, tasks=tasks, agent_models=AGENTS, defaults={"prices": AGENT_PRICES})
    config = orjson.loads((ws / "model_config.json").read_bytes())
    config["models"] = {"sim/judge": {"prices": JUDGE_PRICES, **({"batch": JUDGE_BATCH} if "judge" in kinds else {})},
                        **{model: {"batch": BATCH} for model in AGENTS if "agent" in kinds}}
    (ws / "model_config.json").write_bytes(orjson.dumps(config))
    return ws


async def one(tmp: Path, sim: SimServer, args: argparse.Namespace, mode: str) -> dict[str, Any]:
    ws = workspace(tmp / f"ws-{mode.replace(' ', '-')}", sim.base_url, args.tasks, MODES[mode])
    out = tmp / mode.replace(" ", "-")
    started = time.perf_counter()
    result = await run_sweep(SweepOptions(
        config=ws / "model_config.json", prompts=ws / "prompt_config.json", run=RunChoice(trials=args.trials),
        limits=Limits(concurrency=4 * args.tasks * args.trials), output=Output(out=out, certificate=False),
        inputs=[MPCBenchInputs(tasks_dir=ws / "tasks", data_dir=ws / "data", scenarios_dir=ws / "scenarios")],
        handle_signals=False, batch=MODES[mode]))
    wall = time.perf_counter() - started
    calls, _ = read_jsonl(out / "calls.jsonl")
    judgements, _ = read_jsonl(out / "judgements.jsonl")
    runs, _ = read_jsonl(out / "runs.jsonl")
    return {"wall": wall, "cost": sum(c["cost_usd"] or 0.0 for c in calls),
            "agent_cost": sum(c["cost_usd"] or 0.0 for c in calls if c["model"] in AGENTS),
            "agent_calls": sum(1 for c in calls if c["model"] in AGENTS), "waves": result.waves,
            # by what was run and judged: unit keys hash the workspace's paths, which differ between runs
            "scores": {(j["task_id"], j["agent_model"], j["trial"]): (j["judgement"] or {}).get("scores")
                       for j in judgements},
            "checks": {(r["task_id"], r["model"], r["trial"]): (r["run"]["turns"], r["run"]["final_answer"],
                                                                [c.get("passed") for c in r["checks"]])
                       for r in runs}}


def _wave_figures(line: str) -> tuple[int, float, float, float]:
    match = re.search(r"agent waves: (\d+) batches .*wall ([\d.]+) s, bound ([\d.]+) s .*ratio ([\d.]+)", line)
    assert match is not None, line
    return int(match[1]), float(match[2]), float(match[3]), float(match[4])


async def main(args: argparse.Namespace) -> None:
    rows: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    for _ in range(args.repeats):
        for mode in MODES:  # interleaved, so the machine's noise falls on all alike
            with tempfile.TemporaryDirectory() as tmp:
                async with SimServer(seed=11, defaults=FaultSpec(batch_latency_s=args.batch_latency)) as sim:
                    rows[mode].append(await one(Path(tmp), sim, args, mode))
    online = rows["online"][0]
    every = [r for runs in rows.values() for r in runs]
    equal = all(r["scores"] == online["scores"] and r["checks"] == online["checks"] for r in every)
    waves = [_wave_figures(r["waves"]) for r in rows["batch agent+judge"]]
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"1-minute load average {os.getloadavg()[0]:.1f} at the end. Command: `python bench/batch_agent.py "
          f"--tasks {args.tasks} --trials {args.trials} --repeats {args.repeats} --batch-latency "
          f"{args.batch_latency:g}`. Medians of {args.repeats} interleaved runs; {len(online['checks'])} agent runs, "
          f"{online['agent_calls']} agent calls, {len(online['scores'])} judgements; runs (turns, answers, checks) "
          f"and scores equal record for record: {'yes' if equal else 'NO'}.\n")
    print("| mode | agent cost USD | sweep cost USD | agent cost vs online | sweep cost vs online | wall s |")
    print("|---|---:|---:|---:|---:|---:|")
    for mode, runs in rows.items():
        agent = statistics.median(r["agent_cost"] for r in runs)
        total = statistics.median(r["cost"] for r in runs)
        print(f"| {mode} | {agent:.4f} | {total:.4f} | {agent / online['agent_cost'] - 1:+.0%} | "
              f"{total / online['cost'] - 1:+.0%} | {statistics.median(r['wall'] for r in runs):.1f} |")
    print("\n| agent waves | wave wall s | bound s (turns x batch latency) | ratio |")
    print("|---:|---:|---:|---:|")
    print(f"| {statistics.median(w[0] for w in waves):g} | {statistics.median(w[1] for w in waves):.2f} | "
          f"{statistics.median(w[2] for w in waves):.2f} | {statistics.median(w[3] for w in waves):.2f} |")
    print(f"\nOne wave line as the sweep printed it: `{rows['batch agent+judge'][-1]['waves']}`")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-latency", type=float, default=1.0, help="seconds each sim batch takes")
    anyio.run(main, parser.parse_args())
