"""Real sweep directories written by the runner against the seeded sim: compare reads them as the summary does."""

from __future__ import annotations

import sys

import anyio

from mpcbench_async.compare import compare_paths
from mpcbench_async.mpcbench import MPCBenchSuite
from mpcbench_async.runner import Runner
from mpcbench_async.sim import SimServer
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import FAST_RETRY, plan_of


async def test_the_same_sweep_twice_has_no_regression(tmp_path):
    """2 tasks × 2 trials, run into A and into B: same results, so every shared cell is paired with Δ 0 and
    `compare --fail-on-regression` exits 0."""
    async with SimServer(seed=5) as sim:
        root = write_workspace(tmp_path / "ws", base_url=sim.base_url, tasks=2, agent_models=("sim/lazy-agent",),
                               defaults=FAST_RETRY)
        config, prompts, plan = plan_of(root, trials=2)
        for out in ("A", "B"):
            async with Runner(config, out_dir=tmp_path / out, concurrency=4) as runner:
                await runner.run(MPCBenchSuite(plan, prompts))
    result = compare_paths(tmp_path / "A", tmp_path / "B")
    [model] = result.models
    assert ("sim/lazy-agent", ["t0", "t1"], [], [], []) == (
        model.model, [t.task_id for t in model.tasks], result.regressions, result.improvements, result.new_failures)
    for task in model.tasks:
        assert (2, 2, "paired", 0.0) == (task.a.trials, task.b.trials, task.ars.ci_kind, task.ars.delta)
    assert (4, 0.0, 4) == (model.ars.paired.n, model.ars.paired.mean_diff, model.ars.paired.ties)  # 2 tasks × 2
    proc = await anyio.run_process([sys.executable, "-m", "mpcbench_async", "compare", str(tmp_path / "A"),
                                    str(tmp_path / "B"), "--fail-on-regression"], check=False)
    assert (0, b"0 regression(s), 0 improvement(s), 0 new failure(s)\n") == (proc.returncode, proc.stderr)
