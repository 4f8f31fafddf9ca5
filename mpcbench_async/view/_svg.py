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


def bar_chart(bars: Sequence[Bar], *, title: str, axis_label: str, domain: tuple[float, float],
              width: int = 560) -> str:
    """Vertical bars on a labelled y axis from ``domain``, with CI whiskers where an interval is known."""
    height, left, right, top, bottom = 240, 48, 12, 28, 56
    marks = ticks(*domain)
    domain = (marks[0], marks[-1]) if len(marks) > 1 else domain
    y = Scale(domain, (height - bottom, top))
    slot = (width - left - right) / max(1, len(bars))
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
        parts.append(f'<text class="bar-label" x="{round(cx, 2)}" y="{height - bottom + 16}" text-anchor="middle" '
                     f'{_FONT}>{escape(bar.label)}</text>')
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
    """A grid of ``rows`` × ``columns`` cells coloured and labelled by value (blank where there is none)."""
    cell_w, cell_h, left, top = 110, 28, 170, 70
    width, height = left + cell_w * max(1, len(columns)) + 10, top + cell_h * max(1, len(rows)) + 10
    parts = [f'<svg class="chart heatmap" role="img" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}"><title>{escape(title)}</title>',
             f'<text x="{left}" y="14" {_FONT} font-weight="bold">{escape(title)}</text>',
             f'<text class="axis-label" x="{left + cell_w * len(columns) / 2}" y="32" text-anchor="middle" '
             f'{_FONT} font-style="italic">{escape(column_axis)}</text>',
             f'<text class="axis-label" x="8" y="{top - 8}" {_FONT} font-style="italic">{escape(row_axis)}</text>']
    for j, column in enumerate(columns):
        parts.append(f'<text class="column-label" x="{left + cell_w * (j + 0.5)}" y="{top - 8}" '
                     f'text-anchor="middle" {_FONT}>{escape(column)}</text>')
    for i, row in enumerate(rows):
        y0 = top + cell_h * i
        parts.append(f'<text class="row-label" x="{left - 6}" y="{y0 + cell_h / 2 + 4}" text-anchor="end" '
                     f'{_FONT}>{escape(row)}</text>')
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
