"""The watchdog that takes a driver's local Ray processes down with it: a fake driver and fake Ray processes.

The driver here is a small script that starts the watchdog and three children: one whose command line names Ray's
package directory (as ``raylet`` does), one titled ``ray::…`` (as Ray's workers and agents are), and one that is
not Ray's. The test SIGKILLs the driver (or lets it stop the watchdog) and looks at who is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mpcbench_async.distributed._watchdog import SCAN_S

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the watchdog reads /proc (Linux)")

DRIVER = """
import subprocess, sys, time
from mpcbench_async.distributed._watchdog import start_watchdog
ray_dir, mode = sys.argv[1], sys.argv[2]
dog = start_watchdog(ray_dir)
sleeper = "import time; time.sleep(120)"
raylet = subprocess.Popen([sys.executable, "-c", sleeper, ray_dir + "/core/src/ray/raylet/raylet"])
titled = subprocess.Popen(["bash", "-c", "exec -a ray::UnitWorker sleep 120"])
other = subprocess.Popen([sys.executable, "-c", sleeper, "not-ray"])
print(dog.pid, raylet.pid, titled.pid, other.pid, flush=True)
if mode == "stop":
    time.sleep(float(sys.argv[3]))
    dog.stop()
    print("stopped", flush=True)
time.sleep(120)
"""


def state(pid: int) -> str | None:
    """The process state letter (``Z`` for a zombie), or None when the pid is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()[0]


def alive(pid: int) -> bool:
    return state(pid) not in (None, "Z")


def start_driver(tmp_path: Path, mode: str) -> tuple[subprocess.Popen[str], list[int]]:
    ray_dir = str(tmp_path / "site-packages" / "ray")
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, ray_dir, mode, str(3 * SCAN_S)],
                              stdout=subprocess.PIPE, text=True)
    assert driver.stdout is not None
    pids = [int(p) for p in driver.stdout.readline().split()]
    time.sleep(3 * SCAN_S)  # the watchdog notes new processes every SCAN_S
    return driver, pids


def wait_gone(pids: list[int], timeout_s: float = 10.0) -> float:
    """Seconds until none of ``pids`` runs (fails after ``timeout_s``)."""
    started = time.monotonic()
    while any(alive(pid) for pid in pids):
        assert time.monotonic() - started < timeout_s, [(pid, state(pid)) for pid in pids]
        time.sleep(0.05)
    return time.monotonic() - started


def test_a_killed_driver_takes_its_ray_processes_along_and_nothing_else(tmp_path):
    """SIGKILL the driver: its Ray processes (by path and by ``ray::`` title) are killed at once, the watchdog
    exits, and a child that is not Ray's is left alone."""
    driver, (dog, raylet, titled, other) = start_driver(tmp_path, "kill")
    try:
        assert all(alive(pid) for pid in (dog, raylet, titled, other))
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        took = wait_gone([raylet, titled, dog], timeout_s=5.0)
        assert took < 5.0
        assert alive(other)
    finally:
        for pid in (raylet, titled, other, dog):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_driver_that_stops_the_watchdog_keeps_its_processes(tmp_path):
    """After ``stop`` (the driver shut Ray down itself) the watchdog exits and kills nothing, even when the
    driver dies later."""
    driver, (dog, raylet, titled, other) = start_driver(tmp_path, "stop")
    try:
        assert driver.stdout is not None and "stopped" == driver.stdout.readline().strip()
        wait_gone([dog], timeout_s=5.0)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        time.sleep(3 * SCAN_S)
        assert all(alive(pid) for pid in (raylet, titled, other))
    finally:
        for pid in (raylet, titled, other):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
