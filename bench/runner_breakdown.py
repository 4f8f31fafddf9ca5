"""Where a sweep's runner CPU per LLM call goes, by thread and by the garbage collector, before vs after.

``cpu_per_call.py`` gives one figure per sweep: the runner's CPU ÷ its LLM calls. This splits the marginal cost of
an LLM call (a sweep of ``--trials`` less one of 1 trial, ÷ the calls between, so start-up and the fixed part of
the summary cancel out) by where it is spent, in the same kind of child (``mpcbench-async sweep`` of the shipped
tasks, ``sim/oracle-agent`` + ``sim/judge``, every record and the ledger written, one ``sim serve`` apart):

- per thread, from ``/proc/self/task/*/schedstat`` (CPU ns, user and system together) read every 50 ms by a
  monitor thread in the child and once at the end, grouped by the thread's name: the event loop's (``MainThread``:
  the client, the agent loop, the judges, records, the engine), the tools' (``mpcbench-tool_*``), the checks'
  (``mpcbench-checks_*``), the call ledger's (``mpcbench-ledger``); the monitor's own CPU is left out;
- the cyclic garbage collector, from ``gc.callbacks`` (thread CPU from each collection's start to its end), per
  generation — part of whichever thread collected, shown apart;
- the process's user and system time (``RUSAGE_SELF``).

Beside it, the HTTP traffic of a sweep without the sweep: the request bodies of a 1-trial sweep (captured from its
native transport in a child of this tree: the agents' growing conversations with the nine tools, the judges'
inputs; ~12 KB each) replayed at the same concurrency against the same sim, once by a raw aiohttp client (the
floor's code with these bodies, on uvloop as a sweep runs) and once through each tree's ``LLMClient``, and the
floor's own short request for reference. CPU per call around the calls (``time.process_time``). Two things make
such a call dearer than the floor's: larger bodies, and the sim's policies (the oracle agent, the judge) replying
slower than ``sim/echo``, so that replies reach the runner one per event-loop wake-up instead of in bursts.

Trees ("before": a git worktree put first on ``PYTHONPATH``; "after": this tree) run interleaved, ``--repeats``
rounds; medians. ``--instructions`` adds each tree's marginal instructions per LLM call of the whole sweep process
under valgrind (cachegrind, no cache simulation; ``--instruction-trials`` less 1 trial), a figure the machine's
load does not move, but user space only: system time and cycles per instruction are not in it.

    .venv/bin/python bench/runner_breakdown.py --before /tmp/before --trials 40 --repeats 5 --instructions
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import orjson  # noqa: E402
from cpu_per_call import REPO, compiled_trees, sweep_child  # noqa: E402

from mpcbench_async.perf import sim_subprocess  # noqa: E402

CHILD = r"""
import gc, json, os, re, resource, sys, threading, time
from mpcbench_async.cli import main

cpu_ns, names, done = {}, {}, threading.Event()
def sample():
    for thread in threading.enumerate():
        if thread.native_id is not None:
            names[str(thread.native_id)] = thread.name
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as fh:
                cpu_ns[tid] = int(fh.read().split()[0])
        except OSError:  # the thread ended meanwhile: its last reading stands
            pass
def monitor():
    while not done.wait(0.05):
        sample()
collections, started = {0: [0, 0.0], 1: [0, 0.0], 2: [0, 0.0]}, [0.0]
def on_gc(phase, info):
    if phase == "start":
        started[0] = time.thread_time()
    else:
        entry = collections[info["generation"]]
        entry[0] += 1
        entry[1] += time.thread_time() - started[0]
gc.callbacks.append(on_gc)
watcher = threading.Thread(target=monitor, name="bench-monitor", daemon=True)
watcher.start()
sys.argv = ["mpcbench-async", *sys.argv[1:]]
try:
    code = main()
except SystemExit as exc:
    code = exc.code
sample()
done.set()
groups = {}
for tid, ns in cpu_ns.items():
    group = re.sub(r"_\d+$", "", names.get(tid, "unnamed"))
    groups[group] = groups.get(group, 0.0) + ns / 1e9
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"code": code, "user_s": me.ru_utime, "sys_s": me.ru_stime, "threads": groups,
                  "gc": {str(g): c for g, c in collections.items()}}))
"""

# Run in a child of a tree as: python -c CAPTURE <sweep args>; writes the native transport's request bodies to
# $BODIES, one JSON body a line.
CAPTURE = r"""
import os, sys
from mpcbench_async.llm import _native
sent, complete = [], _native.NativeTransport.complete
async def capturing(self, endpoint, request):
    sent.append(request.payload)
    return await complete(self, endpoint, request)
_native.NativeTransport.complete = capturing
from mpcbench_async.cli import main
sys.argv = ["mpcbench-async", *sys.argv[1:]]
code = main()
with open(os.environ["BODIES"], "wb") as fh:
    fh.writelines(body + b"\n" for body in sent)
print('{"code": %d}' % code)
"""

# python -c REPLAY_* url calls concurrency bodies-file; prints {"cpu_us": …}. Bodies are taken in turn by each
# worker from its own offset, so all 64 workers send different requests at once, as a sweep's units do.
REPLAY_FLOOR = r"""
import asyncio, sys, time, aiohttp, orjson, uvloop
url, n, conc, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
bodies = open(path, "rb").read().splitlines() if path != "-" else [orjson.dumps({"model": "sim/echo",
    "max_tokens": 16, "messages": [{"role": "user", "content": "Summarise the status of project ALPHA in one line."}]})]
async def main():
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=conc)) as session:
        async def worker(w, count):
            for i in range(count):
                async with session.post(url + "/chat/completions", data=bodies[(w * 7 + i) % len(bodies)],
                                        headers={"content-type": "application/json"}) as resp:
                    reply = orjson.loads(await resp.read())
                    assert resp.status == 200, reply
        await asyncio.gather(*(worker(-w - 1, 1) for w in range(conc)))
        cpu0 = time.process_time()
        await asyncio.gather(*(worker(w, n // conc + (w < n % conc)) for w in range(conc)))
        print(orjson.dumps({"cpu_us": (time.process_time() - cpu0) / n * 1e6}).decode())
uvloop.run(main())
"""

REPLAY_CLIENT = r"""
import sys, time, anyio, msgspec, orjson
from mpcbench_async.llm import LLMClient, ModelConfig
from mpcbench_async.records import Message, ToolSchema
url, n, conc, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tools_of, calls = {}, []
for line in open(path, "rb").read().splitlines():
    body = orjson.loads(line)
    raw = orjson.dumps(body.get("tools"))  # one object for the nine tools, as a sweep passes them
    tools = tools_of.setdefault(raw, tuple(msgspec.convert(body["tools"], list[ToolSchema]))
                                if body.get("tools") else None)
    calls.append((body["model"], msgspec.convert(body["messages"], list[Message]), tools))
async def main():
    config = ModelConfig.from_dict({"defaults": {"limits": {"max_concurrency": conc}}})
    async with LLMClient(config, sim_base_url=url) as client:
        async def worker(w, count):
            for i in range(count):
                model, messages, tools = calls[(w * 7 + i) % len(calls)]
                await client.chat(model, messages, tools, key=f"{w}-{i}")
        async with anyio.create_task_group() as tg:
            for w in range(conc):
                tg.start_soon(worker, -w - 1, 1)
        cpu0 = time.process_time()
        async with anyio.create_task_group() as tg:
            for w in range(conc):
                tg.start_soon(worker, w, n // conc + (w < n % conc))
        print(orjson.dumps({"cpu_us": (time.process_time() - cpu0) / n * 1e6}).decode())
anyio.run(main, backend_options={"use_uvloop": True})
"""


def replay(code: str, url: str, calls: int, concurrency: int, bodies: str, root: Path | None) -> float:
    """CPU µs per call of one replay child (``bodies``: a file of request bodies, or ``-`` for the floor's)."""
    env = dict(os.environ)
    if root is not None:
        env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code, url, str(calls), str(concurrency), bodies], env=env,
                         cwd=tempfile.gettempdir(), capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"replay failed:\n{out.stderr[-2000:]}")
    return float(orjson.loads(out.stdout.strip().splitlines()[-1])["cpu_us"])


# the rows of the table: (title, how to read it from a child's figures)
THREADS = ("MainThread", "mpcbench-tool", "mpcbench-checks", "mpcbench-ledger")
ROWS: list[tuple[str, Callable[[dict], float]]] = [
    ("whole process, user + system", lambda f: f["user_s"] + f["sys_s"]),
    ("  of it system time", lambda f: f["sys_s"]),
    ("event loop's thread (`MainThread`)", lambda f: f["threads"].get("MainThread", 0.0)),
    ("tool threads (`mpcbench-tool_*`)", lambda f: f["threads"].get("mpcbench-tool", 0.0)),
    ("check threads (`mpcbench-checks_*`)", lambda f: f["threads"].get("mpcbench-checks", 0.0)),
    ("call ledger's thread (`mpcbench-ledger`)", lambda f: f["threads"].get("mpcbench-ledger", 0.0)),
    ("other threads (monitor left out)", lambda f: sum(s for name, s in f["threads"].items()
                                                       if name not in (*THREADS, "bench-monitor"))),
    ("garbage collector, all generations (in the threads above)", lambda f: sum(g[1] for g in f["gc"].values())),
    ("  young (gen 0)", lambda f: f["gc"]["0"][1]),
    ("  middle and old (gen 1, 2)", lambda f: f["gc"]["1"][1] + f["gc"]["2"][1]),
]


def marginal_instructions(root: Path, url: str, trials: int, concurrency: int, tmp: Path) -> float:
    """Instructions per LLM call of a ``trials``-trial sweep less a 1-trial one, under cachegrind."""
    counts, calls = [], []
    for n in (1, trials):
        with tempfile.TemporaryDirectory() as out:
            prefix = ("valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}/cg",
                      "--log-file=" + f"{out}/log")
            _, made, _ = sweep_child(CHILD, url, n, concurrency, root, tmp, prefix)
            found = re.search(r"I\s+refs:\s+([\d,]+)", Path(f"{out}/log").read_text())
            if found is None:
                raise SystemExit("cachegrind gave no instruction count")
        counts.append(int(found.group(1).replace(",", "")))
        calls.append(made)
    return (counts[1] - counts[0]) / (calls[1] - calls[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, default=None, help="source tree of the 'before' code (a worktree)")
    parser.add_argument("--trials", type=int, default=40, help="trials of the long sweep (default: 40)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--replay-calls", type=int, default=3000, help="calls per replay child (default: 3000)")
    parser.add_argument("--instructions", action="store_true", help="also count instructions under valgrind (once)")
    parser.add_argument("--instruction-trials", type=int, default=10,
                        help="trials of the long sweep under valgrind (default: 10)")
    args = parser.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind on PATH")
    codes = compiled_trees(args.before)
    marginals: dict[str, list[list[float]]] = {label: [] for label, _ in codes}
    instructions: dict[str, float] = {}
    replays: dict[str, list[float]] = defaultdict(list)
    with sim_subprocess() as url, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        bodies = str(tmp / "bodies.jsonl")
        os.environ["BODIES"] = bodies  # where CAPTURE writes them (the sweep's children inherit the environment)
        sweep_child(CAPTURE, url, 1, args.concurrency, REPO, tmp)
        for _ in range(args.repeats):
            replays["raw aiohttp floor, its short request to `sim/echo`"].append(
                replay(REPLAY_FLOOR, url, args.replay_calls, args.concurrency, "-", None))
            replays["raw aiohttp floor, the sweep's requests"].append(
                replay(REPLAY_FLOOR, url, args.replay_calls, args.concurrency, bodies, None))
            for label, root in codes:
                replays[f"`LLMClient`, the sweep's requests, {label}"].append(
                    replay(REPLAY_CLIENT, url, args.replay_calls, args.concurrency, bodies, root))
            for label, root in codes:
                short, short_calls, _ = sweep_child(CHILD, url, 1, args.concurrency, root, tmp)
                long, long_calls, _ = sweep_child(CHILD, url, args.trials, args.concurrency, root, tmp)
                per_call = [(read(long) - read(short)) / (long_calls - short_calls) for _, read in ROWS]
                marginals[label].append(per_call)
                print(f"{label:6} " + " ".join(f"{v * 1e6:.0f}" for v in per_call), file=sys.stderr, flush=True)
        if args.instructions:
            for label, root in codes:
                instructions[label] = marginal_instructions(root, url, args.instruction_trials, args.concurrency,
                                                            tmp)
    labels = [label for label, _ in codes]
    print(f"Marginal CPU µs per LLM call ({args.trials}-trial sweep less 1 trial, c={args.concurrency}, sim apart; "
          f"medians of {args.repeats} interleaved rounds; load average {os.getloadavg()[0]:.1f} at the end)\n")
    print("| where | " + " | ".join(labels) + " |\n|---|" + "---:|" * len(labels))
    for i, (title, _) in enumerate(ROWS):
        print(f"| {title} | " + " | ".join(f"{statistics.median(r[i] for r in marginals[label]) * 1e6:.0f}"
                                           for label in labels) + " |")
    if instructions:
        print(f"| instructions per LLM call ({args.instruction_trials} trials less 1, cachegrind) | "
              + " | ".join(f"{instructions[label]:,.0f}" for label in labels) + " |")

    print(f"\nThe sweep's HTTP traffic alone, replayed (uvloop, c={args.concurrency}, {args.replay_calls} calls; "
          f"CPU µs per call, medians of {args.repeats})\n\n| replay | CPU µs per call |\n|---|---:|")
    for title, values in replays.items():
        print(f"| {title} | {statistics.median(values):.0f} |")


if __name__ == "__main__":
    main()
