"""Building the viewer's index: one read of runs and judgements through the sweep's own reader, rows into sqlite.

Apart from ``_index`` (opening a cached index, its queries) because it needs the sweep's reader, planner and
statistics, whose imports cost a first page that a finished sweep serves from ``summary.json`` (see ``_index``).
"""

from __future__ import annotations

import itertools
import logging
import math
import sqlite3
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from ..sweep import JudgeEntry, JudgeLine, Reader, RunEntry, RunLine, iter_run_rows, summary_of
from ._index import BATCH, INDEXES, SCHEMA, Progress, fresh_summary

__all__ = ["build"]

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


def _batches(rows: Iterable[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    it = iter(rows)
    while batch := list(itertools.islice(it, BATCH)):
        yield batch


def build(db: sqlite3.Connection, out_dir: Path, stamp: bytes, progress: Progress) -> None:
    """Fill an empty database from one read of runs and judgements: the kept runs with their lines' positions, the
    kept ok judgements' positions, the summary (``summary.json`` when fresh, else from that read), then the stamp.
    The rows are written before the summary is computed, and the positions dropped then: its peak memory is the
    summary's own, not more."""
    db.executescript(SCHEMA)
    reader = _IndexReader(out_dir, progress)
    runs: dict[str, RunEntry] = reader.runs()
    judges: dict[str, JudgeEntry] = reader.judgements(runs)
    progress.stage = "writing"
    for batch in _batches(_run_values(runs, judges)):
        progress.check()
        db.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
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
    db.executescript(INDEXES)
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
               None if math.isnan(latency) else latency, r.error_class)


def _axes(scores: dict[str, list[float | None]]) -> tuple[float | None, float | None]:
    """Mean over judges of each axis (judges without a score left out)."""
    out: list[float | None] = []
    for axis in (0, 1):
        values = [s[axis] for s in scores.values() if s[axis] is not None]
        out.append(round(sum(values) / len(values), 4) if values else None)  # type: ignore[arg-type]
    return out[0], out[1]


