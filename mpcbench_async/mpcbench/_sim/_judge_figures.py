"""``sim/judge``'s [invented] rule: whether the percentages a report quotes are the sources' figures.

A careful reader accepts a percentage when a source gives that value (to the precision the report
writes: "18%" for 18.2%) as a percentage, however it is worded ("18% fewer sync failures" for "sync
failures down 18%", "Availability: 99.95%" for ``uptime_percent``), or when it is the change between two
numbers a source line gives ("from 1,200 to 1,380", "50,000 → 55,000", a CSV row ``signups,1380,1200``).
A CSV cell is a percentage when its row or column names one (``churn_pct``, ``rate``, ``%``).

It is wrong when no source gives the value, or when the sources give it only in the other direction:
for a matching label ("up 18%" where "sync failures down 18%"), or for every statement of that value.
"""

from __future__ import annotations

import re

from ..._answers import Quantity, find_quantities, labels_match
from ._judge_evidence import Evidence
from ._judge_stale import compared_labels

__all__ = ["invented_percentages"]

_CELL_SPLIT = re.compile(r"\s*[,;\t]\s*")
_PERCENT_NAME = re.compile(r"(?i)pct|percent|%|\brate\b|_rate|ratio|\bshare\b")
_NUMBER_CELL = re.compile(r"[-+−]?\d+(?:\.\d+)?%?")


def _csv_rows(text: str) -> list[tuple[str, list[tuple[str, float]]]]:
    """(row label, [(column name, value)]) of a comma/semicolon/tab table with a header line; else empty."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2 or not re.search(r"[,;\t]", lines[0]):
        return []
    header = _CELL_SPLIT.split(lines[0].strip())
    if any(len(cell.split()) > 4 for cell in header):
        return []
    rows = []
    for line in lines[1:]:
        cells = _CELL_SPLIT.split(line.strip())
        if len(cells) != len(header):
            return []
        values = [(name, float(cell.rstrip("%").replace("−", "-"))) for name, cell in zip(header[1:], cells[1:],
                                                                                        strict=True)
                  if _NUMBER_CELL.fullmatch(cell)]
        rows.append((cells[0] if not _NUMBER_CELL.fullmatch(cells[0]) else "", values))
    return rows


def _table_percentages(evidence: Evidence) -> list[Quantity]:
    """The percentages CSV tables in the results give: cells whose row or column names a percentage."""
    out = []
    for text in dict.fromkeys(evidence.texts):
        for label, values in _csv_rows(text):
            out += [Quantity(value, "percent", f"{label} {column}".replace("_", " "), 0, 0)
                    for column, value in values if _PERCENT_NAME.search(f"{label} {column}")]
    return out


def _changes(evidence: Evidence) -> list[float]:
    """Percentage changes between consecutive numbers of one source line, in the line's order (a CSV row's
    columns may run either way: both)."""
    out: list[float] = []
    for text in dict.fromkeys(evidence.texts):
        rows = _csv_rows(text)
        for _, values in rows:
            numbers = [v for _, v in values]
            out += [c for a, b in zip(numbers, numbers[1:], strict=False) if a and b
                    for c in ((b - a) / abs(a) * 100, (a - b) / abs(b) * 100)]
        if rows:
            continue
        for line in text.splitlines():
            numbers = [q.value for q in find_quantities(line) if q.kind == "number" and q.value]
            out += [(b - a) / abs(a) * 100 for a, b in zip(numbers, numbers[1:], strict=False)]
    return out


def _precision(written: str) -> float:
    """Half a unit of the last decimal written ("18%" → 0.5, "18.4%" → 0.05): how far a rounded figure may be."""
    digits = re.search(r"\d+(?:[.,](\d+))?", written)
    decimals = len(digits.group(1) or "") if digits else 0
    return 0.5 * 10 ** -decimals + 1e-9


def _unfounded(q: Quantity, given: list[Quantity], changes: list[float], slack: float) -> str | None:
    """Why a quoted percentage is not the sources' (None when it is; see the module docstring)."""
    same = [g for g in given if abs(abs(g.value) - abs(q.value)) <= slack]
    computed = [c for c in changes if abs(abs(c) - abs(q.value)) <= slack]
    if not same and not computed:
        return "no tool result gives it"
    if labelled := [g for g in same if labels_match(q.label, g.label)]:
        agrees = any(not (q.direction and g.direction and q.direction != g.direction) for g in labelled)
        return None if agrees else "the tool results give it for that label in the other direction"
    if q.direction and all(g.direction and g.direction != q.direction for g in same) and all(
            c * q.direction < 0 for c in computed):
        return "the tool results give it only in the other direction"
    return None


def invented_percentages(evidence: Evidence, answer: str) -> list[tuple[Quantity, str]]:
    """The percentages of ``answer`` that are not the sources' figures, each with why."""
    stated = [s.quantity for s in evidence.stated] + find_quantities(evidence.texts[0])
    given = [q for q in stated if q.kind == "percent"] + _table_percentages(evidence)
    changes = _changes(evidence)
    return [(q, why) for q in compared_labels(answer, find_quantities(answer))
            if q.kind == "percent" and (why := _unfounded(q, given, changes, _precision(answer[q.start:q.end])))]
