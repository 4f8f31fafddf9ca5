"""Rows of tabular text inside answers and sources: CSV blocks and Markdown tables, cut into cells.

The quantity reader (``_answers``) labels a number in a row by the row's other cells and by the header
of its column, as a reader of a table does; this module only finds the rows, their cells and headers.
Standard library only.

CSV block
    Two or more consecutive lines cut by commas into the same number (≥ 2) of cells, at least one of
    them a bare number; or one line of ≥ 3 cells written without a space after any comma
    (``wau,50000,55000,+10%``). Double quotes protect commas (``"Cold start, p95",1200``). A line whose
    every comma groups thousands (``1,204``), or with a number standing inside a text cell (``Closed: 17
    bugs, 3 epics``), is prose. The header is the block's first line when none of its cells is a bare
    number.
Markdown table
    Lines starting with ``|``; the header is the line just above the ``|---|`` rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Row", "csv_rows", "table_header"]

_BARE_NUMBER = re.compile(r"\s*\"?\s*(?:[+\-−]|↑|↓|▲|▼)?\s?[$€£]?\d[\d,]*(?:\.\d+)?\s?(?:%|[A-Za-z]{1,7})?\s*\"?\s*")
# A comma that does not group thousands (a line with none, "1,204", is prose, not CSV): a scan for the comma.
_NOT_THOUSANDS = re.compile(r"(?<!\d),|,(?!\d{3}(?!\d))")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
# A number standing alone inside a text cell ("Closed: 17 bugs"): such a line is prose, not CSV. Ids and dates
# inside a label ("p95", "2025-W48", "v2.1") are not alone.
_LOOSE_NUMBER = re.compile(r"(?<![\w.\-/:])\d+(?:[.,]\d+)*(?![\w\-/%:.])")


@dataclass(frozen=True, slots=True)
class Row:
    """One CSV row: the (start, end) of each cell in the text, and the header cells of its block (or none)."""

    start: int
    end: int
    cells: tuple[tuple[int, int], ...]
    header: tuple[str, ...]


def _cells(line: str, offset: int) -> list[tuple[int, int]]:
    """Cell spans of a CSV line (commas inside double quotes do not cut)."""
    if '"' not in line:  # every comma cuts: the pieces of a split, not a Python step per character
        spans, begin = [], offset
        for piece in line.split(","):
            spans.append((begin, begin + len(piece)))
            begin += len(piece) + 1
        return spans
    spans, begin, quoted = [], 0, False
    for i, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            spans.append((offset + begin, offset + i))
            begin = i + 1
    spans.append((offset + begin, offset + len(line)))
    return spans


def _bare(text: str) -> bool:
    return bool(_BARE_NUMBER.fullmatch(text)) and any(c.isdigit() for c in text)


def csv_rows(text: str) -> list[Row]:
    """The data rows of every CSV block in ``text`` (module docstring); header lines are not rows."""
    lines, pos = [], 0
    for line in text.split("\n"):
        shaped = "," in line and not line.lstrip().startswith("|") and _NOT_THOUSANDS.search(line) is not None
        lines.append((pos, line, _cells(line, pos) if shaped else []))
        pos += len(line) + 1
    lines = [(start, line, cells if all(_bare(text[s:e]) or not _LOOSE_NUMBER.search(text[s:e]) for s, e in cells)
              else []) for start, line, cells in lines]
    rows: list[Row] = []
    i = 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and lines[j + 1][2] and len(lines[j + 1][2]) == len(lines[i][2]):
            j += 1
        block = lines[i:j + 1]
        i = j + 1
        spans = block[0][2]
        if not spans:
            continue
        numeric = [[_bare(text[s:e]) for s, e in cells] for _, _, cells in block]
        compact = len(block) == 1 and len(spans) >= 3 and ", " not in block[0][1]
        if not any(any(n) for n in numeric) or not (len(block) >= 2 or compact):
            continue
        header: tuple[str, ...] = ()
        if not any(numeric[0]) and len(block) >= 2:
            header = tuple(text[s:e].strip().strip('"').strip() for s, e in spans)
            block = block[1:]
        rows += [Row(start, start + len(line), tuple(cells), header) for start, line, cells in block]
    return rows


def table_header(text: str, line_start: int) -> tuple[str, ...]:
    """The header cells of the Markdown table holding the row that starts at ``line_start`` (none when unknown)."""
    end = line_start - 1
    while end > 0:
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        if _TABLE_RULE.match(line):
            above = text[text.rfind("\n", 0, max(start - 1, 0)) + 1:max(start - 1, 0)]
            return tuple(cell.strip() for cell in above.strip().strip("|").split("|"))
        if not line.lstrip().startswith("|"):
            return ()
        end = start - 1
    return ()
