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
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..sweep import Summary
from ._index import BuildCancelled, Patch, Progress, SweepIndex, file_stamp, fresh_summary, open_index

if TYPE_CHECKING:
    from ._build import Tail

__all__ = ["BackgroundIndex"]

log = logging.getLogger(__name__)


CHECK_EVERY_S = 1.0  # how often a live viewer looks at the sweep's files (a few stat calls)


class BackgroundIndex:
    """The index of ``out_dir`` as it becomes available: ``summary`` (at once from a fresh ``summary.json``, else
    once built), ``index`` (None until ready), ``error`` (why the build failed), ``progress`` (bytes read).

    Live: ``refresh`` notices a sweep that is still writing (its files changed since the index was built) and reads
    what changed in a thread while the pages keep the current index. The first change is read in full, through a
    ``Tail`` that is kept, into a new index that replaces the current one; after that only the lines appended since
    are read (``Tail.catch_up``), and their rows are written into the index in use. ``version`` counts the updates
    (the pages poll it and reload).
    """

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
        self.version = 0
        self._next: SweepIndex | None = None  # a newer index built by ``refresh``'s thread, not yet in use
        self._patch: Patch | None = None  # or the rows a live sweep's appended lines change, not yet written
        self._tail: Tail | None = None  # the kept read of a live sweep (used by ``refresh``'s thread only)
        self._rebuilding: threading.Thread | None = None
        self._checked_at = -CHECK_EVERY_S

    def refresh(self) -> int:
        """Take a newer index if one is ready; start building one if the sweep's files changed (at most one build
        at a time, the files looked at once a second). Call it from the event loop's thread only: the index it
        replaces is closed here, between pages. Returns ``version``."""
        if self._next is not None:
            old, self.index, self._next = self.index, self._next, None
            self._summary = self.index.summary
            self.version += 1
            if old is not None:
                old.close()
        if self._patch is not None and self.index is not None:
            if self.index.apply(self._patch):
                self.version += 1  # the pages reload only when they would show something new
            self._summary, self._patch = self.index.summary, None
        now = time.monotonic()
        idle = self._rebuilding is None or not self._rebuilding.is_alive()
        if self.index is not None and idle and now - self._checked_at >= CHECK_EVERY_S:
            self._checked_at = now
            if self.index.changed():
                self._rebuilding = threading.Thread(target=self._rebuild, name=f"view-refresh {self.out_dir}",
                                                    daemon=True)
                self._rebuilding.start()
        return self.version

    def _rebuild(self) -> None:
        from ._build import Tail  # the sweep's reader: imported once a live sweep changes

        try:
            if self._tail is not None:
                self._patch = self._tail.catch_up(file_stamp(self.out_dir))
                if self._patch is not None:
                    return
            self._tail = Tail(self.out_dir)  # the first change, or one that is not an append: read it all
            self._next = open_index(self.out_dir, tail=self._tail)
        except Exception:  # the current index stays; the next look reads it all again
            self._tail = None
            log.exception("view.refresh_failed", extra={"dir": str(self.out_dir)})

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
        if self._rebuilding is not None:
            self._rebuilding.join()  # a refresh's build: let it end, then close what it made
        for index in (self.index, self._next):
            if index is not None:
                index.close()

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
