"""A results file's keys as a resume holds them: each key once, numbered, with whether it is done and its last
``ok`` record's row — no string, set slot or tuple per key.

Why: the resume's done set, the ok keys' times and the keys to retry were three collections of key strings (a
string ~70 bytes, a slot 16–50, a dict of positions ~65 more per key): ~40 MiB of a 100k-unit no-op resume, most
of its memory's growth from 10k units. Here a key is its number in a ``KeySet`` (8 bytes, exact: ``_key_set``),
plus a byte (done) and a 4-byte row; the times are read from the file's ``Entries`` (held anyway until the plan's
outcome takes them, ``_done_index``) by that row.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Set
from typing import Any

from ._done_index import Entries
from ._key_set import KeySet, sorted_unique

__all__ = ["Recorded"]


class Recorded:
    """Every key of ``entries``, each with its number in ``keys``; ``done`` (a numpy mask of rows) says which rows
    make their key done. ``done_at(key)`` is the one lookup a pipeline's scan makes per unit."""

    __slots__ = ("entries", "keys", "state", "last", "undone")

    def __init__(self, entries: Entries, done: Any, *, times: bool = True) -> None:
        import numpy as np  # lazily: the runtime is imported where numpy is not needed (start-up)

        # Few temporaries, each a 4-byte int or a byte per row where it can be: at 100k units they, not what is
        # kept, were the resume's peak (an 8-byte sort order, a sorted copy and the inverse per step were ~9 MiB).
        self.entries = entries
        kinds, values = np.frombuffer(entries.kinds, dtype=np.uint8), np.frombuffer(entries.values, dtype=np.uint64)
        numbers = np.empty(len(entries), dtype=np.int32)  # each row's key's number
        packed = {}
        offset = 0
        for kind, prefix in sorted(enumerate(entries.prefixes), key=lambda item: item[1]):  # KeySet's order
            rows = slice(None) if len(entries.prefixes) == 1 and not entries.others else kinds == kind
            packed[prefix] = sorted_unique(np.array(values[rows]))  # a copy: it is sorted in place
            part = values[rows]
            found = np.searchsorted(packed[prefix], part)
            found += offset
            numbers[rows] = found
            offset += len(packed[prefix])
            del part, found
        other_rows = np.flatnonzero(kinds == Entries.OTHER).tolist()
        self.keys = KeySet.of_numbers(packed, (entries.others[entries.values[row]] for row in other_rows))
        for row in other_rows:
            numbers[row] = self.keys.others[entries.others[entries.values[row]]]
        del packed
        self.state = bytearray(len(self.keys))
        state = np.frombuffer(self.state, dtype=np.uint8)
        state[numbers[done]] = 1
        self.last = array("i", [-1]) * len(self.keys)  # each key's last ok row
        if times:  # else every key's times are unknown (0, 0)
            ok = np.frombuffer(entries.codes, dtype=np.uint8) == ord("o")
            np.maximum.at(np.frombuffer(self.last, dtype=np.int32), numbers[ok], np.flatnonzero(ok).astype(np.int32))
        # the key of each row whose key is not done, in file order: units to run again (few: retryable errors)
        self.undone = [entries.key(row) for row in np.flatnonzero(state[numbers] == 0).tolist()]
        del state  # no view left on ``state``: ``add`` may grow it

    @classmethod
    def of(cls, done: Iterable[str], times: Mapping[str, tuple[float, float]]) -> Recorded:
        """The keys ``done`` (with ``times`` for those that have an ok record), as if read from a file."""
        import numpy as np

        entries, done = Entries(), set(done)
        for key in sorted(done | set(times)):
            entries.append(key, "o" if key in times else "e", *times.get(key, (0.0, 0.0)))
        return cls(entries, np.array([entries.key(i) in done for i in range(len(entries))], dtype=bool))

    def done_at(self, key: str) -> tuple[float, float] | None:
        """None when ``key`` is not done; else when its last ok record started and finished ((0, 0): none)."""
        number = self.keys.number(key)
        if number is None or not self.state[number]:
            return None
        row = self.last[number]
        return (0.0, 0.0) if row < 0 else (self.entries.started[row], self.entries.finished[row])

    def add(self, key: str) -> None:
        number = self.keys.number(key)
        if number is None:
            self.keys.add(key)
            self.state.append(1)
            self.last.append(-1)
        else:
            self.state[number] = 1


class DoneKeys(Set[str]):
    """The done keys of a ``Recorded``, as a set."""

    __slots__ = ("recorded",)

    def __init__(self, recorded: Recorded) -> None:
        self.recorded = recorded

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.recorded.done_at(key) is not None

    def __iter__(self) -> Iterator[str]:
        state = self.recorded.state
        return (key for number, key in enumerate(self.recorded.keys) if state[number])

    def __len__(self) -> int:
        return self.recorded.state.count(1)

    def add(self, key: str) -> None:
        self.recorded.add(key)

    @classmethod
    def _from_iterable(cls, keys: Iterable[Any]) -> Set[Any]:
        """What ``|``, ``&`` and ``-`` make: a plain set."""
        return set(keys)

    def __repr__(self) -> str:
        return f"DoneKeys({sorted(self)!r})"


class OkTimes(Mapping[str, tuple[float, float]]):
    """Key → (started_at, finished_at) of its last ok record, of a ``Recorded``."""

    __slots__ = ("recorded",)

    def __init__(self, recorded: Recorded) -> None:
        self.recorded = recorded

    def get(self, key: str, default: Any = None) -> Any:
        recorded = self.recorded
        number = recorded.keys.number(key)
        row = -1 if number is None else recorded.last[number]
        return default if row < 0 else (recorded.entries.started[row], recorded.entries.finished[row])

    def __getitem__(self, key: str) -> tuple[float, float]:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[str]:
        last = self.recorded.last
        return (key for number, key in enumerate(self.recorded.keys) if last[number] >= 0)

    def __len__(self) -> int:
        return sum(1 for row in self.recorded.last if row >= 0)
