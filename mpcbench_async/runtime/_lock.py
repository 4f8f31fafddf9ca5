"""One writer per output directory: an OS file lock on ``DIR/.lock`` that holds the owner's pid.

``fcntl.flock`` is released by the kernel when its process dies (even by
SIGKILL), so a lock file left by a dead process is simply taken over: there is
no stale state to clean up. The lock is re-entrant within one process (the CLI
holds it while it writes the manifest, the ``Runner`` inside takes it again).

``abandon`` gives the lock back and undoes what ``acquire`` did (a new lock
file and new directories removed, an existing lock file's bytes and times put
back), so a sweep whose start fails leaves ``out`` as it found it, byte for
byte. Since a lock file may thus be deleted, ``acquire`` checks that the file
it locked is still the one at the path (and otherwise opens the path again):
two processes can never hold two different inodes of the same path.
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

    def __init__(self, directory: str | Path, *, setting: str = "out") -> None:
        self.directory = Path(directory)
        self.setting = setting  # what a caller passes the directory as, named in the messages (the CLI: its flag)
        self._key: Path | None = None
        self._new_file: Path | None = None  # the lock file, if acquire created it
        self._new_dirs: list[Path] = []  # the directories acquire created, deepest first
        self._old: tuple[bytes, int, int] | None = None  # an existing lock file's bytes, atime and mtime (ns)

    def acquire(self) -> None:
        """Take the lock now (without blocking); a second process gets an error naming the holder's pid."""
        new_dirs = [p for p in (self.directory, *self.directory.parents) if not p.exists()]
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"``{self.setting}`` {self.directory}: cannot create the directory "
                             f"({exc.strerror})") from exc
        key = self.directory.resolve()
        if key in _HELD:
            fd, holders = _HELD[key]
            _HELD[key] = (fd, holders + 1)
            self._key = key
            return
        path = key / ".lock"
        new_file = not path.exists()
        fd = _locked_fd(path, self.directory, self.setting)
        old = os.fstat(fd)
        self._old = None if new_file else (os.pread(fd, old.st_size, 0), old.st_atime_ns, old.st_mtime_ns)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _HELD[key] = (fd, 1)
        self._key = key
        self._new_file, self._new_dirs = (path if new_file else None), new_dirs

    def abandon(self) -> None:
        """Give the lock back and undo what ``acquire`` did: the lock file removed if it was new, else its bytes and
        times put back (the pid of an earlier sweep); the directories it created removed if they are empty again.
        For a start that failed before writing anything (a holder elsewhere in this process keeps everything)."""
        if self._key is None or _HELD[self._key][1] > 1:
            self.release()
            return
        if self._new_file is not None:
            self._new_file.unlink(missing_ok=True)  # while still locked: a process that opened it re-opens the path
        elif self._old is not None:
            fd, (content, atime, mtime) = _HELD[self._key][0], self._old
            os.ftruncate(fd, 0)
            os.pwrite(fd, content, 0)
            os.utime(fd, ns=(atime, mtime))
        self.release()
        for directory in self._new_dirs:
            try:
                directory.rmdir()
            except OSError:
                return  # something else was put there meanwhile: leave it

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


def _locked_fd(path: Path, directory: Path, setting: str) -> int:
    """A descriptor of ``path`` holding its exclusive lock, re-opened if the file was deleted before it was locked."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise InputError(f"{directory}: another sweep (pid {holder}) is writing to this directory "
                             f"(lock {path}); wait for it to end or pass another ``{setting}``") from None
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)  # its holder abandoned it between our open and our lock: lock the path's new file
