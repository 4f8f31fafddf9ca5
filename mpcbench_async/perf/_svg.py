"""Tiny dependency-free SVG line charts for profile reports.

``line_chart`` scales each series to its own height (shapes over time, labelled
with their maxima); ``xy_chart`` puts every series on shared axes with round
ticks (``_numbers.ticks``, as the viewer's charts), for figures read off the axes.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from .._numbers import tick_label, ticks

__all__ = ["line_chart", "xy_chart"]

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def line_chart(
    title: str,
    x_label: str,
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    width: int = 720,
    height: int = 360,
    log_x: bool = False,
) -> str:
    """An SVG with one polyline per named series of (x, y) points, each scaled to its own y range."""
    import math

    pad_l, pad_r, pad_t, pad_b = 60, 160, 40, 50
    xs = [x for _, pts in series for x, _ in pts] or [0.0, 1.0]
    fx = (lambda v: math.log10(max(v, 1e-9))) if log_x else (lambda v: v)
    x_lo, x_hi = fx(min(xs)), fx(max(xs))
    x_hi = x_hi if x_hi > x_lo else x_lo + 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
             f'<line x1="{pad_l}" y1="{height - pad_b}" x2="{width - pad_r}" y2="{height - pad_b}" stroke="black"/>',
             f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{height - pad_b}" stroke="black"/>',
             f'<text x="{(pad_l + width - pad_r) / 2}" y="{height - 12}" text-anchor="middle">{escape(x_label)}</text>']
    for tick in sorted(set(xs))[:12]:
        x = pad_l + (fx(tick) - x_lo) / (x_hi - x_lo) * (width - pad_l - pad_r)
        parts.append(f'<text x="{x:.1f}" y="{height - pad_b + 15}" text-anchor="middle">{tick:g}</text>')
    for index, (name, points) in enumerate(series):
        if not points:
            continue
        colour = COLOURS[index % len(COLOURS)]
        y_hi = max(y for _, y in points) or 1.0
        coords = " ".join(
            f"{pad_l + (fx(x) - x_lo) / (x_hi - x_lo) * (width - pad_l - pad_r):.1f},"
            f"{height - pad_b - (y / y_hi) * (height - pad_t - pad_b):.1f}" for x, y in points)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{coords}"/>')
        parts.append(f'<text x="{width - pad_r + 8}" y="{pad_t + 18 * index + 10}" fill="{colour}">'
                     f'{escape(name)} (max {y_hi:.3g})</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _axis(values: Sequence[float]) -> tuple[list[float], float]:
    """Round ticks covering 0 and ``values``, and their step."""
    low, high = min([0.0, *values]), max([0.0, *values])
    marks = ticks(low, high if high > low else low + 1)
    return marks, marks[1] - marks[0]


def xy_chart(
    title: str,
    x_label: str,
    y_label: str,
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    step: bool = False,
    empty: str = "no data",
    width: int = 720,
    height: int = 380,
) -> str:
    """An SVG of named (x, y) series on shared axes from 0 with ticks, grid and a legend.

    Points are drawn as given (sort them) with a dot each; ``step`` draws a staircase
    instead (a CDF). With no points at all the axes carry the ``empty`` note.
    """
    pad_l, pad_r, pad_t, pad_b = 64, 170, 40, 56
    points = [p for _, pts in series for p in pts]
    x_marks, x_step = _axis([x for x, _ in points])
    y_marks, y_step = _axis([y for _, y in points])
    right, bottom = width - pad_r, height - pad_b

    def px(x: float) -> float:
        return round(pad_l + (x - x_marks[0]) / (x_marks[-1] - x_marks[0]) * (right - pad_l), 1)

    def py(y: float) -> float:
        return round(bottom - (y - y_marks[0]) / (y_marks[-1] - y_marks[0]) * (bottom - pad_t), 1)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12"><title>{escape(title)}</title>',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>']
    for mark in x_marks:
        parts.append(f'<g class="tick x"><line x1="{px(mark)}" y1="{pad_t}" x2="{px(mark)}" y2="{bottom + 4}" '
                     f'stroke="#ddd"/><text x="{px(mark)}" y="{bottom + 17}" text-anchor="middle">'
                     f'{tick_label(mark, x_step)}</text></g>')
    for mark in y_marks:
        parts.append(f'<g class="tick y"><line x1="{pad_l - 4}" y1="{py(mark)}" x2="{right}" y2="{py(mark)}" '
                     f'stroke="#ddd"/><text x="{pad_l - 7}" y="{py(mark) + 4}" text-anchor="end">'
                     f'{tick_label(mark, y_step)}</text></g>')
    parts += [f'<line class="axis" x1="{pad_l}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="black"/>',
              f'<line class="axis" x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{bottom}" stroke="black"/>',
              f'<text x="{(pad_l + right) / 2}" y="{height - 12}" text-anchor="middle">{escape(x_label)}</text>',
              f'<text x="14" y="{(pad_t + bottom) / 2}" text-anchor="middle" '
              f'transform="rotate(-90 14 {(pad_t + bottom) / 2})">{escape(y_label)}</text>']
    if not points:
        parts.append(f'<text x="{(pad_l + right) / 2}" y="{(pad_t + bottom) / 2}" text-anchor="middle" '
                     f'fill="#666">{escape(empty)}</text>')
    for index, (name, pts) in enumerate(series):
        if not pts:
            continue
        colour = COLOURS[index % len(COLOURS)]
        shape = [(pts[0][0], 0.0)] if step else []
        for i, (x, y) in enumerate(pts):
            shape += [(x, pts[i - 1][1]), (x, y)] if step and i else [(x, y)]
        coords = " ".join(f"{px(x)},{py(y)}" for x, y in shape)
        parts.append(f'<polyline class="series" data-name="{escape(name)}" fill="none" stroke="{colour}" '
                     f'stroke-width="2" points="{coords}"/>')
        if not step:
            parts += [f'<circle cx="{px(x)}" cy="{py(y)}" r="3" fill="{colour}"/>' for x, y in pts]
        parts.append(f'<text x="{right + 10}" y="{pad_t + 18 * index + 10}" fill="{colour}">{escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
