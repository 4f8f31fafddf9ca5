"""Benchmark reports (JSON + Markdown) and run-against-run comparison.

Every case that ran is in the report: a case that ended in an error is listed
with status ``error``, counts as a failure and scores 0, and the totals show
errors separately. Every average names what it is over. When the suite's cases
know of cases with no record yet (an interrupted run), the report is marked
partial with the number not run. HSCodeComp suites carry the published figures
beside this run's prefix accuracy.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from .._exceptions import InputError, MixedScoringError
from ._cases import Case
from ._hscodecomp import HSCODECOMP_PUBLISHED, HSCODECOMP_TAG, PublishedFigure
from ._pipeline import VerificationResult
from ._runner import TariffCaseRecord
from ._scoring import PREFIX_LENGTHS, CaseScore, ScoringMode, score_case

__all__ = ["BenchmarkReport", "GroupStats", "MixedScoringError", "ReportDiff", "build_report", "compare_reports",
           "load_report", "render_diff", "render_report"]

CHANGE_THRESHOLD = 0.05
_SCORING_NAMES = {"project": "project's rules (DESIGN.md §8; README: tariff scoring modes)",
                  "original": "original harness's rules (--scoring original; README: tariff scoring modes)"}
UNKNOWN = "unknown"


class GroupStats(msgspec.Struct, kw_only=True):
    """Counts over every case of a group: errors are failures scoring 0, also counted on their own."""

    cases: int = 0
    passed: int = 0
    errors: int = 0
    pass_rate: float = 0.0
    average_score: float = 0.0


class BenchmarkReport(msgspec.Struct, kw_only=True):
    suite: str
    mode: str
    model: str
    created_at: str
    scoring: ScoringMode = "project"  # reports written before scoring modes existed were scored by the project
    totals: GroupStats
    errors: int = 0
    not_run: int = 0
    by_case_type: dict[str, GroupStats] = {}
    by_difficulty: dict[str, GroupStats] = {}
    prefix_accuracy: dict[str, float] = {}
    prefix_cases: dict[str, int] = {}
    average_digits_correct: float | None = None
    digits_cases: int = 0
    duty_status: dict[str, int] = {}
    published: list[PublishedFigure] = []
    cases: list[CaseScore] = []
    error_cases: dict[str, str] = {}


def _group(scores: Sequence[CaseScore]) -> GroupStats:
    if not scores:
        return GroupStats()
    passed = sum(s.passed for s in scores)
    return GroupStats(cases=len(scores), passed=passed, errors=sum(s.status == "error" for s in scores),
                      pass_rate=round(passed / len(scores), 4),
                      average_score=round(statistics.fmean(s.score for s in scores), 4))


def _unknown_error(case_id: str, message: str) -> CaseScore:
    """An errored case whose type and expectations are not known: a failure scoring 0."""
    return CaseScore(case_id=case_id, case_type=UNKNOWN, difficulty=UNKNOWN, score=0.0, passed=False, threshold=0.0,
                     status="error", match="error", penalties=[message])


def _error_score(record: TariffCaseRecord, case: Case | None, scoring: ScoringMode) -> CaseScore:
    """An errored case as a failure scoring 0 (missing at every prefix length when its case is known)."""
    message = ": ".join(part for part in (record.error_class, record.error_message) if part) or "error"
    if case is None:
        return _unknown_error(record.case_id, message)
    unscored = score_case(case, VerificationResult(case_id=case.id, status="refused"), scoring=scoring)
    return msgspec.structs.replace(unscored, score=0.0, passed=False, status="error", refusal_category=None,
                                   match="error", penalties=[message], iterations=0)


def build_report(records: Sequence[TariffCaseRecord], *, suite: str, mode: str, model: str, created_at: str,
                 cases: Sequence[Case] = (), scoring: ScoringMode = "project") -> BenchmarkReport:
    """The report over every record (all scored under ``scoring``: the mode is part of their keys); ``cases`` (the
    suite) gives errored cases their type and counts those not run."""
    known = {c.id: c for c in cases}
    scores = [r.score if r.status == "ok" and r.score is not None else _error_score(r, known.get(r.case_id), scoring)
              for r in records]
    errors = {r.case_id: r.error_message or "" for r in records if r.status != "ok"}
    by_type: dict[str, list[CaseScore]] = defaultdict(list)
    by_difficulty: dict[str, list[CaseScore]] = defaultdict(list)
    for s in scores:
        by_type[s.case_type].append(s)
        by_difficulty[s.difficulty].append(s)
    prefix: dict[str, float] = {}
    prefix_cases: dict[str, int] = {}
    for n in PREFIX_LENGTHS:
        relevant = [s for s in scores if str(n) in s.prefix_correct]
        if relevant:
            prefix_cases[str(n)] = len(relevant)
            prefix[str(n)] = round(sum(s.prefix_correct[str(n)] for s in relevant) / len(relevant), 4)
    digits = [s.digits_correct for s in scores if s.digits_correct is not None]
    duty = Counter(s.duty_status for s in scores if s.duty_status is not None)
    ran = {r.case_id for r in records}
    hscodecomp = any(HSCODECOMP_TAG in c.notes.tags for c in cases)
    return BenchmarkReport(
        suite=suite, mode=mode, model=model, created_at=created_at, scoring=scoring, totals=_group(scores),
        errors=len(errors),
        not_run=sum(c.id not in ran for c in cases),
        by_case_type={k: _group(v) for k, v in sorted(by_type.items())},
        by_difficulty={k: _group(v) for k, v in sorted(by_difficulty.items())},
        prefix_accuracy=prefix, prefix_cases=prefix_cases,
        average_digits_correct=round(statistics.fmean(digits), 3) if digits else None, digits_cases=len(digits),
        duty_status=dict(sorted(duty.items())),
        published=list(HSCODECOMP_PUBLISHED) if hscodecomp else [], cases=scores, error_cases=errors)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _group_rows(groups: dict[str, GroupStats]) -> list[str]:
    return [f"| {k} | {g.cases} | {g.passed} | {g.errors} | {_pct(g.pass_rate)} | {g.average_score:.3f} |"
            for k, g in groups.items()]


def _published_rows(report: BenchmarkReport) -> list[str]:
    """This run beside the published figures on the same test set; other test sets' figures after the table."""
    lengths = [str(n) for n in PREFIX_LENGTHS]
    same = [p for p in report.published if p.dataset == report.published[0].dataset]
    other = [p for p in report.published if p not in same]
    digits = "–" if report.average_digits_correct is None else f"{report.average_digits_correct:.2f}"
    lines = ["", "## Beside published results", "",
             f"Exact match on the first N digits (– where not published). Published figures: {same[0].source}, "
             f"{same[0].dataset}.", "",
             "| system | " + " | ".join(f"{n} digits" for n in lengths) + " | avg digits correct |",
             "|---|" + "---:|" * (len(lengths) + 1),
             f"| **this run: `{report.model}`, {report.totals.cases} cases** | "
             + " | ".join(_pct(report.prefix_accuracy.get(n)) for n in lengths) + f" | {digits} |"]
    for p in same:
        avg = "–" if p.average_digits_correct is None else f"{p.average_digits_correct:.2f}"
        lines.append(f"| {p.system} | " + " | ".join(_pct(p.accuracy.get(n)) for n in lengths) + f" | {avg} |")
    if other:
        lines += ["", "Average digits correct published on another test set (for scale, not comparable case by "
                  "case): " + "; ".join(f"{p.system} {p.average_digits_correct:.2f} ({p.source}, {p.dataset})"
                                        for p in other if p.average_digits_correct is not None) + "."]
    return lines


def render_report(report: BenchmarkReport) -> str:
    t = report.totals
    failed = t.cases - t.passed - t.errors
    lines = [f"# {report.suite} benchmark — {report.mode} mode, model `{report.model}`, {report.scoring} scoring", "",
             f"Created {report.created_at}. {t.cases} cases: {t.passed} passed ({_pct(t.pass_rate)}), {failed} failed, "
             f"{t.errors} errors (an error counts as a failure scoring 0). Average score {t.average_score:.3f} over "
             f"all {t.cases} cases. Scored by the {_SCORING_NAMES[report.scoring]}."]
    if report.duty_status.get("unverified"):
        d = report.duty_status
        lines += ["", f"Duty of the {sum(d.values())} accepted cases: {d.get('verified', 0)} verified against the "
                  f"pack, {d['unverified']} unverified (the pack has no duty line for the code: no penalty), "
                  f"{d.get('not_stated', 0)} not stated."]
    if report.not_run:
        lines += ["", f"**Partial run**: {report.not_run} of {t.cases + report.not_run} cases were not run; these "
                  "figures cover only the cases that ran. Rerun the same command to resume."]
    header = ["| {} | cases | passed | errors | pass rate | avg score |", "|---|---:|---:|---:|---:|---:|"]
    lines += ["", "## By case type", "", header[0].format("case type"), header[1], *_group_rows(report.by_case_type)]
    lines += ["", "## By difficulty", "", header[0].format("difficulty"), header[1], *_group_rows(report.by_difficulty)]
    lines += ["", "## HTS prefix accuracy", "",
              "Exact match on the first N digits, over the acceptance cases whose expected code has at least N digits "
              "(refusals, rejected dossiers and errors count as misses).", "",
              "| digits | cases | accuracy |", "|---:|---:|---:|"]
    lines += [f"| {n} | {report.prefix_cases.get(n, '–')} | {_pct(v)} |" for n, v in report.prefix_accuracy.items()]
    if report.average_digits_correct is not None:
        lines += ["", f"Average digits correct (leading digits matching the expected code, 0–10): "
                  f"{report.average_digits_correct:.2f}, over {report.digits_cases} acceptance cases."]
    if report.published:
        lines += _published_rows(report)
    lines += ["", "## Cases", "", "| case | type | difficulty | score | pass | status | HTS | match | iterations | "
              "penalties |", "|---|---|---|---:|:---:|---|---|---|---:|---|"]
    for s in report.cases:
        status = s.status + (f" ({s.refusal_category})" if s.refusal_category else "") + (
            " (duty unverified)" if s.duty_status == "unverified" else "")
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


class TypeChange(msgspec.Struct, kw_only=True):
    """The average score change over the cases of one type present in both runs."""

    cases: int
    average_change: float


class ReportDiff(msgspec.Struct, kw_only=True):
    """Case-level changes between two runs; errors are failures scoring 0 throughout."""

    scoring: tuple[str, str] = ("project", "project")  # the baseline's and the current run's scoring modes
    improved: list[tuple[str, float, float]] = []
    regressed: list[tuple[str, float, float]] = []
    new_failures: list[str] = []
    new_passes: list[str] = []
    changes: list[tuple[str, str, float, float]] = []  # every case in both runs: id, type, baseline and current score
    added: list[str] = []
    removed: list[str] = []
    baseline_errors: dict[str, str] = {}
    current_errors: dict[str, str] = {}
    shared: int = 0
    average_change: float = 0.0
    by_case_type: dict[str, TypeChange] = {}
    baseline: GroupStats = msgspec.field(default_factory=GroupStats)
    current: GroupStats = msgspec.field(default_factory=GroupStats)


def _every_case(report: BenchmarkReport) -> dict[str, CaseScore]:
    """Every case of a report by id, errors included (older reports list errors only in ``error_cases``)."""
    out = {s.case_id: s for s in report.cases}
    for case_id, message in report.error_cases.items():
        if case_id not in out:
            out[case_id] = _unknown_error(case_id, message)
    return out


def _errors(cases: Iterable[CaseScore], report: BenchmarkReport) -> dict[str, str]:
    return {s.case_id: report.error_cases.get(s.case_id, "; ".join(s.penalties))
            for s in cases if s.status == "error"}


def compare_reports(baseline: BenchmarkReport, current: BenchmarkReport, *,
                    allow_mixed_scoring: bool = False) -> ReportDiff:
    """Changes of at least 0.05, new failures (errors included) and passes, added/removed cases, averages.

    Reports scored under different modes are refused (``MixedScoringError``) unless ``allow_mixed_scoring``."""
    if baseline.scoring != current.scoring and not allow_mixed_scoring:
        raise MixedScoringError(f"the baseline was scored with ``scoring={baseline.scoring}`` and the current run with "
                                f"``scoring={current.scoring}``: their scores are not comparable; rerun one of them "
                                "under the other's mode, or pass ``allow_mixed_scoring=True`` to compare anyway")
    old, new = _every_case(baseline), _every_case(current)
    shared = sorted(set(old) & set(new))
    diff = ReportDiff(scoring=(baseline.scoring, current.scoring), added=sorted(set(new) - set(old)),
                      removed=sorted(set(old) - set(new)),
                      baseline_errors=_errors(old.values(), baseline), current_errors=_errors(new.values(), current),
                      shared=len(shared), baseline=_group(list(old.values())), current=_group(list(new.values())))
    changes: dict[str, list[float]] = defaultdict(list)
    for case_id in shared:
        a, b = old[case_id], new[case_id]
        delta = b.score - a.score
        case_type = b.case_type if b.case_type != UNKNOWN else a.case_type
        diff.changes.append((case_id, case_type, a.score, b.score))
        changes[case_type].append(delta)
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
    diff.by_case_type = {k: TypeChange(cases=len(v), average_change=round(statistics.fmean(v), 4))
                         for k, v in sorted(changes.items())}
    return diff


def render_diff(diff: ReportDiff, baseline: str, current: str) -> str:
    def shown(case_id: str, score: float, errors: dict[str, str]) -> str:
        return "error" if case_id in errors else f"{score:.2f}"

    def change(case_id: str, a: float, b: float) -> str:
        before, after = shown(case_id, a, diff.baseline_errors), shown(case_id, b, diff.current_errors)
        return f"- `{case_id}`: {before} → {after} ({b - a:+.2f})"

    def totals(name: str, g: GroupStats) -> str:
        return (f"| {name} | {g.cases} | {g.passed} | {g.cases - g.passed - g.errors} | {g.errors} | "
                f"{_pct(g.pass_rate)} | {g.average_score:.4f} |")

    def failure(case_id: str) -> str:
        if case_id in diff.current_errors:
            return f"- `{case_id}`: passed → error ({diff.current_errors[case_id]})"
        return f"- `{case_id}`: passed → failed"

    scored = (f"Both scored with `--scoring {diff.scoring[0]}`." if diff.scoring[0] == diff.scoring[1] else
              f"**Scored under different modes** (baseline `--scoring {diff.scoring[0]}`, current `--scoring "
              f"{diff.scoring[1]}`, compared with --allow-mixed-scoring): score changes mix rule changes with "
              "behaviour changes.")
    lines = ["# Benchmark comparison", "", f"Baseline: `{baseline}`  ", f"Current: `{current}`", "",
             f"Errors count as failures scoring 0 throughout. {scored}", "",
             "| run | cases | passed | failed | errors | pass rate | average score (all its cases) |",
             "|---|---:|---:|---:|---:|---:|---:|", totals("baseline", diff.baseline), totals("current", diff.current),
             "", f"Average score change over the {diff.shared} cases in both runs: {diff.average_change:+.4f}", ""]

    def section(title: str, rows: list[str]) -> None:
        lines.extend([f"## {title} ({len(rows)})", ""] + (rows or ["(none)"]) + [""])

    section("Improved (Δ ≥ 0.05)", [change(c, a, b) for c, a, b in diff.improved])
    section("Regressed (Δ ≤ −0.05)", [change(c, a, b) for c, a, b in diff.regressed])
    section("New failures (passed in the baseline)", [failure(c) for c in diff.new_failures])
    section("New passes", [f"- `{c}`" for c in diff.new_passes])
    section("Errors in the current run", [f"- `{c}`: {m}" for c, m in sorted(diff.current_errors.items())])
    section("Cases added", [f"- `{c}`" for c in diff.added])
    section("Cases removed (not in the current run)", [f"- `{c}`" for c in diff.removed])
    lines += ["## Average change by case type (cases in both runs)", "", "| case type | cases | Δ average |",
              "|---|---:|---:|"]
    lines += [f"| {k} | {v.cases} | {v.average_change:+.4f} |" for k, v in diff.by_case_type.items()]
    return "\n".join(lines) + "\n"
