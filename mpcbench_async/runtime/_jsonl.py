"""Append-only JSONL store: one record per line, a torn-tail-tolerant reader, resume index.

Writers append whole lines (``orjson`` + ``\\n``), each straight to the file (no
buffer held back), so a crash leaves at most one torn last line. A write that fails
(a full disk) cuts its own partial line off again, so the records before it stay
readable and a later record starts on a line of its own, and raises an ``OSError``
naming the file, what happened and how many records are safe. Opening a writer on a file whose last
line is torn trims that fragment first (it was never a record) and says so;
readers skip it and report it. The resume index streams the file and keeps only
keys, so resuming costs memory in the number of units, not in payload size; a
writer opened with ``index=True`` also keeps the file's done-index
(``runs.jsonl`` → ``runs.keys``, see ``_done_index``), from which the next resume
reads the keys without decoding a record.
"""

from __future__ import annotations

import functools
import logging
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec
import orjson

from ._done_index import Entries, Entry, IndexAppender, code_of, hold, read_index, write_index
from ._files import write_all, write_error
from ._recorded import DoneKeys, OkTimes, Recorded

__all__ = ["LINES_DECODED", "JsonlWriter", "ReadReport", "ResumeIndex", "done_keys", "iter_jsonl", "key_view",
           "read_jsonl", "trim_torn_tail"]

log = logging.getLogger(__name__)

# Lines decoded, by file name: what reading records costs, counted so tests can pin it (a no-op resume decodes none).
LINES_DECODED: Counter[str] = Counter()


def trim_torn_tail(path: Path) -> int:
    """Cut a trailing partial line (no final newline) off ``path``; return bytes removed."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with path.open("rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        # Walk back to the last newline in modest blocks.
        pos = size
        block = 65536
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            idx = chunk.rfind(b"\n")
            if idx >= 0:
                keep = start + idx + 1
                break
            pos = start
        else:
            keep = 0
        fh.truncate(keep)
        return size - keep


class JsonlWriter:
    """Append records to a JSONL file, each written through to the file at once (and fsynced if asked).

    Records may be msgspec Structs or plain JSON-able values. Writes are small
    appends and run inline: cheaper than a thread hop per record, and each line
    reaches the OS page cache at once, which survives a process kill. ``index=True``:
    unit records (``key`` and ``status``) also go to the file's done-index, one line each.
    """

    def __init__(self, path: str | Path, *, fsync: bool = False, index: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.path.parent.mkdir(parents=True, exist_ok=True)
        trimmed = trim_torn_tail(self.path)
        if trimmed:
            log.warning("jsonl.torn_tail_trimmed", extra={"path": str(self.path), "bytes": trimmed})
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                                       | getattr(os, "O_CLOEXEC", 0), 0o666)
        self._encoder = msgspec.json.Encoder()
        self._buffer = bytearray()
        self.written = 0
        self._index = IndexAppender(self.path) if index else None

    def write(self, record: Any) -> None:
        """Append one record as one line; on failure, raise naming the file, with no partial line left behind."""
        if self._fd is None:
            raise ValueError(f"{self.path}: write to a closed JsonlWriter")
        buf = self._buffer
        if isinstance(record, msgspec.Struct):
            self._encoder.encode_into(record, buf)
        else:
            buf[:] = orjson.dumps(record)
        buf.extend(b"\n")
        try:
            write_all(self._fd, buf)
            if self.fsync:
                os.fsync(self._fd)
        except OSError as exc:
            raise self._failed(exc, getattr(exc, "written", 0)) from exc
        self.written += 1
        if self._index is not None:
            key, status = getattr(record, "key", None), getattr(record, "status", None)
            size = self._index.size + len(buf)
            if isinstance(key, str) and status in ("ok", "error"):
                self._index.append(Entry(key, code_of(status, bool(getattr(record, "retryable", False))),
                                         getattr(record, "started_at", 0.0) or 0.0,
                                         getattr(record, "finished_at", 0.0) or 0.0), size)
            else:  # not a unit record: the index cannot list it, so it is dropped
                self._index.append(Entry("", ""), size)

    def _failed(self, exc: OSError, partial: int) -> OSError:
        """Cut the ``partial`` bytes this record got into the file, and the error to raise (naming the file)."""
        kept = f"every record before it is intact ({self.written:,} written by this writer)"
        if partial:
            try:
                assert self._fd is not None
                os.ftruncate(self._fd, os.fstat(self._fd).st_size - partial)
            except OSError:  # the next open trims the torn line instead
                kept += "; its partial line is trimmed when the file is next opened"
        return write_error(exc, self.path, "appending a record", kept + "; free space and rerun to resume")

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                if self.fsync:
                    os.fsync(fd)
            except OSError as exc:
                raise write_error(exc, self.path, "syncing it to disk", "its records may not all be on disk") from exc
            finally:
                os.close(fd)

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ReadReport(msgspec.Struct, kw_only=True):
    """What a read skipped: a torn last line and any undecodable lines (1-based)."""

    path: str
    lines: int = 0
    torn_tail: bool = False
    bad_lines: list[int] = msgspec.field(default_factory=list)


def iter_jsonl(path: str | Path, report: ReadReport | None = None, *, type_: Any = Any,
               warn: bool = True) -> Iterator[Any]:
    """Stream decoded records from ``path``; undecodable lines are skipped and reported.

    A last line without a newline is a torn write (the process died mid-append)
    and is skipped with ``report.torn_tail = True``; other bad lines are listed
    in ``report.bad_lines`` and logged once at the end (``warn=False``: a second
    read of a file already reported).
    """
    path = Path(path)
    report = report if report is not None else ReadReport(path=str(path))
    decoder = msgspec.json.Decoder(type_)
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return
    decoded = 0
    try:
        with fh:
            for number, line in enumerate(fh, start=1):
                report.lines = number
                if not line.endswith(b"\n"):
                    report.torn_tail = True
                    if warn:
                        log.warning("jsonl.torn_tail_skipped", extra={"path": str(path), "line": number})
                    break
                if not line.strip():
                    continue
                decoded += 1
                try:
                    value = decoder.decode(line)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    report.bad_lines.append(number)
                    continue
                yield value
    finally:  # also when the caller stops early
        if decoded:
            LINES_DECODED[path.name] += decoded
    if report.bad_lines and warn:
        log.warning("jsonl.bad_lines_skipped",
                    extra={"path": str(path), "lines": report.bad_lines[:20], "count": len(report.bad_lines)})


def read_jsonl(path: str | Path, *, type_: Any = Any) -> tuple[list[Any], ReadReport]:
    """Read a whole JSONL file (small files only); return records and what was skipped."""
    report = ReadReport(path=str(path))
    return list(iter_jsonl(path, report, type_=type_)), report


class _KeyStatus(msgspec.Struct):
    """The least a line must hold to mark its unit done: ``key`` and a known ``status``, neither defaulted.

    A line ``{"key": …}`` alone is not a finished unit. msgspec skips the rest of each line cheaply.
    """

    key: str
    status: Literal["ok", "error"]
    retryable: bool = False


@functools.cache
def key_view(record_type: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """A light view of ``record_type``: every field it requires, plus ``retryable`` and ``kind`` (with defaults).

    A line decodes as the view only when every field the record requires is
    present and well typed (and ``kind``, if given, is the record's), so a
    fragment such as ``{"key": …, "status": "ok"}`` is rejected as the record
    would reject it — while the payload is skipped unparsed, keeping reads of
    large logs cheap. Subclass the view to read a few payload fields more.
    """
    fields = {f.name: f for f in msgspec.structs.fields(record_type)}
    if not {"key", "status"} <= fields.keys():
        raise TypeError(f"{record_type.__name__} has no key/status fields: not a unit record")
    spec: list[tuple[Any, ...]] = [(f.name, f.type) for f in fields.values() if f.required]
    spec += [(f.name, f.type, f.default) for name in ("retryable", "kind", "started_at", "finished_at")
             if (f := fields.get(name)) is not None and not f.required]
    if "retryable" not in fields:
        spec.append(("retryable", bool, False))
    return msgspec.defstruct(f"{record_type.__name__}Keys", spec, kw_only=True)


def done_keys(path: str | Path, type_: type[msgspec.Struct] | None = None, report: ReadReport | None = None, *,
              rebuild: bool = False, warn: bool = True) -> Entries:
    """The :class:`Entry` (key, code, times) of every record of ``path`` in file order (code ``o`` ok, ``e`` error,
    ``r`` retryable error).

    From the file's done-index when it is trusted (``_done_index``: no record decoded); else each line is decoded
    as ``type_``'s :func:`key_view` (default: key + status) and counted only if it is a whole record of that type
    (others are reported in ``report``), and with ``rebuild`` the index is written from that read, so the next
    read is the cheap one. ``rebuild`` (a resume's read) also holds what it read for the next read of ``path``,
    which takes it if the file has not changed (the plan's outcome after a resume with nothing to do).
    """
    path = Path(path)
    entries = read_index(path, keep=rebuild)
    if entries is not None:
        return entries
    report = report if report is not None else ReadReport(path=str(path))
    view = key_view(type_) if type_ is not None else _KeyStatus
    entries = Entries()
    for rec in iter_jsonl(path, report, type_=view, warn=warn):
        entries.append(rec.key, code_of(rec.status, rec.retryable), getattr(rec, "started_at", 0.0) or 0.0,
                       getattr(rec, "finished_at", 0.0) or 0.0)
    if rebuild and path.exists():
        covered = path.stat().st_size
        if report.torn_tail:  # the index covers the whole lines only; a writer trims the torn one
            covered = _whole_lines(path, covered)
        write_index(path, entries, covered)
        if covered == path.stat().st_size:
            hold(path, entries)
    return entries


def _whole_lines(path: Path, size: int) -> int:
    """The length of ``path``'s content up to its last newline."""
    with path.open("rb") as fh:
        pos = size
        while pos > 0:
            start = max(0, pos - 65536)
            fh.seek(start)
            chunk = fh.read(pos - start)
            found = chunk.rfind(b"\n")
            if found >= 0:
                return start + found + 1
            pos = start
    return 0


class ResumeIndex:
    """The set of unit keys that are finished and must not run again.

    A key is done when it has an ``ok`` record, or an ``error`` record that is not
    retryable (a task-level error) unless ``retry_errors`` is set. Units whose
    records are all retryable (infrastructure) errors run again. A line counts
    only if it decodes as ``type_`` (by its :func:`key_view`: every required
    field present and well typed); other lines are skipped, reported in
    ``report`` and logged once per file — never trusted as done. The keys are held
    as numbers (``_recorded``): ``done`` is a set and ``times`` a mapping over them.
    """

    def __init__(self, done: Iterable[str] | None = None, report: ReadReport | None = None,
                 tries: dict[str, int] | None = None, times: Mapping[str, tuple[float, float]] | None = None, *,
                 recorded: Recorded | None = None) -> None:
        self.recorded = recorded if recorded is not None else Recorded.of(done or (), times or {})
        self.done = DoneKeys(self.recorded)
        self.report = report
        self.tries: dict[str, int] = tries or {}  # units to run again: how many records each already has
        self.times = OkTimes(self.recorded)  # (started_at, finished_at) of a key's last ok record

    @classmethod
    def from_file(cls, path: str | Path, *, retry_errors: bool = False, type_: type[msgspec.Struct] | None = None,
                  rebuild: bool = False, times: bool = False) -> ResumeIndex:
        """The index of ``path``; ``type_`` is the record type its lines must decode as (default: key + status).

        Read through :func:`done_keys`: from the file's done-index when it is trusted, else from the records
        (``rebuild``: and the done-index written for the next time). ``times``: also keep when each key's last
        ``ok`` record started and finished, for ``follows``: a pipeline's stages need them to tell a follow-up
        of an earlier record.
        """
        import numpy as np  # lazily: the runtime is imported where numpy is not needed (start-up)

        report = ReadReport(path=str(path))
        entries = done_keys(path, type_, report, rebuild=rebuild)
        codes = np.frombuffer(entries.codes, dtype=np.uint8)
        done = codes == ord("o") if retry_errors else (codes == ord("o")) | (codes == ord("e"))
        recorded = Recorded(entries, done, times=times)
        return cls(report=report, tries=dict(Counter(recorded.undone)), recorded=recorded)

    def done_at(self, key: str) -> tuple[float, float] | None:
        """None when ``key`` is not done, else when its last ok record started and finished ((0, 0): none known):
        a membership test and the times in one lookup (a pipeline's scan makes one per unit)."""
        return self.recorded.done_at(key)

    def follows(self, key: str, parent: tuple[float, float] | None) -> bool:
        """Whether ``key`` is done as a follow-up of a record that started and finished at ``parent``: a record of
        it started before ``parent`` finished followed up an earlier record of that unit (one lost since), so the
        unit is not done for this one. Without times (old records, or none kept) the key alone decides."""
        at = self.done_at(key)
        return at is not None and not (parent and parent[1] and at[0] and at[0] < parent[1])

    def __contains__(self, key: object) -> bool:
        return key in self.done

    def __len__(self) -> int:
        return len(self.done)

    def add(self, key: str) -> None:
        self.done.add(key)
