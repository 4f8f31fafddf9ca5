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
in-memory index, rebuilt on each start. The sweep's own files are only read.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import sqlite3
import struct
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from ..llm import LEDGER
from ..runtime import pid_alive
from ..sweep import AgentRunRecord, JudgeRecord, Summary
from ..sweep._reading import CALLS, JUDGEMENTS, RUNS, JudgeEntry, JudgeLine, Reader, RunEntry, RunLine
from ..sweep._summary import summary_of
from ..sweep._table import iter_run_rows

__all__ = ["RUN_COLUMNS", "BuildCancelled", "Progress", "SweepIndex", "fresh_summary", "open_index"]

log = logging.getLogger(__name__)

SCHEMA_VERSION = "2"
INDEX_DIR, INDEX_FILE, SUMMARY = ".view", "index.sqlite", "summary.json"
BATCH = 5000  # rows per executemany: a bounded list, whatever the sweep's size

RUN_COLUMNS = ("key", "model", "task", "family", "trial", "status", "infra_error", "checks_passed", "checks_total",
               "passed", "ars", "sgr", "scores", "offset", "length", "tokens", "cost", "latency")

_SCHEMA = """
CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB);
CREATE TABLE runs(key TEXT PRIMARY KEY, model TEXT, task TEXT, family TEXT, trial INTEGER, status TEXT,
  infra_error INTEGER, checks_passed INTEGER, checks_total INTEGER, passed INTEGER, ars REAL, sgr REAL, scores TEXT,
  offset INTEGER, length INTEGER, tokens INTEGER, cost REAL, latency REAL);
CREATE TABLE judges(key TEXT PRIMARY KEY, run_key TEXT, judge_model TEXT, offset INTEGER, length INTEGER)
  WITHOUT ROWID;
"""
_INDEXES = """
CREATE INDEX runs_order ON runs(model, family, task, trial, key);
CREATE INDEX runs_task ON runs(task);
CREATE INDEX runs_family ON runs(family);
CREATE INDEX judges_run ON judges(run_key);
"""


# -- the reader's views, with where each line lies (a field no record has: set after decoding) ---------------


class _Usage(msgspec.Struct):
    total_tokens: int = 0


class _Timings(msgspec.Struct):
    total_s: float = 0.0


class _RunBits(msgspec.Struct):
    stop_reason: str = ""  # what the reader's view reads of ``run``
    usage: _Usage = msgspec.field(default_factory=_Usage)
    timings: _Timings = msgspec.field(default_factory=_Timings)
    cost_usd: float | None = 0.0  # None: a call had no known price


_AT = msgspec.field(default=None, name="(viewer: where the line lies)")  # no line holds this name: set after


class _RunLine(RunLine, kw_only=True):  # type: ignore[call-arg]  # a dynamic base
    run: _RunBits | None = None  # type: ignore[assignment]  # the reader's view of ``run``, widened
    at: bytes | None = _AT  # _RUN_AT: offset, length, tokens, cost, latency (NaN: none)


class _JudgeLine(JudgeLine, kw_only=True):  # type: ignore[call-arg]  # a dynamic base
    at: int | None = _AT  # offset << 32 | length


# Packed, not tuples: the reader holds one per kept entry (300k at 100k runs), ~30 MB less at that size.
_RUN_AT = struct.Struct("<qqqdd")


def _run_at(line: _RunLine, offset: int, length: int) -> None:
    bits = line.run
    cost = math.nan if bits is None or bits.cost_usd is None else bits.cost_usd  # NaN: unknown price
    line.at = _RUN_AT.pack(offset, length, bits.usage.total_tokens, cost, bits.timings.total_s) if bits \
        else _RUN_AT.pack(offset, length, 0, 0.0, math.nan)


def _judge_at(line: _JudgeLine, offset: int, length: int) -> None:
    line.at = offset << 32 | length


_VIEWS: dict[type, tuple[type, Callable[[Any, int, int], None]]] = {
    RunLine: (_RunLine, _run_at), JudgeLine: (_JudgeLine, _judge_at)}


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


class _IndexReader(Reader):
    """The sweep's reader, reading runs and judgements with each line's position (one read serves the index and,
    when needed, the summary). Undecodable lines are counted as the reader counts them (``skipped_lines``)."""

    def __init__(self, out_dir: Path, progress: Progress) -> None:
        super().__init__(out_dir)
        self.progress = progress

    def lines(self, name: str, view: type) -> Iterable[Any]:
        if view not in _VIEWS:
            yield from super().lines(name, view)
            return
        located, locate = _VIEWS[view]
        decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(located)
        skipped = 0
        try:
            fh = (self.out_dir / name).open("rb")
        except FileNotFoundError:
            return
        offset = 0
        with fh:
            for line in fh:
                length = len(line)
                self.progress.done += length
                self.progress.check()
                if not line.endswith(b"\n"):
                    skipped += 1  # a torn last line: the process died mid-append
                    break
                if line.strip():
                    try:
                        decoded = decoder.decode(line)
                    except (msgspec.DecodeError, msgspec.ValidationError):
                        skipped += 1
                    else:
                        locate(decoded, offset, length)
                        yield decoded
                offset += length
        if skipped:
            self.skipped_lines[name] = skipped
            log.warning("view.lines_skipped", extra={"path": str(self.out_dir / name), "count": skipped})


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


def _stamp(out_dir: Path) -> bytes:
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

    def close(self) -> None:
        self.db.close()

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
        if row["offset"] is None:
            return None
        raw = _read(self.out_dir / RUNS, row["offset"], row["length"])
        try:
            return msgspec.json.decode(raw, type=AgentRunRecord)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None

    def judgements(self, row: sqlite3.Row) -> list[JudgeRecord]:
        """The kept judgements of a kept run (the ok ones the sweep counts: one per judge model), by judge model."""
        found = self.db.execute("SELECT offset, length FROM judges WHERE run_key = ? ORDER BY judge_model",
                                (row["key"],)).fetchall()
        return [msgspec.json.decode(_read(self.out_dir / JUDGEMENTS, line[0], line[1]), type=JudgeRecord)
                for line in found]


def _read(path: Path, offset: int, length: int) -> bytes:
    with path.open("rb") as fh:
        fh.seek(offset)
        return fh.read(length)


def _batches(rows: Iterable[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    it = iter(rows)
    while batch := list(itertools.islice(it, BATCH)):
        yield batch


def _build(db: sqlite3.Connection, out_dir: Path, stamp: bytes, progress: Progress) -> None:
    """Fill an empty database from one read of runs and judgements: the kept runs with their lines' positions, the
    kept ok judgements' positions, the summary (``summary.json`` when fresh, else from that read), then the stamp.
    The rows are written before the summary is computed, and the positions dropped then: its peak memory is the
    summary's own, not more."""
    db.executescript(_SCHEMA)
    reader = _IndexReader(out_dir, progress)
    runs: dict[str, RunEntry] = reader.runs()
    judges: dict[str, JudgeEntry] = reader.judgements(runs)
    progress.stage = "writing"
    for batch in _batches(_run_values(runs, judges)):
        progress.check()
        db.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
    keys = {id(run): key for key, run in runs.items()}
    for batch in _batches((key, keys[id(j.run)], j.model, j.at >> 32, j.at & 0xFFFFFFFF)
                          for key, j in judges.items() if j.ok and j.at is not None):
        db.executemany("INSERT INTO judges VALUES (?, ?, ?, ?, ?)", batch)
    del keys
    for entry in itertools.chain(runs.values(), judges.values()):
        entry.at = None
    progress.stage = "summarizing"
    progress.check()
    summary = fresh_summary(out_dir) or summary_of(reader, runs, judges)
    del runs, judges, reader
    progress.check()
    db.executescript(_INDEXES)
    db.execute("INSERT INTO meta VALUES ('summary', ?)", (msgspec.json.encode(summary),))
    db.execute("INSERT INTO meta VALUES ('stamp', ?)", (stamp,))
    db.commit()


def _run_values(runs: dict[str, RunEntry], judges: dict[str, JudgeEntry]) -> Iterator[tuple[Any, ...]]:
    """One ``runs`` row per kept run: the sweep's row (``iter_run_rows``) and where its line lies."""
    for r in iter_run_rows(runs, judges):
        packed = runs[r.key].at
        offset, length, tokens, cost, latency = _RUN_AT.unpack(packed) if packed else (None, None, 0, 0.0, math.nan)
        yield (r.key, r.agent_model, r.task_id, r.task_type, r.trial, r.status, int(r.infra_error), r.checks_passed,
               r.checks_total, None if r.passed is None else int(r.passed), *_axes(r.scores),
               msgspec.json.encode(r.scores).decode(), offset, length, tokens, None if math.isnan(cost) else cost,
               None if math.isnan(latency) else latency)


def _axes(scores: dict[str, list[float | None]]) -> tuple[float | None, float | None]:
    """Mean over judges of each axis (judges without a score left out)."""
    out: list[float | None] = []
    for axis in (0, 1):
        values = [s[axis] for s in scores.values() if s[axis] is not None]
        out.append(round(sum(values) / len(values), 4) if values else None)  # type: ignore[arg-type]
    return out[0], out[1]


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
               progress: Progress | None = None) -> SweepIndex:
    """The index of ``out_dir``: the cached one when the files are unchanged, else a fresh build.

    ``on_build`` is called before a build starts (reading a large sweep takes a while: the CLI says so);
    ``progress`` is advanced as the build reads (the viewer's page shown meanwhile says how far it is).
    """
    out_dir = Path(out_dir)
    progress = progress if progress is not None else Progress()
    stamp = _stamp(out_dir)
    path = out_dir / INDEX_DIR / INDEX_FILE
    db = _stored(path, stamp)
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
        _build(db, out_dir, stamp, progress)
        return SweepIndex(out_dir, db, rebuilt=True, on_disk=False)
    progress.temporary = temporary
    try:
        _build(db, out_dir, stamp, progress)
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
