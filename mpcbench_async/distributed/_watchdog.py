"""A watchdog that takes a local Ray instance down with its driver, however the driver ends (SIGKILL included).

Ray ties its head processes to the driver that started them (``PR_SET_PDEATHSIG``: the raylet and
the GCS die with it), but not the rest: measured with Ray 2.60 on Linux, a SIGKILLed driver left
its worker actors for ~2 s and the dashboard and runtime-env agents for ~60 s (each waits on a
60 s call to the dead GCS before it exits); earlier versions kept workers 20–50 s.

``start_watchdog`` runs this file as a small separate process (standard library only, its own
session, so a Ctrl-C to the terminal does not reach it) holding the read end of a pipe whose only
writer is the driver. Every ``SCAN_S`` it notes the driver's descendant processes that are Ray's
(a process title ``ray::…``, or a command line naming Ray's package directory: ``raylet``,
``gcs_server``, the agents, the monitors) with their start times. When the pipe reaches end of
file — the kernel closes it as the driver dies, whatever killed it — it SIGKILLs those still
running (a pid whose start time changed is someone else's and left alone) and exits. A driver
that shuts Ray down itself writes ``stop`` first, and the watchdog exits without killing.
Linux only (it reads ``/proc``); elsewhere ``start_watchdog`` returns ``None``.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

__all__ = ["SCAN_S", "Watchdog", "ray_processes", "start_watchdog"]

SCAN_S = 0.5
"""How often the watchdog notes the driver's Ray processes (one that started less than this before the
driver died may be missed; Ray's own fate-sharing still ends it, only later)."""
PROC = Path("/proc")


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of ``pid``, or None when it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the command name may hold spaces and parentheses
    return int(fields[1]), int(fields[19])


def _is_ray(pid: int, ray_dir: str) -> bool:
    try:
        argv = (PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return argv[0].startswith(b"ray::") or any(ray_dir.encode() in arg for arg in argv)


def ray_processes(driver: int, ray_dir: str) -> dict[int, int]:
    """The driver's descendant processes that belong to Ray, as pid → start time."""
    children: dict[int, list[int]] = {}
    started: dict[int, int] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            children.setdefault(stat[0], []).append(int(entry.name))
            started[int(entry.name)] = stat[1]
    found: dict[int, int] = {}
    todo = list(children.get(driver, ()))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, ())
        if pid != os.getpid() and pid in started and _is_ray(pid, ray_dir):
            found[pid] = started[pid]
    return found


def _kill(noted: dict[int, int]) -> None:
    for pid, start in noted.items():
        stat = _stat(pid)
        if stat is not None and stat[1] == start:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:  # gone meanwhile
                pass


def main(driver: int, ray_dir: str) -> None:
    """Watch ``driver`` through stdin (see the module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    noted: dict[int, int] = {}
    while True:
        noted.update(ray_processes(driver, ray_dir))
        noted = {pid: start for pid, start in noted.items() if _stat(pid) is not None}
        ready, _, _ = select.select([0], [], [], SCAN_S)
        if ready:
            line = os.read(0, 64)
            if line.startswith(b"stop"):
                return
            if not line:  # end of file: the driver is gone
                _kill(noted | ray_processes(driver, ray_dir))
                return


class Watchdog:
    """The driver's end of a running watchdog."""

    def __init__(self, process: subprocess.Popen[bytes], pipe: int) -> None:
        self.process, self._pipe = process, pipe

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """The driver shut Ray down itself: the watchdog exits without killing anything."""
        if self._pipe < 0:
            return
        try:
            os.write(self._pipe, b"stop\n")
        except OSError:  # it died: nothing to tell
            pass
        os.close(self._pipe)
        self._pipe = -1
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_watchdog(ray_dir: str) -> Watchdog | None:
    """Start the watchdog of this process's Ray processes (``ray_dir``: Ray's package directory); None off Linux."""
    if not sys.platform.startswith("linux") or not (PROC / "self" / "stat").exists():
        return None
    read_end, write_end = os.pipe()  # not inheritable: only this process holds the write end
    try:
        process = subprocess.Popen([sys.executable, "-I", __file__, str(os.getpid()), ray_dir], stdin=read_end,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    return Watchdog(process, write_end)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
