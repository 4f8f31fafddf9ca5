"""A bounded memo for pure results that repeat across a sweep's trials.

Why: a sweep runs each task k times. At temperature 0, and always for the sim's oracle, a task's trials repeat the
same tool calls with the same arguments and often give the same final answer. The built-in MPCBench tools and the
deterministic checks are pure functions of the scenario's data and those inputs, and computing them was a fifth of
a sweep's CPU per LLM call on the event loop (issue 31). A repeat is answered from memory instead.

Bounded by entries and by the bytes the caller says each value holds; the oldest entry leaves first (insertion
order: a hit does not move an entry, so a look-up takes no lock), so memory does not grow with the sweep. A value
larger than the whole bound is never kept. Two callers that miss the same key at once both compute it (the first
value put stays): a repeat saves work only once the first has finished. Thread-safe: the tools and the checks also
run in worker threads (a look-up is one ``dict.get``; storing takes a lock). Pickled (to a Ray worker, with the
stage holding it) as an empty memo of the same bounds: the receiver keeps its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["Memo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """At most ``max_entries`` values of at most ``max_bytes`` together (as ``put``'s ``size`` counts them)."""

    def __init__(self, *, max_entries: int, max_bytes: int) -> None:
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._values: dict[K, tuple[V, int]] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0  # look-ups answered (not exact under threads: a count for tests and benches)

    def __reduce__(self) -> tuple[Callable[[int, int], Memo[K, V]], tuple[int, int]]:
        return _empty, (self.max_entries, self.max_bytes)

    def __len__(self) -> int:
        return len(self._values)

    @property
    def size(self) -> int:
        """The bytes held, as ``put`` counted them."""
        return self._bytes

    def get(self, key: K) -> V | None:
        """The value kept for ``key``, or ``None``."""
        found = self._values.get(key)
        if found is None:
            return None
        self.hits += 1
        return found[0]

    def put(self, key: K, value: V, size: int) -> None:
        """Keep ``value`` (``size`` bytes) for ``key`` unless it is there already; the oldest leave to make room."""
        if size > self.max_bytes:
            return
        with self._lock:
            values = self._values
            if key in values:
                return
            values[key] = (value, size)
            self._bytes += size
            while len(values) > self.max_entries or self._bytes > self.max_bytes:
                self._bytes -= values.pop(next(iter(values)))[1]


def _empty(max_entries: int, max_bytes: int) -> Memo[K, V]:
    return Memo(max_entries=max_entries, max_bytes=max_bytes)
