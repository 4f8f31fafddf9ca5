"""The kept runs of a sweep as one row each: what the statistics, ``compare`` and the viewer work from.

The rows are read through ``_reading``, the summary's own reader, so a row exists
exactly for each run the summary counts (the current experiment's kept record per
unit key) and ``scores`` holds exactly the judgements it counts (the kept one per
judge, of the run kept). Only the few fields a table needs are decoded.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import msgspec
import numpy as np

from ._reading import SCORED, Judges, Reader, RunEntry, Runs, as_numpy

__all__ = ["RunRow", "iter_run_rows", "kept_runs", "run_rows"]


class RunRow(msgspec.Struct, kw_only=True):
    """One kept agent run and its kept judgements.

    ``passed``: whether the run passed as a trial (every applicable check passed),
    ``False`` for a task-level error and ``None`` for no trial: an infrastructure
    error, or an ``unverified`` run (ok, and no check applied: the judge alone never
    makes a pass). ``scores``: judge model →
    ``[ARS, SGR]`` of that judge's kept ok judgement (``[None, None]`` when it left the
    run unscored); a judge whose kept judgement is an error is absent.
    """

    key: str
    agent_model: str
    task_id: str
    task_type: str
    trial: int
    status: str  # ok | error
    infra_error: bool
    checks_passed: int
    checks_total: int  # checks that applied (n/a excluded)
    passed: bool | None
    unverified: bool = False
    scores: dict[str, list[float | None]] = {}
    error_class: str | None = None  # an error's class (its message is in the record)


def kept_runs(out_dir: str | Path) -> list[RunRow]:
    """The kept runs of the directory's current experiment, sorted by agent model, task, trial and key."""
    reader = Reader(Path(out_dir))
    runs = reader.runs()
    return run_rows(runs, reader.judgements(runs))


def run_rows(runs: Runs, judges: Judges) -> list[RunRow]:
    """Rows of the reader's kept runs with their kept ok judgements (see ``RunRow``), sorted."""
    return list(iter_run_rows(runs, judges, ordered=True))


def iter_run_rows(runs: Runs | Mapping[str, RunEntry], judges: Judges, *, ordered: bool = False) -> Iterator[RunRow]:
    """``run_rows`` one at a time, for a caller that streams them (into sqlite, into the statistics): in the
    reader's order, or ``ordered`` as ``run_rows`` sorts them. ``runs``: the reader's kept runs, or some of them
    (key → entry: the viewer's changed rows). Each row is built as it is yielded, so a 100k-run sweep never holds
    100k rows at once; meanwhile only each run's first kept judge (a packed column) and, ``ordered``, the order as
    packed integers are held (``judge_chains``, ``run_order``)."""
    table = judges.runs
    first, after = judge_chains(judges)
    if isinstance(runs, Runs):
        slots: Iterable[tuple[str, int]] = _ordered(runs) if ordered else ((k, s) for s, k in enumerate(runs))
    else:
        slots = sorted(((k, r.slot) for k, r in runs.items()), key=lambda ks: _sort_key(table, *ks)) if ordered \
            else ((k, r.slot) for k, r in runs.items())
    names = table.names.names
    for key, slot in slots:
        held = chain(first, after, slot)
        scores: dict[str, list[float | None]] = {
            names[judges.model_n[j]]: [judges.ars[j], judges.sgr[j]] if judges.verdict_n[j] == SCORED else [None, None]
            for j in held}
        ok, applied, checks_passed = bool(table.ok[slot]), table.checks_applied[slot], table.checks_passed[slot]
        infra = not ok and bool(table.retryable[slot])
        passed = (None if infra else False) if not ok else checks_passed == applied if applied else None  # RunEntry's
        yield RunRow(key=key, agent_model=names[table.model_n[slot]], task_id=names[table.task_n[slot]],
                     task_type=names[table.type_n[slot]], trial=table.trial[slot], status="ok" if ok else "error",
                     infra_error=infra, checks_passed=checks_passed,
                     checks_total=applied, passed=passed, unverified=ok and not applied,
                     scores=dict(sorted(scores.items())), error_class=names[table.error_n[slot]])


def _sort_key(runs: Runs, key: str, slot: int) -> tuple[str, str, int, str]:
    names = runs.names.names
    return names[runs.model_n[slot]], names[runs.task_n[slot]], runs.trial[slot], key


def judge_chains(judges: Judges) -> tuple[array[int], array[int] | None]:
    """Each kept run's kept ok judgements, in slot order, as chains of slots: ``first`` (run slot → its first
    judgement's slot, −1 for none) and ``after`` (judgement slot → the next of its run's, −1 after the last; None
    when no run has two). Why: 4 bytes a run, and 4 a judgement only when judges are several; a list per run
    judged twice (the code before) was ~100 bytes a run of a sweep with two judges."""
    first = array("i", [-1]) * len(judges.runs)
    last: array[int] | None = None  # run slot -> its latest judgement so far, from the first run judged twice on
    after: array[int] | None = None
    for slot, (ok, run) in enumerate(zip(judges.ok, judges.run_slot, strict=True)):
        if not ok:
            continue
        if first[run] < 0:
            first[run] = slot
            if last is not None:
                last[run] = slot
            continue
        if after is None or last is None:  # every run so far was judged once: its latest is its first
            after, last = array("i", [-1]) * len(judges), array("i", first)
        after[last[run]] = slot
        last[run] = slot
    return first, after


def chain(first: array[int], after: array[int] | None, run: int) -> list[int]:
    """The slots of ``run``'s kept ok judgements, in slot order (``judge_chains``)."""
    held, slot = [], first[run]
    while slot >= 0:
        held.append(slot)
        slot = after[slot] if after is not None else -1
    return held


def run_order(runs: Runs) -> np.ndarray:
    """The slots of ``runs`` by agent model, task, trial and key (int32): sorted as integer columns (numpy's
    lexsort of each name's rank among the names, the trial and the key's order), not as a tuple per run (at 100k
    runs those tuples were ~10 MiB at once); ~16 bytes a run while it sorts, 4 held."""
    names = runs.names.names
    # A name's position among the names (str) in sorted order, in 2 bytes while they fit (2 bytes a run a column).
    rank = np.zeros(len(names), dtype=np.uint16 if len(names) <= 1 << 16 else np.int32)
    rank[sorted((n for n, name in enumerate(names) if name is not None), key=names.__getitem__)] = \
        np.arange(sum(name is not None for name in names))
    by_task, by_model = rank[as_numpy(runs.task_n)], rank[as_numpy(runs.model_n)]
    order = np.lexsort((runs.key_order(), as_numpy(runs.trial), by_task, by_model))
    del by_task, by_model  # before the int32 copy is made
    return order.astype(np.int32)


def _ordered(runs: Runs) -> Iterator[tuple[str, int]]:
    """The keys and slots of ``runs`` in ``run_order``, a chunk of Python ints at a time."""
    order = run_order(runs)
    for start in range(0, len(order), _CHUNK):  # a list of Python ints for a chunk at a time, not for every run
        for slot in order[start:start + _CHUNK].tolist():
            yield runs.key(slot), slot


_CHUNK = 4096
