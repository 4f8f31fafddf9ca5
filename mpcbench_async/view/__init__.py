"""The sweep viewer and the shareable HTML report (``mpcbench-async view`` / ``report --html``).

Between ``sweep`` and ``cli``: an on-disk sqlite index of a sweep's kept runs
(``open_index``), server-rendered pages over it (``make_app``), and one
self-contained HTML report (``write_report``) built from the same render functions.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._background import BackgroundIndex
    from ._index import SweepIndex, open_index
    from ._report import render_report, write_report
    from ._server import make_app
    from ._tariff import case_chapters

__all__ = ["SweepIndex", "make_app", "open_index", "render_report", "write_report"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["BackgroundIndex", "case_chapters"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
