"""The validity certificate on the viewer's overview and in the HTML report.

The same section the terminal and ``summary.md`` show (``sweep.certificate_sections``: one
row per task family and one for all, then the verdict's reasons, thresholds, judge–judge
agreement and the suites it does not apply to), so every place shows the same figures.
"""

from __future__ import annotations

from ..report import certificate_notes, certificate_sections, esc, table
from ..sweep import Summary

__all__ = ["certificate_section"]


def certificate_section(summary: Summary) -> str:
    sections = certificate_sections(summary)
    if not sections:
        return ""
    [section] = sections
    rows = ["<tr>" + "".join(f'<td class="num">{esc(cell)}</td>' if i in section.right else f"<td>{esc(cell)}</td>"
                             for i, cell in enumerate(row)) + "</tr>" for row in section.rows]
    notes = "".join(f"<li>{esc(note)}</li>" for note in certificate_notes(summary.certificate))
    status = summary.certificate.status
    return (f'<section id="certificate" data-status="{esc(status)}"><h2>{esc(section.heading)}</h2>'
            f'<p class="muted">{esc(section.about[0].upper() + section.about[1:])}.</p>'
            + table("certificate-table", section.header, rows) + f"<ul>{notes}</ul></section>")
