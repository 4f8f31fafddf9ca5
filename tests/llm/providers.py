"""What the provider transports' tests share: the conversation, the config, a refused first request and a sweep."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from mpcbench_async import LLMError, Message, ModelConfig
from mpcbench_async.llm import ChatRequest, Endpoint
from mpcbench_async.llm._registry import create_transport
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import run_sweep, summarize
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import FAST_RETRY
from tests.sweep_options import sweep_options

FIXTURES = Path(__file__).parent.parent / "fixtures" / "providers"
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather at a place",
                                            "parameters": {"type": "object",
                                                           "properties": {"location": {"type": "string"}}}}}


def user(text: str) -> list[Message]:
    return [Message(role="system", content="be brief"), Message(role="user", content=text)]


def config(provider: str) -> ModelConfig:
    return ModelConfig.from_dict({"defaults": {"provider": provider, **FAST_RETRY}})


async def refused(sim: SimServer, transport_name: str, model: str, error: type[LLMError]) -> Any:
    """The error the ``transport_name`` transport raises for ``model``'s first request to the sim (a fault)."""
    transport = create_transport(transport_name)
    endpoint = Endpoint(model="sim/echo", api_model=model, base_url=sim.base_url)
    body = {"model": model, "messages": [{"role": "user", "content": "x"}]}
    try:
        with pytest.raises(error) as exc:
            await transport.complete(endpoint, ChatRequest(body=body, payload=b"", key=f"k-{transport_name}"))
    finally:
        await transport.aclose()
    return exc.value


async def sweep_results(root: Path, sim: SimServer,
                        provider: str) -> tuple[set[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """A small sweep (3 tasks, two agents, the judge) with every model on ``provider``'s API, against ``sim``:
    each agent model's ARS, SGR and check rate, and every run's answer and checks."""
    workspace = write_workspace(root, base_url=sim.base_url, tasks=3,
                                agent_models=("sim/oracle-agent", "sim/lazy-agent"),
                                defaults={**FAST_RETRY, "provider": provider})
    out = root / "out"
    await run_sweep(sweep_options(config=workspace / "model_config.json", prompts=workspace / "prompt_config.json",
                                 out=out, tasks_dir=workspace / "tasks", data_dir=workspace / "data",
                                 scenarios_dir=workspace / "scenarios", handle_signals=False, certificate=False))
    summaries = {(m.model, m.stats.ars.mean, m.stats.sgr.mean, m.stats.check_rate.mean) for m in summarize(out).models}
    answers = sorted((r["model"], r["task_id"], r["run"]["final_answer"], len(r["checks"]))
                     for r in map(orjson.loads, (out / "runs.jsonl").read_bytes().splitlines()))
    return summaries, answers
