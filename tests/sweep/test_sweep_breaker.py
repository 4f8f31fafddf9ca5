"""A sweep with one dead model: its breaker opens, its units fail fast, and the other models finish."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from mpcbench_async.mpcbench import MPCBenchSuite
from mpcbench_async.runner import Runner
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import plan_of

DEAD = "sim/echo?fault=404&fail_first=999"


async def test_dead_model_fails_fast_and_the_sweep_finishes_the_others(tmp_path: Path):
    """Eight units of a 404 model cost five requests, three fail fast (rerun on resume); the other model ends ok."""
    async with SimServer(seed=5) as sim:
        root = write_workspace(tmp_path / "ws", base_url=sim.base_url, tasks=8,
                               agent_models=("sim/lazy-agent", DEAD))
        config, prompts, plan = plan_of(root)
        async with Runner(config, out_dir=tmp_path / "out", concurrency=1) as runner:
            await runner.run(MPCBenchSuite(plan, prompts))
    runs, _ = read_jsonl(tmp_path / "out" / "runs.jsonl")
    outcomes = Counter((r["model"], r["status"], r["error_class"], r["retryable"]) for r in runs)
    assert {("sim/lazy-agent", "ok", None, False): 8, (DEAD, "error", "PermanentLLMError", False): 5,
            (DEAD, "error", "CircuitOpenError", True): 3} == outcomes
    assert 5 == sim.stats.statuses["404"]
