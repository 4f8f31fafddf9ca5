"""The whole ``sweep`` and ``tariff run`` commands as library calls, no CLI (issue 13, point 1).

``run_sweep`` checks the inputs, runs every suite through one Runner and writes the manifest, the key list and the
summary; ``run_tariff`` runs a tariff suite and writes its report. Each returns what the CLI prints and maps to an
exit code.
"""

from __future__ import annotations

import platform
from pathlib import Path

import orjson
import pytest

from mpcbench_async._exceptions import InputError
from mpcbench_async.report import render_table
from mpcbench_async.runner import Outcome, Runner
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import SweepOptions, TariffRunOptions, run_sweep, run_tariff, summarize
from tests.conftest import REPO
from tests.sweep.conftest import plan_of
from tests.sweep_options import sweep_options

FILES = [".lock", "calls.jsonl", "certificate_baselines.json", "experiment_keys.plan", "experiment_keys.txt",
         "judgements.jsonl", "judgements.keys", "ledger.jsonl", "manifest.json", "runs.jsonl", "runs.keys",
         "summary.inputs.json", "summary.json", "summary.md"]


def options(root: Path, out: Path, **changes) -> SweepOptions:
    return sweep_options(config=root / "model_config.json", prompts=root / "prompt_config.json", out=out,
                        tasks_dir=root / "tasks", data_dir=root / "data", scenarios_dir=root / "scenarios",
                        handle_signals=False, **changes)


class TestRunSweep:
    async def test_one_call_runs_the_sweep_writes_every_file_and_says_how_the_plan_stands(self, workspace, tmp_path):
        """Every agent run and judgement of the plan has an ok record; the files the CLI leaves are there; the
        table is the summary's (by the second call, over both invocations); the progress hook saw the runner.
        A second call makes no request and says the same."""
        out = tmp_path / "out"
        seen: list[Runner] = []

        async def progress(runner: Runner) -> None:
            seen.append(runner)

        async with SimServer(seed=41) as sim:
            root = workspace(sim.base_url)
            _, _, plan = plan_of(root)
            result = await run_sweep(options(root, out), progress)
            requests = sum(sim.stats.received.values())
            again = await run_sweep(options(root, out))
            assert requests == sum(sim.stats.received.values())
        units = plan.agent_unit_count + plan.judge_unit_count
        runs, _ = read_jsonl(out / "runs.jsonl")
        judgements, _ = read_jsonl(out / "judgements.jsonl")
        assert (Outcome(units=units, ok=units), False, out) == (result.outcome, result.interrupted, result.out)
        assert (plan.agent_unit_count, plan.judge_unit_count) == (len(runs), len(judgements))
        assert FILES == sorted(p.name for p in out.iterdir())
        assert render_table(summarize(out)) == again.table  # the first table's wall time is of one invocation
        assert all(model in result.table for model in [*plan.agent_models, *plan.judge_models])
        assert ([seen[0].stats.runs_done], again.outcome) == ([plan.agent_unit_count], result.outcome)
        manifest = orjson.loads((out / "manifest.json").read_bytes())
        assert ("mpcbench_async.sweep.run_sweep", [False, False]) == (
            manifest["command"], [entry["interrupted"] for entry in manifest["history"]])

    async def test_the_wall_time_runs_from_the_invocations_start(self, workspace, tmp_path, monkeypatch):
        """The manifest's start is the first moment of run_sweep, before the inputs are read and an executor (a Ray
        instance: 20 s) starts, not when the manifest is built: a Ray sweep of 27 s said "wall time 3.1 s"."""
        import datetime as real

        from mpcbench_async.sweep import _job

        ticks: list[str] = []

        class Clock(real.datetime):
            @classmethod
            def now(cls, tz=None):  # each reading 10 s after the last, from 2026-01-01
                moment = real.datetime(2026, 1, 1, tzinfo=real.UTC) + real.timedelta(seconds=10 * len(ticks))
                ticks.append(moment.isoformat())
                return moment

        monkeypatch.setattr(_job, "datetime", Clock)
        inputs = _job._inputs

        def slow_inputs(options):  # 10 s pass before the manifest is built, as while Ray starts
            Clock.now()
            return inputs(options)

        monkeypatch.setattr(_job, "_inputs", slow_inputs)
        async with SimServer(seed=41) as sim:
            await run_sweep(options(workspace(sim.base_url), tmp_path / "out", certificate=False))
        [invocation] = orjson.loads((tmp_path / "out" / "manifest.json").read_bytes())["history"]
        assert (ticks[0], ticks[-1]) == (invocation["started_at"], invocation["finished_at"])

    async def test_bad_options_are_refused_before_anything_is_written(self, tmp_path):
        """An unknown suite or a concurrency below 1 is an InputError naming the option; --out stays absent."""
        out = tmp_path / "out"
        with pytest.raises(InputError,
                           match=r"^suites: unknown suite\(s\) nope; available: hscodecomp, levels, mpcbench, tariff"):
            await run_sweep(sweep_options(out=out, suites=["mpcbench", "nope"]))
        with pytest.raises(InputError, match="^concurrency must be at least 1, got 0$"):
            await run_sweep(sweep_options(out=out, concurrency=0))
        assert not out.exists()


class TestRunTariff:
    async def test_the_shipped_suite_in_fixture_mode_through_the_library(self, tmp_path):
        """Fixture mode replays the recorded replies: the report's totals are the CLI's, each case's record comes
        back (and was seen by ``on_record`` with the suite's size), the report files are written."""
        seen: list[tuple[str, int]] = []
        result = await run_tariff(
            TariffRunOptions(path=REPO / "storage/benchmarks/tariff", pack=REPO / "storage/packs/tariff",
                             prompts=REPO / "prompt_config.json", out=tmp_path, handle_signals=False),
            lambda record, cases: seen.append((record.case_id, cases)))
        t = result.report.totals
        assert (37, 72, 72, 0, False) == (t.passed, t.cases, result.cases, result.report.errors, result.interrupted)
        assert sorted(r.case_id for r in result.records) == sorted(case for case, _ in seen)
        assert ({72}, "sim/tariff", tmp_path / "runs" / "tariff_fixture_fixture.jsonl") == (
            {cases for _, cases in seen}, result.model, result.results)
        assert result.report_base.with_suffix(".json").exists() and result.report_base.with_suffix(".md").exists()


class TestSweepTariffScoring:
    async def test_the_scoring_mode_is_recorded_and_a_change_rescores_every_case(self, tmp_path):
        """``sweep --suite tariff --scoring original``: the manifest and the report name the mode; the same sweep
        under the project's rules reruns every case (the mode is in their keys) instead of reusing the records."""
        from tests.sweep.test_exit_codes import tariff_suite  # three shipped cases as a suite

        out = tmp_path / "out"
        async with SimServer(seed=43) as sim:
            suite, _ = tariff_suite(tmp_path, sim.base_url)
            common = {"config": tmp_path / "model_config.json", "prompts": REPO / "prompt_config.json", "out": out,
                      "suites": ["tariff"], "tariff_path": suite, "pack": REPO / "storage/packs/tariff",
                      "handle_signals": False}
            first = await run_sweep(sweep_options(**common, tariff_scoring="original"))
            original = orjson.loads((out / "tariff_sim_tariff.json").read_bytes())
            manifest = orjson.loads((out / "manifest.json").read_bytes())
            await run_sweep(sweep_options(**common))
            project = orjson.loads((out / "tariff_sim_tariff.json").read_bytes())
        records, _ = read_jsonl(out / "tariff_sim_tariff.jsonl")
        assert ("original", "original", "project") == (manifest["tariff_scoring"], original["scoring"],
                                                       project["scoring"])
        assert "tariff (original scoring)" in first.table
        assert (["original"] * 3 + ["project"] * 3, 6) == ([r["scoring"] for r in records], len({r["key"]
                                                                                              for r in records}))


class TestFailedStart:
    """A sweep writes nothing into ``--out`` until every input is checked and the first unit is about to run
    (issue 27, point 6): a failed start leaves the directory as it found it, so the corrected rerun is no
    "changed experiment"."""

    @staticmethod
    def keyed_models(root: Path, base_url: str) -> None:
        """The workspace's agent and judge as models that need the key variable MPCB_JOB_TEST_KEY."""
        path = root / "model_config.json"
        models = {"gpt-agent": {"model": "sim/lazy-agent", "base_url": base_url, "api_key_env": "MPCB_JOB_TEST_KEY"},
                  "gpt-judge": {"model": "sim/judge", "base_url": base_url, "api_key_env": "MPCB_JOB_TEST_KEY"}}
        path.write_bytes(orjson.dumps({**orjson.loads(path.read_bytes()), "models": models,
                                       "agent_models": ["gpt-agent"], "judge_models": ["gpt-judge"]}))

    @pytest.mark.parametrize("before", ["absent", "empty", "other files"])
    async def test_a_missing_key_leaves_out_as_it_was_and_the_corrected_rerun_runs(self, workspace, tmp_path,
                                                                                   monkeypatch, before):
        """A missing key fails the start: ``out`` (absent with its parent, empty, or holding someone's files) lists
        the same before and after, no lock file, no manifest, no request. The rerun with the key and another
        max_turns then runs every unit as experiment 1."""
        from mpcbench_async import MissingAPIKeyError

        out = tmp_path / "parent" / "out"
        if before != "absent":
            out.mkdir(parents=True)
        if before == "other files":
            (out / "notes.txt").write_text("mine")
        listing = sorted(p.name for p in out.iterdir()) if out.exists() else None
        monkeypatch.delenv("MPCB_JOB_TEST_KEY", raising=False)
        async with SimServer(seed=44) as sim:
            root = workspace(sim.base_url)
            self.keyed_models(root, sim.base_url)
            with pytest.raises(MissingAPIKeyError, match="^model 'gpt-agent' needs an API key"):
                await run_sweep(options(root, out))
            after = sorted(p.name for p in out.iterdir()) if out.exists() else None
            parent_kept = (tmp_path / "parent").exists()
            assert ({}, listing, before != "absent") == (sim.stats.received, after, parent_kept)
            monkeypatch.setenv("MPCB_JOB_TEST_KEY", "sk-job-test-key")
            result = await run_sweep(options(root, out, max_turns=8))
        manifest = orjson.loads((out / "manifest.json").read_bytes())
        assert result.outcome == Outcome(units=result.outcome.units, ok=result.outcome.units) and result.outcome.units
        assert (8, 1, 1) == (manifest["fingerprint"]["max_turns"], manifest["experiment"], len(manifest["history"]))

    async def test_a_refused_rerun_leaves_the_directory_byte_for_byte(self, workspace, tmp_path):
        """A rerun refused as a changed experiment writes nothing: every file of the first sweep keeps its bytes,
        the lock file naming the earlier sweep's pid too."""
        out = tmp_path / "out"
        async with SimServer(seed=45) as sim:
            root = workspace(sim.base_url)
            await run_sweep(options(root, out))
            (out / ".lock").write_text("99999\n")  # as a sweep of another process leaves it
            files = {p.name: p.read_bytes() for p in out.iterdir()}
            with pytest.raises(InputError, match="this sweep changes what its results depend on"):
                await run_sweep(options(root, out, max_turns=8))
        assert files == {p.name: p.read_bytes() for p in out.iterdir()}


def test_the_manifest_versions_are_the_installed_distributions_versions():
    """Read from the metadata's headers only (issue 31: not the long description), they are what
    ``importlib.metadata.version`` says, for every package listed that is installed."""
    from importlib import metadata

    from mpcbench_async.sweep._job import _versions

    expected = {}
    for name in ("mpcbench-async", "aiohttp", "openai", "msgspec", "anyio", "tenacity"):
        try:
            expected[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    assert {"python": platform.python_version(), **expected} == _versions()
