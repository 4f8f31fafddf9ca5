"""CPU per LLM call: a raw aiohttp floor, ``LLMClient``'s native transport and a whole sweep, before vs after.

The yardstick (issue 31) is a raw aiohttp client on the same mock server: one ``ClientSession``, N
non-streaming ``POST /chat/completions`` of one short user message at concurrency C, the JSON reply
decoded — no retries, no limiter, no records. Against it, in child processes of one run, interleaved
row by row, each with the code of "before" (a git worktree put first on ``PYTHONPATH``) and "after"
(this tree):

- ``native``: the same N calls through ``LLMClient`` (native transport, default limits raised to C);
- ``sweep``: ``mpcbench-async sweep`` on the shipped tasks (``tasks/``, ``data/``) with ``sim/oracle-agent``
  (tool calls, several turns) and ``sim/judge``, ``--trials T``, every record and the ledger written.

One sim serves every row, started once in its own process (``sim serve --port 0``), so the rows measure
the client's process only. CPU per call: for the floor and ``native``, ``time.process_time`` around the
N calls (start-up and warm-up left out) ÷ N, and the event loop's iterations (``_run_once``) ÷ N; for
the sweep, the child's user+sys time from ``wait4`` (start-up, plan and summary included) ÷ the LLM
calls it made (lines of ``calls.jsonl``). Medians of ``--repeats``.

    .venv/bin/python bench/cpu_per_call.py --before /tmp/before --calls 4000 --concurrency 64 --trials 60
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
    out = subprocess.run([sys.executable, "-c", code, url, str(calls), str(concurrency)], env=_env(code_root),
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"child failed:\n{out.stderr[-2000:]}")
    figures = orjson.loads(out.stdout.strip().splitlines()[-1])
    return figures["cpu_s"] / calls, figures["iterations"] / calls


def run_sweep(url: str, trials: int, concurrency: int, code_root: Path | None, tmp: Path) -> tuple[float, int, float]:
    """(CPU s per LLM call, LLM calls, wall s) of one ``sweep`` in a child process."""
    config = tmp / "model_config.json"
    config.write_bytes(orjson.dumps({"agent_models": ["sim/oracle-agent"], "judge_models": ["sim/judge"],
                                     "defaults": {"base_url": url, "limits": {"max_concurrency": concurrency}}}))
    out = Path(tempfile.mkdtemp(dir=tmp))
    cmd = [sys.executable, "-m", "mpcbench_async", "sweep", "--config", str(config),
           "--prompts", str(REPO / "prompt_config.json"), "--tasks-dir", str(REPO / "tasks"),
           "--data-dir", str(REPO / "data"), "--trials", str(trials), "--concurrency", str(concurrency),
           "--out", str(out), "--quiet"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(code_root), cwd=tmp)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"sweep failed:\n{proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
    with (out / "calls.jsonl").open("rb") as fh:
        calls = sum(1 for _ in fh)
    return (usage.ru_utime + usage.ru_stime) / calls, calls, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, default=None, help="source tree of the 'before' code (a worktree)")
    parser.add_argument("--calls", type=int, default=4000, help="calls per floor/native run (default: 4000)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--trials", type=int, default=40, help="sweep trials per task (default: 40)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    codes: list[tuple[str, Path | None]] = [("after", REPO)]
    if args.before is not None:
        codes.insert(0, ("before", args.before.resolve()))
    samples: dict[tuple[str, str], list[tuple[float, ...]]] = {}
    with sim_subprocess() as url, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for repeat in range(args.repeats):
            floor = run_program(FLOOR, url, args.calls, args.concurrency, None)
            samples.setdefault(("floor", "-"), []).append(floor)
            print(f"[{repeat + 1}] floor  {floor[0] * 1e6:7.0f} µs/call {floor[1]:.3f} it/call", file=sys.stderr)
            for label, root in codes:
                native = run_program(NATIVE, url, args.calls, args.concurrency, root)
                samples.setdefault(("native", label), []).append(native)
                print(f"[{repeat + 1}] native {label:6} {native[0] * 1e6:7.0f} µs/call {native[1]:.3f} it/call",
                      file=sys.stderr)
            for label, root in codes:
                cpu, calls, wall = run_sweep(url, args.trials, args.concurrency, root, tmp)
                samples.setdefault(("sweep", label), []).append((cpu, calls, wall))
                print(f"[{repeat + 1}] sweep  {label:6} {cpu * 1e6:7.0f} µs/call ({calls} calls, {wall:.1f} s)",
                      file=sys.stderr, flush=True)

    def med(key: tuple[str, str], i: int) -> float:
        return statistics.median(s[i] for s in samples[key])

    floor_cpu = med(("floor", "-"), 0)
    print(f"#### CPU per LLM call — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"1-minute load average {os.getloadavg()[0]:.1f} at the end. Command: `python bench/cpu_per_call.py"
          f"{' --before ' + str(args.before) if args.before else ''} --calls {args.calls} --concurrency "
          f"{args.concurrency} --trials {args.trials} --repeats {args.repeats}`. One sim in its own process; "
          f"medians of {args.repeats} interleaved runs.\n")
    print("| row | code | CPU µs per call | ÷ raw floor | loop iterations per call | LLM calls | wall s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    print(f"| raw aiohttp floor, c={args.concurrency} | – | {floor_cpu * 1e6:.0f} | 1.00× | "
          f"{med(('floor', '-'), 1):.3f} | {args.calls} | – |")
    for label, _ in codes:
        cpu = med(("native", label), 0)
        print(f"| LLMClient native, c={args.concurrency} | {label} | {cpu * 1e6:.0f} | {cpu / floor_cpu:.2f}× | "
              f"{med(('native', label), 1):.3f} | {args.calls} | – |")
    for label, _ in codes:
        cpu = med(("sweep", label), 0)
        print(f"| sweep (oracle agent + tools + judge + records), {args.trials} trials | {label} | "
              f"{cpu * 1e6:.0f} | {cpu / floor_cpu:.2f}× | – | {med(('sweep', label), 1):.0f} | "
              f"{med(('sweep', label), 2):.1f} |")


if __name__ == "__main__":
    main()
