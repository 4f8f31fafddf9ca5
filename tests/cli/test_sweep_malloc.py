"""The sweep command holds glibc's malloc thresholds, so a long sweep's heap does not grow with its units.

What it guards, measured in ``runtime/_malloc.py``: with glibc's adjusting thresholds, one large block freed made
every later socket read's 256 KiB buffer come from the heap, and the heap grew ~110–150 bytes per unit for the whole
sweep. The probe is deterministic: ``mallinfo2``'s count of mapped blocks, no timing and no RSS.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

from tests.conftest import REPO

GLIBC = hasattr(ctypes.CDLL(None), "gnu_get_libc_version")

# After the command returns, in its process: free a 4 MiB block (glibc's adjustment would raise its mmap threshold
# to 4 MiB), then count the mapped blocks a 2 MiB buffer adds: 1 when the threshold is held at 128 KiB, else 0.
PROBE = """
import ctypes, sys
from mpcbench_async.cli import main

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
code = main(sys.argv[1:])
block = bytearray(4 << 20)
del block
mapped = libc.mallinfo2().hblks
buffer = bytearray(2 << 20)
print(code, libc.mallinfo2().hblks - mapped)
"""


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_a_sweep_keeps_large_buffers_off_the_heap(tmp_path):
    """After ``sweep``, a freed 4 MiB block no longer raises the threshold: a 2 MiB buffer is mapped (the code before
    printed ``0 0``: that buffer, and every 256 KiB socket read, came from the heap)."""
    proc = subprocess.run([sys.executable, "-c", PROBE, "sweep", "--out", str(tmp_path / "out"), "--tasks", "sc01_*",
                           "--trials", "1", "--quiet"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert (0, "0 1") == (proc.returncode, proc.stdout.splitlines()[-1]), proc.stderr
