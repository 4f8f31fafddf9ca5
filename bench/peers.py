"""Peer comparison: the same workload through this runner, a plain asyncio.gather loop over AsyncOpenAI,
Inspect AI (openai provider, chat-completions API) and a sequential loop (as the original MPCBench ran).

Workload, against one loopback sim in its own process (fixed latency):
  A. N single-call samples (one user message, one reply);
  B. N tool-using agent runs of K turns (the model calls one tool K-1 times, then answers).
Each (peer, workload) runs in its own child process: wall time, CPU seconds per LLM call
(child user+sys time / calls) and peak RSS come from ``wait4``. Medians over ``--repeats`` runs,
interleaved peer by peer; ratios are against this runner.

    .venv-bench/bin/python bench/peers.py --n 200 --turns 4 --concurrency 32 --repeats 3

Inspect AI is not a project dependency: install it beside the project in a separate venv
(bench/README.md). Peers whose import fails are reported as such.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime

import orjson

from mpcbench_async.perf import sim_subprocess

SCRIPT_TOOL = "Slack_search_messages"


def script(turns: int) -> list[dict]:
    steps = [{"tool_calls": [{"name": SCRIPT_TOOL, "arguments": {"query": f"step {i}"}}]} for i in range(turns - 1)]
    return steps + [{"content": '{"final_answer": "done", "rationale": "scripted"}'}]


# Each peer is a small program run with: python -c CODE base_url workload n turns concurrency
PEERS: dict[str, str] = {
    "mpcbench-async": r'''
import sys, anyio, orjson
from mpcbench_async.llm import LLMClient, ModelConfig
from mpcbench_async.records import Message, ToolSchema, FunctionSchema
from mpcbench_async.runtime import WorkerPool
url, workload, n, turns, conc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
config = ModelConfig.from_dict({"defaults": {"base_url": url, "limits": {"max_concurrency": conc}}})
tools = (ToolSchema(function=FunctionSchema(name="Slack_search_messages", parameters={"type": "object",
         "properties": {"query": {"type": "string"}}, "required": ["query"]})),)
SCRIPT = sys.argv[6]
async def main():
    async with LLMClient(config) as client:
        async def sample(i):
            await client.chat("sim/echo", [Message(role="user", content=f"sample {i}")], key=f"s{i}")
        async def agent(i):
            messages = [Message(role="system", content="SIM_SCRIPT: " + SCRIPT),
                        Message(role="user", content=f"task {i}")]
            for turn in range(turns + 1):
                r = await client.chat("sim/scripted", messages, tools, key=f"a{i}/{turn}")
                messages.append(Message(role="assistant", content=r.content, tool_calls=r.tool_calls or None))
                if not r.tool_calls:
                    return
                for call in r.tool_calls:
                    messages.append(Message(role="tool", tool_call_id=call.id, content='{"messages": []}'))
        pool = WorkerPool(sample if workload == "samples" else agent, concurrency=conc)
        async with pool.stream(range(n)) as results:
            async for _ in results:
                pass
anyio.run(main)
''',
    "asyncio.gather + AsyncOpenAI": r'''
import sys, asyncio, openai
url, workload, n, turns, conc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
SCRIPT = sys.argv[6]
TOOLS = [{"type": "function", "function": {"name": "Slack_search_messages", "parameters": {"type": "object",
          "properties": {"query": {"type": "string"}}, "required": ["query"]}}}]
async def main():
    client = openai.AsyncOpenAI(base_url=url, api_key="unused")
    gate = asyncio.Semaphore(conc)
    async def sample(i):
        async with gate:
            await client.chat.completions.create(model="sim/echo",
                                                 messages=[{"role": "user", "content": f"sample {i}"}])
    async def agent(i):
        async with gate:
            messages = [{"role": "system", "content": "SIM_SCRIPT: " + SCRIPT},
                        {"role": "user", "content": f"task {i}"}]
            for turn in range(turns + 1):
                r = await client.chat.completions.create(model="sim/scripted", messages=messages, tools=TOOLS)
                m = r.choices[0].message
                messages.append(m.model_dump(exclude_none=True))
                if not m.tool_calls:
                    return
                for call in m.tool_calls:
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"messages": []}'})
    await asyncio.gather(*((sample if workload == "samples" else agent)(i) for i in range(n)))
    await client.close()
asyncio.run(main())
''',
    "sequential (original MPCBench style)": r'''
import sys, openai
url, workload, n, turns, conc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
SCRIPT = sys.argv[6]
TOOLS = [{"type": "function", "function": {"name": "Slack_search_messages", "parameters": {"type": "object",
          "properties": {"query": {"type": "string"}}, "required": ["query"]}}}]
client = openai.OpenAI(base_url=url, api_key="unused")
for i in range(n):
    if workload == "samples":
        client.chat.completions.create(model="sim/echo", messages=[{"role": "user", "content": f"sample {i}"}])
        continue
    messages = [{"role": "system", "content": "SIM_SCRIPT: " + SCRIPT}, {"role": "user", "content": f"task {i}"}]
    for turn in range(turns + 1):
        m = client.chat.completions.create(model="sim/scripted", messages=messages, tools=TOOLS).choices[0].message
        messages.append(m.model_dump(exclude_none=True))
        if not m.tool_calls:
            break
        for call in m.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"messages": []}'})
''',
    "Inspect AI (openai provider)": r'''
import os, sys, tempfile
url, workload, n, turns, conc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
SCRIPT = sys.argv[6]
os.environ.setdefault("OPENAI_API_KEY", "unused")
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool

@tool
def Slack_search_messages():
    async def execute(query: str):
        """Search Slack messages.

        Args:
            query: words to look for
        """
        return '{"messages": []}'
    return execute

if workload == "samples":
    dataset = [Sample(input=f"sample {i}") for i in range(n)]
    solver, model = [generate()], "openai/sim/echo"
else:
    dataset = [Sample(input=[ChatMessageSystem(content="SIM_SCRIPT: " + SCRIPT), ChatMessageUser(content=f"task {i}")])
               for i in range(n)]
    solver, model = [use_tools(Slack_search_messages()), generate()], "openai/sim/scripted"
with tempfile.TemporaryDirectory() as logs:
    inspect_eval(Task(dataset=dataset, solver=solver), model=model, model_base_url=url,
                 model_args={"responses_api": False}, max_connections=conc, max_samples=conc, log_dir=logs,
                 display="none", max_retries=0)
''',
}


def run_peer(code: str, url: str, workload: str, n: int, turns: int,
             concurrency: int) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MiB, exit code) of one peer run in a child process."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, url, workload, str(n), str(turns), str(concurrency),
                             orjson.dumps(script(turns)).decode()], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code_ = os.waitstatus_to_exitcode(status)
    if code_ != 0 and proc.stderr is not None:
        sys.stderr.write(proc.stderr.read().decode()[-1500:])
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--sequential-n", type=int, default=None, help="N for the sequential peer (default: N/4)")
    args = parser.parse_args()
    seq_n = args.sequential_n or max(10, args.n // 4)
    results: dict[tuple[str, str], list[tuple[float, float, float, int]]] = {}
    with sim_subprocess(["--latency-ms", str(args.latency_ms)]) as url:
        for repeat in range(args.repeats):
            for workload in ("samples", "agents"):
                for peer, code in PEERS.items():
                    n = seq_n if peer.startswith("sequential") else args.n
                    wall, cpu, rss, status = run_peer(code, url, workload, n, args.turns, args.concurrency)
                    calls = n * (args.turns if workload == "agents" else 1)
                    results.setdefault((workload, peer), []).append((wall, cpu / calls, rss, status))
                    print(f"[{repeat + 1}/{args.repeats}] {workload:7} {peer:40} wall {wall:6.2f} s  "
                          f"CPU {cpu / calls * 1e3:6.2f} ms/call  RSS {rss:5.0f} MiB  exit {status}",
                          file=sys.stderr, flush=True)
    print(f"### Peer comparison — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. Command: "
          f"`python bench/peers.py --n {args.n} --turns {args.turns} --concurrency {args.concurrency} --repeats "
          f"{args.repeats} --latency-ms {args.latency_ms:g}`. Sim in its own process at {args.latency_ms:g} ms per "
          f"call; every peer at concurrency {args.concurrency} except the sequential loop (one call at a time, "
          f"N={seq_n}, wall projected to N); medians of {args.repeats} interleaved runs; "
          "CPU = child user+sys time per LLM call (interpreter start-up and imports included).\n")
    for workload, title in (("samples", f"A. {args.n} single-call samples"),
                            ("agents", f"B. {args.n} agent runs × {args.turns} turns")):
        base = results.get((workload, "mpcbench-async"))
        base_cpu = statistics.median(r[1] for r in base) if base else None
        base_wall = statistics.median(r[0] for r in base) if base else None
        print(f"\n{title}\n")
        print("| peer | wall s | CPU ms/call | peak RSS MiB | CPU ÷ this runner | wall ÷ this runner | failures |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for peer in PEERS:
            runs = results.get((workload, peer), [])
            if not runs:
                continue
            scale = args.n / seq_n if peer.startswith("sequential") else 1.0  # projected to N items
            wall = statistics.median(r[0] for r in runs) * scale
            cpu = statistics.median(r[1] for r in runs)
            rss = statistics.median(r[2] for r in runs)
            failed = sum(r[3] != 0 for r in runs)
            print(f"| {peer} | {wall:.2f} | {cpu * 1e3:.2f} | {rss:.0f} | "
                  f"{cpu / base_cpu:.1f}× | {wall / base_wall:.2f}× | {failed}/{len(runs)} |" if base_cpu else
                  f"| {peer} | {wall:.2f} | {cpu * 1e3:.2f} | {rss:.0f} | – | – | {failed}/{len(runs)} |")


if __name__ == "__main__":
    main()
