"""Tiny dependency-free SVG line charts for profile reports."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["line_chart"]

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
