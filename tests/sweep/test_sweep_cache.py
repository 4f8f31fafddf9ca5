"""The response cache in a sweep (issue 15 point 4): ``Output(cache=...)`` / ``sweep --cache [DIR]``.

Against the seeded sim, which counts every request it receives: a sweep repeated into another output directory
with the same cache sends nothing and writes the same run and judge records (timings aside), its calls marked
cached ($0 spent, their value kept); each trial keeps its own replies; a changed judge prompt reuses every agent
call and sends only the judges'.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson

from mpcbench_async.llm import cache_path
from mpcbench_async.runner import Outcome
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import SweepOptions, run_sweep
from tests.sweep.conftest import plan_of
from tests.sweep.test_exit_codes import cli, sweep_args
from tests.sweep_options import sweep_options

TIMINGS = {"started_at", "finished_at", "timings"}  # wall-clock fields, at any depth


def options(root: Path, out: Path, cache: Path, **changes: Any) -> SweepOptions:
    return sweep_options(config=root / "model_config.json", prompts=root / "prompt_config.json", out=out,
                        tasks_dir=root / "tasks", data_dir=root / "data", scenarios_dir=root / "scenarios",
                        handle_signals=False, cache=cache, **changes)


def untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMINGS}
    return [untimed(v) for v in value] if isinstance(value, list) else value


def records(out: Path, name: str) -> dict[str, Any]:
    found, _ = read_jsonl(out / name)
    return {record["key"]: untimed(record) for record in found}


class TestSweepCache:
    async def test_the_same_sweep_again_sends_nothing_and_writes_the_same_records(self, workspace, tmp_path):
        """Two trials: the first sweep sends one request per unit (trial 1's requests equal trial 0's but are not
        served from the cache: each trial keeps its own replies). The same sweep into another --out sends none;
        its runs and judgements equal the first's but for timings; every call is marked cached, spent $0 and keeps
        the value the first sweep's call cost."""
        cache = tmp_path / "cache" / "responses.sqlite"
        async with SimServer(seed=41) as sim:
            root = workspace(sim.base_url)
            _, _, plan = plan_of(root, trials=2)
            first = await run_sweep(options(root, tmp_path / "a", cache, trials=2))
            sent = sim.stats.total_received
            again = await run_sweep(options(root, tmp_path / "b", cache, trials=2))
            assert sim.stats.total_received == sent
        units = plan.agent_unit_count + plan.judge_unit_count
        assert (sent, first.outcome, again.outcome) == (units, Outcome(units=units, ok=units),
                                                        Outcome(units=units, ok=units))
        for name in ("runs.jsonl", "judgements.jsonl"):
            assert records(tmp_path / "a", name) == records(tmp_path / "b", name)
        made, _ = read_jsonl(tmp_path / "a" / "calls.jsonl")
        hits, _ = read_jsonl(tmp_path / "b" / "calls.jsonl")
        assert {(c["cached"], c["cost_usd"], c["attempts"]) for c in hits} == {(True, 0.0, 0)}
        assert sorted((c["key"], c.get("cached", False), c["cost_usd"]) for c in made) == sorted(
            (c["key"], False, c["value_usd"]) for c in hits)

    async def test_a_changed_judge_prompt_reuses_every_agent_call(self, workspace, tmp_path):
        """The judge's system prompt changes and the sweep runs into a new --out with the same cache: no agent
        request is sent (every agent call is a cache hit), every judgement is sent again."""
        cache = tmp_path / "cache" / "responses.sqlite"
        async with SimServer(seed=41) as sim:
            root = workspace(sim.base_url)
            _, _, plan = plan_of(root)
            await run_sweep(options(root, tmp_path / "a", cache))
            sim.reset()
            prompts = orjson.loads((root / "prompt_config.json").read_bytes())
            prompts["judge"]["system"] += "\nBe strict."
            (root / "prompt_config.json").write_bytes(orjson.dumps(prompts))
            result = await run_sweep(options(root, tmp_path / "b", cache))
            sent = dict(sim.stats.received)
        units = plan.agent_unit_count + plan.judge_unit_count
        assert result.outcome == Outcome(units=units, ok=units)
        assert {key.split("-")[0] for key in sent} == {"judge"}
        assert sum(sent.values()) == plan.judge_unit_count
        calls, _ = read_jsonl(tmp_path / "b" / "calls.jsonl")
        assert {(c["key"].split("-")[0], c.get("cached", False)) for c in calls} == {("run", True), ("judge", False)}

    async def test_the_cli_flag_fills_a_cache_directory_and_a_second_sweep_sends_nothing(self, workspace, tmp_path):
        """`sweep --cache DIR` twice into two --out: both exit 0; the second sends no request; --cache-mode off
        sends every request again."""
        cache = tmp_path / "cache"
        async with SimServer(seed=41) as sim:
            root = workspace(sim.base_url)
            first = await cli(*sweep_args(root, tmp_path / "a", "--cache", str(cache)))
            sent = sim.stats.total_received
            second = await cli(*sweep_args(root, tmp_path / "b", "--cache", str(cache)))
            unchanged = sim.stats.total_received
            off = await cli(*sweep_args(root, tmp_path / "c", "--cache", str(cache), "--cache-mode", "off"))
            assert (first[0], second[0], off[0]) == (0, 0, 0), first[2]
            assert (unchanged, sim.stats.total_received) == (sent, 2 * sent)
        assert cache_path(cache).is_file() and cache_path(cache).parent == cache

    async def test_an_unusable_cache_is_refused_before_any_call(self, workspace, tmp_path):
        """--cache-mode read with no cache there: exit 2 with one line naming the file; nothing sent or written."""
        cache = tmp_path / "cache"
        async with SimServer(seed=41) as sim:
            root = workspace(sim.base_url)
            code, _, err = await cli(*sweep_args(root, tmp_path / "a", "--cache", str(cache), "--cache-mode", "read"))
            assert sim.stats.total_received == 0
        assert (2, [f"error: {cache_path(cache)}: no response cache here (mode 'read' only reads an existing cache; "
                    "fill one with mode 'readwrite' or 'write')"]) == (code, err.splitlines()), err
        assert not (tmp_path / "a").exists()

    async def test_cache_damage_is_retried_on_the_next_run_once_the_cache_is_gone(self, workspace, tmp_path):
        """Every stored reply is damaged: the units that ask for one fail with an error that names the cache file
        and is retryable (cache damage is infrastructure, not the unit's result). Once the cache is deleted, the
        same sweep into the same --out runs exactly those units again and all end ok."""
        cache = tmp_path / "cache" / "responses.sqlite"
        async with SimServer(seed=41) as sim:
            root = workspace(sim.base_url)
            _, _, plan = plan_of(root)
            await run_sweep(options(root, tmp_path / "a", cache))
            with sqlite3.connect(cache) as conn:
                conn.execute("UPDATE responses SET response = x'7b'")
            damaged = await run_sweep(options(root, tmp_path / "b", cache))
            runs = list(records(tmp_path / "b", "runs.jsonl").values())
            assert damaged.outcome.ok == 0 and len(runs) == plan.agent_unit_count
            assert {(r["status"], r["retryable"], r["error_class"]) for r in runs} == {
                ("error", True, "ReplyStoreError")}
            assert all(r["error_message"].startswith(f"{cache}: the stored reply ") for r in runs)
            cache.unlink()
            sim.reset()
            again = await run_sweep(options(root, tmp_path / "b", cache))
            assert sim.stats.total_received == plan.agent_unit_count + plan.judge_unit_count
        units = plan.agent_unit_count + plan.judge_unit_count
        assert again.outcome == Outcome(units=units, ok=units)
