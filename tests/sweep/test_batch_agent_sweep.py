"""Agents in provider batches (issue 29 point 4, ``--batch agent``): the same run records and scores as online on
the same replies (the sim is deterministic for a seed), every agent request billed once at half the price, the
wave line printed, and a request the provider refuses in a wave failing its run alone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import run_sweep
from mpcbench_async.testing import write_workspace
from tests.sweep.test_batch_sweep import PRICED, options, verdicts

AGENTS = ("sim/oracle-agent", "sim/lazy-agent")


def runs(out: Path, *, usage: bool = True) -> dict[str, Any]:
    """What a run's record says, minus its times and the call ids the provider chose (and its usage: the sim counts
    the prompt tokens of the request as sent, which another API's shape changes)."""
    records, _ = read_jsonl(out / "runs.jsonl")
    return {r["key"]: (r["status"], r["run"]["stop_reason"], r["run"]["turns"], r["run"]["final_answer"],
                       r["run"]["tool_trace_steps"], r["checks"], r["run"]["usage"] if usage else None)
            for r in records}


def agent_calls(out: Path) -> list[dict[str, Any]]:
    return [c for c in read_jsonl(out / "calls.jsonl")[0] if c["model"] in AGENTS]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_batch_agents_score_as_online_ones_at_half_the_price(tmp_path: Path, api: str):
    """One workspace swept online and with ``--batch agent``: the same runs (turns, tool steps, answers, checks,
    usage) and the same verdicts for the same keys; every agent request billed once by the Batch API and none sent
    online; the agents' calls at half the price; the wave line says how many waves for how many requests. With
    ``"batch": {"api": "anthropic"}``, the turns (tools, tool_use and tool_result blocks) go in Message Batches."""
    async with SimServer(seed=5) as sim:
        root = write_workspace(tmp_path / "ws", base_url=sim.base_url, defaults=PRICED, agent_models=AGENTS)
        await run_sweep(options(root, tmp_path / "online"))
        online_cost = sum(c["cost_usd"] for c in agent_calls(tmp_path / "online"))
        sim.reset()
        if api == "anthropic":
            path = root / "model_config.json"
            config = orjson.loads(path.read_bytes())
            config["models"] = {m: {"batch": {"api": "anthropic", "poll_s": 0, "poll_max_s": 0}} for m in AGENTS}
            path.write_bytes(orjson.dumps(config))
        result = await run_sweep(options(root, tmp_path / "batch", batch=("agent",)))
        stats = sim.stats
    same_shape = api == "openai"
    online, batch = runs(tmp_path / "online", usage=same_shape), runs(tmp_path / "batch", usage=same_shape)
    calls = agent_calls(tmp_path / "batch")
    assert (online, len(online)) == (batch, 8)
    assert verdicts(tmp_path / "online") == verdicts(tmp_path / "batch")
    assert ({c["key"]: 1 for c in calls}, {"batch"}) == (stats.batch_billed, {c["transport"] for c in calls})
    assert not any(key.startswith("run-") for key in stats.received) and stats.received
    half = sum(c["usage"]["prompt_tokens"] * 1.0 + c["usage"]["completion_tokens"] * 4.0 for c in calls) / 1e6
    assert sum(c["cost_usd"] for c in calls) == pytest.approx(online_cost / 2 if same_shape else half)
    turns = {model: max(r[2] for key, r in batch.items() if model in _run_models(tmp_path / "batch")[key])
             for model in AGENTS}
    assert result.waves is not None
    match = re.fullmatch(r"agent waves: (\d+) batches \((\d+) requests\), wall [\d.]+ s, bound [\d.]+ s "
                         r"\((\d+) turns x [\d.]+ s per batch\), ratio [\d.]+", result.waves)
    assert match is not None, result.waves
    # each model's runs move together: one wave per turn of its longest run, every request in one of them
    assert (sum(turns.values()), len(calls), max(turns.values())) == tuple(int(g) for g in match.groups())


def _run_models(out: Path) -> dict[str, str]:
    return {r["key"]: r["model"] for r in read_jsonl(out / "runs.jsonl")[0]}


async def test_a_request_refused_in_a_wave_fails_its_run_alone(tmp_path: Path):
    """The oracle agent's requests refused (400) in their wave: each of its runs ends in that error, not resubmitted
    and not retried; the lazy agent's runs, in their own waves, are judged as usual."""
    async with SimServer(seed=5) as sim:
        refused = "sim/oracle-agent?fault=400&fail_first=1"
        root = write_workspace(tmp_path / "ws", base_url=sim.base_url, defaults=PRICED,
                               agent_models=(refused, "sim/lazy-agent"))
        await run_sweep(options(root, tmp_path / "out", batch=("agent",)))
        billed = sim.stats.batch_billed
    records, _ = read_jsonl(tmp_path / "out" / "runs.jsonl")
    by_model = {(r["model"], r["status"], r["error_message"] and "HTTP 400: simulated bad request"
                 in r["error_message"]) for r in records}
    assert {(refused, "error", True), ("sim/lazy-agent", "ok", None)} == by_model
    assert {1} == set(billed.values()) and len(billed) == 4


def test_dry_run_shows_agent_batch_and_online_cost_and_the_waves_time(tmp_path: Path):
    """``--dry-run --batch agent``: each agent row at batch prices with the online cost beside it (twice), and the
    agent's time as waves: one batch per turn (max_turns 12) of each generation of ``concurrency`` runs."""
    from mpcbench_async.sweep import dry_run_sweep, render_dry_run

    root = write_workspace(tmp_path / "ws", base_url="http://127.0.0.1:9/v1", defaults=PRICED, agent_models=AGENTS)
    dry = dry_run_sweep(options(root, tmp_path / "out", batch=("agent",), concurrency=2))
    agent = next(r for r in dry.rows if r.model == "sim/oracle-agent")
    assert agent.online_cost_usd is not None and agent.cost_usd.low is not None
    assert agent.online_cost_usd.low == pytest.approx(2 * agent.cost_usd.low)
    assert [r.online_cost_usd is None for r in dry.rows] == [False, False, True]  # the judge stays online
    text = render_dry_run(dry)
    assert ("  sim/oracle-agent: 60.0 min-24.0 h (provider batches of 60.0 min each, assumed, one per agent "
            "turn)") in text
    assert (f"  sim/oracle-agent (agent): batch ${agent.cost_usd.low:.4f}-unbounded, online "
            f"${agent.online_cost_usd.low:.4f}-unbounded") in text
