"""One writer per output directory: an OS file lock on ``DIR/.lock`` that holds the owner's pid.

``fcntl.flock`` is released by the kernel when its process dies (even by
SIGKILL), so a lock file left by a dead process is simply taken over: there is
no stale state to clean up. The lock is re-entrant within one process (the CLI
holds it while it writes the manifest, the ``Runner`` inside takes it again),
and the file is never deleted, so two processes can never lock two different
inodes of the same path.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from .._exceptions import InputError

__all__ = ["DirLock"]

_HELD: dict[Path, tuple[int, int]] = {}  # resolved directory -> (file descriptor, holders in this process)


class DirLock:
    """``with DirLock(out_dir):`` — this process alone uses ``out_dir``, or an ``InputError`` names the holder."""

    def __init__(self, directory: str | Path, *, flag: str = "--out") -> None:
        self.directory = Path(directory)
        self.flag = flag
        self._key: Path | None = None

    def acquire(self) -> None:
        """Take the lock now (without blocking); a second process gets an error naming the holder's pid."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{self.flag} {self.directory}: cannot create the directory ({exc.strerror})") from exc
        key = self.directory.resolve()
        if key in _HELD:
            fd, holders = _HELD[key]
            _HELD[key] = (fd, holders + 1)
            self._key = key
            return
        path = key / ".lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise InputError(f"{self.directory}: another sweep (pid {holder}) is writing to this directory "
                             f"(lock {path}); wait for it to end or pass another {self.flag}") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _HELD[key] = (fd, 1)
        self._key = key

    def release(self) -> None:
        """Give the lock back; the last holder in this process unlocks and closes the file."""
        if self._key is None:
            return
        fd, holders = _HELD[self._key]
        if holders > 1:
            _HELD[self._key] = (fd, holders - 1)
        else:
            del _HELD[self._key]
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._key = None

    def __enter__(self) -> DirLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
