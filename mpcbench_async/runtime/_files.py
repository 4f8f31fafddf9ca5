"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half.

The new content goes to ``.<name>.tmp-<pid>`` beside the target and is renamed
over it. The pid keeps two processes writing one target (a sweep and a
``summarize`` of its directory) from sharing a temporary file; a process killed
between writing and renaming leaves its temporary behind, so every write first
removes the temporaries of the same target whose process is gone.

A write that fails (a full disk, a quota, an I/O error) raises an ``OSError`` that
keeps its ``errno`` and names the file (``filename``) and what happened
(``write_error``): the bare ``[Errno 28] No space left on device`` names none.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

__all__ = ["atomic_write_bytes", "pid_alive", "safe_name", "write_all", "write_error"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

_WHAT = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk quota exceeded", errno.EIO: "I/O error",
         errno.EFBIG: "file too large", errno.EROFS: "read-only file system"}


def write_error(exc: OSError, path: str | Path, doing: str, kept: str) -> OSError:
    """``exc`` as an ``OSError`` with the same errno that names ``path``, what failed and what is safe.

    ``str()`` gives e.g. ``[Errno 28] disk full (ENOSPC: No space left on device) while appending a record; ...:
    'reports/x/agent_runs.jsonl'``; the CLI prints ``<file>: <strerror>``.
    """
    code = exc.errno
    name = errno.errorcode.get(code, "") if code is not None else ""
    reason = exc.strerror or str(exc)
    what = f"{_WHAT[code]} ({name}: {reason})" if code in _WHAT else (f"{name}: {reason}" if name else reason)
    return OSError(code, f"{what} while {doing}; {kept}", str(path))


def write_all(fd: int, data: bytes | bytearray | memoryview) -> int:
    """Write every byte of ``data`` to ``fd`` (``os.write`` may write only part); return the bytes written.

    On failure the ``OSError`` raised carries ``written``: how many bytes of ``data`` reached the file first.
    The usual case, one ``os.write`` taking it all, makes no memoryview (a record's line: ~6 fewer calls, issue 31).
    """
    try:
        done = os.write(fd, data)
    except InterruptedError:
        done = 0
    except OSError as exc:
        exc.written = 0  # type: ignore[attr-defined]
        raise
    if done == len(data):
        return done
    with memoryview(data) as view:  # released on the way out, even by an error, so ``data`` may grow again
        while done < len(view):
            try:
                with view[done:] as rest:
                    done += os.write(fd, rest)
            except InterruptedError:
                continue
            except OSError as exc:
                exc.written = done  # type: ignore[attr-defined]
                raise
    return done


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


def atomic_write_bytes(path: str | Path, data: bytes | bytearray, *, fsync: bool = True) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            write_all(fd, data)
            if fsync:
                os.fsync(fd)
        except OSError as exc:  # the target is untouched: say so, and name it (the bare error names no file)
            kept = "the previous version is kept" if path.exists() else "nothing was written"
            raise write_error(exc, path, f"writing {len(data):,} bytes", kept) from exc
        finally:
            os.close(fd)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def safe_name(text: str) -> str:
    """A file-name-safe form of a model or task name (``sim/oracle-agent`` → ``sim_oracle-agent``); here, below
    the benchmarks, because MPCBench's evaluation and the tariff suite both name files by it."""
    cleaned = _UNSAFE.sub("_", text).strip("._")
    return cleaned or "_"
