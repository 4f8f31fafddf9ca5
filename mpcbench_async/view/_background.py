"""A sweep's index opened — or built, for a new or changed sweep — in a background thread while the viewer serves.

Why: building the index of a 100k-run sweep reads ~1 GB of records (tens of
seconds), but the overview needs only the summary: ``summary.json`` of a finished
sweep, read at once. So the viewer answers ``/`` as soon as it listens, and the
pages that query the index (runs, one run, compare) say how far the build is
until it is done. The build runs in a thread, never on the event loop; sqlite
connections here are opened with ``check_same_thread=False`` and, once the build
is done, used by the event loop's thread only.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from ..sweep import Summary
from ._index import BuildCancelled, Progress, SweepIndex, fresh_summary, open_index

__all__ = ["BackgroundIndex"]

log = logging.getLogger(__name__)


class BackgroundIndex:
    """The index of ``out_dir`` as it becomes available: ``summary`` (at once from a fresh ``summary.json``, else
    once built), ``index`` (None until ready), ``error`` (why the build failed), ``progress`` (bytes read)."""

    def __init__(self, out_dir: str | Path, *, on_build: Callable[[], None] | None = None,
                 index: SweepIndex | None = None) -> None:
        """``on_build``: called in the thread before a build starts; ``index``: one already open (nothing to run)."""
        self.out_dir = Path(out_dir)
        self.progress = Progress()
        self.index = index
        self.error: BaseException | None = None
        self._summary: Summary | None = index.summary if index is not None else fresh_summary(self.out_dir)
        self._on_build = on_build
        self._done = threading.Event()
        if index is not None:
            self._done.set()
        self._thread = threading.Thread(target=self._open, name=f"view-index {self.out_dir}", daemon=True)

    def start(self) -> BackgroundIndex:
        """Start the build's thread (once; nothing to start for an index already open)."""
        if not self._done.is_set() and self._thread.ident is None:
            self._thread.start()
        return self

    @property
    def has_summary(self) -> bool:
        return self._summary is not None

    @property
    def summary(self) -> Summary:
        if self._summary is None:
            raise LookupError("the summary is not ready")
        return self._summary

    @property
    def done(self) -> bool:
        return self._done.is_set()

    async def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` (in a worker thread, off the event loop) for the build to end; whether it has."""
        if self._done.is_set() or seconds <= 0:
            return self._done.is_set()
        return await asyncio.to_thread(self._done.wait, seconds)

    def close(self) -> None:
        """Close the index; a build still running is stopped and its temporary file removed (Ctrl-C leaves none)."""
        if not self._done.is_set():
            self.progress.cancel()
        if self.index is not None:
            self.index.close()

    def _open(self) -> None:
        try:
            index = open_index(self.out_dir, on_build=self._on_build, progress=self.progress)
        except BuildCancelled as exc:  # the viewer is shutting down
            log.info("view.index_cancelled", extra={"dir": str(self.out_dir)})
            self.error = exc
        except Exception as exc:  # shown on every page that needs the index, and logged
            log.exception("view.index_failed", extra={"dir": str(self.out_dir)})
            self.error = exc
        else:
            self.index, self._summary = index, index.summary
        finally:
            self._done.set()
