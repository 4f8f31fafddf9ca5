"""Benchmark reports (JSON + Markdown) and run-against-run comparison."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import msgspec

from .._exceptions import InputError
from ._runner import TariffCaseRecord
from ._scoring import PREFIX_LENGTHS, CaseScore

__all__ = ["BenchmarkReport", "compare_reports", "render_diff", "render_report", "build_report", "load_report"]

CHANGE_THRESHOLD = 0.05


class GroupStats(msgspec.Struct, kw_only=True):
    cases: int = 0
    passed: int = 0
    pass_rate: float = 0.0
    average_score: float = 0.0


class BenchmarkReport(msgspec.Struct, kw_only=True):
    suite: str
    mode: str
    model: str
    created_at: str
    totals: GroupStats
    errors: int = 0
    by_case_type: dict[str, GroupStats] = {}
    by_difficulty: dict[str, GroupStats] = {}
    prefix_accuracy: dict[str, float] = {}
    average_digits_correct: float | None = None
    cases: list[CaseScore] = []
    error_cases: dict[str, str] = {}


def _group(scores: Sequence[CaseScore]) -> GroupStats:
    if not scores:
        return GroupStats()
    passed = sum(s.passed for s in scores)
    return GroupStats(cases=len(scores), passed=passed, pass_rate=round(passed / len(scores), 4),
                      average_score=round(statistics.fmean(s.score for s in scores), 4))


def build_report(records: Sequence[TariffCaseRecord], *, suite: str, mode: str, model: str,
                 created_at: str) -> BenchmarkReport:
    scores = [r.score for r in records if r.status == "ok" and r.score is not None]
    errors = {r.case_id: r.error_message or "" for r in records if r.status != "ok"}
    by_type: dict[str, list[CaseScore]] = defaultdict(list)
    by_difficulty: dict[str, list[CaseScore]] = defaultdict(list)
    for s in scores:
        by_type[s.case_type].append(s)
        by_difficulty[s.difficulty].append(s)
    prefix: dict[str, float] = {}
    for n in PREFIX_LENGTHS:
        relevant = [s for s in scores if str(n) in s.prefix_correct]
        if relevant:
            prefix[str(n)] = round(sum(s.prefix_correct[str(n)] for s in relevant) / len(relevant), 4)
    digits = [s.digits_correct for s in scores if s.digits_correct is not None]
    return BenchmarkReport(
        suite=suite, mode=mode, model=model, created_at=created_at, totals=_group(scores), errors=len(errors),
        by_case_type={k: _group(v) for k, v in sorted(by_type.items())},
        by_difficulty={k: _group(v) for k, v in sorted(by_difficulty.items())},
        prefix_accuracy=prefix, average_digits_correct=round(statistics.fmean(digits), 3) if digits else None,
        cases=scores, error_cases=errors)


def render_report(report: BenchmarkReport) -> str:
    t = report.totals
    lines = [f"# {report.suite} benchmark — {report.mode} mode, model `{report.model}`", "",
             f"Created {report.created_at}. Cases {t.cases} (+{report.errors} errors), passed {t.passed} "
             f"({100 * t.pass_rate:.1f}%), average score {t.average_score:.3f}.", "",
             "## By case type", "", "| case type | cases | passed | pass rate | avg score |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {k} | {g.cases} | {g.passed} | {100 * g.pass_rate:.1f}% | {g.average_score:.3f} |"
              for k, g in report.by_case_type.items()]
    lines += ["", "## By difficulty", "", "| difficulty | cases | passed | pass rate | avg score |",
              "|---|---:|---:|---:|---:|"]
    lines += [f"| {k} | {g.cases} | {g.passed} | {100 * g.pass_rate:.1f}% | {g.average_score:.3f} |"
              for k, g in report.by_difficulty.items()]
    lines += ["", "## HTS prefix accuracy", "",
              "Share of acceptance cases with a preferred code of at least N digits whose predicted code matches "
              "its first N digits (refusals count as misses).", "", "| digits | accuracy |", "|---:|---:|"]
    lines += [f"| {n} | {100 * v:.1f}% |" for n, v in report.prefix_accuracy.items()]
    if report.average_digits_correct is not None:
        lines += ["", f"Average leading digits correct: {report.average_digits_correct:.2f}."]
    lines += ["", "## Cases", "", "| case | type | difficulty | score | pass | status | HTS | match | iterations | "
              "penalties |", "|---|---|---|---:|:---:|---|---|---|---:|---|"]
    for s in report.cases:
        status = s.status + (f" ({s.refusal_category})" if s.refusal_category else "")
        lines.append(f"| {s.case_id} | {s.case_type} | {s.difficulty} | {s.score:.2f} | {'✓' if s.passed else '✗'} | "
                     f"{status} | {s.predicted_hts or '–'} | {s.match} | {s.iterations} | "
                     f"{'; '.join(s.penalties) or '–'} |")
    if report.error_cases:
        lines += ["", "## Errors", ""] + [f"- `{k}`: {v}" for k, v in sorted(report.error_cases.items())]
    return "\n".join(lines) + "\n"


def load_report(path: str | Path) -> BenchmarkReport:
    path = Path(path)
    try:
        return msgspec.json.decode(path.read_bytes(), type=BenchmarkReport)
    except OSError as exc:
        raise InputError(f"{path}: cannot read report ({exc.strerror})") from exc
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise InputError(f"{path}: not a benchmark report ({exc})") from exc


class ReportDiff(msgspec.Struct, kw_only=True):
    improved: list[tuple[str, float, float]] = []
    regressed: list[tuple[str, float, float]] = []
    new_failures: list[str] = []
    new_passes: list[str] = []
    added: list[str] = []
    removed: list[str] = []
    average_change: float = 0.0
    by_case_type: dict[str, float] = {}


def compare_reports(baseline: BenchmarkReport, current: BenchmarkReport) -> ReportDiff:
    """Cases that changed by at least 0.05, new failures/passes, added/removed cases, average changes."""
    old = {s.case_id: s for s in baseline.cases}
    new = {s.case_id: s for s in current.cases}
    diff = ReportDiff(added=sorted(set(new) - set(old)), removed=sorted(set(old) - set(new)))
    changes: dict[str, list[float]] = defaultdict(list)
    for case_id in sorted(set(old) & set(new)):
        a, b = old[case_id], new[case_id]
        delta = b.score - a.score
        changes[b.case_type].append(delta)
        if delta >= CHANGE_THRESHOLD:
            diff.improved.append((case_id, a.score, b.score))
        elif delta <= -CHANGE_THRESHOLD:
            diff.regressed.append((case_id, a.score, b.score))
        if a.passed and not b.passed:
            diff.new_failures.append(case_id)
        if b.passed and not a.passed:
            diff.new_passes.append(case_id)
    all_changes = [d for v in changes.values() for d in v]
    diff.average_change = round(statistics.fmean(all_changes), 4) if all_changes else 0.0
    diff.by_case_type = {k: round(statistics.fmean(v), 4) for k, v in sorted(changes.items())}
    return diff


def render_diff(diff: ReportDiff, baseline: str, current: str) -> str:
    lines = ["# Benchmark comparison", "", f"Baseline: `{baseline}`  ", f"Current: `{current}`", "",
             f"Average score change: {diff.average_change:+.4f}", ""]

    def section(title: str, rows: list[str]) -> None:
        lines.extend([f"## {title} ({len(rows)})", ""] + (rows or ["(none)"]) + [""])

    section("Improved (Δ ≥ 0.05)", [f"- `{c}`: {a:.2f} → {b:.2f} ({b - a:+.2f})" for c, a, b in diff.improved])
    section("Regressed (Δ ≤ −0.05)", [f"- `{c}`: {a:.2f} → {b:.2f} ({b - a:+.2f})" for c, a, b in diff.regressed])
    section("New failures", [f"- `{c}`" for c in diff.new_failures])
    section("New passes", [f"- `{c}`" for c in diff.new_passes])
    section("Cases added", [f"- `{c}`" for c in diff.added])
    section("Cases removed", [f"- `{c}`" for c in diff.removed])
    lines += ["## Average change by case type", "", "| case type | Δ average |", "|---|---:|"]
    lines += [f"| {k} | {v:+.4f} |" for k, v in diff.by_case_type.items()]
    return "\n".join(lines) + "\n"
