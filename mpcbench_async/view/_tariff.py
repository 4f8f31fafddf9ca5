"""The tariff / HSCodeComp section: HTS prefix accuracy at 2–10 digits, per chapter and per case type.

Read from the sweep's ``<suite>_<model>.json`` reports (``tariff.BenchmarkReport``,
every case's score with its per-prefix outcome). The chapter of a case is the
first two digits of its expected code, which the reports do not carry: it comes
from the suite's case files when the viewer is given them (``chapters``), and
the per-chapter table says so when it is not.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import InputError
from ..report import esc, pct, table

if TYPE_CHECKING:
    from ..tariff import BenchmarkReport, CaseScore

__all__ = ["PREFIXES", "case_chapters", "tariff_section"]

log = logging.getLogger(__name__)

PREFIXES = ("2", "4", "6", "8", "10")


def reports(out_dir: Path) -> list[BenchmarkReport]:
    """The sweep's tariff reports (``<suite>_<model>.json``); an unreadable one is skipped with a warning."""
    paths = sorted(out_dir.glob("*_*.json"))
    if not paths:
        return []
    from ..tariff import load_report  # only for a sweep that has tariff reports: the overview's imports stay light

    found = []
    for path in paths:
        try:
            found.append(load_report(path))
        except InputError as exc:
            log.warning("view.tariff_report_skipped", extra={"reason": str(exc)})
    return found


def case_chapters(cases_dirs: Iterable[Path]) -> dict[str, str]:
    """Case id → chapter (first two digits of its first preferred, else allowed, code) of the given suites."""
    from ..tariff import digits, load_suite

    chapters: dict[str, str] = {}
    for cases_dir in cases_dirs:
        for case in load_suite(cases_dir):
            codes = [digits(c) for c in (*case.expected.preferred_hts, *case.expected.allowed_hts)]
            code = next((c for c in codes if len(c) >= 2), None)
            if code is not None:
                chapters[case.id] = code[:2]
    return chapters


def _accuracy(scores: Sequence[CaseScore], prefix: str) -> tuple[float | None, int]:
    relevant = [s.prefix_correct[prefix] for s in scores if prefix in s.prefix_correct]
    return (sum(relevant) / len(relevant) if relevant else None), len(relevant)


def _group_rows(groups: Mapping[str, Sequence[CaseScore]], attr: str) -> list[str]:
    rows = []
    for name, scores in sorted(groups.items()):
        passed = sum(s.passed for s in scores)
        cells = "".join(f'<td class="num">{pct(_accuracy(scores, p)[0])}</td>' for p in PREFIXES)
        rows.append(f'<tr data-{attr}="{esc(name)}"><td>{esc(name)}</td><td class="num">{len(scores)}</td>'
                    f'<td class="num">{pct(passed / len(scores))}</td>{cells}</tr>')
    return rows


def _report_block(report: BenchmarkReport, chapters: Mapping[str, str]) -> str:
    prefix = [f'<td class="num" data-digits="{p}">{pct(_accuracy(report.cases, p)[0])} '
              f'<span class="muted">({_accuracy(report.cases, p)[1]})</span></td>' for p in PREFIXES]
    digits_header = [f"{p} digits" for p in PREFIXES]
    head = (f'<h3>{esc(report.suite)} · {esc(report.model)}</h3><p>{report.totals.cases} cases, '
            f"{report.totals.passed} passed ({pct(report.totals.pass_rate)}), {report.errors} errors; average "
            f"score {report.totals.average_score:.3f}. Prefix accuracy: exact match on the first N digits over the "
            "cases whose expected code has N digits (cases counted in brackets).</p>")
    accuracy = table(None, digits_header, [f"<tr>{''.join(prefix)}</tr>"], cls="prefix-accuracy")
    by_type: dict[str, list[CaseScore]] = defaultdict(list)
    by_chapter: dict[str, list[CaseScore]] = defaultdict(list)
    for s in report.cases:
        by_type[s.case_type].append(s)
        if s.case_id in chapters:
            by_chapter[chapters[s.case_id]].append(s)
    header = ["cases", "pass rate", *digits_header]
    types = table(None, ["case type", *header], _group_rows(by_type, "case-type"), cls="by-case-type")
    if by_chapter:
        chapter = table(None, ["chapter", *header], _group_rows(by_chapter, "chapter"), cls="by-chapter")
    else:
        chapter = ('<p class="by-chapter muted">Per chapter: the expected codes are in the suite\'s case files, '
                   "not in the report; pass --cases DIR to see this table.</p>")
    return (f'<div class="tariff-report" data-suite="{esc(report.suite)}" data-model="{esc(report.model)}">{head}'
            f"{accuracy}<h4>Per case type</h4>{types}<h4>Per chapter</h4>{chapter}</div>")


def tariff_section(out_dir: Path, chapters: Mapping[str, str] | None = None) -> str:
    """The section, or nothing when the sweep ran no tariff suite."""
    found = reports(out_dir)
    if not found:
        return ""
    blocks = "".join(_report_block(r, chapters or {}) for r in found)
    return f'<section id="tariff"><h2>Tariff classification (HTS)</h2>{blocks}</section>'
