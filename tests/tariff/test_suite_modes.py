"""``TariffSuite`` in every mode through ``Runner.run_suites``: the one copy of "run a tariff case" (issue 13, point 1).

``tariff run`` and a sweep's ``--suite tariff`` go through it; ``tariff.run_cases`` calls the same
``tariff.run_case``, so both write the same records under the same keys.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from mpcbench_async import ModelConfig
from mpcbench_async._prompts import load_prompts
from mpcbench_async.runner import Outcome, Runner
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.tariff import FixtureTransport, Mode, TariffCaseRecord, TariffSuite, run_cases
from tests.conftest import REPO
from tests.tariff.test_runner import CASES

PROMPTS = load_prompts(REPO / "prompt_config.json")
TIMES = {"started_at", "finished_at", "elapsed_s"}


def sim_config(base_url: str) -> ModelConfig:
    return ModelConfig.from_dict({"defaults": {"base_url": base_url}})


async def run_suite(pack, out: Path, mode: Mode, *, config: ModelConfig, model: str, fixtures: Path,
                    transport: FixtureTransport | None = None) -> tuple[Outcome, TariffSuite, Runner]:
    suite = TariffSuite("toy", CASES, pack=pack, prompts=PROMPTS, model=model, config=config, mode=mode,
                        fixtures_dir=fixtures, name=f"toy_{mode}")
    async with Runner(config, out_dir=out, transport=transport) as runner:
        [outcome] = await runner.run_suites([suite])
    return outcome, suite, runner


def untimed(records: list[TariffCaseRecord]) -> list[dict]:
    return [{k: v for k, v in msgspec.to_builtins(r).items() if k not in TIMES} for r in records]


class TestTariffSuiteModes:
    async def test_record_then_fixture_through_the_runner_matches_run_cases(self, pack, tmp_path, sim):
        """Record mode writes one fixture per case; fixture mode replays them through the Runner's client to the
        recorded scores, and ``run_cases`` over the same fixtures writes the same records under the same keys."""
        fixtures = tmp_path / "fixtures"
        recorded, rec_suite, _ = await run_suite(pack, tmp_path / "rec", "record", config=sim_config(sim.base_url),
                                                 model="sim/tariff", fixtures=fixtures)
        replayed, fix_suite, runner = await run_suite(pack, tmp_path / "fix", "fixture", config=ModelConfig(),
                                                      model="fixture", fixtures=fixtures,
                                                      transport=FixtureTransport(fixtures))
        assert sorted(f"{c.id}.json" for c in CASES) == sorted(p.name for p in fixtures.iterdir())
        assert [Outcome(units=4, ok=4)] * 2 == [recorded, replayed]
        assert [(r.case_id, r.score.score) for r in rec_suite.records] == [
            (r.case_id, r.score.score) for r in fix_suite.records]
        assert ["record"] * 4 + ["fixture"] * 4 == [r.mode for r in rec_suite.records + fix_suite.records]
        assert runner.stats.calls == sum(len(r.result.iterations) for r in fix_suite.records)  # through the client
        direct = await run_cases(CASES, pack=pack, prompts=PROMPTS, mode="fixture", fixtures_dir=fixtures,
                                 results_path=tmp_path / "direct.jsonl")
        assert untimed(direct) == untimed(fix_suite.records)
        report = msgspec.to_builtins(fix_suite.report)
        assert ("toy", "fixture", "fixture", 4) == (report["suite"], report["mode"], report["model"],
                                                    report["totals"]["cases"])
        assert {"toy_fixture.json", "toy_fixture.md", "toy_fixture.jsonl", "toy_fixture.keys", "calls.jsonl",
                ".lock"} == {
            p.name for p in (tmp_path / "fix").iterdir()}

    async def test_a_fixture_run_resumes_what_run_cases_wrote(self, pack, tmp_path, sim):
        """Same keys: the suite over ``run_cases``' results file runs nothing again and reports every case."""
        fixtures = tmp_path / "fixtures"
        await run_suite(pack, tmp_path / "rec", "record", config=sim_config(sim.base_url), model="sim/tariff",
                        fixtures=fixtures)
        await run_cases(CASES, pack=pack, prompts=PROMPTS, mode="fixture", fixtures_dir=fixtures,
                        results_path=tmp_path / "fix" / "toy_fixture.jsonl")
        outcome, suite, runner = await run_suite(pack, tmp_path / "fix", "fixture", config=ModelConfig(),
                                                 model="fixture", fixtures=fixtures,
                                                 transport=FixtureTransport(fixtures))
        records, _ = read_jsonl(tmp_path / "fix" / "toy_fixture.jsonl", type_=TariffCaseRecord)
        assert (Outcome(units=4, ok=4), 4, 4, 0, 4) == (outcome, runner.stats.cases_skipped, len(records),
                                                       runner.stats.calls, len(suite.records))

    def test_record_mode_needs_a_fixtures_directory(self, pack):
        """Where record mode writes is not optional."""
        with pytest.raises(ValueError, match="needs fixtures_dir"):
            TariffSuite("toy", CASES, pack=pack, prompts=PROMPTS, model="sim/tariff", config=None, mode="record")


class TestTariffRunCommand:
    def test_the_shipped_suite_in_fixture_mode_writes_its_results_and_report_only(self, tmp_path):
        """`tariff run` (through the Runner) prints the shipped suite's scores, one progress line per case, and writes
        the results file (and its done-index) and the report; no calls log (besides them only the runs directory's
        lock file, unlocked).
        A rerun resumes: no progress lines, the same summary."""
        command = [sys.executable, "-m", "mpcbench_async", "tariff", "run", "--out", str(tmp_path)]
        first = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO)
        summary = ("tariff (fixture, replies recorded from sim/tariff, project scoring): 37/72 passed (51.4%), average "
                   "score 0.549, 0 error(s)")
        assert (0, summary, 72) == (first.returncode, first.stdout.splitlines()[0], len(first.stderr.splitlines()))
        assert {".lock", "tariff_fixture_fixture.jsonl", "tariff_fixture_fixture.keys"} == {
            p.name for p in (tmp_path / "runs").iterdir()}
        [report] = tmp_path.glob("tariff_benchmark_*.json")
        assert {"runs", report.name, report.with_suffix(".md").name} == {p.name for p in tmp_path.iterdir()}
        again = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO)
        assert (0, summary, "") == (again.returncode, again.stdout.splitlines()[0], again.stderr)


class TestFromAnEmptyDirectory:
    async def test_no_suite_directory_says_suites_are_not_shipped(self, tmp_path, monkeypatch):
        """Run where no storage/benchmarks/ is (as from a wheel): one error that says why and what to do."""
        from mpcbench_async._exceptions import InputError
        from mpcbench_async.sweep import TariffRunOptions, run_tariff

        monkeypatch.chdir(tmp_path)
        with pytest.raises(InputError) as exc:
            await run_tariff(TariffRunOptions())
        assert ("storage/benchmarks/tariff: no such suite directory. Tariff suites are not shipped in the package (a "
                "clone of the repository has them under storage/benchmarks/): run from a clone, or set the suite's "
                "directory, one holding cases/ and fixtures/ (``path``)") == str(exc.value)
        assert [] == list(tmp_path.iterdir())  # nothing written


class TestRecordedModels:
    def test_most_cases_first_and_unreadable_fixtures_skipped(self, tmp_path):
        from mpcbench_async.tariff import recorded_models

        for name, model in (("a", "m2"), ("b", "m1"), ("c", "m1"), ("d", "")):
            (tmp_path / f"{name}.json").write_text(msgspec.json.encode(
                {"case_id": name, "model": model, "replies": []}).decode())
        (tmp_path / "torn.json").write_text('{"case_id": "x", "mod')
        assert ["m1", "m2"] == recorded_models(tmp_path)
        assert ["sim/tariff"] == recorded_models(REPO / "storage" / "benchmarks" / "tariff" / "fixtures")
