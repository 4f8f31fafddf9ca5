"""Prompt-token estimate error against the sim, before and after per-model calibration (issue 15, point 5).

Agent-shaped requests built from the shipped MPCBench inputs — the agent system
prompt, a task's user prompt, the benchmark's tool schemas and a tool result cut
from a scenario data file (Gmail, Jira, Slack, Drive, Calendar, Contacts JSON)
of varying length — and judge-shaped requests (the judge prompt and a prose
answer) go through ``LLMClient`` to an embedded sim that counts prompt tokens
word-like (``tokenizer=words``: letter runs up to 6, digit runs up to 3, each
other character; JSON-heavy text has far fewer bytes per token than prose, as
with real BPE vocabularies). For every call the bench compares with the sim's
count (a) the byte estimate the client used before this change (bytes // 4) and
(b) the calibrated estimate the client actually reserved (``estimated_prompt_tokens``
of the call record), split into a model's first calls and the rest.

    .venv/bin/python bench/token_estimate.py --calls 200
"""

from __future__ import annotations

import argparse
import json
import platform
import random
from datetime import UTC, datetime
from statistics import mean, quantiles

import anyio

from mpcbench_async._resources import shipped_path
from mpcbench_async.llm import ChatRequest, Endpoint, LLMClient, Transport, WireCompletion
from mpcbench_async.llm._registry import create_transport
from mpcbench_async.mpcbench.tools._backend import _tool_schemas  # the nine tools exactly as agents are sent them
from mpcbench_async.records import FunctionCall, LLMCallRecord, Message, ToolCall, ToolSchema

AGENT, JUDGE = "sim/echo?tokenizer=words", "sim/judge?tokenizer=words"


class SizeTap(Transport):
    """The native transport, noting each request's body size by call key (for the old bytes // 4 estimate)."""

    name = "native"

    def __init__(self) -> None:
        self.inner = create_transport("native")
        self.sizes: dict[str, int] = {}

    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        self.sizes[request.key] = len(request.payload)
        return await self.inner.complete(endpoint, request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def inputs() -> tuple[dict, list[dict], list[tuple[str, object]], list[ToolSchema]]:
    prompts = json.loads(shipped_path("prompt_config.json").read_text())
    tasks = [json.loads(p.read_text()) for p in sorted(shipped_path("tasks").glob("*/*.json"))]
    sources = [(p.stem, json.loads(p.read_text())) for p in sorted(shipped_path("data").glob("*.json"))
               if not p.stem.endswith("world_state")]
    return prompts, tasks, sources, list(_tool_schemas())


def cut(source: object, rng: random.Random) -> str:
    """A tool result: the source's first list, cut to a random number of items, as JSON."""
    items = next((v for v in source.values() if isinstance(v, list)), []) if isinstance(source, dict) else []
    return json.dumps(items[: rng.randint(1, max(1, len(items)))], ensure_ascii=False)


async def run(calls: int, seed: int) -> dict:
    prompts, tasks, sources, tools = inputs()
    rng = random.Random(seed)
    records: list[LLMCallRecord] = []
    tap = SizeTap()
    async with LLMClient(transport=tap, call_sink=records.append) as client:
        for i in range(calls):
            task = rng.choice(tasks)
            if i % 4 == 3:  # a judge call: prose
                answer = " ".join(rng.choice(task["answer_requirements"] or [task["user_prompt"]])
                                  for _ in range(rng.randint(1, 12)))
                await client.chat(JUDGE, [Message(role="system", content=prompts["judge"]["system"]),
                                          Message(role="user", content=f"{task['user_prompt']}\n\nAnswer:\n{answer}")],
                                  key=f"judge-{i}")
                continue
            name, source = rng.choice(sources)
            call = ToolCall(id=f"call_{i}", function=FunctionCall(name=name, arguments="{}"))
            await client.chat(AGENT, [
                Message(role="system", content=prompts["agent"]["system"]),
                Message(role="user", content=task["user_prompt"]),
                Message(role="assistant", tool_calls=[call]),
                Message(role="tool", tool_call_id=call.id, content=cut(source, rng)),
            ], tools, key=f"agent-{i}")
        ratios = {model: client.estimator(model).bytes_per_token for model in (AGENT, JUDGE)}
    return {"records": records, "sizes": tap.sizes, "ratios": ratios}


def error_stats(pairs: list[tuple[int, int]]) -> dict:
    errors = [abs(estimate - actual) / actual for estimate, actual in pairs]
    under = sum(estimate < actual for estimate, actual in pairs)
    return {"calls": len(errors), "mean_pct": round(100 * mean(errors), 1),
            "p95_pct": round(100 * quantiles(errors, n=20)[-1], 1) if len(errors) >= 20 else None,
            "under_pct": round(100 * under / len(errors), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--warm", type=int, default=5, help="a model's first calls, reported apart (default: 5)")
    args = parser.parse_args()
    result = anyio.run(run, args.calls, args.seed)
    records, sizes = result["records"], result["sizes"]
    rows = {}
    for model in (AGENT, JUDGE):
        mine = [r for r in records if r.model == model]
        rows[model] = {
            "bytes_div_4_all": error_stats([(max(1, sizes[r.key] // 4), r.usage.prompt_tokens) for r in mine]),
            "calibrated_first": error_stats([(r.estimated_prompt_tokens, r.usage.prompt_tokens)
                                             for r in mine[: args.warm]]),
            "calibrated_after": error_stats([(r.estimated_prompt_tokens, r.usage.prompt_tokens)
                                             for r in mine[args.warm:]]),
            "actual_bytes_per_token": round(sum(sizes[r.key] for r in mine)
                                            / sum(r.usage.prompt_tokens for r in mine), 2),
            "learned_bytes_per_token": round(result["ratios"][model], 2),
        }
    print(json.dumps({"date": datetime.now(UTC).isoformat(timespec="seconds"), "python": platform.python_version(),
                      "calls": args.calls, "seed": args.seed, "models": rows}, indent=2))


if __name__ == "__main__":
    main()
