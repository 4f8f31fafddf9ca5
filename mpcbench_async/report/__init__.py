"""Rendering, in one place: the sweep summary as a terminal table and ``summary.md``, its statistics and validity
certificate sections, and the HTML and SVG building blocks of the viewer and the HTML report.

Why one package: the same figure (an interval, a p-value, a model name) must read the same in every output, and a
package that renders should not reach into another's private modules to do it. Beside ``sweep`` in the layers: the
sweep writes its summary with these renderers, and they read the sweep's summary types; ``view`` and ``compare``,
above, render with them.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._certificate import certificate_notes, certificate_sections, certificate_status
    from ._html import SCRIPT, SCRIPT_PATH, STYLESHEET, STYLESHEET_PATH, esc, fmt, href, page, pct, table
    from ._summary import render_markdown, render_table
    from ._svg import Bar, bar_chart, heatmap

__all__ = ["render_markdown", "render_table"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["Bar", "SCRIPT", "SCRIPT_PATH", "STYLESHEET", "STYLESHEET_PATH", "bar_chart", "certificate_notes",
             "certificate_sections", "certificate_status", "esc", "fmt", "heatmap", "href", "page", "pct", "table"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
