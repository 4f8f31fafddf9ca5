"""Atomic writes: the old file or the new one, and no temporary file outlives a killed writer."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mpcbench_async.runtime import atomic_write_bytes

# Dies by SIGKILL after the temporary file is written, before it is renamed over the target.
KILLED_WRITER = """
import os, signal, sys
from mpcbench_async.runtime import _files
_files.os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)
_files.atomic_write_bytes(sys.argv[1], b"half-way")
"""


def _dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    return int(child.stdout)


class TestAtomicWrite:
    def test_a_writer_killed_before_the_rename_leaves_the_old_file_and_the_next_write_clears_its_temp(self, tmp_path):
        """The kill keeps summary.json as it was and leaves ``.summary.json.tmp-<pid>``; the next write removes it."""
        target = tmp_path / "summary.json"
        target.write_bytes(b"old")
        child = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target)])
        assert -signal.SIGKILL == child.wait()
        assert (b"old", [f".summary.json.tmp-{child.pid}"]) == (target.read_bytes(), _temps(tmp_path))
        atomic_write_bytes(target, b"new", fsync=False)
        assert (b"new", []) == (target.read_bytes(), _temps(tmp_path))

    def test_temps_of_live_processes_and_of_other_files_are_left_alone(self, tmp_path):
        """Only temporaries of the same target whose process is gone are removed."""
        dead, live = _dead_pid(), os.getppid()
        for name in (f".summary.json.tmp-{dead}", f".summary.json.tmp-{live}", f".summary.md.tmp-{dead}",
                     ".summary.json.tmp-notapid"):
            (tmp_path / name).write_bytes(b"x")
        atomic_write_bytes(tmp_path / "summary.json", b"{}", fsync=False)
        assert [f".summary.json.tmp-{live}", ".summary.json.tmp-notapid", f".summary.md.tmp-{dead}"] == \
            _temps(tmp_path)

    def test_a_full_disk_keeps_the_old_file_and_names_the_target(self, tmp_path, monkeypatch):
        """ENOSPC while the temporary is written: the old file stays, the temporary goes, the error names the
        target and says the disk is full."""
        target = tmp_path / "summary.json"
        target.write_bytes(b"old")
        real = os.write

        def write(fd: int, data) -> int:
            if ".summary.json.tmp-" in os.readlink(f"/proc/self/fd/{fd}"):
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(fd, data)

        monkeypatch.setattr(os, "write", write)
        with pytest.raises(OSError) as caught:
            atomic_write_bytes(target, b"new" * 1000)
        assert (errno.ENOSPC, str(target)) == (caught.value.errno, caught.value.filename)
        assert ("disk full (ENOSPC: No space left on device) while writing 3,000 bytes; the previous version is kept"
                == caught.value.strerror)
        assert (b"old", []) == (target.read_bytes(), _temps(tmp_path))


def _temps(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".tmp-" in p.name)

