"""The done-index beside a results file (``runs.jsonl`` → ``runs.keys``): read instead of the records when it
provably covers them, never trusted otherwise (issue 31, point 3).

Every test counts what a read decoded (``LINES_DECODED``) and what it took from the index (``KEYS_READ``), so
"read from the index" and "read the records" are told apart exactly.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Literal

import msgspec

from mpcbench_async.runtime import JsonlWriter, ResumeIndex, done_keys
from mpcbench_async.runtime._done_index import KEYS_READ
from mpcbench_async.runtime._jsonl import LINES_DECODED


class Rec(msgspec.Struct, kw_only=True):
    key: str
    status: Literal["ok", "error"]
    retryable: bool = False
    payload: str = "x" * 100


RECORDS = [Rec(key="a", status="ok"), Rec(key="b", status="error", retryable=True), Rec(key="c", status="error"),
           Rec(key="b", status="ok")]
CODES = [("a", "o"), ("b", "r"), ("c", "e"), ("b", "o")]


def written(tmp_path: Path, records: list[Rec] = RECORDS) -> Path:
    path = tmp_path / "runs.jsonl"
    with JsonlWriter(path, index=True) as writer:
        for record in records:
            writer.write(record)
    return path


def read(path: Path, **kwargs: object) -> tuple[list[tuple[str, str]], int, int]:
    """``(key, code)`` of ``done_keys(path)``, the lines it decoded and the index lines it read."""
    decoded, keys = LINES_DECODED[path.name], KEYS_READ[path.name]
    entries = done_keys(path, Rec, **kwargs)  # type: ignore[arg-type]
    return [(e.key, e.code) for e in entries], LINES_DECODED[path.name] - decoded, KEYS_READ[path.name] - keys


def later(path: Path) -> None:
    """Make ``path`` look changed after its index was written (file times can be equal within one clock tick)."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


def test_a_writer_keeps_the_index_and_a_read_decodes_no_record(tmp_path):
    path = written(tmp_path)
    size = path.stat().st_size
    assert (CODES, 0, 4) == read(path)
    assert path.with_suffix(".keys").read_text().splitlines()[-1] == f"o {size} 0.0 0.0 b"
    index = ResumeIndex.from_file(path, type_=Rec)
    assert ({"a", "b", "c"}, {}) == (index.done, index.tries)
    index = ResumeIndex.from_file(path, type_=Rec, retry_errors=True)
    assert ({"a", "b"}, {"c": 1}) == (index.done, index.tries)


def test_a_record_without_its_index_line_makes_the_records_read_and_rebuild_rebuilds_it(tmp_path):
    """A crash between the record and its index line: the index covers less than the file, so the records are
    read (every line decoded); with ``rebuild`` the index is written from that read, which the next read takes as
    it is (nothing read again), and the read after that reads the index."""
    path = written(tmp_path)
    with path.open("ab") as fh:
        fh.write(msgspec.json.encode(Rec(key="d", status="ok")) + b"\n")
    assert ([*CODES, ("d", "o")], 5, 0) == read(path)
    assert ([*CODES, ("d", "o")], 5, 0) == read(path, rebuild=True)
    assert ([*CODES, ("d", "o")], 0, 0) == read(path)
    assert ([*CODES, ("d", "o")], 0, 5) == read(path)


def test_a_resumes_read_is_taken_once_by_the_next_read_unless_the_file_changed(tmp_path):
    """A resume's read (``rebuild``) is held for the next read of the file, which takes it (0 index lines read) when
    neither file changed; a record appended since drops it, so that read reads the index again, new record and
    all; a read that is not a resume's holds nothing."""
    path = written(tmp_path)
    assert (CODES, 0, 4) == read(path, rebuild=True)
    assert (CODES, 0, 0) == read(path)
    assert (CODES, 0, 4) == read(path)
    assert (CODES, 0, 4) == read(path)
    assert (CODES, 0, 4) == read(path, rebuild=True)
    with JsonlWriter(path, index=True) as writer:
        writer.write(Rec(key="d", status="ok"))
    assert ([*CODES, ("d", "o")], 0, 5) == read(path)


def test_an_edit_after_the_index_makes_it_untrusted(tmp_path):
    """A record edited in place (same size: its status made invalid) after the index was written: the records are
    read, and the edited line counts as no record, as the full read has always done."""
    path = written(tmp_path)
    path.write_bytes(path.read_bytes().replace(b'"status":"ok"', b'"status":"xx"', 1))
    later(path)
    assert (CODES[1:], 4, 0) == read(path)


def test_a_torn_tail_is_left_out_of_a_rebuilt_index_and_trimmed_by_the_next_writer(tmp_path):
    """The rebuilt index covers the whole lines; the writer that trims the fragment finds the file changed after
    the index, so it drops the index rather than appending to one it cannot vouch for; a rebuild restores it."""
    path = written(tmp_path)
    with path.open("ab") as fh:
        fh.write(b'{"key": "e", "sta')
    assert (CODES, 4, 0) == read(path, rebuild=True)
    later(path)
    with JsonlWriter(path, index=True) as writer:
        writer.write(Rec(key="f", status="ok"))
    assert not path.with_suffix(".keys").exists()
    assert ([*CODES, ("f", "o")], 5, 0) == read(path, rebuild=True)
    with JsonlWriter(path, index=True) as writer:
        writer.write(Rec(key="g", status="ok"))
    assert ([*CODES, ("f", "o"), ("g", "o")], 0, 6) == read(path)


def test_a_writer_never_appends_to_an_index_that_does_not_cover_the_file(tmp_path):
    """Appending to it would make its last line match the file's size while records are missing from it."""
    path = written(tmp_path)
    with path.open("ab") as fh:
        fh.write(msgspec.json.encode(Rec(key="d", status="ok")) + b"\n")
    with JsonlWriter(path, index=True) as writer:
        writer.write(Rec(key="e", status="ok"))
    assert not path.with_suffix(".keys").exists()
    assert ([*CODES, ("d", "o"), ("e", "o")], 6, 0) == read(path)


def test_a_key_with_whitespace_or_a_plain_dict_drops_the_index(tmp_path):
    path = written(tmp_path, [Rec(key="a", status="ok"), Rec(key="b c", status="ok")])
    assert not path.with_suffix(".keys").exists()
    assert ([("a", "o"), ("b c", "o")], 2, 0) == read(path)
    other = tmp_path / "other.jsonl"
    with JsonlWriter(other, index=True) as writer:
        writer.write({"key": "a", "status": "ok"})
    assert not other.with_suffix(".keys").exists()


def test_the_counters_count_per_file(tmp_path):
    path = written(tmp_path)
    before = Counter(LINES_DECODED)
    list(done_keys(tmp_path / "missing.jsonl"))
    assert Counter() == LINES_DECODED - before
    assert ([], 0, 0) == read(tmp_path / "missing.jsonl")
    assert 4 == len(read(path)[0])


class Timed(msgspec.Struct, kw_only=True):
    key: str
    status: Literal["ok", "error"]
    retryable: bool = False
    started_at: float = 0.0
    finished_at: float = 0.0


def test_the_index_keeps_each_ok_records_times_as_the_records_say(tmp_path):
    """A pipeline tells a follow-up of a lost earlier record by times (``ResumeIndex.follows``): the index gives
    the same times as a full read of the records, written by the writer or rebuilt."""
    path = tmp_path / "runs.jsonl"
    records = [Timed(key="a", status="ok", started_at=1732771234.125, finished_at=1732771240.5),
               Timed(key="b", status="error", retryable=True, started_at=5.0, finished_at=6.0),
               Timed(key="b", status="ok", started_at=7.25, finished_at=8.0)]
    with JsonlWriter(path, index=True) as writer:
        for record in records:
            writer.write(record)
    expected = [(r.key, r.started_at, r.finished_at) for r in records]
    keys = KEYS_READ[path.name]
    assert expected == [(e.key, e.started, e.finished) for e in done_keys(path, Timed)]
    assert 3 == KEYS_READ[path.name] - keys  # from the index
    later(path)
    assert expected == [(e.key, e.started, e.finished) for e in done_keys(path, Timed, rebuild=True)]
    assert expected == [(e.key, e.started, e.finished) for e in done_keys(path, Timed)]
    index = ResumeIndex.from_file(path, type_=Timed, times=True)
    assert {"a": (1732771234.125, 1732771240.5), "b": (7.25, 8.0)} == index.times
    assert index.follows("a", (0.0, 1732771234.0)) and not index.follows("a", (0.0, 1732771235.0))
