"""The done-index beside a JSONL results file: each record's key and outcome on one short line.

Why: a resume needs, of every record, its key and whether it ended ``ok``, in a
task-level error or in an infrastructure (retryable) error — not the record. At
100k units the results files are hundreds of MB; decoding even the key of every
line costs seconds, reading ``runs.keys`` a tenth of that. The JSONL file stays
the truth: the index is a cache of it, trusted only when it provably covers the
file, and otherwise ignored (and rebuilt by the next resume's full read).

Format, one line per record in file order: ``<code> <end> <started> <finished>
<key>``, where code is ``o`` (ok), ``e`` (error, not retryable) or ``r``
(retryable error), end is the size of the JSONL file once that record was
appended (``-`` on a rebuilt index, whose last line ``. <end> 0 0 -`` says how
far it covers) and started/finished are the record's ``started_at`` and
``finished_at`` (``0`` when it has none): a pipeline tells by them a follow-up
of an earlier, since lost, record of the same unit. The index is
trusted when its last line is whole, its end equals the JSONL file's size and
it was written no earlier than the file was last changed: a crash between the
record and its index line, a trimmed torn tail, an edit by hand — any of them
makes it untrusted, never wrong. A writer appends to an index only if it was
trusted when the writer opened (appending to an untrusted one would make it look
whole while missing records), else removes it.

A resume reads each index once: the pipeline's read (``hold``) is kept, as columns, until the next read of that
file — the plan's outcome, on a resume with nothing to do — which takes it when neither file changed since (their
sizes and times); the first record appended to the file drops it.
"""

from __future__ import annotations

import os
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple, overload

from ._files import atomic_write_bytes, write_all
from ._key_set import MAX_PREFIXES, hex_key, split_key

__all__ = ["INDEX_SUFFIX", "KEYS_READ", "Entries", "Entry", "IndexAppender", "code_of", "index_path", "read_index",
           "write_index"]

INDEX_SUFFIX = ".keys"
OK, ERROR, RETRYABLE = "o", "e", "r"
_COVERED = "."  # a rebuilt index's last line: how far it covers, no record

# Index lines read, by file name: what a resume read instead of records (the tests' deterministic guard).
KEYS_READ: Counter[str] = Counter()


class Entry(NamedTuple):
    """One record as a resume sees it: its key, outcome code and when it started and finished (0: unknown)."""

    key: str
    code: str
    started: float = 0.0
    finished: float = 0.0

    def line(self, end: int | str) -> str:
        return f"{self.code} {end} {self.started!r} {self.finished!r} {self.key}\n"


class Entries(Sequence[Entry]):
    """Every record of a results file as a resume sees it, in file order, as columns: no object per record (at 100k
    records a ``NamedTuple`` and two floats each were ~12 MiB, a key string each ~7 MiB more).

    A key that ends in 16 lowercase hex digits (ours all do: ``_key_set``) is held as the number of its prefix in
    ``prefixes`` (``kinds``, a byte) and its 8-byte number (``values``); any other key as ``others[values[i]]`` with
    kind ``OTHER``. ``codes`` are the outcome codes as bytes. A caller that needs only some columns reads those
    alone (numpy can view each)."""

    __slots__ = ("prefixes", "_prefix", "kinds", "values", "others", "codes", "started", "finished")

    OTHER = MAX_PREFIXES

    def __init__(self) -> None:
        self.prefixes: list[str] = []
        self._prefix: dict[str, int] = {}
        self.kinds, self.codes = bytearray(), bytearray()
        self.values = array("Q")
        self.others: list[str] = []
        self.started, self.finished = array("d"), array("d")

    def append(self, key: str, code: str, started: float, finished: float) -> None:
        split = split_key(key)
        kind = None if split is None else self._prefix.get(split[0])
        if kind is None and split is not None and len(self.prefixes) < self.OTHER:
            kind = self._prefix[split[0]] = len(self.prefixes)
            self.prefixes.append(split[0])
        if kind is None or split is None:
            self.kinds.append(self.OTHER)
            self.values.append(len(self.others))
            self.others.append(key)
        else:
            self.kinds.append(kind)
            self.values.append(split[1])
        self.codes.append(ord(code))
        self.started.append(started)
        self.finished.append(finished)

    def key(self, i: int) -> str:
        kind, value = self.kinds[i], self.values[i]
        return self.others[value] if kind == self.OTHER else hex_key(self.prefixes[kind], value)

    def code(self, i: int) -> str:
        return chr(self.codes[i])

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self) -> Iterator[Entry]:
        return map(self.__getitem__, range(len(self)))

    @overload
    def __getitem__(self, i: int) -> Entry: ...
    @overload
    def __getitem__(self, i: slice) -> list[Entry]: ...
    def __getitem__(self, i: int | slice) -> Entry | list[Entry]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        return Entry(self.key(i), self.code(i), self.started[i], self.finished[i])


def index_path(path: Path) -> Path:
    """``runs.jsonl`` → ``runs.keys``."""
    return path.with_suffix(INDEX_SUFFIX)


def code_of(status: str, retryable: bool) -> str:
    return OK if status == "ok" else RETRYABLE if retryable else ERROR


_SPACE = re.compile(r"\s")  # str.isspace()'s characters (sre's \s is Py_UNICODE_ISSPACE)


def _indexable(key: str) -> bool:
    return bool(key) and _SPACE.search(key) is None


Signature = tuple[int, int, int, int]  # the results file's size and time, then its index's


def _trusted(path: Path) -> Signature | None:
    """The signature of ``path`` and its index when the index covers it as it is now (see the module docstring), else
    None; reads the index's tail only."""
    try:
        data_stat, index_stat = path.stat(), index_path(path).stat()
        if index_stat.st_mtime_ns < data_stat.st_mtime_ns:
            return None
        with index_path(path).open("rb") as fh:
            fh.seek(max(0, index_stat.st_size - 4096))
            tail = fh.read()
    except OSError:  # either file missing or unreadable: read the records instead
        return None
    signature = (data_stat.st_size, data_stat.st_mtime_ns, index_stat.st_size, index_stat.st_mtime_ns)
    if not tail.endswith(b"\n"):
        return signature if tail == b"" and data_stat.st_size == 0 else None
    last = tail[:-1].rsplit(b"\n", 1)[-1].split(b" ", 4)
    try:
        return signature if len(last) == 5 and int(last[1]) == data_stat.st_size else None
    except ValueError:
        return None


# The pipeline's read of each index, kept for the next read of that file while neither file changes (see the module
# docstring): path -> (signature then, entries).
_HELD: dict[Path, tuple[Signature, Entries]] = {}


def hold(path: Path, entries: Entries) -> None:
    """Keep ``entries`` (all of ``path``'s records, just read or rebuilt) for the next read of ``path``."""
    signature = _trusted(path)
    if signature is not None:
        _HELD[path] = (signature, entries)


def read_index(path: Path, *, keep: bool = False) -> Entries | None:
    """The :class:`Entry` of every record of the JSONL file ``path``, from its index; None when it is not trusted.

    The held read of ``path`` (``keep``: this read is held in turn) is taken if neither file changed since."""
    signature = _trusted(path)
    held = _HELD.pop(path, None)
    if signature is None:
        return None
    if held is not None and held[0] == signature:
        entries = held[1]
    else:
        found = _parse(path)
        if found is None:
            return None
        entries = found
        KEYS_READ[path.name] += len(entries)
    if keep:
        _HELD[path] = (signature, entries)
    return entries


def _parse(path: Path) -> Entries | None:
    """The index's entries, read a line at a time (the whole text and a string per line at once were ~20 MiB at
    100k records); None when a line is not an index line. Text after the last newline is no line."""
    entries = Entries()
    try:
        with index_path(path).open(encoding="utf-8", newline="\n") as fh:
            for line in fh:
                if not line.endswith("\n"):
                    break
                fields = line[:-1].split(" ", 4)
                if len(fields) != 5:
                    return None  # not an index line: untrusted
                code, _, started, finished, key = fields
                if code == _COVERED:  # where a rebuild ended (records appended since follow it)
                    continue
                if code not in (OK, ERROR, RETRYABLE) or not key:
                    return None
                try:
                    entries.append(key, code, float(started), float(finished))
                except ValueError:
                    return None
    except (OSError, UnicodeDecodeError):
        return None
    return entries


def write_index(path: Path, entries: Iterable[Entry], end: int) -> None:
    """Write the index of ``path`` (rebuilt from a full read): ``entries`` cover its first ``end`` bytes.

    Nothing is written when a key could not be listed (whitespace in it): the next resume reads the records again.
    """
    lines = []
    for entry in entries:
        if not _indexable(entry.key):
            return
        lines.append(entry.line("-"))
    lines.append(Entry("-", _COVERED).line(end))
    atomic_write_bytes(index_path(path), "".join(lines).encode(), fsync=False)


class IndexAppender:
    """Appends one line to the index of ``path`` per record appended to it (see the module docstring).

    Opened by a ``JsonlWriter`` after it trimmed any torn tail: when the index is not trusted then (or a record
    cannot be listed, or writing the index fails), the index is removed and nothing more is appended to it.
    """

    def __init__(self, path: Path) -> None:
        self.path, self.index = path, index_path(path)
        self._fd: int | None = None
        size = path.stat().st_size if path.exists() else 0
        if size == 0 or _trusted(path) is not None:
            try:
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
                if size == 0:
                    flags |= os.O_TRUNC  # an index of an empty file lists nothing
                self._fd = os.open(self.index, flags, 0o666)
            except OSError:
                self._fd = None
        if self._fd is None:
            self._drop()
        self.size = size

    def append(self, entry: Entry, size: int) -> None:
        """The record of ``entry`` was appended; the JSONL file is now ``size`` bytes."""
        self.size = size
        _HELD.pop(self.path, None)  # the file changed: a held read of it is stale
        if self._fd is None:
            return
        if not _indexable(entry.key):
            self.close()
            self._drop()
            return
        try:
            write_all(self._fd, entry.line(size).encode())
        except OSError:
            self.close()
            self._drop()

    def _drop(self) -> None:
        try:
            self.index.unlink()
        except FileNotFoundError:
            pass
        except OSError:  # cannot remove it: it stays untrusted (its end no longer matches once records are added)
            pass

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)
