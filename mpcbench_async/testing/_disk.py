"""A disk that fills up under one file: an ``os.write`` replacement for tests and chaos runs (Linux: ``/proc``).

``os.write = full_disk_write(3, "runs.jsonl")`` (or ``monkeypatch.setattr(os, "write", …)``) lets writes to the
file named ``runs.jsonl`` take three whole writes, then half of the next, then fail with ENOSPC, as a disk that
fills up mid-record does; other files write as usual. The patch sits at the edge, the system call the JSONL
writers use, so everything above it runs as it would on a full disk. It needs no root, unlike a small tmpfs.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

__all__ = ["full_disk_write"]


def full_disk_write(records: int, name: str) -> Callable[[int, bytes | bytearray | memoryview], int]:
    """An ``os.write`` whose writes to the file ``name`` take ``records`` writes, half of the next, then ENOSPC."""
    real = os.write
    state = {"lines": 0, "half": False}

    def write(fd: int, data: bytes | bytearray | memoryview) -> int:
        if not os.readlink(f"/proc/self/fd/{fd}").endswith("/" + name):
            return real(fd, data)
        if state["lines"] < records:
            state["lines"] += 1
            return real(fd, data)
        if not state["half"]:
            state["half"] = True
            whole = memoryview(data).cast("B")
            return real(fd, whole[: len(whole) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    return write
