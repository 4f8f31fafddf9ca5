"""The original tariff harness's own answers, replayed: 72/72 under ``--scoring original``, as it reports them.

The original records one fixture per chapter or case type; ``tariff convert-fixtures`` picks each case's as the
original's resolver does and converts its proposals. Replayed through the whole pipeline with the original pack
under the original's rules, every case scores as the original harness's report has it: 1.0, passed, the same final
code (the code after the lever; the proposal's code for the refusals, which the original also shows). The same
answers under the project's rules score 43/72 (the differences are the README's table).

Also here: fixtures cannot go stale. A fixture's content and the scoring mode are part of each case's key, so an
edited fixture reruns that case alone and a scoring change rescores every case.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import msgspec
import pytest

from mpcbench_async._prompts import load_prompts
from mpcbench_async.tariff import load_pack, load_suite, run_cases
from mpcbench_async.tariff._report import BenchmarkReport
from tests.conftest import REPO, reference_dir
from tests.tariff.conftest import make_case

# The original harness's report on its own fixtures: the final code of each fixture's answer (None: it names none).
FINAL_CODE = {"fixture_positive.json": "6402.99", "fixture_ch73.json": "7318.15", "fixture_ch84.json": "8413.70",
              "fixture_ch85.json": "8544.11", "fixture_missing_evidence.json": "8544.11",
              "fixture_no_savings.json": "6404.11.90", "fixture_negative.json": None}
# Which fixture the original's resolver gives each case, by the case's id prefix.
FIXTURE_OF = {"tariff_neg_0": "fixture_negative.json", "tariff_neg_1": "fixture_missing_evidence.json",
              "tariff_nos_": "fixture_no_savings.json", "tariff_adv_": "fixture_positive.json"}
PROJECT_PASSED = {"negative": 6, "no_savings": 2, "positive": 20, "savings_possible": 15}


def _fixture_of(case_id: str, tags: list[str], case_type: str) -> str:
    for prefix, name in FIXTURE_OF.items():
        if case_id.startswith(prefix):
            return name
    for tag in tags:
        if tag in ("chapter_73", "chapter_84", "chapter_85"):
            return f"fixture_ch{tag[-2:]}.json"
    return "fixture_positive.json"


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    """The reference cases with their fixtures converted by the documented command."""
    root = reference_dir("tariff_whitebox")
    suite = tmp_path_factory.mktemp("original") / "suite"
    shutil.copytree(root / "benchmarks_tariff" / "cases", suite / "cases")
    done = _cli("tariff", "convert-fixtures", str(root / "benchmarks_tariff" / "fixtures"), "--cases",
                str(suite / "cases"), "--out", str(suite / "fixtures"))
    assert (0, "72 fixture(s) -> " + str(suite / "fixtures") + "/") == (done.returncode, done.stdout.splitlines()[-1])
    return suite


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mpcbench_async", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def _run(suite: Path, out: Path, scoring: str) -> tuple[subprocess.CompletedProcess[str], BenchmarkReport]:
    pack = reference_dir("tariff_whitebox", "packs_tariff")
    done = _cli("tariff", "run", "--path", str(suite), "--pack", str(pack), "--scoring", scoring, "--out", str(out))
    [report] = out.glob("*_benchmark_*.json")
    return done, msgspec.json.decode(report.read_bytes(), type=BenchmarkReport)


class TestOriginalAnswers:
    def test_they_score_72_of_72_as_the_original_reports_them(self, suite, tmp_path):
        done, report = _run(suite, tmp_path, "original")
        assert (0, "tariff (fixture, replies recorded from original:fixture_positive.json, original:fixture_ch85.json, "
                "original:fixture_ch84.json and 4 more, original scoring): 72/72 passed (100.0%), average score 1.000, "
                "0 error(s)") == (done.returncode, done.stdout.splitlines()[0])
        cases = {c.id: c for c in load_suite(suite / "cases")}
        expected = {cid: (1.0, True, FINAL_CODE[_fixture_of(cid, c.notes.tags, c.case_type)], [])
                    for cid, c in cases.items()}
        assert expected == {s.case_id: (s.score, s.passed, s.predicted_hts, s.penalties) for s in report.cases}
        assert "original" == report.scoring

    def test_under_the_project_rules_the_same_answers_score_43(self, suite, tmp_path):
        """The differences: the chapter-64 answers' baseline 6404.11.90 is scored (allowed, 0.75) where the original
        scores the lever's 6402.99; the missing-evidence cases are stopped by the citation gate (their answer cites
        chapter-85 evidence the bundle of chapter 64 lacks): verification_failed, not a missing-evidence refusal;
        two no-savings requests that name no goods get no chapter-64 evidence among their 14 best notes."""
        _, report = _run(suite, tmp_path, "project")
        passed = Counter(s.case_type for s in report.cases if s.passed)
        assert (43, PROJECT_PASSED, "project") == (report.totals.passed, dict(sorted(passed.items())), report.scoring)


class TestFixturesCannotGoStale:
    async def test_an_edited_fixture_reruns_its_case_and_a_scoring_change_rescores_all(self, suite, tmp_path):
        cases = load_suite(suite / "cases")[:6]
        fixtures = tmp_path / "fixtures"
        shutil.copytree(suite / "fixtures", fixtures)
        pack = load_pack(reference_dir("tariff_whitebox", "packs_tariff"))
        prompts = load_prompts(REPO / "prompt_config.json")
        ran: list[str] = []

        async def run(scoring: str) -> list[str]:
            ran.clear()
            await run_cases(cases, pack=pack, prompts=prompts, mode="fixture", results_path=tmp_path / "r.jsonl",
                            fixtures_dir=fixtures, scoring=scoring, handle_signals=False,
                            on_record=lambda record: ran.append(record.case_id))
            return sorted(ran)

        assert sorted(c.id for c in cases) == await run("original")
        assert [] == await run("original")  # nothing changed: every case resumes
        edited = fixtures / f"{cases[2].id}.json"
        fixture = msgspec.json.decode(edited.read_bytes())
        changed = fixture["replies"][-1].replace('"GRI_6"', '"GRI6"')  # a re-recorded last reply
        assert changed != fixture["replies"][-1]
        fixture["replies"][-1] = changed
        edited.write_bytes(msgspec.json.encode(fixture))
        assert [cases[2].id] == await run("original")
        assert sorted(c.id for c in cases) == await run("project")


class TestConvertFixturesCommand:
    """Runs without the reference folder: its own small original fixtures."""

    def _suite(self, tmp_path: Path) -> Path:
        cases = tmp_path / "cases" / "positive"
        cases.mkdir(parents=True)
        for case in (make_case(id="shoe", notes__tags=["chapter_64"]), make_case(id="lamp", case_type="negative",
                     expected__expected_accept=False, expected__expected_refusal_category="insufficient_info")):
            (cases / f"{case.id}.json").write_bytes(msgspec.json.encode(case))
        return tmp_path

    def test_a_broken_original_fixture_is_one_line_naming_it(self, tmp_path):
        root = self._suite(tmp_path)
        (root / "orig").mkdir()
        (root / "orig" / "fixture_positive.json").write_text('{"proposals": "none"}')
        done = _cli("tariff", "convert-fixtures", str(root / "orig"), "--cases", str(root / "cases"), "--out",
                    str(root / "fixtures"))
        assert (2, f"error: {root / 'orig' / 'fixture_positive.json'}: Expected `array`, got `str` - at "
                "`$.proposals`") == (done.returncode, done.stderr.strip().splitlines()[-1])

    def test_cases_without_an_original_fixture_are_listed_and_exit_1(self, tmp_path):
        root = self._suite(tmp_path)
        (root / "orig").mkdir()
        proposal = {"baseline": {"hts_code": "6404.11.90", "duty_rate_pct": 20.0},
                    "optimized": {"hts_code": "6404.11.90", "duty_rate_pct": 20.0, "rationale": "No savings."}}
        (root / "orig" / "fixture_positive.json").write_bytes(msgspec.json.encode({"proposals": [proposal]}))
        done = _cli("tariff", "convert-fixtures", str(root / "orig"), "--cases", str(root / "cases"), "--out",
                    str(root / "fixtures"))
        assert (1, "fixture_positive.json: 1 case(s)", "no original fixture for 1 case(s): lamp") == (
            done.returncode, done.stdout.splitlines()[0], done.stderr.strip())
        fixture = msgspec.json.decode((root / "fixtures" / "shoe.json").read_bytes())
        assert ("original:fixture_positive.json", 3) == (fixture["model"], len(fixture["replies"]))
        assert {"decision": "accept", "questions": [], "gri_steps": [], "hts_code": "6404.11.90",
                "baseline_duty_pct": 20.0, "savings_note": "No savings.", "what_if": [],
                "optimized_duty_pct": 20.0} == msgspec.json.decode(fixture["replies"][0])
