"""Ray sweep overhead: a local sweep vs ``Runner(executor=RayExecutor(workers=N))`` for N = 1, 2, 4.

A CPU-bound point: agents are ``sim/echo`` (one call per run, no tools) and the judge is ``sim/judge``, served by
a sim in its own process at a small latency (default 5 ms), so the runner, not the sim's latency, bounds the
throughput. Every configuration runs the same plan into a fresh directory, in this process (the driver); the Ray
configurations use one local Ray instance started once (its start-up is not timed) and start their workers
before the clock starts. Measured per sweep:

- calls/s (LLM calls at the sim / wall time of ``runner.run``);
- CPU µs per call of the driver (this process: runner, Ray's core worker threads), of the workers (their
  processes' utime + stime from ``/proc/<pid>/stat``), of the limiter actor (its ``stats()["cpu_s"]``) and of
  Ray's own processes (raylet, GCS, agents: every other descendant of this process but the sim);
- the limiter's leases per call (``stats()["models"][m]["leases"]``), and the global limiter's whole cost: the
  row ``2 workers, own limits`` runs 2 workers each with its own local limiter (no limiter actor, no leases), so
  its difference to ``2 workers`` is what one global limit per model costs;
- wall time vs the Little's-law bound. The agent stage keeps ``concurrency`` (C) runs in flight, each one call
  of latency L, so by Little's law it finishes R runs at best at C / L runs/s, in ⌈R / C⌉ × L; the judges are fed
  as runs finish and run at the same rate in their own pool, so they overlap the runs and add only the last
  judge's L: bound = ⌈R / C⌉ × L + L. wall / bound is how much the runner's own work (CPU) stretches the sweep.

Configurations are interleaved (local, 1, 2, 4, local, 1, ...) and each figure is the median of the repeats.

    .venv/bin/python bench/ray_sweep.py --runs 2000 --latency-ms 5 --concurrency 64 --repeats 3
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

import mpcbench_async.distributed._executor as executor_module
from mpcbench_async.distributed import RayExecutor
from mpcbench_async.distributed._limiter_actor import start_limiter
from mpcbench_async.llm import load_model_config
from mpcbench_async.mpcbench import MPCBenchSuite, build_plan, load_prompts
from mpcbench_async.perf import sim_subprocess
from mpcbench_async.runner import Runner
from mpcbench_async.testing import write_workspace

TASKS = 10
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """utime + stime of process ``pid`` in seconds (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def descendants(root: int) -> set[int]:
    """Every live process below ``root``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


async def one_sweep(root: Path, out: Path, configuration: str, args: argparse.Namespace,
                    sim_pid: int) -> dict[str, Any]:
    """One sweep of ``configuration`` (``0``: local; ``N``: N Ray workers; ``Nown``: N with their own limits)."""
    config = load_model_config(root / "model_config.json")
    prompts = load_prompts(root / "prompt_config.json")
    plan = build_plan(config=config, prompts=prompts, tasks_dir=root / "tasks", data_dir=root / "data",
                      scenarios_dir=root / "scenarios", trials=args.runs // TASKS)
    workers = int(configuration.removesuffix("own"))
    executor = RayExecutor(config, workers=workers, concurrency=2 * args.concurrency) if workers else None
    # Own limits: the executor starts no limiter actor, so each worker's client keeps local limiters.
    executor_module.start_limiter = (lambda: None) if configuration.endswith("own") else start_limiter
    async with executor or nullcontext():
        pids = [w.pid for w in executor.workers] if executor else []
        limiter = executor.limiter if executor else None
        ray_pids = descendants(os.getpid()) - {sim_pid, *pids} if executor else set()  # the limiter's is among them
        before = _sample(pids, ray_pids, limiter)
        start = time.perf_counter()
        async with Runner(config, out_dir=out, concurrency=args.concurrency,
                          executor=executor) as runner:
            stats = await runner.run(MPCBenchSuite(plan, prompts))
        wall = time.perf_counter() - start
        after = _sample(pids, ray_pids, limiter)
    calls = stats.calls
    if stats.runs_done != args.runs or stats.judges_done != args.runs or stats.errors:
        raise SystemExit(f"sweep incomplete: {stats}")
    latency = args.latency_ms / 1000
    cpu = {key: _delta(before, after, key) for key in ("driver", "workers", "limiter", "ray")}
    cpu["ray"] -= cpu["limiter"]  # the limiter actor's process: counted on its own
    return {"calls_s": calls / wall, "wall": wall,
            "bound": math.ceil(args.runs / args.concurrency) * latency + latency,
            **{key: seconds / calls * 1e6 for key, seconds in cpu.items()},
            "leases": (after["leases"] - before["leases"]) / calls}


def _sample(worker_pids: list[int], ray_pids: set[int], limiter: Any) -> dict[str, Any]:
    sample: dict[str, Any] = {"driver": cpu_s(os.getpid()), "workers": {pid: cpu_s(pid) for pid in worker_pids},
                              "ray": {pid: cpu_s(pid) for pid in ray_pids}, "limiter": 0.0, "leases": 0.0}
    if limiter is not None:
        import ray

        stats = ray.get(limiter.stats.remote())
        sample["limiter"] = stats["cpu_s"]
        sample["leases"] = sum(model["leases"] for model in stats["models"].values())
    return sample


def _delta(before: dict[str, Any], after: dict[str, Any], key: str) -> float:
    """CPU seconds of ``key`` between two samples; of a set of processes, those alive at both (a process of an
    earlier executor exiting meanwhile is not this sweep's)."""
    if not isinstance(before[key], dict):
        return float(after[key] - before[key])
    return sum(after[key][pid] - before[key][pid] for pid in before[key] if after[key][pid] >= before[key][pid])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2000, help="agent runs per sweep (each judged once)")
    parser.add_argument("--latency-ms", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", default="0,1,2,4,2own",
                        help="0 is the local sweep; Nown: N workers, each with its own limits (no global limiter)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    configurations = args.workers.split(",")
    cpus = max(int(c.removesuffix("own")) for c in configurations)

    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    results: dict[str, list[dict[str, Any]]] = {c: [] for c in configurations}
    with sim_subprocess(["--latency-ms", str(args.latency_ms)]) as base_url, tempfile.TemporaryDirectory() as tmp:
        sim_pid = next(pid for pid in descendants(os.getpid()) if "sim" in _cmdline(pid))
        root = write_workspace(Path(tmp) / "ws", base_url=base_url, tasks=TASKS, agent_models=["sim/echo"],
                               judge_models=["sim/judge"],
                               defaults={"limits": {"max_concurrency": args.concurrency * 4}})
        for repeat in range(args.repeats):
            for configuration in configurations:
                out = Path(tmp) / f"out-{configuration}-{repeat}"
                row = anyio.run(one_sweep, root, out, configuration, args, sim_pid)
                results[configuration].append(row)
                print(f"repeat {repeat} workers {configuration}: " +
                      " ".join(f"{k} {v:.3g}" for k, v in row.items()), file=sys.stderr, flush=True)
    ray.shutdown()
    print(f"### Ray sweep overhead — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared with other jobs), Python "
          f"{platform.python_version()}, Ray {ray.__version__}. Command: `python bench/ray_sweep.py --runs {args.runs} "
          f"--latency-ms {args.latency_ms:g} --concurrency {args.concurrency} --workers {args.workers} --repeats "
          f"{args.repeats}`. {args.runs} sim/echo runs + {args.runs} sim/judge judgements ({2 * args.runs} calls) "
          f"at {args.latency_ms:g} ms, sim in its own process, one local Ray instance ({cpus} logical "
          f"CPUs); medians of {args.repeats}, interleaved.\n")
    print("| executor | calls/s | wall s | Little bound s | wall/bound | driver µs/call | workers µs/call | "
          "limiter µs/call | Ray system µs/call | total µs/call | leases/call |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for configuration in configurations:
        rows = results[configuration]

        def med(key: str, rows: list[dict[str, Any]] = rows) -> float:
            return statistics.median(row[key] for row in rows)

        total = statistics.median(sum(row[k] for k in ("driver", "workers", "limiter", "ray")) for row in rows)
        workers = int(configuration.removesuffix("own"))
        name = f"ray, {workers} worker{'s' if workers > 1 else ''}" if workers else "local"
        name += ", own limits" if configuration.endswith("own") else ""
        print(f"| {name} | {med('calls_s'):.0f} | {med('wall'):.2f} | {med('bound'):.2f} | "
              f"{med('wall') / med('bound'):.1f} | {med('driver'):.0f} | {med('workers'):.0f} | {med('limiter'):.0f} "
              f"| {med('ray'):.0f} | {total:.0f} | {med('leases'):.2f} |")


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


if __name__ == "__main__":
    main()
