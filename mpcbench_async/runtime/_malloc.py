"""glibc's malloc thresholds held at their defaults for a long sweep, so the heap does not grow with it.

glibc adjusts two thresholds as a process runs: when a block it mapped with ``mmap`` is freed, it raises the mmap
threshold to that block's size (up to 32 MiB) and the trim threshold to twice that. One large buffer freed at
start-up (a data file or an index read whole) is enough. From then on, every socket read's 256 KiB buffer
(asyncio's ``recv(max_size)``, then shrunk to what came) is cut from the heap instead of being mapped, and the
small reply left where it was cut pins the free space around it. The heap then grows with every unit for the
whole sweep, while the live data stays flat: an RSS slope of ~110–150 bytes per unit over a 30k-unit sweep
(``tracemalloc``'s traced memory flat over the same units), ~6 bytes per unit with the thresholds held.

Setting either threshold explicitly turns glibc's adjustment off; both are set to its defaults (128 KiB), so
buffers that large are mapped and unmapped whole, as in a fresh process. Elsewhere (musl, macOS) nothing is done.
"""

from __future__ import annotations

import ctypes

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # <malloc.h>
GLIBC_DEFAULT = 128 * 1024


def hold_malloc_thresholds() -> bool:
    """Fix glibc's mmap and trim thresholds at their defaults for this process; False when not on glibc."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return False
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return False
    return all(libc.mallopt(option, GLIBC_DEFAULT) == 1 for option in (_M_MMAP_THRESHOLD, _M_TRIM_THRESHOLD))
