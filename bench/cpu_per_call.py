"""CPU per LLM call: a raw aiohttp floor, ``LLMClient``'s native transport and a whole sweep, before vs after.

The yardstick (issue 31) is a raw aiohttp client on the same mock server: one ``ClientSession``, N
non-streaming ``POST /chat/completions`` of one short user message at concurrency C, the JSON reply
decoded — no retries, no limiter, no records. Against it, in child processes of one run, interleaved
row by row, each with the code of "before" (a git worktree put first on ``PYTHONPATH``) and "after"
(this tree):

- ``native``: the same N calls through ``LLMClient`` (native transport, default limits raised to C);
- ``sweep``: ``mpcbench-async sweep`` on the shipped tasks (``tasks/``, ``data/``) with ``sim/oracle-agent``
  (tool calls, several turns) and ``sim/judge``, ``--trials T``, every record and the ledger written;
- ``sweep, embedded sim``: the same with no ``base_url``, so the runner starts its own sim (before: a thread
  of its process; after: a child process by default).

One sim serves the other rows, started once in its own process (``sim serve --port 0``), so they measure the
client's process only. CPU per call: for the floor and ``native``, ``time.process_time`` around the N calls
(start-up and warm-up left out) ÷ N, and the event loop's iterations (``_run_once``) ÷ N; for a sweep, the
runner process's own user+sys time (``RUSAGE_SELF``: every thread, start-up, plan and summary included) ÷ the
LLM calls it made (lines of ``calls.jsonl``), and apart from it its reaped children's (``RUSAGE_CHILDREN``:
the embedded sim's child process). Medians of ``--repeats``.

Both trees are byte-compiled first (``compileall``), so a sweep starts as an installed package does: from
bytecode. Without it, in an environment with ``PYTHONDONTWRITEBYTECODE`` set (as some sandboxes and CI images
are), every sweep compiles ~180 modules from source, ~0.3 s of its CPU that an install never pays.

    .venv/bin/python bench/cpu_per_call.py --before /tmp/before --calls 4000 --concurrency 64 --trials 60

``--sim-args`` passes options to that sim (e.g. ``'--rpm 60000000'``: every reply then carries the
``x-ratelimit-*`` headers the client reads, at a rate that never binds, so the rows include reading them).
``--large-trials L`` adds a sweep of L trials per task of this tree alone (a sweep of a real size: 400 trials of the
17 shipped tasks make 6,800 runs, ~38k calls), where start-up and the summary's fixed part weigh little per call.
``--native-only`` runs the floor and ``native`` rows alone (the client's own cost, without a sweep's).
``--instructions`` adds, for those rows, the instructions each call executes (valgrind's cachegrind, no cache
simulation: the process's instruction count at ``--calls`` calls minus at a quarter of them, over the calls between),
a figure the machine's load does not move — on a shared machine one run's CPU per call swings by a third.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from mpcbench_async.perf import sim_subprocess

REPO = Path(__file__).resolve().parent.parent

# Run as: python -c CODE base_url calls concurrency; prints {"cpu_s": …, "iterations": …} on stdout.
LOOP_COUNTER = r'''
import asyncio
_iterations = [0]
_run_once = asyncio.BaseEventLoop._run_once
def _counted(self):
    _iterations[0] += 1
    _run_once(self)
asyncio.BaseEventLoop._run_once = _counted
'''

FLOOR = LOOP_COUNTER + r'''
import sys, time, aiohttp, orjson
url, n, conc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
async def main():
    body = {"model": "sim/echo", "max_tokens": 16,
            "messages": [{"role": "user", "content": "Summarise the status of project ALPHA in one line."}]}
    connector = aiohttp.TCPConnector(limit=conc)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def call():
            async with session.post(url + "/chat/completions", data=orjson.dumps(body),
                                    headers={"content-type": "application/json"}) as resp:
                reply = orjson.loads(await resp.read())
                assert resp.status == 200, reply
        async def worker(count):
            for _ in range(count):
                await call()
        await asyncio.gather(*(worker(1) for _ in range(conc)))  # warm-up: connections open
        cpu0, it0 = time.process_time(), _iterations[0]
        await asyncio.gather(*(worker(n // conc + (i < n % conc)) for i in range(conc)))
        cpu, its = time.process_time() - cpu0, _iterations[0] - it0
    print(orjson.dumps({"cpu_s": cpu, "iterations": its}).decode())
asyncio.run(main())
'''

NATIVE = LOOP_COUNTER + r'''
import sys, time, anyio, orjson
from mpcbench_async.llm import LLMClient, ModelConfig
from mpcbench_async.records import Message
url, n, conc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
async def main():
    config = ModelConfig.from_dict({"defaults": {"limits": {"max_concurrency": conc},
                                                 "params": {"max_tokens": 16}}})
    messages = [Message(role="user", content="Summarise the status of project ALPHA in one line.")]
    async with LLMClient(config, sim_base_url=url) as client:
        async def worker(w, count):
            for i in range(count):
                await client.chat("sim/echo", messages, key=f"{w}-{i}")
        async with anyio.create_task_group() as tg:  # warm-up: connections open
            for w in range(conc):
                tg.start_soon(worker, -w - 1, 1)
        cpu0, it0 = time.process_time(), _iterations[0]
        async with anyio.create_task_group() as tg:
            for w in range(conc):
                tg.start_soon(worker, w, n // conc + (w < n % conc))
        cpu, its = time.process_time() - cpu0, _iterations[0] - it0
    print(orjson.dumps({"cpu_s": cpu, "iterations": its}).decode())
anyio.run(main)
'''


def _env(code_root: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if code_root is not None:
        env["PYTHONPATH"] = str(code_root) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_program(code: str, url: str, calls: int, concurrency: int, code_root: Path | None) -> tuple[float, float]:
    """(CPU s per call, loop iterations per call) of one child running ``code``."""
    # cwd: ``python -c`` puts the working directory first on sys.path, ahead of PYTHONPATH — run from a checkout,
    # the child would import that checkout's code whatever ``code_root`` says
    out = subprocess.run([sys.executable, "-c", code, url, str(calls), str(concurrency)], env=_env(code_root),
                         cwd=tempfile.gettempdir(), capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"child failed:\n{out.stderr[-2000:]}")
    figures = orjson.loads(out.stdout.strip().splitlines()[-1])
    return figures["cpu_s"] / calls, figures["iterations"] / calls


SWEEP = r"""
import json, resource, sys
from mpcbench_async.cli import main
sys.argv = ["mpcbench-async", *sys.argv[1:]]
try:
    code = main()
except SystemExit as exc:
    code = exc.code
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "self_s": me.ru_utime + me.ru_stime, "children_s": kids.ru_utime + kids.ru_stime}))
"""


def count_instructions(code: str, url: str, calls: int, concurrency: int, code_root: Path | None) -> float:
    """Instructions per call of ``code``'s calls (start-up and warm-up cancel out), under valgrind."""
    counts = []
    for n in (calls // 4, calls):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/cg",
                                  sys.executable, "-c", code, url, str(n), str(concurrency)], env=_env(code_root),
                                 cwd=tmp, capture_output=True, text=True, check=False)
        found = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
        if out.returncode != 0 or found is None:
            raise SystemExit(f"child under valgrind failed:\n{out.stderr[-2000:]}")
        counts.append(int(found.group(1).replace(",", "")))
    return (counts[1] - counts[0]) / (calls - calls // 4)


def sweep_child(code: str, url: str | None, trials: int, concurrency: int, code_root: Path | None, tmp: Path,
                prefix: tuple[str, ...] = ()) -> tuple[dict[str, Any], int, float]:
    """(the last JSON line ``code`` printed, LLM calls, wall s) of one ``sweep`` of the shipped tasks in a child
    running ``code`` (``SWEEP`` or a variant taking the command line after it), under ``prefix`` (e.g. valgrind)."""
    config = tmp / "model_config.json"
    defaults: dict[str, object] = {"limits": {"max_concurrency": concurrency}}
    if url is not None:
        defaults["base_url"] = url
    config.write_bytes(orjson.dumps({"agent_models": ["sim/oracle-agent"], "judge_models": ["sim/judge"],
                                     "defaults": defaults}))
    out = Path(tempfile.mkdtemp(dir=tmp))
    # the tree's own prompts: an older tree's loader rejects prompt kinds added since (tasks and data are shared)
    prompts = (code_root or REPO) / "prompt_config.json"
    args = ["sweep", "--config", str(config), "--prompts", str(prompts), "--tasks-dir",
            str(REPO / "tasks"), "--data-dir", str(REPO / "data"), "--trials", str(trials), "--concurrency",
            str(concurrency), "--out", str(out), "--quiet"]
    env = _env(code_root)
    env.pop("MPCBENCH_SIM", None)  # each code's default mode
    start = time.perf_counter()
    proc = subprocess.run([*prefix, sys.executable, "-c", code, *args], env=env, cwd=tmp, capture_output=True,
                          text=True, check=False)
    wall = time.perf_counter() - start
    lines = proc.stdout.strip().splitlines()
    figures = orjson.loads(lines[-1]) if lines and lines[-1].startswith("{") else {"code": proc.returncode}
    if figures["code"] not in (0, None):
        raise SystemExit(f"sweep failed:\n{proc.stderr[-2000:]}")
    with (out / "calls.jsonl").open("rb") as fh:
        calls = sum(1 for _ in fh)
    shutil.rmtree(out)
    return figures, calls, wall


def compiled_trees(before: Path | None) -> list[tuple[str, Path]]:
    """The trees to measure: ("before", ``before``) when given, then ("after", this tree), each byte-compiled first
    (a sweep starts from bytecode, as an installed package does: see the module docstring)."""
    codes: list[tuple[str, Path]] = [("after", REPO)]
    if before is not None:
        codes.insert(0, ("before", before.resolve()))
    for _, root in codes:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "mpcbench_async")],
                       capture_output=True, check=False)
    return codes


def run_sweep(url: str | None, trials: int, concurrency: int, code_root: Path | None,
              tmp: Path) -> tuple[float, float, int, float]:
    """(runner CPU s per LLM call, its children's CPU s per call, LLM calls, wall s) of one ``sweep``."""
    figures, calls, wall = sweep_child(SWEEP, url, trials, concurrency, code_root, tmp)
    return figures["self_s"] / calls, figures["children_s"] / calls, calls, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, default=None, help="source tree of the 'before' code (a worktree)")
    parser.add_argument("--calls", type=int, default=4000, help="calls per floor/native run (default: 4000)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--trials", type=int, default=40, help="sweep trials per task (default: 40)")
    parser.add_argument("--embedded-trials", type=int, default=20,
                        help="trials of the embedded-sim sweep (default: 20; 0 leaves the row out)")
    parser.add_argument("--large-trials", type=int, default=0,
                        help="also a sweep of this many trials per task, this tree only: a real sweep's size, where "
                             "start-up and the summary's fixed part are spread over many calls (default: 0, no row)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--native-only", action="store_true",
                        help="only the raw aiohttp floor and LLMClient's native rows (no sweep)")
    parser.add_argument("--sim-args", default="", metavar="ARGS",
                        help="extra options for the shared `sim serve`, one shell-quoted string, e.g. "
                             "'--rpm 60000000' so every reply carries rate-limit headers that never bind")
    parser.add_argument("--instructions", action="store_true",
                        help="also count the floor's and native's instructions per call under valgrind (once)")
    args = parser.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind on PATH")
    codes: list[tuple[str, Path | None]] = [("after", REPO)]
    if args.before is not None:
        codes.insert(0, ("before", args.before.resolve()))
    samples: dict[tuple[str, str], list[tuple[float, ...]]] = {}
    for _, root in codes:  # start-up from bytecode, as an install runs (see the module docstring)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str((root or REPO) / "mpcbench_async")],
                       capture_output=True, check=False)

    def note(row: str, label: str, figures: tuple[float, ...]) -> None:
        samples.setdefault((row, label), []).append(figures)
        print(f"{row:8} {label:6} " + " ".join(f"{f:.6g}" for f in figures), file=sys.stderr, flush=True)

    instructions: dict[str, float] = {}
    with sim_subprocess(shlex.split(args.sim_args)) as url, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if args.instructions:
            instructions["-"] = count_instructions(FLOOR, url, args.calls, args.concurrency, None)
            for label, root in codes:
                instructions[label] = count_instructions(NATIVE, url, args.calls, args.concurrency, root)
        for _ in range(args.repeats):
            note("floor", "-", run_program(FLOOR, url, args.calls, args.concurrency, None))
            for label, root in codes:
                note("native", label, run_program(NATIVE, url, args.calls, args.concurrency, root))
            for label, root in () if args.native_only else codes:
                note("sweep", label, run_sweep(url, args.trials, args.concurrency, root, tmp))
            for label, root in codes if args.embedded_trials and not args.native_only else ():
                note("embedded", label, run_sweep(None, args.embedded_trials, args.concurrency, root, tmp))
            if args.large_trials and not args.native_only:
                note("large", "after", run_sweep(url, args.large_trials, args.concurrency, REPO, tmp))

    def med(key: tuple[str, str], i: int) -> float:
        return statistics.median(s[i] for s in samples[key])

    floor_cpu = med(("floor", "-"), 0)
    before = f" --before {args.before}" if args.before else ""
    print(f"#### CPU per LLM call — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    command = ("--instructions " if args.instructions else "") + (
        f"--sim-args '{args.sim_args}' " if args.sim_args else "") + (
        f"--native-only --calls {args.calls} --concurrency {args.concurrency} --repeats {args.repeats}"
               if args.native_only else f"--calls {args.calls} --concurrency {args.concurrency} --trials "
               f"{args.trials} --embedded-trials {args.embedded_trials} --large-trials {args.large_trials} "
               f"--repeats {args.repeats}")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"1-minute load average {os.getloadavg()[0]:.1f} at the end. Command: `python bench/cpu_per_call.py"
          f"{before} {command}`. Medians of {args.repeats} interleaved runs.\n")
    if instructions:
        print("| row | code | instructions per call | ÷ raw floor |\n|---|---|---:|---:|")
        for label, count in instructions.items():
            row = "raw aiohttp floor" if label == "-" else "LLMClient native"
            print(f"| {row}, c={args.concurrency} | {label if label != '-' else '–'} | {count:,.0f} | "
                  f"{count / instructions['-']:.2f}× |")
        print()
    print("| row | code | runner CPU µs per call | ÷ raw floor | loop iterations per call | sim child CPU µs "
          "per call | LLM calls | wall s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print(f"| raw aiohttp floor, c={args.concurrency} | – | {floor_cpu * 1e6:.0f} | 1.00× | "
          f"{med(('floor', '-'), 1):.3f} | – | {args.calls} | – |")
    for label, _ in codes:
        cpu = med(("native", label), 0)
        print(f"| LLMClient native, c={args.concurrency} | {label} | {cpu * 1e6:.0f} | {cpu / floor_cpu:.2f}× | "
              f"{med(('native', label), 1):.3f} | – | {args.calls} | – |")
    rows = [] if args.native_only else [
        ("sweep", f"sweep (oracle agent + tools + judge + records), sim apart, {args.trials} trials")]
    if args.embedded_trials and not args.native_only:
        rows.append(("embedded", f"sweep, embedded sim (no base_url), {args.embedded_trials} trials"))
    if args.large_trials and not args.native_only:
        rows.append(("large", f"sweep, sim apart, {args.large_trials} trials (a real sweep's size)"))
    for row, title in rows:
        for label, _ in codes if row != "large" else [("after", REPO)]:
            cpu = med((row, label), 0)
            print(f"| {title} | {label} | {cpu * 1e6:.0f} | {cpu / floor_cpu:.2f}× | – | "
                  f"{med((row, label), 1) * 1e6:.0f} | {med((row, label), 2):.0f} | {med((row, label), 3):.1f} |")


if __name__ == "__main__":
    main()
