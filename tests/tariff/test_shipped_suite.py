"""The shipped tariff suite in fixture mode, and the original harness's cases live against sim/tariff."""

from __future__ import annotations

import msgspec

from mpcbench_async._prompts import load_prompts
from mpcbench_async.llm import LLMClient
from mpcbench_async.tariff import build_report, load_pack, load_suite, run_cases
from tests.conftest import REPO, reference_dir

SUITE = REPO / "storage" / "benchmarks" / "tariff"
PROMPTS = load_prompts(REPO / "prompt_config.json")


class TestFixtureMode:
    async def test_every_case_has_its_own_fixture_and_runs(self, tmp_path):
        """Each of the suite's cases replays its own recorded replies through the whole pipeline without error."""
        cases = load_suite(SUITE / "cases")
        assert 60 <= len(cases)
        assert sorted(f"{c.id}.json" for c in cases) == sorted(p.name for p in (SUITE / "fixtures").glob("*.json"))
        pack = load_pack(REPO / "storage" / "packs" / "tariff")
        first = await run_cases(cases, pack=pack, prompts=PROMPTS, mode="fixture", results_path=tmp_path / "a.jsonl",
                                fixtures_dir=SUITE / "fixtures")
        second = await run_cases(cases, pack=pack, prompts=PROMPTS, mode="fixture",
                                 results_path=tmp_path / "b.jsonl", fixtures_dir=SUITE / "fixtures")
        assert {"ok"} == {r.status for r in first}
        assert [msgspec.to_builtins(r.score) for r in first] == [msgspec.to_builtins(r.score) for r in second]
        report = build_report(first, suite="tariff", mode="fixture", model="fixture", created_at="t")
        assert (len(cases), 0) == (report.totals.cases, report.errors)


class TestReferenceSuite:
    async def test_original_cases_run_live_against_sim_tariff(self, sim, tmp_path):
        """The original harness's 72 cases load and run live against sim/tariff with the project's pack, no errors."""
        cases = load_suite(reference_dir("tariff_whitebox", "benchmarks_tariff", "cases"))
        assert 72 == len(cases)
        pack = load_pack(REPO / "storage" / "packs" / "tariff")
        async with LLMClient(sim_base_url=sim.base_url) as client:
            records = await run_cases(cases, pack=pack, prompts=PROMPTS, mode="live", model="sim/tariff",
                                      client=client, results_path=tmp_path / "r.jsonl",
                                      fixtures_dir=tmp_path / "unused")
        assert (72, {"ok"}) == (len(records), {r.status for r in records})
