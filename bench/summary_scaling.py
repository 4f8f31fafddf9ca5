"""Summary cost: wall and CPU time and peak RSS of ``summarize`` on synthetic sweep directories of 10k / 100k runs.

Writes a sweep directory by hand in the shapes the runner writes: N agent runs
(one model, 10 tasks, N/10 trials, ~1.5 KB of run log each), one judgement per
run, two agent calls and one judge call per run, ``experiment_keys.txt``; 2% of
the units first end in an infrastructure error and are redone, 1% of the ok
run lines are written twice. Each measurement is ``summarize(dir)`` in a child
process (CPU and peak RSS from ``wait4``) next to a child that only imports the package
(the baseline RSS), so ``Δ RSS`` is what the summary itself holds. Then each
version writes ``summary.md`` once (``write_summary``), and its longest line is
reported (issue 31: pass^k for every k up to 1,000 trials made one line of
10,957 characters). ``--impl`` points at another source tree to compare versions
side by side, e.g. the previous commit unpacked with ``git archive HEAD~1 | tar
-x -C /tmp/before``; its children run from inside that tree, so it is the one
imported (``python -c`` puts the working directory ahead of ``PYTHONPATH``).

    .venv/bin/python bench/summary_scaling.py --sizes 10000,100000 --impl /tmp/before --repeats 3
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson

TASKS = 10
LOG = "Step 1: Slack_search_messages({\"query\": \"launch\"}) " * 30  # ~1.5 KB of run log per record


def write_dir(out: Path, runs: int) -> None:
    """A finished sweep of ``runs`` agent runs, judged once each, with redone and duplicated units."""
    out.mkdir(parents=True, exist_ok=True)
    keys: list[str] = []
    t = 1_700_000_000.0
    with (out / "runs.jsonl").open("wb") as r, (out / "judgements.jsonl").open("wb") as j, \
            (out / "calls.jsonl").open("wb") as c:
        for i in range(runs):
            task, trial = f"t{i % TASKS}", i // TASKS
            run_key, judge_key = f"run-{i:016x}", f"judge-{i:016x}"
            keys += [run_key, judge_key]
            base = {"key": run_key, "task_id": task, "task_type": "planning", "scenario_id": "s",
                    "model": "sim/agent", "trial": trial}
            if i % 50 == 0:  # an infrastructure error, redone later in the file
                r.write(orjson.dumps({**base, "status": "error", "retryable": True, "error_class": "RateLimitError",
                                      "error_message": "model 'sim/agent' at http://127.0.0.1:1/v1: HTTP 429: slow",
                                      "started_at": t, "finished_at": t + 1}) + b"\n")
                c.write(orjson.dumps({"model": "sim/agent", "key": f"{run_key}/turn1", "status": "error",
                                      "started_at": t + 0.1, "usage": {"total_tokens": 0}}) + b"\n")
                t += 2
            ok = orjson.dumps({**base, "status": "ok", "started_at": t, "finished_at": t + 1,
                               "run": {"stop_reason": "final", "tool_trace_steps": [LOG]},
                               "checks": [{"name": "planning.slots_found", "status": "pass", "detail": ""}]}) + b"\n"
            r.write(ok + ok if i % 100 == 7 else ok)
            for turn in (1, 2):
                c.write(orjson.dumps({"model": "sim/agent", "key": f"{run_key}/turn{turn}", "status": "ok",
                                      "started_at": t + 0.2 * turn, "latency_s": 0.2,
                                      "usage": {"prompt_tokens": 900, "completion_tokens": 100,
                                                "total_tokens": 1000}, "cost_usd": 0.0001}) + b"\n")
            j.write(orjson.dumps({"key": judge_key, "run_key": run_key, "status": "ok", "task_id": task,
                                  "task_type": "planning", "agent_model": "sim/agent", "judge_model": "sim/judge",
                                  "trial": trial, "started_at": t + 2, "finished_at": t + 3,
                                  "judgement": {"verdict": "scored", "scores": {
                                      "answer_requirements_satisfaction": {"score": 4, "justification": "ok"},
                                      "source_grounded_reasoning": {"score": 3, "justification": "ok"}}}}) + b"\n")
            c.write(orjson.dumps({"model": "sim/judge", "key": f"{judge_key}/try1", "status": "ok",
                                  "started_at": t + 2.5, "latency_s": 0.3, "usage": {"total_tokens": 1500}}) + b"\n")
            t += 4
    (out / "experiment_keys.txt").write_text("".join(f"{k}\n" for k in sorted(keys)))


def measure(code: str, impl: str | None) -> tuple[float, float, float]:
    """Run ``code`` in a child Python; return (wall s, CPU s = user + system, peak RSS MiB)."""
    env = dict(os.environ)
    if impl:
        env["PYTHONPATH"] = impl
    start = time.perf_counter()
    # from inside ``impl``: ``python -c`` puts the working directory first on sys.path, before PYTHONPATH
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=impl)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"child failed: {code}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def longest_line(out: Path, impl: str | None) -> int:
    """The longest line of the ``summary.md`` that version ``impl`` writes for ``out``."""
    measure("from pathlib import Path; from mpcbench_async.sweep import write_summary; "
            f"write_summary(Path({str(out)!r}))", impl)
    return max(len(line) for line in (out / "summary.md").read_text(encoding="utf-8").splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="agent runs per synthetic sweep")
    parser.add_argument("--impl", default=None, help="another source tree to measure beside this one")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    impls = {"current": None} | ({"--impl": args.impl} if args.impl else {})
    rows = []
    with tempfile.TemporaryDirectory(prefix="summary-bench-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            out = Path(tmp) / f"sweep{size}"
            write_dir(out, size)
            mib = sum(p.stat().st_size for p in out.iterdir()) / 2**20
            for name, impl in impls.items():
                walls, cpus, deltas = [], [], []
                for _ in range(args.repeats):  # interleaved with the baseline child
                    _, _, base = measure("import mpcbench_async.sweep", impl)
                    wall, cpu, peak = measure(f"from mpcbench_async.sweep import summarize; summarize({str(out)!r})",
                                              impl)
                    walls.append(wall)
                    cpus.append(cpu)
                    deltas.append(peak - base)
                rows.append((size, mib, name, statistics.median(walls), statistics.median(cpus),
                             statistics.median(deltas), longest_line(out, impl)))
    print(f"#### Summary scaling — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. "
          f"Command: `python bench/summary_scaling.py {' '.join(sys.argv[1:])}`. Medians of {args.repeats}.\n")
    print("| agent runs | trials per task | files MiB | version | summarize s (process) | CPU s | Δ peak RSS MiB | "
          "longest summary.md line |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|")
    for size, mib, name, wall, cpu, delta, longest in rows:
        print(f"| {size:,} | {size // TASKS:,} | {mib:.0f} | {name} | {wall:.2f} | {cpu:.2f} | {delta:.1f} | "
              f"{longest:,} |")


if __name__ == "__main__":
    main()
