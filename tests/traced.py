"""The peak of Python allocations while a step runs (``tracemalloc``): the memory tests' one measure."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any


def peak(step: Callable[[], Any]) -> int:
    """The peak of traced memory while ``step`` runs (what it returns included), above what was allocated before."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        step()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
