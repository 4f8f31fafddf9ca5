"""Start ``mpcbench-async sim serve`` in a child process, for measurements and subprocess tests.

Running the sim in its own process keeps its CPU out of the client's
measurements (``time.process_time`` of this process counts the client only).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .._exceptions import BenchError

__all__ = ["sim_subprocess"]


@contextmanager
def sim_subprocess(extra_args: Sequence[str] = ()) -> Iterator[str]:
    """Run a sim server on a free loopback port; yield its base URL; stop it on exit."""
    cmd = [sys.executable, "-m", "mpcbench_async", "sim", "serve", "--port", "0", *extra_args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("sim listening on "):
            proc.kill()
            _, err = proc.communicate(timeout=10)
            raise BenchError(f"the sim server did not start: {err.strip() or line.strip()}")
        yield line.split()[-1]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
