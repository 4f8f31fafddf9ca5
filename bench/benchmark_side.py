"""The benchmark side's CPU per item, before vs after: each tool's calls, the checks of a run, the judge's input.

A sweep's runner CPU per LLM call (``cpu_per_call.py``) mixes the client's work with the benchmark's. This
isolates the benchmark's: in a child process per code tree ("before": a git worktree put first on
``PYTHONPATH``; "after": this tree), one in-process sweep of the shipped tasks (``sim/oracle-agent``,
``sim/judge``, one trial, against a sim served apart) records every tool call, every run's checks and every judge
input; then each is replayed (the same data objects, so the per-data readings are warm, as they are for every
run after a sweep's first) and timed: CPU µs per item (``time.process_time``, median of ``--repeats`` passes) and
Python function calls per item (``sys.setprofile``, a figure the machine's load does not move). The replayed
results are checked equal to the recorded ones. Trees run interleaved, ``--rounds`` times; medians.

    .venv/bin/python bench/benchmark_side.py --before /tmp/before --repeats 20 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

from mpcbench_async.perf import sim_subprocess

REPO = Path(__file__).resolve().parent.parent

CHILD = r'''
import collections, itertools, sys, tempfile, time
from pathlib import Path
import orjson
from mpcbench_async.cli import main
from mpcbench_async.mpcbench import _judge, _suite
from mpcbench_async.mpcbench._checks import run_checks
from mpcbench_async._prompts import load_prompts
from mpcbench_async.mpcbench.tools import _backend

url, repo, repeats = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
tools, checks, judges = [], [], []
call, build = _backend.ToolBackend.call, _suite.build_judge_input


def recorded(fn, into):
    def record(*args):
        result = fn(*args)
        into.append((*args, result))
        return result
    return record


_backend.ToolBackend.call = recorded(call, tools)
_suite.run_checks = recorded(run_checks, checks)
_suite.build_judge_input = recorded(build, judges)
out = Path(tempfile.mkdtemp())
(out / "models.json").write_bytes(orjson.dumps({"agent_models": ["sim/oracle-agent"], "judge_models": ["sim/judge"],
                                                "defaults": {"base_url": url}}))
assert 0 == main(["sweep", "--config", str(out / "models.json"), "--prompts", str(repo / "prompt_config.json"),
                  "--tasks-dir", str(repo / "tasks"), "--data-dir", str(repo / "data"), "--trials", "1",
                  "--out", str(out / "sweep"), "--quiet"])
_backend.ToolBackend.call = call
prompts = load_prompts(repo / "prompt_config.json")


def python_calls(fn):
    counter = itertools.count()
    sys.setprofile(lambda frame, event, arg: next(counter) if event == "call" else None)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return next(counter)


def measure(items, fn):
    calls = python_calls(lambda: [fn(item) for item in items])
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for item in items:
            fn(item)
        times.append(time.process_time() - start)
    return {"n": len(items), "us": 1e6 * sorted(times)[len(times) // 2] / len(items), "calls": calls / len(items)}


by_tool = collections.defaultdict(list)
for item in tools:
    assert call(*item[:3]) == item[3], item[1]
    by_tool[item[1]].append(item)
for task, answer, data, result in checks:
    assert run_checks(task, answer, data) == result, task.task_id
figures = {f"tool {name}": measure(items, lambda t: call(*t[:3])) for name, items in sorted(by_tool.items())}
figures["tool calls, all"] = measure(tools, lambda t: call(*t[:3]))
figures["checks of a run"] = measure(checks, lambda c: run_checks(*c[:3]))
figures["judge messages of a judgement"] = measure(judges, lambda j: _judge.judge_messages(j[2], prompts))
print(orjson.dumps(figures).decode())
'''


def run(root: Path, url: str, repeats: int) -> dict[str, dict[str, float]]:
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", CHILD, url, str(REPO), str(repeats)], env=env,
                          cwd=tempfile.gettempdir(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"child failed:\n{done.stderr[-3000:]}")
    return orjson.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="source tree of the 'before' code (a worktree)")
    parser.add_argument("--repeats", type=int, default=20, help="timed passes over the items per child")
    parser.add_argument("--rounds", type=int, default=3, help="children per tree, interleaved")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": REPO}
    samples: dict[str, list[dict[str, dict[str, float]]]] = {name: [] for name in trees}
    with sim_subprocess() as url:
        for _ in range(args.rounds):
            for name, root in trees.items():
                samples[name].append(run(root, url, args.repeats))
    print("| item | n | before µs | after µs | before Python calls | after Python calls |")
    print("|---|---:|---:|---:|---:|---:|")
    for item in samples["after"][0]:
        before = [s[item] for s in samples["before"] if item in s]
        after = [s[item] for s in samples["after"]]
        if not before:
            continue
        print(f"| {item} | {after[0]['n']} | {statistics.median(b['us'] for b in before):.1f} | "
              f"{statistics.median(a['us'] for a in after):.1f} | {before[0]['calls']:.1f} | {after[0]['calls']:.1f} |")


if __name__ == "__main__":
    main()
