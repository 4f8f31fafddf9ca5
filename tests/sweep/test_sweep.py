"""Sweeps end to end against a seeded sim: faults, resume after SIGKILL, targeted reruns."""

from __future__ import annotations

import os
import signal
import sys
from collections import Counter
from pathlib import Path

import anyio
import orjson
import pytest

from mpcbench_async.mpcbench import MPCBenchSuite
from mpcbench_async.runner import Runner
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import FaultSpec, SimServer
from mpcbench_async.sweep import summarize
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import plan_of


async def run_sweep(root: Path, out: Path, *, trials: int = 2, concurrency: int = 8):
    config, prompts, plan = plan_of(root, trials=trials)
    async with Runner(config, out_dir=out, concurrency=concurrency) as runner:
        stats = await runner.run(MPCBenchSuite(plan, prompts))
    return plan, stats


def records(path: Path, *, strict: bool = True) -> list[dict]:
    """Records of a JSONL file; ``strict`` also requires no torn or bad line (false between kills)."""
    found, report = read_jsonl(path)
    if strict:
        assert not report.torn_tail and not report.bad_lines
    return found


class TestFaults:
    async def test_twenty_percent_mixed_faults_still_finish_every_unit_ok(self, workspace, tmp_path):
        """With 20% of requests failing (429, 5xx, timeouts, drops) every unit still ends ok."""
        faults = FaultSpec(p429=0.06, p500=0.04, p502=0.03, p503=0.03, ptimeout=0.02, pdrop=0.02,
                           retry_after_ms=5, hang_s=5)
        async with SimServer(seed=11, defaults=faults) as sim:
            root = workspace(sim.base_url)
            plan, stats = await run_sweep(root, tmp_path / "out")
        runs = records(tmp_path / "out" / "runs.jsonl")
        judgements = records(tmp_path / "out" / "judgements.jsonl")
        assert (16, 16) == (len(runs), len(judgements))
        assert {"ok"} == {r["status"] for r in runs + judgements}
        assert sum(sim.stats.faults.values()) > 0
        assert all(count == 1 for count in sim.stats.completed.values())
        assert 0 < stats.retries

    async def test_summary_counts_what_was_run(self, workspace, tmp_path):
        """The summary rebuilt from JSONL has one row per agent model with every run scored."""
        async with SimServer(seed=2) as sim:
            await run_sweep(workspace(sim.base_url), tmp_path / "out", trials=3)
        summary = summarize(tmp_path / "out")
        assert ["sim/echo", "sim/lazy-agent"] == [m.model for m in summary.models]
        for model in summary.models:
            # the workspace's tasks have nothing to check: every run is unverified, no task is a trial of pass^k
            assert (12, 12, 0, 12, 4, 0, 0) == (model.runs, model.ok, model.errors, model.unverified, model.tasks,
                                                model.tasks_checked, model.k)
            assert 12 == model.judges[0].scored


class TestResume:
    async def test_rerun_skips_everything_already_done(self, workspace, tmp_path):
        """Running the same sweep again makes no model calls at all."""
        async with SimServer(seed=3) as sim:
            root = workspace(sim.base_url)
            await run_sweep(root, tmp_path / "out")
            before = sim.stats.total_received
            _, stats = await run_sweep(root, tmp_path / "out")
        assert before == sim.stats.total_received
        assert (16, 16, 0, 0) == (stats.runs_skipped, stats.judges_skipped, stats.runs_done, stats.judges_done)

    async def test_editing_one_task_reruns_only_its_units(self, workspace, tmp_path):
        """A changed task file gets new keys: only its runs and judgements are redone."""
        async with SimServer(seed=4) as sim:
            root = workspace(sim.base_url)
            await run_sweep(root, tmp_path / "out")
            path = root / "tasks" / "planning" / "t0.json"
            task = orjson.loads(path.read_bytes())
            task["user_prompt"] += " Please be brief."
            path.write_bytes(orjson.dumps(task))
            _, stats = await run_sweep(root, tmp_path / "out")
        assert (4, 4, 12, 12) == (stats.runs_done, stats.judges_done, stats.runs_skipped, stats.judges_skipped)
        new = records(tmp_path / "out" / "runs.jsonl")[16:]
        assert {"t0"} == {r["task_id"] for r in new}

    async def test_infrastructure_errors_are_rerun_on_resume(self, workspace, tmp_path):
        """A unit that ended in a retryable error runs again on the next invocation; ok units do not."""
        async with SimServer(seed=5, defaults=FaultSpec(p503=1.0)) as sim:
            root = workspace(sim.base_url)
            config = orjson.loads((root / "model_config.json").read_bytes())
            config["defaults"]["retry"]["max_attempts"] = 2
            (root / "model_config.json").write_bytes(orjson.dumps(config))
            await run_sweep(root, tmp_path / "out", trials=1)
            failed = records(tmp_path / "out" / "runs.jsonl")
            assert {("error", True)} == {(r["status"], r["retryable"]) for r in failed}
            sim.defaults = FaultSpec()
            _, stats = await run_sweep(root, tmp_path / "out", trials=1)
        assert (8, 8) == (stats.runs_done, stats.judges_done)
        latest = {r["key"]: r["status"] for r in records(tmp_path / "out" / "runs.jsonl")}
        assert {"ok"} == set(latest.values())


    async def test_a_resumed_unit_draws_new_sim_faults_and_the_runs_stay_reproducible(self, tmp_path):
        """The embedded sim (a new server every invocation) fails half the requests with 500 and a call has 2
        attempts: some units end in an error. Their resumed tries draw new faults (the sim seeds them by request key,
        attempt and the unit's earlier tries), so reruns finish every unit; the same invocations into another
        directory give the same records, invocation by invocation."""
        root = write_workspace(tmp_path / "ws", agent_models=("sim/echo?p500=0.5",), judge_models=("sim/judge",),
                               defaults={"retry": {"initial_backoff": 0.001, "max_backoff": 0.002,
                                                   "max_attempts": 2}})

        async def invocations(out: Path) -> list[list[tuple[tuple[str, str], int]]]:
            """After each invocation: how many records of each key have each status."""
            seen = []
            for _ in range(5):
                await run_sweep(root, out, trials=2)
                seen.append(sorted(Counter((r["key"], r["status"]) for r in records(out / "runs.jsonl")).items()))
            return seen

        first = await invocations(tmp_path / "a")
        assert first == await invocations(tmp_path / "b")
        assert any(status == "error" for (_, status), _ in first[0])
        ok = {key for (key, status), _ in first[-1] if status == "ok"}
        assert 8 == len(ok) == len({key for (key, _), _ in first[-1]})  # every unit ended ok at last

    async def test_a_judgement_of_an_earlier_run_does_not_count_as_done(self, workspace, tmp_path):
        """A run's record lost (a damaged runs.jsonl) is made again and judged again; when that fresh judgement's
        record is lost too, the resume judges the run once more: the judgement left on disk judged the earlier run
        (stale, the summary leaves it out), so it is not done. Before, the resume skipped it and the summary
        counted 15 of 16 judgements forever. (bench/chaos.py found it.)"""
        out = tmp_path / "out"
        async with SimServer(seed=6) as sim:
            root = workspace(sim.base_url)
            await run_sweep(root, out)
            runs = (out / "runs.jsonl").read_bytes().splitlines(keepends=True)
            lost = orjson.loads(runs[3])["key"]
            (out / "runs.jsonl").write_bytes(b"".join(runs[:3] + runs[4:]))
            _, stats = await run_sweep(root, out)
            assert (1, 1) == (stats.runs_done, stats.judges_done)  # the run made again is judged again
            judged = (out / "judgements.jsonl").read_bytes().splitlines(keepends=True)
            assert lost == orjson.loads(judged[-1])["run_key"]
            (out / "judgements.jsonl").write_bytes(b"".join(judged[:-1]))  # the fresh judgement lost
            _, stats = await run_sweep(root, out)
        assert (0, 1) == (stats.runs_done, stats.judges_done)
        summary = summarize(out)
        assert (16, 16, 1) == (summary.runs, summary.judgements, summary.stale_judgements)


SWEEP_SCRIPT = """
import sys
from mpcbench_async.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


class TestKill:
    @pytest.mark.parametrize("kill_after", [[3], [9, 20], [1, 14, 30]])
    async def test_sigkill_at_any_point_loses_and_duplicates_nothing(self, workspace, tmp_path, kill_after):
        """Killed after its N-th completed call and resumed, a sweep ends with one ok record per unit, and no call
        of a unit already on disk is ever made again."""
        out = tmp_path / "out"
        child: list[anyio.abc.Process] = []
        kills = list(kill_after)
        completed = Counter()

        def on_complete(key: str) -> None:
            completed[key] += 1
            if kills and sum(completed.values()) >= kills[0] and child:
                kills.pop(0)
                os.kill(child[0].pid, signal.SIGKILL)

        async with SimServer(seed=6, on_complete=on_complete, defaults=FaultSpec(latency_ms=2)) as sim:
            root = workspace(sim.base_url)
            cmd = [sys.executable, "-c", SWEEP_SCRIPT, "sweep", "--config", str(root / "model_config.json"),
                   "--prompts", str(root / "prompt_config.json"), "--tasks-dir", str(root / "tasks"),
                   "--data-dir", str(root / "data"), "--scenarios-dir", str(root / "scenarios"), "--trials", "2",
                   "--concurrency", "2", "--out", str(out), "--quiet"]
            codes = []
            for _ in range(len(kill_after) + 1):
                on_disk = {r["key"] for name in ("runs.jsonl", "judgements.jsonl")
                           for r in records(out / name, strict=False)}
                before = Counter(completed)
                async with await anyio.open_process(cmd, stdout=None, stderr=None) as proc:
                    child[:] = [proc]
                    codes.append(await proc.wait())
                repeated = [k for k in completed if completed[k] > before[k] and k.split("/")[0] in on_disk]
                assert [] == repeated
        assert -signal.SIGKILL in codes[:-1] and 0 == codes[-1]
        runs, judgements = records(out / "runs.jsonl"), records(out / "judgements.jsonl")
        ok_runs = Counter(r["key"] for r in runs if r["status"] == "ok")
        ok_judges = Counter(r["key"] for r in judgements if r["status"] == "ok")
        assert (16, {1}) == (len(ok_runs), set(ok_runs.values()))
        assert (16, {1}) == (len(ok_judges), set(ok_judges.values()))


class TestSummaryFromJsonl:
    def test_a_resumed_error_counts_once_as_ok(self, tmp_path):
        """A unit whose error record is followed by an ok record counts once, as ok; a lone error counts as error."""
        import msgspec

        from mpcbench_async.mpcbench import AgentRunRecord

        def run(key, status):
            return AgentRunRecord(key=key, status=status, task_id="t", task_type="planning", scenario_id="s",
                                  model="m", trial=0)

        lines = [run("a", "error"), run("b", "ok"), run("a", "ok"), run("c", "error")]
        (tmp_path / "runs.jsonl").write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in lines))
        [model] = summarize(tmp_path).models
        assert (3, 2, 1) == (model.runs, model.ok, model.errors)
