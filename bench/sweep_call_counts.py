"""Python calls, tasks and event-loop callbacks per marginal LLM call of a sweep, by module, before vs after.

``tests/sweep/test_sweep_call_costs.py`` guards one figure: every thread's Python calls per LLM call of a 3-trial
sweep, start-up of the sweep and its summary included, on asyncio's loop. This splits the *marginal* call: a sweep
of ``--trials`` less one of 1 trial (the same shipped tasks, ``sim/oracle-agent`` + ``sim/judge``, concurrency 16,
an in-process sim in its own thread, not counted), ÷ the calls between, so the fixed part and the first trial's
tool runs and answer readings (later trials get them from ``runtime.Memo``) cancel out. Counted under
``sys.setprofile`` in every thread of the runner, per function; beside the total, asyncio's tasks created
(``create_task``), callbacks run (``Handle._run``) and loop iterations (``_run_once``), each a Python call on
asyncio's loop (on uvloop, the command's default, they are C and cost less: the Python ones are the count).

Each tree ("before": a git worktree put first on ``PYTHONPATH``; "after": this tree) runs in its own children,
using that tree's own test helpers. The counts move only with the thread timing (±1%).

    .venv/bin/python bench/sweep_call_counts.py --before /tmp/before --trials 10
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = r"""
import collections, gc, json, os, sys, tempfile, threading
from pathlib import Path
sys.path.insert(0, os.getcwd())
import anyio, orjson
from mpcbench_async.cli._loop import LOOP_ENV
os.environ[LOOP_ENV] = "asyncio"
from mpcbench_async.mpcbench.tools import ToolPool, _execution
from mpcbench_async.sim import SimProvider
import tests.sweep.test_sweep_call_costs as guard
guard.TRIALS = int(sys.argv[1])
tally = collections.Counter()
def profile(frame, event, arg):
    if event == "call":
        code = frame.f_code
        tally[code.co_filename + "\0" + code.co_name] += 1
provider = SimProvider(seed=3)
url = anyio.run(provider.start)
tmp = Path(tempfile.mkdtemp())
config = tmp / "model_config.json"
config.write_bytes(orjson.dumps({"agent_models": ["sim/oracle-agent"], "judge_models": ["sim/judge"],
                                 "defaults": {"base_url": url, "limits": {"max_concurrency": guard.CONCURRENCY}}}))
out = open(os.devnull, "w")
stdout, sys.stdout = sys.stdout, out
guard.sweep(config, tmp / "warm")
_execution._default_pool = ToolPool()
gc.collect()
threading.setprofile(profile)
sys.setprofile(profile)
guard.sweep(config, tmp / "out")
sys.setprofile(None)
threading.setprofile(None)
sys.stdout = stdout
anyio.run(provider.aclose)
calls = len((tmp / "out" / "calls.jsonl").read_bytes().splitlines())
print(json.dumps({"calls": calls, "tally": tally}))
"""

ASYNCIO = {"tasks created": ("asyncio/base_events.py", "create_task"), "callbacks run": ("asyncio/events.py", "_run"),
           "loop iterations": ("asyncio/base_events.py", "_run_once")}


def count(tree: Path | None, trials: int) -> tuple[int, Counter[str]]:
    """(LLM calls, Python calls per function) of one counted sweep of ``trials`` in ``tree`` (None: this one)."""
    env = dict(os.environ)
    root = tree or REPO
    if tree is not None:
        env["PYTHONPATH"] = f"{tree}{os.pathsep}{env.get('PYTHONPATH', '')}"
    done = subprocess.run([sys.executable, "-c", CHILD, str(trials)], cwd=root, env=env, check=True,
                          capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["calls"], Counter(result["tally"])


def marginal(tree: Path | None, trials: int) -> dict[str, float]:
    """Python calls per marginal LLM call, per ``file\\0function``."""
    small_calls, small = count(tree, 1)
    large_calls, large = count(tree, trials)
    between = large_calls - small_calls
    return {key: (large[key] - small[key]) / between for key in large.keys() | small.keys()}


def module(key: str) -> str:
    path = key.split("\0")[0]
    for marker in ("mpcbench_async/", "site-packages/", "python3.11/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, default=None, help="source tree of the 'before' code (a worktree)")
    parser.add_argument("--trials", type=int, default=10, help="trials of the long sweep (default: 10)")
    parser.add_argument("--modules", type=int, default=15, help="modules listed, by the largest change")
    args = parser.parse_args()
    trees = {"before": args.before, "after": None} if args.before else {"after": None}
    counts = {name: marginal(tree, args.trials) for name, tree in trees.items()}
    names = list(counts)
    print(f"Python calls per marginal LLM call ({args.trials}-trial sweep less 1 trial, every thread, "
          "asyncio's loop)\n")
    print("| count | " + " | ".join(names) + " |\n|---|" + "---:|" * len(names))
    print("| Python calls, all | " + " | ".join(f"{sum(c.values()):.1f}" for c in counts.values()) + " |")
    for label, (path, function) in ASYNCIO.items():
        values = [sum(v for k, v in c.items() if k.endswith(f"{path}\0{function}")) for c in counts.values()]
        print(f"| {label} (asyncio) | " + " | ".join(f"{v:.2f}" for v in values) + " |")
    by_module = {name: Counter() for name in names}
    for name, c in counts.items():
        for key, value in c.items():
            by_module[name][module(key)] += value
    if len(names) == 2:
        before, after = by_module["before"], by_module["after"]
        changed = sorted(before.keys() | after.keys(), key=lambda m: -abs(after[m] - before[m]))[:args.modules]
        print("\n| module | before | after |\n|---|---:|---:|")
        for name in changed:
            print(f"| `{name}` | {before[name]:.2f} | {after[name]:.2f} |")


if __name__ == "__main__":
    main()
