"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half.

The new content goes to ``.<name>.tmp-<pid>`` beside the target and is renamed
over it. The pid keeps two processes writing one target (a sweep and a
``summarize`` of its directory) from sharing a temporary file; a process killed
between writing and renaming leaves its temporary behind, so every write first
removes the temporaries of the same target whose process is gone.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["atomic_write_bytes", "pid_alive"]


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (so a temporary file it owns may still be in use)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _remove_stale_temps(path: Path) -> None:
    """Delete ``.<name>.tmp-<pid>`` files beside ``path`` left by processes that no longer run."""
    prefix = f".{path.name}.tmp-"
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        pid = entry.name[len(prefix):]
        if pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid)):
            Path(entry.path).unlink(missing_ok=True)


def atomic_write_bytes(path: str | Path, data: bytes, *, fsync: bool = True) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with tmp.open("wb") as fh:
            fh.write(data)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
