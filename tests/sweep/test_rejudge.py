"""A run redone because its record was lost is judged again: the verdict on disk judged the lost run."""

from __future__ import annotations

from pathlib import Path

import orjson

from mpcbench_async.mpcbench import MPCBenchSuite
from mpcbench_async.runner import Runner
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import summarize
from tests.sweep.conftest import plan_of


async def test_a_redone_run_is_rejudged_and_its_new_verdict_counts(workspace, tmp_path: Path) -> None:
    out = tmp_path / "out"
    async with SimServer(seed=5) as sim:
        root = workspace(sim.base_url)
        config, prompts, plan = plan_of(root)
        async with Runner(config, out_dir=out, concurrency=4) as runner:
            await runner.run(MPCBenchSuite(plan, prompts))
        runs = (out / "runs.jsonl").read_bytes().splitlines(keepends=True)
        lost = orjson.loads(runs[0])
        # The first run's line is damaged (a disk fault): it no longer decodes as a run record.
        (out / "runs.jsonl").write_bytes(b'{"key": "' + lost["key"].encode() + b'"}\n' + b"".join(runs[1:]))
        sim.reset()
        async with Runner(config, out_dir=out, concurrency=4) as runner:
            stats = await runner.run(MPCBenchSuite(plan, prompts))
        assert stats.runs_done == 1 and stats.runs_skipped == plan.agent_unit_count - 1
        assert stats.judges_done == len(plan.judge_models)
        judge_keys = {unit.key for unit in plan.judge_units(lost["key"])}
        calls = sim.stats.received  # per call key: exactly the lost run's calls and one verdict per judge
        assert {key.split("/")[0] for key in calls} == {lost["key"], *judge_keys}
        assert sum(n for key, n in calls.items() if key.startswith("judge-")) == len(judge_keys)
    judgements = [orjson.loads(line) for line in (out / "judgements.jsonl").read_bytes().splitlines()]
    assert sum(j["run_key"] == lost["key"] for j in judgements) == 2  # the stale verdict and the new one
    summary = summarize(out)
    assert summary.judgements == plan.judge_unit_count
    assert summary.stale_judgements == 1
