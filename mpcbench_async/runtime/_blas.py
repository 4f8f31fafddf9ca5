"""numpy's BLAS kept to one thread in a sweep's process: its thread pool only spins there.

numpy's wheels bundle OpenBLAS, which starts a pool of (cores − 1) threads when numpy is imported; each thread then
busy-waits for work for ~2^28 cycles (~0.1 s) before it sleeps. A sweep imports numpy at start-up (the secret
matcher's tables, the statistics) and never calls a BLAS routine (the project has no ``dot``, ``matmul`` or
``linalg``: its numpy work is element-wise and in numpy's own loops), so that pool does nothing but spin: ~95 ms of
CPU per sweep on 2 cores (perf: every sample of the pool's thread in ``blas_thread_server``, within a second of
start-up), ~2.5% of a 40-trial sweep of the shipped tasks, and more on a machine with more cores.

``OPENBLAS_NUM_THREADS=1`` before numpy's import starts no pool. It is set only where the user has not set it, and
it reaches the sweep's children (the embedded sim's process) through the environment. Results cannot change:
no BLAS routine runs. Like the other process settings (``_malloc.py``, ``_gc.py``), the ``sweep`` command applies it.
"""

from __future__ import annotations

import os
import sys


def single_threaded_blas() -> bool:
    """Ask OpenBLAS for one thread unless the environment says otherwise; ``False`` if numpy was imported already
    (its pool is running: too late)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    return "numpy" not in sys.modules
