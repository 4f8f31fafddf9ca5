"""Tariff report against tariff report: the tariff compare itself (one copy), its findings in the shared shape.

``tariff.compare_reports`` decides what changed (a case's score moving by at
least 0.05, pass → fail, errors as failures scoring 0, cases added or removed,
the change per case type); this module only lists its regressed and improved
cases and its new failures as ``Finding`` and ``NewFailure``, so ``compare``
reports and gates on tariff reports as it does on sweeps.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ..tariff import CHANGE_THRESHOLD, BenchmarkReport, MixedScoringError, ReportDiff, compare_reports, load_report
from ._findings import Finding, NewFailure

__all__ = ["ReportComparison", "compare_tariff_reports"]


class ReportComparison(msgspec.Struct, kw_only=True):
    kind: str = "tariff_reports"
    a: str
    b: str
    suite_a: str
    suite_b: str
    model_a: str
    model_b: str
    diff: ReportDiff
    regressions: list[Finding] = []
    improvements: list[Finding] = []
    new_failures: list[NewFailure] = []


def _findings(report: BenchmarkReport, changes: list[tuple[str, float, float]], rule: str) -> list[Finding]:
    return [Finding(model=report.model, suite=report.suite, task=case_id, metric="score", a=a, b=b,
                    delta=round(b - a, 4) + 0.0, rule=rule) for case_id, a, b in changes]


def compare_tariff_reports(a: str | Path, b: str | Path, *, allow_mixed_scoring: bool = False) -> ReportComparison:
    """Compare tariff report ``b`` against ``a`` (JSON files written by ``tariff run`` or a sweep); reports scored
    under different modes are refused unless ``allow_mixed_scoring`` (``tariff.MixedScoringError``)."""
    report_a, report_b = load_report(a), load_report(b)
    try:
        diff = compare_reports(report_a, report_b, allow_mixed_scoring=allow_mixed_scoring)
    except MixedScoringError as exc:
        raise MixedScoringError(f"{a} vs {b}: {exc}") from None
    where = {"model": report_b.model, "suite": report_b.suite}
    failures = [NewFailure(**where, task=case_id, change="passed → error", detail=diff.current_errors[case_id])
                if case_id in diff.current_errors else NewFailure(**where, task=case_id, change="passed → failed")
                for case_id in diff.new_failures]
    return ReportComparison(a=str(a), b=str(b), suite_a=report_a.suite, suite_b=report_b.suite,
                            model_a=report_a.model, model_b=report_b.model, diff=diff,
                            regressions=_findings(report_b, diff.regressed, f"Δ ≤ −{CHANGE_THRESHOLD:g}"),
                            improvements=_findings(report_b, diff.improved, f"Δ ≥ {CHANGE_THRESHOLD:g}"),
                            new_failures=failures)
