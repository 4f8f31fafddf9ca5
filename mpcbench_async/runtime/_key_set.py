"""Unit keys held as numbers, not strings: the done-index's columns and a resume's sets of done keys.

Why: a key string is ~70 bytes and a set or dict slot for it 16–50 more; at 100k units a no-op resume held four
such collections of 200k keys (~40 MiB, most of its memory's growth from 10k units). Our keys end in 16 lowercase
hex digits (``run-`` + 16, ``records.unit_key``): such a key is its prefix and an 8-byte number, which give the
key back exactly, so a set of them is one sorted array per prefix, searched by bisection — exact, no hash to
collide. A key of any other shape (a library suite's) is kept as a string.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Set
from typing import Any

__all__ = ["MAX_PREFIXES", "KeySet", "bucketed", "find_bucketed", "hex_key", "sorted_unique", "split_key"]

_HEX16 = re.compile(r"[0-9a-f]{16}")
MAX_PREFIXES = 255  # a prefix's number fits a byte (``Entries.kinds``); one more is "not packed"


def split_key(key: str) -> tuple[str, int] | None:
    """``key`` as (prefix, number) when it ends in 16 lowercase hex digits (then ``prefix + f"{n:016x}"`` is
    ``key``), else None."""
    start = len(key) - 16
    if start < 0 or _HEX16.fullmatch(key, start) is None:
        return None
    return key[:start], int(key[start:], 16)


def sorted_unique(values: Any) -> Any:
    """``np.unique(values)`` for a fresh 1-D array, which is sorted in place: one copy fewer (``np.unique`` copies its
    input, then masks it: at 100k keys its temporaries were a no-op resume's peak)."""
    import numpy as np

    values.sort()
    if len(values) < 2:
        return values
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values if keep.all() else values[keep]


def bucketed(values: Any) -> tuple[array[int], int, array[int]]:
    """Sorted unique 8-byte ``values`` (a numpy uint64 array) as (the values, the shift to a value's bucket, where
    each bucket starts): hash digits are spread evenly, so with a bucket per 4–8 values by the top bits a value is
    found by bisecting a handful of them, not all; the starts are 4-byte ints (~0.7 bytes a value)."""
    import numpy as np

    bits = max(1, len(values).bit_length() - 3)
    starts = np.searchsorted(values, np.arange(2 ** bits, dtype=np.uint64) << np.uint64(64 - bits))
    packed, where = array("Q"), array("i")
    packed.frombytes(values.view(np.uint8))  # from the buffer: no copy between
    where.frombytes(np.append(starts, len(values)).astype(np.int32).tobytes())
    return packed, 64 - bits, where


def find_bucketed(values: array[int], shift: int, starts: array[int], value: int) -> int | None:
    """Where ``value`` is in ``bucketed``'s values, or None."""
    bucket = value >> shift
    end = starts[bucket + 1]
    position = bisect_left(values, value, starts[bucket], end)
    return position if position < end and values[position] == value else None


def hex_key(prefix: str, value: int) -> str:
    return f"{prefix}{value:016x}"


class KeySet(Set[str]):
    """A set of keys, each with its number (0 … ``len`` − 1): per prefix the sorted numbers of its keys (numbered
    in a row), then the other keys in a dict. ``add`` numbers a new key after all others."""

    __slots__ = ("packed", "others", "size")

    def __init__(self, keys: Iterable[str] = ()) -> None:
        by_prefix: dict[str, array[int]] = {}
        others: list[str] = []
        for key in keys:
            split = split_key(key)
            if split is None:
                others.append(key)
            else:
                by_prefix.setdefault(split[0], array("Q")).append(split[1])
        self.packed: dict[str, tuple[array[int], int, int, array[int]]] = {}
        self.others: dict[str, int] = {}
        self.size = 0
        for prefix, values in sorted(by_prefix.items()):
            self._pack(prefix, values)
        for key in sorted(set(others)):
            self.add(key)

    @classmethod
    def of_numbers(cls, packed: dict[str, Any], others: Iterable[str]) -> KeySet:
        """The set of ``prefix + 16 hex digits`` for each prefix's numbers (a numpy uint64 array, sorted and
        unique), and of ``others``."""
        keys = cls()
        for prefix, values in sorted(packed.items()):
            keys._pack(prefix, values, unique=True)
        for key in sorted(set(others)):
            keys.add(key)
        return keys

    def _pack(self, prefix: str, values: Any, *, unique: bool = False) -> None:
        """Number ``prefix``'s ``values`` (an 8-byte buffer; ``unique``: sorted without repeats already) next."""
        import numpy as np  # lazily: the runtime is imported where numpy is not needed (start-up)

        values = np.frombuffer(values, dtype=np.uint64)
        if not unique:
            values = sorted_unique(values.copy())
        if not len(values):
            return
        packed, shift, where = bucketed(values)
        self.packed[prefix] = (packed, self.size, shift, where)
        self.size += len(values)

    def number(self, key: str) -> int | None:
        """The key's number, or None when it is not in the set."""
        start = len(key) - 16
        if start > -1 and (found := self.packed.get(key[:start])) is not None \
                and _HEX16.fullmatch(key, start) is not None:
            values, offset, shift, starts = found
            position = find_bucketed(values, shift, starts, int(key[start:], 16))
            if position is not None:
                return offset + position
        return self.others.get(key)

    def add(self, key: str) -> None:
        if self.number(key) is None:
            self.others[key] = self.size
            self.size += 1

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.number(key) is not None

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[str]:
        for prefix, (values, *_) in self.packed.items():
            for value in values:
                yield hex_key(prefix, value)
        yield from self.others

    def __repr__(self) -> str:
        return f"KeySet({sorted(self)!r})"
