"""The JSONL store: whole-line appends (a full disk loses no record), torn-tail tolerant reads, the resume index."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Literal

import msgspec
import orjson
import pytest

from mpcbench_async.runtime import JsonlWriter, ReadReport, ResumeIndex, iter_jsonl, key_view, read_jsonl
from mpcbench_async.testing import full_disk_write


class Unit(msgspec.Struct):
    key: str
    status: str = "ok"
    payload: str = ""


class TestJsonlWriter:
    def test_structs_and_dicts_one_line_each(self, tmp_path):
        """Structs (msgspec) and dicts (orjson) each become exactly one line, whatever their order and length."""
        path = tmp_path / "out.jsonl"
        with JsonlWriter(path) as writer:
            writer.write(Unit(key="a", payload="x" * 40))
            writer.write(Unit(key="b"))
            writer.write({"key": "c", "n": [1, 2]})
            writer.write(Unit(key="d"))
        expected = (
            b'{"key":"a","status":"ok","payload":"' + b"x" * 40 + b'"}\n'
            b'{"key":"b","status":"ok","payload":""}\n'
            b'{"key":"c","n":[1,2]}\n'
            b'{"key":"d","status":"ok","payload":""}\n'
        )
        assert expected == path.read_bytes()
        assert 4 == writer.written

    def test_each_record_is_flushed(self, tmp_path):
        """A record is on disk as soon as write returns, while the writer is still open."""
        path = tmp_path / "out.jsonl"
        writer = JsonlWriter(path)
        try:
            writer.write({"key": "a"})
            assert b'{"key":"a"}\n' == path.read_bytes()
            writer.write(Unit(key="b"))
            assert b'{"key":"a"}\n{"key":"b","status":"ok","payload":""}\n' == path.read_bytes()
        finally:
            writer.close()

    def test_appends_to_existing_file(self, tmp_path):
        """A new writer appends after the records already in the file."""
        path = tmp_path / "out.jsonl"
        path.write_bytes(b'{"key":"a"}\n')
        with JsonlWriter(path) as writer:
            writer.write({"key": "b"})
        assert b'{"key":"a"}\n{"key":"b"}\n' == path.read_bytes()

    def test_torn_tail_is_trimmed_on_open(self, tmp_path):
        """Opening a file whose last line is torn cuts the fragment so the next record starts its own line."""
        path = tmp_path / "out.jsonl"
        path.write_bytes(b'{"key":"a"}\n{"key":"b"}\n{"key":"c","sta')
        with JsonlWriter(path) as writer:
            writer.write({"key": "c"})
        assert b'{"key":"a"}\n{"key":"b"}\n{"key":"c"}\n' == path.read_bytes()

    def test_file_that_is_only_a_fragment_is_emptied(self, tmp_path):
        """A file holding nothing but a torn line is trimmed to empty before writing."""
        path = tmp_path / "out.jsonl"
        path.write_bytes(b'{"key":"a","sta')
        with JsonlWriter(path) as writer:
            writer.write({"key": "b"})
        assert b'{"key":"b"}\n' == path.read_bytes()

    def test_fragment_longer_than_a_read_block_is_trimmed(self, tmp_path):
        """A torn line longer than the 64 KiB scan block is still cut back to the last newline."""
        path = tmp_path / "out.jsonl"
        path.write_bytes(b'{"key":"a"}\n{"key":"b","payload":"' + b"y" * 200_000)
        with JsonlWriter(path) as writer:
            writer.write({"key": "b"})
        assert b'{"key":"a"}\n{"key":"b"}\n' == path.read_bytes()

    def test_creates_parent_directories(self, tmp_path):
        """The writer creates missing parent directories."""
        path = tmp_path / "deep" / "er" / "out.jsonl"
        with JsonlWriter(path) as writer:
            writer.write({"key": "a"})
        assert b'{"key":"a"}\n' == path.read_bytes()


class TestReadJsonl:
    def test_round_trip(self, tmp_path):
        """Records written are read back equal and the report is clean."""
        path = tmp_path / "out.jsonl"
        with JsonlWriter(path) as writer:
            for i in range(3):
                writer.write({"key": f"k{i}", "i": i})
        records, report = read_jsonl(path)
        assert [{"key": "k0", "i": 0}, {"key": "k1", "i": 1}, {"key": "k2", "i": 2}] == records
        assert ReadReport(path=str(path), lines=3, torn_tail=False, bad_lines=[]) == report

    def test_torn_last_line_is_skipped_and_reported(self, tmp_path):
        """A last line without a newline is skipped and reported as a torn tail."""
        path = tmp_path / "out.jsonl"
        path.write_bytes(b'{"key":"a"}\n{"key":"b"}\n{"key":"c","sta')
        records, report = read_jsonl(path)
        assert [{"key": "a"}, {"key": "b"}] == records
        assert True is report.torn_tail
        assert [] == report.bad_lines

    def test_complete_json_without_newline_is_torn(self, tmp_path):
        """Even a decodable last line is torn if its newline never made it to disk."""
        path = tmp_path / "out.jsonl"
        path.write_bytes(b'{"key":"a"}\n{"key":"b"}')
        records, report = read_jsonl(path)
        assert [{"key": "a"}] == records
        assert True is report.torn_tail

    def test_bad_middle_line_is_listed_and_skipped(self, tmp_path):
        """An undecodable line in the middle is skipped and its 1-based number reported."""
        path = tmp_path / "out.jsonl"
        path.write_bytes(b'{"key":"a"}\nnot json\n{"key":"c"}\n{"key":\n{"key":"e"}\n')
        records, report = read_jsonl(path)
        assert [{"key": "a"}, {"key": "c"}, {"key": "e"}] == records
        assert [2, 4] == report.bad_lines
        assert False is report.torn_tail

    def test_blank_lines_are_ignored(self, tmp_path):
        """Empty lines are neither records nor errors."""
        path = tmp_path / "out.jsonl"
        path.write_bytes(b'{"key":"a"}\n\n{"key":"b"}\n')
        records, report = read_jsonl(path)
        assert [{"key": "a"}, {"key": "b"}] == records
        assert [] == report.bad_lines

    def test_typed_read_reports_mismatches(self, tmp_path):
        """With a type, lines that do not fit it are bad lines; the rest decode to Structs."""
        path = tmp_path / "out.jsonl"
        path.write_bytes(b'{"key":"a"}\n{"status":"ok"}\n{"key":"c","status":"error"}\n')
        records, report = read_jsonl(path, type_=Unit)
        assert [Unit(key="a"), Unit(key="c", status="error")] == records
        assert [2] == report.bad_lines

    def test_iter_jsonl_streams_into_given_report(self, tmp_path):
        """iter_jsonl fills the report it was given while streaming."""
        path = tmp_path / "out.jsonl"
        path.write_bytes(b'{"key":"a"}\nbad\n{"key":"c')
        report = ReadReport(path=str(path))
        assert [{"key": "a"}] == list(iter_jsonl(path, report))
        assert ReadReport(path=str(path), lines=3, torn_tail=True, bad_lines=[2]) == report

    def test_missing_file_reads_empty(self, tmp_path):
        """A missing file reads as no records with a clean report."""
        records, report = read_jsonl(tmp_path / "absent.jsonl")
        assert [] == records
        assert ReadReport(path=str(tmp_path / "absent.jsonl")) == report


def write_lines(path, *records: dict) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


class TestResumeIndex:
    def test_ok_records_are_done(self, tmp_path):
        """Keys with an ok record are done; others are not."""
        path = tmp_path / "out.jsonl"
        write_lines(path, {"key": "a", "status": "ok", "payload": {"big": [1, 2, 3]}}, {"key": "b", "status": "ok"})
        index = ResumeIndex.from_file(path)
        assert {"a", "b"} == index.done
        assert "a" in index
        assert "z" not in index
        assert 2 == len(index)

    def test_non_retryable_error_is_done(self, tmp_path):
        """A task-level (non-retryable) error record counts as done by default."""
        path = tmp_path / "out.jsonl"
        write_lines(path, {"key": "a", "status": "error", "error_class": "PermanentLLMError"})
        assert {"a"} == ResumeIndex.from_file(path).done

    def test_non_retryable_error_reruns_with_retry_errors(self, tmp_path):
        """With retry_errors=True a non-retryable error record is not done."""
        path = tmp_path / "out.jsonl"
        write_lines(path, {"key": "a", "status": "error"}, {"key": "b", "status": "ok"})
        assert {"b"} == ResumeIndex.from_file(path, retry_errors=True).done

    def test_retryable_error_is_not_done(self, tmp_path):
        """A unit whose only record is a retryable (infrastructure) error runs again."""
        path = tmp_path / "out.jsonl"
        write_lines(path, {"key": "a", "status": "error", "retryable": True, "error_class": "RateLimitError"})
        assert set() == ResumeIndex.from_file(path).done

    def test_ok_after_error_is_done(self, tmp_path):
        """A later ok record after a retryable error makes the key done."""
        path = tmp_path / "out.jsonl"
        write_lines(path, {"key": "a", "status": "error", "retryable": True}, {"key": "a", "status": "ok"})
        assert {"a"} == ResumeIndex.from_file(path).done

    def test_torn_tail_and_bad_lines_are_reported(self, tmp_path):
        """The index skips a torn tail and records without a key, and keeps the read report."""
        path = tmp_path / "out.jsonl"
        path.write_bytes(b'{"key":"a","status":"ok"}\n{"status":"ok"}\n{"key":"b","status":"o')
        index = ResumeIndex.from_file(path)
        assert {"a"} == index.done
        assert True is index.report.torn_tail
        assert [2] == index.report.bad_lines

    def test_missing_file_is_empty(self, tmp_path):
        """Resuming from a file that does not exist yet gives an empty index."""
        index = ResumeIndex.from_file(tmp_path / "absent.jsonl")
        assert set() == index.done
        assert 0 == len(index)

    def test_add_marks_done(self):
        """add() marks a key done."""
        index = ResumeIndex()
        index.add("k")
        assert "k" in index


class Run(msgspec.Struct, kw_only=True):
    """A unit record type as the sweep writes them: required identifying fields, a payload, a kind."""

    key: str
    status: Literal["ok", "error"]
    task_id: str
    trial: int
    retryable: bool = False
    payload: dict = {}
    kind: Literal["run"] = "run"


class TestTrustOnlyWholeRecords:
    def test_a_key_alone_is_not_a_finished_unit(self, tmp_path):
        """``{"key": k}`` (the corruption that once marked a unit done forever) and unknown statuses are skipped."""
        path = tmp_path / "out.jsonl"
        write_lines(path, {"key": "a"}, {"key": "b", "status": "done"}, {"key": "c", "status": "ok"})
        index = ResumeIndex.from_file(path)
        assert ({"c"}, [1, 2]) == (index.done, index.report.bad_lines)

    def test_with_a_record_type_every_required_field_must_decode(self, tmp_path):
        """With ``type_``, a line missing a required field, with a wrong type or another kind is not done."""
        path = tmp_path / "out.jsonl"
        whole = {"key": "a", "status": "ok", "task_id": "t", "trial": 0, "payload": {"big": [1, 2]}}
        write_lines(path, whole, {"key": "b", "status": "ok"}, {**whole, "key": "c", "trial": "zero"},
                    {**whole, "key": "d", "kind": "judge"}, {**whole, "key": "e", "kind": "run"},
                    {**whole, "key": "f", "status": "error", "retryable": True})
        index = ResumeIndex.from_file(path, type_=Run)
        assert ({"a", "e"}, [2, 3, 4]) == (index.done, index.report.bad_lines)

    def test_key_view_holds_the_required_fields_retryable_and_kind(self):
        """The view keeps what identifies a record and skips its payload; retryable is added when a type lacks it."""
        fields = [(f.name, f.required) for f in msgspec.structs.fields(key_view(Run))]
        assert [("key", True), ("status", True), ("task_id", True), ("trial", True), ("retryable", False),
                ("kind", False)] == fields

        class Bare(msgspec.Struct):
            key: str
            status: str

        assert ["key", "status", "retryable"] == [f.name for f in msgspec.structs.fields(key_view(Bare))]
        assert key_view(Run) is key_view(Run)


def disk_full_after(records: int, name: str, monkeypatch) -> None:
    """``os.write`` to the file ``name`` takes ``records`` whole lines, then half of the next, then fails: ENOSPC."""
    monkeypatch.setattr(os, "write", full_disk_write(records, name))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to tell which file a write goes to")
class TestDiskFull:
    def test_the_error_names_the_file_and_no_partial_line_is_left(self, tmp_path, monkeypatch):
        """The third record half lands, then the disk is full: the error names the file and ENOSPC, the half line
        is cut off again, the two records before it read back, and once space is free the next record appends
        on a line of its own."""
        path = tmp_path / "runs.jsonl"
        writer = JsonlWriter(path)
        disk_full_after(2, "runs.jsonl", monkeypatch)
        writer.write(Unit(key="a"))
        writer.write(Unit(key="b"))
        with pytest.raises(OSError) as caught:
            writer.write(Unit(key="c", payload="x" * 1000))
        assert (errno.ENOSPC, str(path)) == (caught.value.errno, caught.value.filename)
        assert (f"[Errno 28] disk full (ENOSPC: No space left on device) while appending a record; every record "
                f"before it is intact (2 written by this writer); free space and rerun to resume: '{path}'"
                == str(caught.value))
        assert b'{"key":"a","status":"ok","payload":""}\n{"key":"b","status":"ok","payload":""}\n' == path.read_bytes()
        monkeypatch.undo()  # space is free again
        writer.write(Unit(key="d"))
        writer.close()
        records, report = read_jsonl(path)
        assert (["a", "b", "d"], False, []) == ([r["key"] for r in records], report.torn_tail, report.bad_lines)

    def test_a_failed_fsync_names_the_file(self, tmp_path, monkeypatch):
        """An error the disk reports only at fsync (delayed allocation) names the file too."""
        path = tmp_path / "calls.jsonl"
        writer = JsonlWriter(path, fsync=True)

        def fsync(fd: int) -> None:
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr(os, "fsync", fsync)
        with pytest.raises(OSError) as caught:
            writer.write({"key": "a"})
        monkeypatch.undo()
        writer.close()
        assert (errno.EIO, str(path)) == (caught.value.errno, caught.value.filename)
        assert caught.value.strerror.startswith("I/O error (EIO: Input/output error) while appending a record")


# Appends records to a JSONL file on a 64 KiB tmpfs until the disk is full, then reports what it saw.
FILL_THE_DISK = """
import json, os, sys
from mpcbench_async.testing import full_disk_write
from mpcbench_async.runtime import JsonlWriter, read_jsonl
path = os.path.join(sys.argv[1], "runs.jsonl")
writer, written, error = JsonlWriter(path), 0, None
try:
    while True:
        writer.write({"key": f"k{written}", "status": "ok", "payload": "x" * 3000})
        written += 1
except OSError as exc:
    error = [exc.errno, exc.filename, str(exc)]
writer.close()
records, report = read_jsonl(path)
print(json.dumps({"written": written, "error": error, "read": len(records), "torn": report.torn_tail,
                  "bad": report.bad_lines}))
"""


def _unshare(command: str) -> subprocess.CompletedProcess[str] | None:
    """``command`` run as root of a new user and mount namespace (no privileges needed); None when unavailable."""
    probe = "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d && umount $d && rmdir $d"
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "sh", "-c", probe],
                                                         capture_output=True, timeout=60).returncode != 0:
        return None
    return subprocess.run(["unshare", "-rm", "sh", "-c", command], capture_output=True, text=True, timeout=60)


def test_a_real_full_tmpfs_names_the_file_and_keeps_every_record(tmp_path):
    """On a real 64 KiB tmpfs the write that does not fit raises ENOSPC naming the file; every record written
    before it reads back and no torn line is left (the old writer named no file and left half a line)."""
    script = tmp_path / "fill.py"
    script.write_text(FILL_THE_DISK)
    disk = tmp_path / "disk"
    disk.mkdir()
    proc = _unshare(f"mount -t tmpfs -o size=64k tmpfs {disk} && {sys.executable} {script} {disk}")
    if proc is None:
        pytest.skip("no unprivileged user namespaces here: cannot mount a small tmpfs")
    assert 0 == proc.returncode, proc.stderr
    seen = json.loads(proc.stdout)
    path = str(disk / "runs.jsonl")
    assert seen["written"] > 10
    assert [errno.ENOSPC, path] == seen["error"][:2]
    assert seen["error"][2].startswith("[Errno 28] disk full (ENOSPC: No space left on device) while appending")
    assert (seen["written"], False, []) == (seen["read"], seen["torn"], seen["bad"])
