"""The viewer's index of a sweep: one sqlite row per kept run, built once and cached on disk.

Why: a 100k-run sweep does not fit comfortably in memory as records (each holds
a whole transcript), and the runs page must filter and page it instantly. The
index keeps, per kept run, the fields the tables show plus the byte offset and
length of its line in ``runs.jsonl``; a run's page reads that one line. What is
kept is decided by the sweep's own reader (``sweep._reading.Reader``, the rules
``summarize`` counts by — latest ok record per key, the current experiment's
keys, fresh judgements only), in ONE read of ``runs.jsonl`` and
``judgements.jsonl``: the reader's views are extended here with where each line
lies (and a run's tokens, cost and latency), so the reader's per-key entries
carry their line's position and nothing else per record is held. The rows are
then streamed into sqlite in batches. The summary the overview shows is
``summary.json`` when it is fresh (``fresh_summary``: written after every file it
summarizes, as a finished sweep writes it last); otherwise it is computed from
that same read (``sweep._summary.summary_of``).

The index lives in ``DIR/.view/index.sqlite`` and is reused while the sweep's
files keep their sizes and modification times; otherwise it is rebuilt (into a
temporary file, then swapped in; a build stopped by Ctrl-C removes its temporary file, and one left by a builder
that was killed is removed by the next build). A directory that cannot be written gets an
in-memory index, rebuilt on each start. The sweep's own files are only read. A live viewer keeps its index up to
date by reading only what a running sweep appends (``_build.Tail``, ``SweepIndex.apply``).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from .._exceptions import InputError
from .._options import sweep_dir_problem
from ..llm import LEDGER
from ..runtime import pid_alive
from ..sweep import CALLS, JUDGEMENTS, RUNS, Summary

if TYPE_CHECKING:
    from ..mpcbench import AgentRunRecord, JudgeRecord
    from ._build import Tail

__all__ = ["RUN_COLUMNS", "BuildCancelled", "Patch", "Progress", "SweepIndex", "file_stamp", "fresh_summary",
           "open_index"]

log = logging.getLogger(__name__)

SCHEMA_VERSION = "3"
INDEX_DIR, INDEX_FILE, SUMMARY = ".view", "index.sqlite", "summary.json"
BATCH = 5000  # rows per executemany: a bounded list, whatever the sweep's size

RUN_COLUMNS = ("key", "model", "task", "family", "trial", "status", "infra_error", "checks_passed", "checks_total",
               "passed", "ars", "sgr", "scores", "offset", "length", "tokens", "cost", "latency", "error")

SCHEMA = """
CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB);
CREATE TABLE runs(key TEXT PRIMARY KEY, model TEXT, task TEXT, family TEXT, trial INTEGER, status TEXT,
  infra_error INTEGER, checks_passed INTEGER, checks_total INTEGER, passed INTEGER, ars REAL, sgr REAL, scores TEXT,
  offset INTEGER, length INTEGER, tokens INTEGER, cost REAL, latency REAL, error TEXT);
CREATE TABLE judges(key TEXT PRIMARY KEY, run_key TEXT, judge_model TEXT, offset INTEGER, length INTEGER)
  WITHOUT ROWID;
"""
INDEXES = """
CREATE INDEX runs_order ON runs(model, family, task, trial, key);
CREATE INDEX runs_task ON runs(task);
CREATE INDEX runs_family ON runs(family);
CREATE INDEX judges_run ON judges(run_key);
"""


class BuildCancelled(Exception):
    """The build was stopped (``Progress.cancel``): the viewer is shutting down."""


class Progress:
    """How far a build has read the files it scans (bytes), for the page shown while it runs; and the means to stop
    it (``cancel``: the viewer shuts down) with its temporary file removed."""

    def __init__(self, total: int = 0) -> None:
        self.done, self.total, self.stage = 0, total, "reading"
        self.cancelled = False
        self.temporary: Path | None = None  # the file being built, while it is

    def cancel(self) -> None:
        """Stop the build at its next line or stage, and remove its temporary file now (the process may exit before
        the build's thread gets to run again)."""
        self.cancelled = True
        if self.temporary is not None:
            _remove(self.temporary)

    def check(self) -> None:
        if self.cancelled:
            raise BuildCancelled


def fresh_summary(out_dir: Path) -> Summary | None:
    """``summary.json`` when it was written after the last change of every file it summarizes (a finished sweep
    writes it last); None when it is missing, older than one of them, or does not decode as a ``Summary``."""
    try:
        written = (out_dir / SUMMARY).stat().st_mtime_ns
    except FileNotFoundError:
        return None
    for path in [out_dir / RUNS, out_dir / JUDGEMENTS, out_dir / CALLS, out_dir / LEDGER,
                 out_dir / "experiment_keys.txt", *out_dir.glob("*_*.jsonl")]:
        try:
            if path.stat().st_mtime_ns > written:
                return None
        except FileNotFoundError:
            continue
    try:
        return msgspec.json.decode((out_dir / SUMMARY).read_bytes(), type=Summary)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


class Patch(msgspec.Struct, frozen=True):
    """What the lines a live sweep appended change in the index (``_build.Tail.catch_up``): the rows of the runs
    they add or newly judge, the judgements' rows, the new summary and the files' stamp."""

    runs: list[tuple[Any, ...]]
    judges: list[tuple[Any, ...]]
    summary: bytes
    stamp: bytes


def file_stamp(out_dir: Path) -> bytes:
    """Sizes and modification times of every file the index and the summary are built from."""
    names = [RUNS, JUDGEMENTS, CALLS, LEDGER, "experiment_keys.txt", "manifest.json", SUMMARY]
    names += sorted(p.name for p in out_dir.glob("*_*.json*"))
    parts = {"version": SCHEMA_VERSION}
    for name in names:
        try:
            st = (out_dir / name).stat()
        except FileNotFoundError:
            continue
        parts[name] = f"{st.st_size}:{st.st_mtime_ns}"
    return msgspec.json.encode(parts)


class SweepIndex:
    """Queries over one sweep's index, and the two reads a page needs of the sweep's own files."""

    def __init__(self, out_dir: Path, db: sqlite3.Connection, *, rebuilt: bool, on_disk: bool) -> None:
        self.out_dir, self.db, self.rebuilt, self.on_disk = out_dir, db, rebuilt, on_disk
        self.db.row_factory = sqlite3.Row
        raw = self.db.execute("SELECT value FROM meta WHERE name = 'summary'").fetchone()[0]
        self.summary = msgspec.json.decode(bytes(raw), type=Summary)  # summarize's, stored with the index
        stamp = self.db.execute("SELECT value FROM meta WHERE name = 'stamp'").fetchone()
        self.stamp = bytes(stamp[0]) if stamp is not None else b""  # the files it was built from (``changed``)

    def changed(self) -> bool:
        """Whether the sweep's files differ from those the index was built from (a live sweep appended records)."""
        return file_stamp(self.out_dir) != self.stamp

    def close(self) -> None:
        self.db.close()

    def apply(self, patch: Patch) -> bool:
        """Write a live sweep's new rows, summary and stamp in one transaction (from the thread that serves the
        pages: the connection is theirs); on disk, the index stays a valid cache of the files it now stamps.
        Whether a page would show anything new (rows, or another summary)."""
        changed = bool(patch.runs or patch.judges) or patch.summary != msgspec.json.encode(self.summary)
        width = len(RUN_COLUMNS)
        with self.db:
            self.db.executemany(f"INSERT OR REPLACE INTO runs VALUES ({', '.join('?' * width)})", patch.runs)
            self.db.executemany("INSERT OR REPLACE INTO judges VALUES (?, ?, ?, ?, ?)", patch.judges)
            self.db.execute("UPDATE meta SET value = ? WHERE name = 'summary'", (patch.summary,))
            self.db.execute("UPDATE meta SET value = ? WHERE name = 'stamp'", (patch.stamp,))
        self.summary = msgspec.json.decode(patch.summary, type=Summary)
        self.stamp = patch.stamp
        return changed

    def runs(self, where: str = "", params: tuple[Any, ...] = (), *, order: str = "model, family, task, trial, key",
             limit: int | None = None, offset: int = 0) -> list[sqlite3.Row]:
        sql = f"SELECT * FROM runs {('WHERE ' + where) if where else ''} ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)} OFFSET {int(offset)}"
        return self.db.execute(sql, params).fetchall()

    def count(self, where: str = "", params: tuple[Any, ...] = ()) -> int:
        return int(self.db.execute(f"SELECT COUNT(*) FROM runs {('WHERE ' + where) if where else ''}",
                                   params).fetchone()[0])

    def distinct(self, column: str) -> list[str]:
        if column not in RUN_COLUMNS:
            raise ValueError(column)
        return [row[0] for row in self.db.execute(f"SELECT DISTINCT {column} FROM runs ORDER BY {column}")]

    def run(self, key: str) -> sqlite3.Row | None:
        return self.db.execute("SELECT * FROM runs WHERE key = ?", (key,)).fetchone()

    def record(self, row: sqlite3.Row) -> AgentRunRecord | None:
        """The kept run record itself, read from its line of ``runs.jsonl`` (None if that line is gone:
        the file was rewritten after the index was built — the next start rebuilds it)."""
        from ..mpcbench import (
            AgentRunRecord,  # the transcript's types: imported by the first run page, not the first page
        )

        if row["offset"] is None:
            return None
        raw = _read(self.out_dir / RUNS, row["offset"], row["length"])
        try:
            return msgspec.json.decode(raw, type=AgentRunRecord)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None

    def answer_matches(self, where: str, params: tuple[Any, ...], text: str) -> set[str]:
        """The keys of the kept runs (of ``where``) whose final answer contains ``text``, ignoring case.

        Answers are not in the index (they would double its size); each candidate's line is read at its offset, in
        file order, and only its answer decoded: a search over 100k runs reads their lines once.
        """
        needle, found = text.casefold(), set[str]()
        decoder = msgspec.json.Decoder(_AnswerLine)
        rows = self.db.execute(f"SELECT key, offset, length FROM runs {('WHERE ' + where) if where else ''} "
                               "ORDER BY offset", params).fetchall()
        try:
            fh = (self.out_dir / RUNS).open("rb")
        except FileNotFoundError:
            return found
        with fh:
            for key, offset, length in rows:
                if offset is None:
                    continue
                fh.seek(offset)
                try:
                    line = decoder.decode(fh.read(length))
                except msgspec.DecodeError:  # the file was rewritten since the index was built: the next start rebuilds
                    continue
                if line.run is not None and needle in line.run.final_answer.casefold():
                    found.add(key)
        return found

    def judgements(self, row: sqlite3.Row) -> list[JudgeRecord]:
        """The kept judgements of a kept run (the ok ones the sweep counts: one per judge model), by judge model."""
        from ..mpcbench import JudgeRecord

        found = self.db.execute("SELECT offset, length FROM judges WHERE run_key = ? ORDER BY judge_model",
                                (row["key"],)).fetchall()
        return [msgspec.json.decode(_read(self.out_dir / JUDGEMENTS, line[0], line[1]), type=JudgeRecord)
                for line in found]


class _Answer(msgspec.Struct):
    final_answer: str = ""


class _AnswerLine(msgspec.Struct):
    """What a search reads of a run's line: its final answer (every other field skipped unparsed)."""

    run: _Answer | None = None


def _read(path: Path, offset: int, length: int) -> bytes:
    with path.open("rb") as fh:
        fh.seek(offset)
        return fh.read(length)


def _remove(temporary: Path) -> None:
    """A temporary index and its sqlite journal."""
    for path in (temporary, temporary.with_name(temporary.name + "-journal")):
        path.unlink(missing_ok=True)


def _remove_stale(index_dir: Path) -> None:
    """Temporary indexes (``index.sqlite.PID.TID.tmp``) of builders whose process is gone: killed mid-build."""
    for path in index_dir.glob(f"{INDEX_FILE}.*.*.tmp*"):
        pid = path.name.split(".")[2]
        if pid.isdigit() and not pid_alive(int(pid)):
            path.unlink(missing_ok=True)


def _stored(path: Path, stamp: bytes) -> sqlite3.Connection | None:
    """The cached index at ``path`` if it was built from files with this stamp."""
    if not path.exists():
        return None
    try:
        db = sqlite3.connect(path, check_same_thread=False)
        row = db.execute("SELECT value FROM meta WHERE name = 'stamp'").fetchone()
    except sqlite3.DatabaseError:
        return None
    if row is not None and bytes(row[0]) == stamp:
        return db
    db.close()
    return None


def open_index(out_dir: str | Path, *, on_build: Callable[[], None] | None = None,
               progress: Progress | None = None, tail: Tail | None = None) -> SweepIndex:
    """The index of ``out_dir``: the cached one when the files are unchanged, else a fresh build.

    ``on_build`` is called before a build starts (reading a large sweep takes a while: the CLI says so);
    ``progress`` is advanced as the build reads (the viewer's page shown meanwhile says how far it is);
    ``tail``: build through it, cached index or not, and keep its read (a live viewer catches up from there).
    Raises ``InputError`` when ``out_dir`` is not a sweep's output directory (``_options.sweep_dir_problem``).
    """
    from ._build import build  # the sweep's reader and summary: imported when a build needs them

    if not isinstance(out_dir, (str, os.PathLike)):
        raise InputError(f"out_dir must be a path (str or pathlib.Path), got {type(out_dir).__name__} {out_dir!r}",
                         setting="out_dir")
    if (problem := sweep_dir_problem(out_dir)) is not None:  # the CLI's rule: never an empty report of a typo
        raise InputError(problem)
    out_dir = Path(out_dir)
    progress = progress if progress is not None else Progress()
    stamp = file_stamp(out_dir)
    path = out_dir / INDEX_DIR / INDEX_FILE
    db = _stored(path, stamp) if tail is None else None
    if db is not None:
        try:
            return SweepIndex(out_dir, db, rebuilt=False, on_disk=True)
        except (msgspec.DecodeError, msgspec.ValidationError, sqlite3.DatabaseError, TypeError):
            db.close()  # written by another version of the viewer: build it again
    progress.total = sum(p.stat().st_size for p in (out_dir / RUNS, out_dir / JUDGEMENTS) if p.exists())
    if on_build is not None:
        on_build()
    progress.check()
    try:
        path.parent.mkdir(exist_ok=True)
        _remove_stale(path.parent)
        temporary = path.with_name(f"{INDEX_FILE}.{os.getpid()}.{threading.get_ident()}.tmp")
        _remove(temporary)
        db = sqlite3.connect(temporary, check_same_thread=False)
    except (OSError, sqlite3.OperationalError) as exc:
        log.info("view.index_in_memory", extra={"dir": str(out_dir), "reason": str(exc)})
        db = sqlite3.connect(":memory:", check_same_thread=False)
        build(db, out_dir, stamp, progress, tail)
        return SweepIndex(out_dir, db, rebuilt=True, on_disk=False)
    progress.temporary = temporary
    try:
        build(db, out_dir, stamp, progress, tail)
        db.close()
        os.replace(temporary, path)
    except BaseException as exc:
        db.close()
        _remove(temporary)
        if progress.cancelled and not isinstance(exc, BuildCancelled):
            raise BuildCancelled from exc  # sqlite failing on the file cancel removed under it
        raise
    finally:
        progress.temporary = None
    return SweepIndex(out_dir, sqlite3.connect(path, check_same_thread=False), rebuilt=True, on_disk=True)
