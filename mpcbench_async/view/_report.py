"""``report DIR --html``: one self-contained HTML file to share — the overview plus the worst and best runs.

Why a separate file rather than a saved page: it must open anywhere, offline,
with nothing to fetch (inline CSS and SVG, no links out), and a reader wants
the extremes' transcripts beside the tables. It is built from the same index
and render functions as the viewer, so both show the same numbers and markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..report import esc, fmt, page
from ..runtime import atomic_write_bytes
from ._index import SweepIndex
from ._pages import overview_body, run_details

__all__ = ["render_report", "write_report"]

_ORDER = {"worst": "ars ASC, sgr ASC, key ASC", "best": "ars DESC, sgr DESC, key ASC"}


def _runs(index: SweepIndex, which: str, n: int) -> str:
    """The ``n`` kept, judged runs with the lowest (``worst``) or highest (``best``) mean ARS, then SGR."""
    blocks = []
    for row in index.runs("status = 'ok' AND ars IS NOT NULL", order=_ORDER[which], limit=n):
        record = index.record(row)
        if record is None:
            continue
        blocks.append(f'<div class="run" data-key="{esc(row["key"])}"><h3>{esc(row["model"])} · {esc(row["task"])} '
                      f'· trial {esc(row["trial"])} · ARS {fmt(row["ars"])} · SGR {fmt(row["sgr"])}</h3>'
                      f"{run_details(row, record, index.judgements(row))}</div>")
    title = f"{which.capitalize()} {n} runs (by mean ARS over judges, then SGR)"
    return f'<section id="{which}"><h2>{esc(title)}</h2>{"".join(blocks) or "<p>No judged run.</p>"}</section>'


def render_report(index: SweepIndex, *, worst: int = 5, best: int = 5,
                  chapters: Mapping[str, str] | None = None) -> str:
    """The whole report document."""
    body = overview_body(index, chapters, links=False) + _runs(index, "worst", worst) + _runs(index, "best", best)
    return page(f"Sweep report: {index.out_dir.name}", body, nav=False)


def write_report(index: SweepIndex, out_file: Path, *, worst: int = 5, best: int = 5,
                 chapters: Mapping[str, str] | None = None) -> None:
    atomic_write_bytes(out_file, render_report(index, worst=worst, best=best, chapters=chapters).encode(),
                       fsync=False)
