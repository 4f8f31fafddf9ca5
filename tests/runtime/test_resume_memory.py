"""A resume's done-index costs bytes per unit, not a Python object per unit (issue 31, points 3 and 6).

``ResumeIndex.from_file`` is what a no-op resume holds per results file for the whole scan: the read's columns
(``Entries``) and the done keys, the keys to retry and each key's last ``ok`` times (``_recorded``). Its peak of
Python allocations is measured by ``tracemalloc`` at two sizes of the same file shape; the difference divided by the
records between them is what each further record costs. Key strings in a list, a set of them and a dict of their
positions (the code before) cost 197 bytes a record here; the numbered keys 61: the columns' 26 bytes (a byte of
prefix, the key's 8-byte number, a code byte, two doubles), the key set's 8 bytes, a done byte and a 4-byte row,
and the temporaries of sorting the numbers once. Allocation counts do not depend on the machine's speed or load.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mpcbench_async.runtime import JsonlWriter, ResumeIndex
from tests.runtime.test_done_index import Timed as Rec
from tests.traced import peak

SMALL, LARGE = 1_000, 11_000


def written(path: Path, n: int) -> Path:
    """``n`` records keyed as a sweep keys its runs (``run-`` + 16 hex digits), with their done-index; every tenth an
    error, every twentieth retryable."""
    rng = random.Random(n)
    with JsonlWriter(path, index=True) as writer:
        for i in range(n):
            writer.write(Rec(key=f"run-{rng.getrandbits(64):016x}", status="error" if i % 10 == 0 else "ok",
                             retryable=i % 20 == 0, started_at=1.7e9 + i, finished_at=1.7e9 + i + 0.5))
    return path


def per_record(read: Callable[[Path], Any], tmp_path: Path) -> float:
    small, large = written(tmp_path / "small.jsonl", SMALL), written(tmp_path / "large.jsonl", LARGE)
    read(small)  # warm: imports (numpy), caches and interned names are not per record
    return (peak(lambda: read(large)) - peak(lambda: read(small))) / (LARGE - SMALL)


def test_a_resume_read_of_the_done_index_holds_numbers_not_key_strings(tmp_path):
    assert per_record(lambda path: ResumeIndex.from_file(path, type_=Rec, rebuild=True, times=True), tmp_path) < 100


def test_a_resume_read_of_the_records_holds_numbers_not_key_strings(tmp_path):
    """The same when the index is not trusted (removed): the records are read instead."""
    def read(path: Path) -> ResumeIndex:
        path.with_suffix(".keys").unlink(missing_ok=True)
        return ResumeIndex.from_file(path, type_=Rec, times=True)

    assert per_record(read, tmp_path) < 100


def test_the_numbered_index_answers_as_the_records_say(tmp_path):
    """What the numbers stand for: done, retried and timed keys as written (the bound above is not bought with them)."""
    path = written(tmp_path / "runs.jsonl", 200)
    rng = random.Random(200)
    keys = [f"run-{rng.getrandbits(64):016x}" for _ in range(200)]
    index = ResumeIndex.from_file(path, type_=Rec, times=True)
    assert ({k for i, k in enumerate(keys) if i % 20}, {k: 1 for i, k in enumerate(keys) if i % 20 == 0}) == \
        (index.done, index.tries)
    assert {k: (1.7e9 + i, 1.7e9 + i + 0.5) for i, k in enumerate(keys) if i % 10} == index.times
    assert [(1.7e9 + 1, 1.7e9 + 1.5), None, (0.0, 0.0)] == [index.done_at(keys[1]), index.done_at(keys[0]),
                                                           index.done_at(keys[10])]
    assert keys[1].upper().replace("RUN", "run") not in index  # the same digits in capitals are another key


def test_the_done_keys_are_a_set_and_times_only_when_asked(tmp_path):
    """``done`` combines with sets as a set does; without ``times`` no key's times are kept (as before)."""
    index = ResumeIndex.from_file(written(tmp_path / "runs.jsonl", 40), type_=Rec)
    assert ({"x"} | set(index.done), set(), {}) == (index.done | {"x"}, index.done - index.done, index.times)
    assert (0.0, 0.0) == index.done_at(next(iter(index.done)))
