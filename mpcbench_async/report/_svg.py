"""Inline SVG charts with real axes: tick positions and labels, bars with CI whiskers, a labelled heatmap.

Why hand-written SVG: the viewer and the shared report must work offline as a
single file (no CDN, no chart library), and a chart is only honest with an axis
whose ticks say what the lengths mean. ``ticks`` (in ``_numbers``, shared with
the perf charts) picks "nice" steps (1, 2, 5 × 10^k) covering a domain, ``Scale``
maps values to pixels; the chart functions return markup strings whose every
text is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

import msgspec

from .._numbers import tick_label, ticks

__all__ = ["Bar", "Scale", "bar_chart", "heatmap", "tick_label", "ticks"]


class Scale:
    """A linear map from a value domain to a pixel range (either direction)."""

    def __init__(self, domain: tuple[float, float], pixels: tuple[float, float]) -> None:
        self.domain, self.pixels = domain, pixels

    def __call__(self, value: float) -> float:
        (d0, d1), (p0, p1) = self.domain, self.pixels
        if d1 == d0:
            return p0
        return round(p0 + (value - d0) * (p1 - p0) / (d1 - d0), 2)


class Bar(msgspec.Struct, frozen=True):
    """One bar: its label, value and optional confidence interval."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None


_FONT = 'font-family="sans-serif" font-size="11"'
# Label layout: labels wrap to the width they have (a bar's slot, a heatmap cell), so no two can overlap, and the
# chart grows to hold their lines. CHAR_PX is the widest average advance of an 11 px sans-serif character (DejaVu
# Sans, Liberation Sans, Arial: 0.6–0.65 em), so a line estimated from it never spills. A label is cut at
# LABEL_CHARS (… at the end); the whole name is always in a <title> (the browser shows it on hover).
CHAR_PX, LABEL_CHARS, LINE_PX, MAX_LINES = 7.5, 60, 13, 4
_BREAKS = "/-_ .:@"  # a line may end after one of these; a name without any is cut where the line is full
MIN_SLOT, ROW_LABEL_PX = 64, 300  # a bar's slot at least; the heatmap's row labels at most this wide


def _label(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS - 1] + "…"


def _lines(text: str, room_px: float) -> list[str]:
    """``text`` (cut to LABEL_CHARS) in lines of at most ``room_px``, broken after a separator where one is near;
    at most MAX_LINES, the last ending in … when more was left."""
    per_line = max(3, int(room_px // CHAR_PX))
    rest, lines = _label(text), []
    while rest:
        if len(rest) <= per_line:
            lines.append(rest)
            break
        cut = max((rest.rfind(c, 0, per_line) for c in _BREAKS), default=-1) + 1
        cut = cut if cut >= per_line // 2 else per_line
        lines.append(rest[:cut])
        rest = rest[cut:]
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES - 1], lines[MAX_LINES - 1][:per_line - 1] + "…"]
    return lines


def _text(cls: str, x: float, y: float, text: str, *, anchor: str, room_px: float, upwards: bool = False) -> str:
    """A label wrapped to ``room_px``: its first line at ``y`` (``upwards``: its last line there, the others above),
    in a group whose <title> holds the whole text."""
    lines = _lines(text, room_px)
    first = y - LINE_PX * (len(lines) - 1) if upwards else y
    spans = "".join(f'<tspan x="{round(x, 2)}" dy="{0 if i == 0 else LINE_PX}">{escape(line)}</tspan>'
                    for i, line in enumerate(lines))
    return (f'<g class="label"><title>{escape(text)}</title><text class="{cls}" x="{round(x, 2)}" '
            f'y="{round(first, 2)}" text-anchor="{anchor}" {_FONT}>{spans}</text></g>')


def _line_count(texts: Sequence[str], room_px: float) -> int:
    return max((len(_lines(t, room_px)) for t in texts), default=1)


def bar_chart(bars: Sequence[Bar], *, title: str, axis_label: str, domain: tuple[float, float],
              width: int = 560) -> str:
    """Vertical bars on a labelled y axis from ``domain``, with CI whiskers where an interval is known.

    Bar labels never overlap: each wraps within its bar's slot (at least MIN_SLOT wide: many bars widen the chart),
    and the chart grows downwards to hold the most lines.
    """
    left, right, top, plot_h = 48, 12, 28, 156
    slot = max(MIN_SLOT, (width - left - right) / max(1, len(bars)))
    width = max(width, round(left + right + slot * len(bars)))
    bottom = 26 + LINE_PX * _line_count([bar.label for bar in bars], slot - 8)
    height = top + plot_h + bottom
    marks = ticks(*domain)
    domain = (marks[0], marks[-1]) if len(marks) > 1 else domain
    y = Scale(domain, (height - bottom, top))
    step = marks[1] - marks[0] if len(marks) > 1 else 1.0
    parts = [f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}"><title>{escape(title)}</title>',
             f'<text x="{width / 2}" y="16" text-anchor="middle" {_FONT} font-weight="bold">{escape(title)}</text>',
             f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#444"/>',
             f'<line class="axis" x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" '
             'stroke="#444"/>',
             f'<text x="12" y="{(top + height - bottom) / 2}" {_FONT} text-anchor="middle" '
             f'transform="rotate(-90 12 {(top + height - bottom) / 2})">{escape(axis_label)}</text>']
    for mark in marks:
        py = y(mark)
        parts.append(f'<g class="tick"><line x1="{left - 4}" y1="{py}" x2="{width - right}" y2="{py}" stroke="#ddd"/>'
                     f'<text x="{left - 6}" y="{py + 4}" text-anchor="end" {_FONT}>{tick_label(mark, step)}</text></g>')
    for i, bar in enumerate(bars):
        cx = left + slot * (i + 0.5)
        parts.append(_text("bar-label", cx, height - bottom + 14, bar.label, anchor="middle", room_px=slot - 8))
        if bar.value is None:
            parts.append(f'<text x="{round(cx, 2)}" y="{height - bottom - 4}" text-anchor="middle" {_FONT}>–</text>')
            continue
        bw = min(48.0, slot * 0.6)
        top_y, base_y = y(bar.value), y(domain[0])
        parts.append(f'<rect class="bar" x="{round(cx - bw / 2, 2)}" y="{top_y}" width="{round(bw, 2)}" '
                     f'height="{round(base_y - top_y, 2)}" fill="#4a7fb5"><title>{escape(bar.label)}: '
                     f'{bar.value:.3f}</title></rect>')
        if bar.low is not None and bar.high is not None:
            lo, hi, cxr = y(bar.low), y(bar.high), round(cx, 2)
            parts.append(f'<g class="whisker" stroke="#222"><line x1="{cxr}" y1="{lo}" x2="{cxr}" y2="{hi}"/>'
                         f'<line x1="{cxr - 6}" y1="{lo}" x2="{cxr + 6}" y2="{lo}"/>'
                         f'<line x1="{cxr - 6}" y1="{hi}" x2="{cxr + 6}" y2="{hi}"/></g>')
    parts.append("</svg>")
    return "".join(parts)


def _colour(value: float, domain: tuple[float, float]) -> str:
    """Red (low) through yellow to green (high)."""
    span = domain[1] - domain[0] or 1.0
    t = min(1.0, max(0.0, (value - domain[0]) / span))
    hue = round(120 * t)
    return f"hsl({hue}, 65%, 72%)"


def heatmap(rows: Sequence[str], columns: Sequence[str], values: Mapping[tuple[str, str], float | None], *,
            title: str, domain: tuple[float, float], row_axis: str, column_axis: str) -> str:
    """A grid of ``rows`` × ``columns`` cells coloured and labelled by value (blank where there is none).

    Labels are never cut: a row label wraps within a margin of up to ROW_LABEL_PX (the chart's height grows with
    the most lines), a column label within its cell's width (the chart grows upwards to hold the most lines); the
    whole text is in a hover title.
    """
    cell_w = 110
    row_room = min(ROW_LABEL_PX, max((len(_label(r)) * CHAR_PX for r in rows), default=0.0))
    left = max(170, round(row_room) + 16)
    cell_h = max(28, 10 + LINE_PX * _line_count(rows, row_room))
    top = 58 + LINE_PX * _line_count(columns, cell_w - 8)
    width = left + cell_w * max(1, len(columns)) + 10
    height = top + cell_h * max(1, len(rows)) + 10
    parts = [f'<svg class="chart heatmap" role="img" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}"><title>{escape(title)}</title>',
             f'<text x="{left}" y="14" {_FONT} font-weight="bold">{escape(title)}</text>',
             f'<text class="axis-label" x="{left + cell_w * len(columns) / 2}" y="32" text-anchor="middle" '
             f'{_FONT} font-style="italic">{escape(column_axis)}</text>',
             f'<text class="axis-label" x="8" y="{top - 8}" {_FONT} font-style="italic">{escape(row_axis)}</text>']
    for j, column in enumerate(columns):
        parts.append(_text("column-label", left + cell_w * (j + 0.5), top - 8, column, anchor="middle",
                           room_px=cell_w - 8, upwards=True))
    for i, row in enumerate(rows):
        y0 = top + cell_h * i
        lines = len(_lines(row, row_room))
        parts.append(_text("row-label", left - 6, y0 + cell_h / 2 + 4 - LINE_PX * (lines - 1) / 2, row, anchor="end",
                           room_px=row_room))
        for j, column in enumerate(columns):
            value = values.get((row, column))
            x0 = left + cell_w * j
            fill = "#f2f2f2" if value is None else _colour(value, domain)
            text = "–" if value is None else f"{value:.2f}"
            parts.append(f'<g class="cell" data-row="{escape(row)}" data-column="{escape(column)}">'
                         f'<rect x="{x0}" y="{y0}" width="{cell_w}" height="{cell_h}" fill="{fill}" stroke="#fff"/>'
                         f'<text x="{x0 + cell_w / 2}" y="{y0 + cell_h / 2 + 4}" text-anchor="middle" {_FONT}>'
                         f'{text}</text></g>')
    parts.append("</svg>")
    return "".join(parts)
