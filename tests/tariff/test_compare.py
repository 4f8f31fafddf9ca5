"""Reports and compare tell the truth: errors are failures, totals count every case, averages say their base."""

from __future__ import annotations

import subprocess
import sys

import msgspec
import pytest

from mpcbench_async.tariff import (
    BenchmarkReport,
    Dossier,
    TariffCaseRecord,
    VerificationResult,
    build_report,
    compare_reports,
    load_report,
    render_diff,
    render_report,
    score_case,
)
from mpcbench_async.tariff._report import GroupStats, MixedScoringError
from tests.conftest import REPO
from tests.tariff.conftest import make_case

CASES = [make_case(id="a"), make_case(id="b"), make_case(id="c", difficulty="hard"),
         make_case(id="n", case_type="negative", input__input="Classify it.", expected__expected_accept=False,
                   expected__preferred_hts=[], expected__expected_refusal_category="insufficient_info")]
BY_ID = {c.id: c for c in CASES}


def ok(case_id: str, code: str | None) -> TariffCaseRecord:
    """A finished case: accepted with ``code``, or refused as insufficient_info when ``code`` is None."""
    if code is None:
        result = VerificationResult(case_id=case_id, status="refused", refusal_category="insufficient_info",
                                    final_dossier=Dossier(decision="refuse", refusal_category="insufficient_info"))
    else:
        result = VerificationResult(case_id=case_id, status="accepted", critical_gates_passed=True,
                                    final_dossier=Dossier(decision="accept", hts_code=code, baseline_duty_pct=20.0))
    return TariffCaseRecord(key=f"k-{case_id}", status="ok", case_id=case_id, mode="fixture", model="m",
                            result=result, score=score_case(BY_ID[case_id], result))


def error(case_id: str) -> TariffCaseRecord:
    return TariffCaseRecord(key=f"k-{case_id}", status="error", case_id=case_id, mode="live", model="m",
                            retryable=True, error_class="LLMTimeoutError", error_message="no reply within 60 s")


def report(*records: TariffCaseRecord, cases=CASES, created_at="t") -> BenchmarkReport:
    return build_report(records, suite="s", mode="live", model="m", created_at=created_at, cases=cases)


BASELINE = report(ok("a", "6404.11.90"), ok("b", "6404.11.90"), ok("c", "6405.90.00"), ok("n", None))
CURRENT = report(ok("a", "6404.11.90"), error("b"), ok("c", "6404.11.90"), ok("n", None))


class TestReportTotals:
    def test_totals_count_every_case_with_errors_separate(self):
        """An errored case is in the totals as a failure scoring 0 and is also counted as an error."""
        assert GroupStats(cases=4, passed=3, errors=1, pass_rate=0.75, average_score=0.75) == CURRENT.totals
        assert (1, {"b": "no reply within 60 s"}) == (CURRENT.errors, CURRENT.error_cases)

    def test_errored_case_keeps_its_type_and_misses_every_prefix(self):
        """With the suite's cases known, an error is listed under its own case type and misses at every length."""
        [b] = [s for s in CURRENT.cases if s.case_id == "b"]
        assert ("positive", "easy", 0.0, False, "error", {"2": False, "4": False, "6": False, "8": False}, 0,
                ["LLMTimeoutError: no reply within 60 s"]) == (
            b.case_type, b.difficulty, b.score, b.passed, b.status, b.prefix_correct, b.digits_correct, b.penalties)
        assert GroupStats(cases=3, passed=2, errors=1, pass_rate=0.6667, average_score=0.6667) == \
            CURRENT.by_case_type["positive"]
        assert ({"2": 0.6667, "4": 0.6667, "6": 0.6667, "8": 0.6667}, {"2": 3, "4": 3, "6": 3, "8": 3}) == (
            CURRENT.prefix_accuracy, CURRENT.prefix_cases)

    def test_summary_line_says_what_the_average_is_over(self):
        """The Markdown summary gives passed, failed and errors, and says the average is over all cases."""
        text = render_report(CURRENT)
        assert ("Created t. 4 cases: 3 passed (75.0%), 0 failed, 1 errors (an error counts as a failure scoring 0). "
                "Average score 0.750 over all 4 cases.") in text
        assert "| positive | 3 | 2 | 1 | 66.7% | 0.667 |" in text
        assert ("| b | positive | easy | 0.00 | ✗ | error | – | error | 0 | LLMTimeoutError: no reply within 60 s |"
                in text)

    def test_cases_without_a_record_mark_the_report_partial(self):
        """Suite cases with no record (an interrupted run) are counted as not run and the report says partial."""
        partial = report(ok("a", "6404.11.90"))
        assert (1, 3) == (partial.totals.cases, partial.not_run)
        assert ("**Partial run**: 3 of 4 cases were not run; these figures cover only the cases that ran. Rerun the "
                "same command to resume.") in render_report(partial)

    def test_without_the_suite_an_error_is_an_unknown_type_failure(self):
        """Records alone still count an error as a failing case, under case type ``unknown``."""
        alone = build_report([ok("a", "6404.11.90"), error("b")], suite="s", mode="live", model="m", created_at="t")
        assert (GroupStats(cases=2, passed=1, errors=1, pass_rate=0.5, average_score=0.5), ["positive", "unknown"]) \
            == (alone.totals, list(alone.by_case_type))


class TestCompare:
    def test_pass_to_error_is_a_new_failure_not_a_removal(self):
        """A case that passed and now errors is listed as a new failure and a regression; nothing is removed."""
        diff = compare_reports(BASELINE, CURRENT)
        assert (["b"], [("b", 1.0, 0.0)], [("c", 0.35, 1.0)], ["c"], [], [], {"b": "no reply within 60 s"}) == (
            diff.new_failures, diff.regressed, diff.improved, diff.new_passes, diff.added, diff.removed,
            diff.current_errors)

    def test_rendered_diff_is_exact(self):
        """The diff states each run's totals over all its cases and the change over the shared cases."""
        text = render_diff(compare_reports(BASELINE, CURRENT), "base.json", "cur.json")
        assert text == """# Benchmark comparison

Baseline: `base.json`  
Current: `cur.json`

Errors count as failures scoring 0 throughout. Both scored with `--scoring project`.

| run | cases | passed | failed | errors | pass rate | average score (all its cases) |
|---|---:|---:|---:|---:|---:|---:|
| baseline | 4 | 3 | 1 | 0 | 75.0% | 0.8375 |
| current | 4 | 3 | 0 | 1 | 75.0% | 0.7500 |

Average score change over the 4 cases in both runs: -0.0875

## Improved (Δ ≥ 0.05) (1)

- `c`: 0.35 → 1.00 (+0.65)

## Regressed (Δ ≤ −0.05) (1)

- `b`: 1.00 → error (-1.00)

## New failures (passed in the baseline) (1)

- `b`: passed → error (no reply within 60 s)

## New passes (1)

- `c`

## Errors in the current run (1)

- `b`: no reply within 60 s

## Cases added (0)

(none)

## Cases removed (not in the current run) (0)

(none)

## Average change by case type (cases in both runs)

| case type | cases | Δ average |
|---|---:|---:|
| negative | 1 | +0.0000 |
| positive | 3 | -0.1167 |
"""

    def test_averages_cover_each_runs_own_cases_when_the_sets_differ(self):
        """Added and removed cases count in their own run's average but not in the shared change."""
        baseline = report(ok("a", "6404.11.90"), ok("b", "6405.90.00"))
        current = report(ok("a", "6404.11.90"), ok("c", "6404.11.90"))
        diff = compare_reports(baseline, current)
        assert (["c"], ["b"], 1, 0.0, 0.675, 1.0) == (
            diff.added, diff.removed, diff.shared, diff.average_change, diff.baseline.average_score,
            diff.current.average_score)
        assert "Average score change over the 1 cases in both runs: +0.0000" in render_diff(diff, "x", "y")

    def test_error_to_fail_is_neither_new_failure_nor_pass(self):
        """A case that errored in the baseline and fails now is still a failure in both runs."""
        diff = compare_reports(report(error("c")), report(ok("c", "6405.90.00")))
        assert ([], [], [("c", 0.0, 0.35)], {"c": "no reply within 60 s"}, {}) == (
            diff.new_failures, diff.new_passes, diff.improved, diff.baseline_errors, diff.current_errors)

    def test_older_report_with_errors_only_in_error_cases(self, tmp_path):
        """A report written before errors were listed as cases still has its errors read as failures."""
        old = msgspec.to_builtins(BASELINE)
        old["cases"] = [c for c in old["cases"] if c["case_id"] != "b"]
        old["error_cases"] = {"b": "HTTP 500"}
        old["totals"] = {"cases": 3, "passed": 2, "pass_rate": 0.6667, "average_score": 0.7667}
        path = tmp_path / "old.json"
        path.write_bytes(msgspec.json.encode(old))
        diff = compare_reports(load_report(path), CURRENT)
        expected = GroupStats(cases=4, passed=2, errors=1, pass_rate=0.5, average_score=0.5875)
        assert ([], [], {"b": "HTTP 500"}, expected) == (
            diff.removed, diff.new_failures, diff.baseline_errors, diff.baseline)


class TestDutyStatus:
    def test_unverified_duties_are_counted_and_marked(self):
        """Accepted cases whose duty the pack cannot check are counted in the summary and marked in the table."""
        records = [ok("a", "6404.11.90"), ok("b", "6404.11.90"), ok("c", "6404.11.90")]
        for record, status in zip(records, ("verified", "unverified", "not_stated"), strict=True):
            record.score.duty_status = status
        result = report(*records)
        text = render_report(result)
        assert ({"not_stated": 1, "unverified": 1, "verified": 1},
                "Duty of the 3 accepted cases: 1 verified against the pack, 1 unverified (the pack has no duty line "
                "for the code: no penalty), 1 not stated.") == (result.duty_status, text.split("\n")[4])
        assert "| b | positive | easy | 1.00 | ✓ | accepted (duty unverified) | 6404.11.90 |" in text

    def test_no_duty_line_when_nothing_is_unverified(self):
        """Without an unverified duty the summary stays as it was."""
        assert "unverified" not in render_report(BASELINE)


class TestScoringModes:
    """Reports name their scoring mode; reports scored under different modes are not compared unless asked."""

    ORIGINAL = msgspec.structs.replace(CURRENT, scoring="original")

    def test_the_report_names_its_mode(self):
        text = render_report(self.ORIGINAL)
        assert ("original", "# s benchmark — live mode, model `m`, original scoring") == (
            self.ORIGINAL.scoring, text.splitlines()[0])
        assert "Scored by the original harness's rules (--scoring original; README: tariff scoring modes)." in text
        assert "project" == load_report_from(BASELINE).scoring

    def test_mixed_modes_are_refused_with_what_to_do(self):
        with pytest.raises(MixedScoringError) as refused:
            compare_reports(BASELINE, self.ORIGINAL)
        assert ("the baseline was scored with ``scoring=project`` and the current run with ``scoring=original``: "
                "their scores are not comparable; rerun one of them under the other's mode, or pass "
                "``allow_mixed_scoring=True`` to compare anyway") == str(refused.value)

    def test_allowed_mixed_modes_are_compared_and_flagged(self):
        diff = compare_reports(BASELINE, self.ORIGINAL, allow_mixed_scoring=True)
        assert (("project", "original"), ["b"]) == (diff.scoring, diff.new_failures)
        assert "**Scored under different modes** (baseline `--scoring project`, current `--scoring original`" in \
            render_diff(diff, "a.json", "b.json")

    def test_both_compare_commands_exit_2_naming_the_files_and_accept_the_flag(self, tmp_path):
        a, b = tmp_path / "a.json", tmp_path / "b.json"
        a.write_bytes(msgspec.json.encode(BASELINE))
        b.write_bytes(msgspec.json.encode(self.ORIGINAL))
        top = _cli("compare", str(a), str(b))
        old = _cli("tariff", "compare", "--baseline", str(a), "--current", str(b), "--out", str(tmp_path))
        assert (2, 2) == (top.returncode, old.returncode)
        assert f"{a} vs {b}: the baseline was scored with --scoring project" in top.stderr
        assert "Traceback" not in top.stderr + old.stderr
        allowed = _cli("compare", str(a), str(b), "--allow-mixed-scoring")
        assert (0, True) == (allowed.returncode, "**Scored under different modes**" in allowed.stdout)


def load_report_from(report_: BenchmarkReport) -> BenchmarkReport:
    """A report as written before scoring modes existed (no ``scoring`` field) and read back."""
    raw = msgspec.json.decode(msgspec.json.encode(report_))
    del raw["scoring"]
    return msgspec.convert(raw, BenchmarkReport)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mpcbench_async", *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
