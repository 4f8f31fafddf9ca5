"""A unit that fails at run time fails alone: an error record for it, logged with key and model; the sweep goes on."""

from __future__ import annotations

import logging

from mpcbench_async.mpcbench import MPCBenchSuite
from mpcbench_async.mpcbench import _suite as mpcbench_suite
from mpcbench_async.runner import Runner
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from tests.sweep.conftest import plan_of

SECRET = "sk-abcdefghijklmnopqrst"
MASKED = "checks crashed on sk-*** near Authorization: Bearer ***"


def crash_for(task_id: str, real):
    """``run_checks`` that raises (quoting a key, as a careless parser might) for one task only."""

    def run_checks(task, answer, data):
        if task.task_id == task_id:
            raise RuntimeError(f"checks crashed on {SECRET} near Authorization: Bearer xyz123abc")
        return real(task, answer, data)

    return run_checks


class TestSweepUnits:
    async def test_a_crashing_unit_gets_an_error_record_and_every_other_unit_is_ok(
            self, workspace, tmp_path, monkeypatch, caplog):
        """Checks that raise for task t1: its 4 runs (2 models × 2 trials) are error records with the exception's
        class and masked message, not retryable, never judged; the other 12 runs and their 12 judgements are ok;
        each crash is logged at warning with its key and model."""
        monkeypatch.setattr(mpcbench_suite, "run_checks", crash_for("t1", mpcbench_suite.run_checks))
        out = tmp_path / "out"
        async with SimServer(seed=31) as sim:
            root = workspace(sim.base_url)
            config, prompts, plan = plan_of(root, trials=2)
            with caplog.at_level(logging.WARNING, logger="mpcbench_async.runner._runner"):
                async with Runner(config, out_dir=out) as runner:
                    stats = await runner.run(MPCBenchSuite(plan, prompts))
        runs, _ = read_jsonl(out / "runs.jsonl")
        judgements, _ = read_jsonl(out / "judgements.jsonl")
        failed = [r for r in runs if r["status"] == "error"]
        assert ({"t1"}, 4) == ({r["task_id"] for r in failed}, len(failed))
        assert {("RuntimeError", MASKED, False)} == {(r["error_class"], r["error_message"], r["retryable"])
                                                     for r in failed}
        assert all(r["run"]["final_answer"] is not None for r in failed)  # the run the checks choked on is kept
        assert (12, {"ok"}) == (len(runs) - 4, {r["status"] for r in runs if r["task_id"] != "t1"})
        assert (12, {"ok"}, set()) == (len(judgements), {j["status"] for j in judgements},
                                       {j["run_key"] for j in judgements} & {r["key"] for r in failed})
        assert (16, 12, 4) == (stats.runs_done, stats.judges_done, stats.errors)
        crashed = [r for r in caplog.records if r.getMessage() == "unit.crashed"]
        assert sorted((r["key"], r["model"]) for r in failed) == sorted((r.key, r.model) for r in crashed)
        assert {("WARNING", "agent_run", "RuntimeError", MASKED)} == {
            (r.levelname, r.kind, r.error_class, r.error_message) for r in crashed}
        assert SECRET not in (out / "runs.jsonl").read_text()
