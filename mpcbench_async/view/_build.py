"""Building the viewer's index: one read of runs and judgements through the sweep's own reader, rows into sqlite.

Apart from ``_index`` (opening a cached index, its queries) because it needs the sweep's reader, planner and
statistics, whose imports cost a first page that a finished sweep serves from ``summary.json`` (see ``_index``).
"""

from __future__ import annotations

import copy
import itertools
import logging
import math
import sqlite3
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from ..sweep import (
    JUDGEMENTS,
    RUNS,
    JudgeLine,
    Judges,
    Reader,
    RunEntry,
    RunLine,
    Runs,
    Summary,
    iter_run_rows,
    summary_of,
)
from ._index import BATCH, INDEXES, SCHEMA, Patch, Progress, fresh_summary

__all__ = ["Tail", "build"]

KEYS = "experiment_keys.txt"  # the current experiment's keys: when they change, every kept entry may change

log = logging.getLogger(__name__)


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


class _IndexReader(Reader):
    """The sweep's reader, reading runs and judgements with each line's position (one read serves the index and,
    when needed, the summary). Undecodable lines are counted as the reader counts them (``skipped_lines``)."""

    located = True

    def __init__(self, out_dir: Path, progress: Progress) -> None:
        super().__init__(out_dir)
        self.progress = progress
        # Where each file's next read starts and how many bad lines were before it: a live viewer reads only the
        # tail a running sweep appended since (``_tail.Tail``); a torn last line is left to be read once complete.
        self.start: dict[str, int] = {}
        self.bad: dict[str, int] = {}

    def lines(self, name: str, view: type) -> Iterable[Any]:
        if view not in _VIEWS:
            yield from super().lines(name, view)
            return
        located, locate = _VIEWS[view]
        decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(located)
        bad = self.bad.get(name, 0)
        torn = 0
        try:
            fh = (self.out_dir / name).open("rb")
        except FileNotFoundError:
            return
        offset = self.start.get(name, 0)
        with fh:
            fh.seek(offset)
            for line in fh:
                length = len(line)
                self.progress.done += length
                self.progress.check()
                if not line.endswith(b"\n"):
                    torn = 1  # a torn last line: the process died mid-append, or is appending it now
                    break
                if line.strip():
                    try:
                        decoded = decoder.decode(line)
                    except (msgspec.DecodeError, msgspec.ValidationError):
                        bad += 1
                    else:
                        locate(decoded, offset, length)
                        yield decoded
                offset += length
        self.start[name], self.bad[name] = offset, bad
        skipped = bad + torn
        self.skipped_lines.pop(name, None)
        if skipped:
            self.skipped_lines[name] = skipped
            log.warning("view.lines_skipped", extra={"path": str(self.out_dir / name), "count": skipped})


def _batches(rows: Iterable[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    it = iter(rows)
    while batch := list(itertools.islice(it, BATCH)):
        yield batch


def build(db: sqlite3.Connection, out_dir: Path, stamp: bytes, progress: Progress, tail: Tail | None = None) -> None:
    """Fill an empty database from one read of runs and judgements: the kept runs with their lines' positions, the
    kept ok judgements' positions, the summary (``summary.json`` when fresh, else from that read), then the stamp.
    The rows are written before the summary is computed, and the positions dropped then: its peak memory is the
    summary's own, not more. With a ``tail`` (a live viewer's), the read goes through it and is kept, so that what
    the sweep appends next is read from where this read ended (``Tail.catch_up``)."""
    db.executescript(SCHEMA)
    keep = tail is not None
    tail = tail if tail is not None else Tail(out_dir)
    tail.reader.progress = progress
    runs = tail.reader.runs()
    judges = tail.reader.judgements(runs)
    tail.runs, tail.judges = runs, judges
    progress.stage = "writing"
    for batch in _batches(_run_values(runs, judges)):
        progress.check()
        db.executemany(_INSERT_RUN, batch)
    for batch in _batches(_judge_values(judges)):
        db.executemany(_INSERT_JUDGE, batch)
    if not keep:
        runs.drop_positions()
        judges.drop_positions()
    del runs, judges
    progress.stage = "summarizing"
    progress.check()
    summary = tail.summary()
    del tail
    progress.check()
    db.executescript(INDEXES)
    db.execute("INSERT INTO meta VALUES ('summary', ?)", (msgspec.json.encode(summary),))
    db.execute("INSERT INTO meta VALUES ('stamp', ?)", (stamp,))
    db.commit()


_INSERT_RUN = "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_INSERT_JUDGE = "INSERT OR REPLACE INTO judges VALUES (?, ?, ?, ?, ?)"


class Tail:
    """A live viewer's read of a sweep that is still running, kept between reads: the reader (where each file's
    next read starts, its counts), the kept runs and judgements. ``catch_up`` reads only the lines appended since
    and gives the rows they add or change and the new summary (``Patch``) — a 1 GB sweep that gained ten lines
    is read for ten lines, not again. A torn last line (being appended) is read once it is complete.

    Only an append is caught up with. A line that replaces a run or judgement already kept (a redone unit whose
    judgements must be looked at again), judgements read before their run arrived, a file rewritten or replaced,
    or another experiment's keys: ``catch_up`` returns None and the caller builds the index again.
    """

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.reader = _IndexReader(out_dir, Progress())
        self.runs = Runs(self.reader.keys, self.reader.names, located=True)
        self.judges = Judges(self.reader.keys, self.reader.names, self.runs, located=True)
        self._files = {name: _identity(out_dir / name) for name in (RUNS, JUDGEMENTS)}
        self._keys = _identity(out_dir / KEYS, size=True)

    def summary(self) -> Summary:
        """``summary.json`` when fresh, else ``summarize``'s from the kept read (on a copy of the reader: the
        summary reads the other files through it, counting what it skips, and the next read must not see that)."""
        fresh = fresh_summary(self.out_dir)
        if fresh is not None:
            return fresh
        view = copy.copy(self.reader)
        view.skipped_lines, view.examples = dict(self.reader.skipped_lines), dict(self.reader.examples)
        return summary_of(view, self.runs, self.judges)

    def catch_up(self, stamp: bytes) -> Patch | None:
        """The rows the lines appended since the last read add or change, the new summary and ``stamp`` (the
        files' stamp taken before this read); None when the change is not an append (build again)."""
        if _identity(self.out_dir / KEYS, size=True) != self._keys or not self._appended():
            return None
        reader = self.reader
        reader.progress = Progress()
        orphans_before = reader.orphan_judgements
        new_runs = reader.runs()
        if any(key in self.runs for key in new_runs) or (new_runs and orphans_before):
            return None
        self.runs.update(new_runs)
        new_judges = reader.judgements(self.runs)
        if any(key in self.judges for key in new_judges):
            return None
        self.judges.update(new_judges)
        changed = set(new_runs)
        changed.update(self.runs.key(j.run_slot) for j in new_judges.values())
        return Patch(runs=list(_run_values({key: self.runs[key] for key in changed}, self.judges)),
                     judges=list(_judge_values(new_judges)),
                     summary=msgspec.json.encode(self.summary()), stamp=stamp)

    def _appended(self) -> bool:
        """Whether runs and judgements are the files read before, grown or as they were."""
        for name, before in self._files.items():
            now = _identity(self.out_dir / name)
            if now is None and before is not None:
                return False
            if before is None and now is not None:
                self._files[name] = now  # created since: read from its start
            elif now is not None and (now != before or _size(self.out_dir / name) < self.reader.start.get(name, 0)):
                return False
        return True


def _identity(path: Path, *, size: bool = False) -> tuple[int, ...] | None:
    """The file's device and inode (and size and modification time: ``size``); None when missing."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) if size else (st.st_dev, st.st_ino)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _judge_values(judges: Judges) -> Iterator[tuple[Any, ...]]:
    """One ``judges`` row per kept ok judgement (of ``judges``) whose line's position is known."""
    positions = judges.at or ()
    for slot, (key, at) in enumerate(zip(judges, positions, strict=True)):
        if at is not None and judges.ok[slot]:
            yield key, judges.runs.key(judges.run_slot[slot]), judges.row(slot).model, at >> 32, at & 0xFFFFFFFF


def _run_values(runs: Runs | dict[str, RunEntry], judges: Judges) -> Iterator[tuple[Any, ...]]:
    """One ``runs`` row per kept run: the sweep's row (``iter_run_rows``) and where its line lies."""
    for r in iter_run_rows(runs, judges):
        packed = runs[r.key].at
        offset, length, tokens, cost, latency = _RUN_AT.unpack(packed) if packed else (None, None, 0, 0.0, math.nan)
        yield (r.key, r.agent_model, r.task_id, r.task_type, r.trial, r.status, int(r.infra_error), r.checks_passed,
               r.checks_total, None if r.passed is None else int(r.passed), *_axes(r.scores),
               msgspec.json.encode(r.scores).decode(), offset, length, tokens, None if math.isnan(cost) else cost,
               None if math.isnan(latency) else latency, r.error_class)


def _axes(scores: dict[str, list[float | None]]) -> tuple[float | None, float | None]:
    """Mean over judges of each axis (judges without a score left out)."""
    out: list[float | None] = []
    for axis in (0, 1):
        values = [s[axis] for s in scores.values() if s[axis] is not None]
        out.append(round(sum(values) / len(values), 4) if values else None)  # type: ignore[arg-type]
    return out[0], out[1]


