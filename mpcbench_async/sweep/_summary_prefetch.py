"""The summary's modules imported on a thread while a sweep's first requests wait on the model.

Why: the summary's readers, statistics, certificate and rendering (``_summary``, ``_summary_cache``, ``report``)
cost ≈ 0.1–0.2 s of imports that every sweep used to pay before its first request, and the first wave of
requests then waits ≈ 200 ms on the model with the process idle (issue 31). ``run_sweep`` starts
``SummaryPrefetch.start_when_waiting`` beside the runner: once every other task of the loop waits on something
(``anyio.wait_all_tasks_blocked``, which checks every 0.1 s: the first requests are out), a daemon thread imports
them; ``_write_summary`` runs after ``join``.

The import lock: Python locks each module while it runs; a thread that needs a module another thread is
importing waits for it. A deadlock needs each thread to hold a module the other's import needs, i.e. a circular
import across the two threads; the package's imports point down (``tests/test_import_graph.py``), so the loop's
own imports (a suite's lazy import during the run) at most wait for the thread's. An import error is not raised on
the thread: the failed module is left out of ``sys.modules``, so the caller's own import (after ``join``) raises
it again, where and as it always did.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from importlib import import_module

import anyio

__all__ = ["SUMMARY_MODULES", "SummaryPrefetch"]

SUMMARY_MODULES = ("mpcbench_async.report", "mpcbench_async.sweep._summary", "mpcbench_async.sweep._summary_cache")


class SummaryPrefetch:
    """Imports ``modules`` on one daemon thread, once; ``join`` waits for it (a no-op if it never started)."""

    def __init__(self, modules: Sequence[str] = SUMMARY_MODULES) -> None:
        self.modules = tuple(modules)
        self.thread: threading.Thread | None = None

    async def start_when_waiting(self) -> None:
        """Start the imports once every other task of the loop waits (cancelled first: they run in ``join``'s
        caller's own imports instead)."""
        await anyio.wait_all_tasks_blocked()
        self.start()

    def start(self) -> None:
        if self.thread is None and not all(name in sys.modules for name in self.modules):
            self.thread = threading.Thread(target=_import_all, args=(self.modules,), name="summary-prefetch",
                                           daemon=True)
            self.thread.start()

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


def _import_all(modules: Sequence[str]) -> None:
    for name in modules:
        try:
            import_module(name)
        except Exception:  # raised again by the caller's own import, on its thread (see above)
            return
