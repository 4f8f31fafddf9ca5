"""Profile reports agree with the data they were built from."""

from __future__ import annotations

import orjson

from mpcbench_async.llm import ModelConfig, load_model_config
from mpcbench_async.mpcbench import MPCBenchSuite, build_plan, load_prompts
from mpcbench_async.perf import profile_endpoint, profile_sweep, render_endpoint_profile, render_sweep_profile
from mpcbench_async.runner import Runner
from mpcbench_async.sim import FaultSpec, SimServer
from mpcbench_async.testing import write_workspace


class TestSweepProfile:
    async def test_counts_and_tokens_match_the_jsonl(self, tmp_path):
        """Call counts, attempts and token sums per model equal those in calls.jsonl; the critical path is a run."""
        async with SimServer(seed=9, defaults=FaultSpec(latency_ms=5, p503=0.2, retry_after_ms=1)) as sim:
            root = write_workspace(tmp_path / "ws", base_url=sim.base_url,
                                   defaults={"retry": {"initial_backoff": 0.001, "max_backoff": 0.01}})
            config = load_model_config(root / "model_config.json")
            prompts = load_prompts(root / "prompt_config.json")
            plan = build_plan(config=config, prompts=prompts, tasks_dir=root / "tasks", data_dir=root / "data",
                              trials=2)
            async with Runner(config, out_dir=tmp_path / "out") as runner:
                await runner.run(MPCBenchSuite(plan, prompts))
        calls = [orjson.loads(line) for line in (tmp_path / "out" / "calls.jsonl").read_bytes().splitlines()]
        profile = profile_sweep(tmp_path / "out")
        assert len(calls) == profile.calls
        by_model = {m.model: m for m in profile.models}
        for model in {c["model"] for c in calls}:
            mine = [c for c in calls if c["model"] == model]
            assert (len(mine), sum(c.get("attempts", 1) for c in mine),
                    sum(c.get("usage", {}).get("total_tokens", 0) for c in mine)) == (
                by_model[model].calls, by_model[model].attempts, by_model[model].tokens)
            assert 1 <= by_model[model].peak_concurrency
        assert sum(c.get("attempts", 1) for c in calls) > len(calls)  # the 503s were retried and counted
        runs = [orjson.loads(line) for line in (tmp_path / "out" / "runs.jsonl").read_bytes().splitlines()]
        assert profile.critical_path["key"] in {r["key"] for r in runs}
        assert round(max(r["run"]["timings"]["total_s"] for r in runs), 4) == profile.critical_path["total_s"]
        markdown, svg = render_sweep_profile(profile)
        assert f"{len(calls)} LLM calls" in markdown
        assert svg.startswith("<svg") and "calls/s" in svg


class TestEndpointProfile:
    async def test_levels_are_self_consistent_and_the_knee_is_a_level(self, sim):
        """Every level's requests = ok + errors; the knee is the lowest level reaching 90% of the peak."""
        profile = await profile_endpoint(ModelConfig(), "sim/echo?latency_ms=20", concurrencies=[1, 4, 8],
                                         duration=0.3, sim_base_url=sim.base_url)
        assert [1, 4, 8] == [lv.concurrency for lv in profile.levels]
        for level in profile.levels:
            assert level.requests == level.ok + level.errors
            assert (0.0, 0.0) == (level.error_rate, level.rate_limited_rate)
        peak = max(lv.requests_per_s for lv in profile.levels)
        assert peak == profile.peak_requests_per_s
        knee = next(lv.concurrency for lv in profile.levels if lv.requests_per_s >= 0.9 * peak)
        assert knee == profile.knee_concurrency
        markdown, svg = render_endpoint_profile(profile)
        assert "| c=8 |" in markdown and svg.startswith("<svg")

    async def test_rate_limits_are_counted_not_retried(self, sim):
        """Against an enforced RPM the profile counts 429s (retries are off while profiling)."""
        profile = await profile_endpoint(ModelConfig(), "sim/echo?rpm=5", concurrencies=[4], duration=0.3,
                                         sim_base_url=sim.base_url)
        level = profile.levels[0]
        assert 5 == level.ok
        assert level.rate_limited == level.errors == level.requests - 5
        assert 0 < level.rate_limited_rate
