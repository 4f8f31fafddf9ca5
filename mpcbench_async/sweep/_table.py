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

from ._reading import SCORED, Judges, Reader, RunEntry, Runs

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
    packed integers are held."""
    table = judges.runs
    first = array("i", [-1]) * len(table)  # run slot -> the slot of its first kept ok judgement
    more: dict[int, list[int]] = {}  # run slot -> every kept ok judgement, for a run judged twice or more
    for slot, (ok, run) in enumerate(zip(judges.ok, judges.run_slot, strict=True)):
        if ok:
            if first[run] < 0:
                first[run] = slot
            else:
                more.setdefault(run, [first[run]]).append(slot)
    if isinstance(runs, Runs):
        slots: Iterable[tuple[str, int]] = _ordered(runs) if ordered else ((k, s) for s, k in enumerate(runs))
    else:
        slots = sorted(((k, r.slot) for k, r in runs.items()), key=lambda ks: _sort_key(table, *ks)) if ordered \
            else ((k, r.slot) for k, r in runs.items())
    names = table.names.names
    for key, slot in slots:
        held = more.get(slot) or ([first[slot]] if first[slot] >= 0 else [])
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


def _ordered(runs: Runs) -> Iterator[tuple[str, int]]:
    """The keys and slots of ``runs`` by agent model, task, trial and key: sorted as integer columns (numpy's
    lexsort), not as a tuple per run (at 100k runs those tuples were ~10 MiB at once)."""
    names = runs.names.names
    model, task = np.frombuffer(runs.model_n, dtype=np.int32), np.frombuffer(runs.task_n, dtype=np.int32)
    pairs = model.astype(np.int64) << 32 | task.astype(np.int64)
    distinct, group_of = np.unique(pairs, return_inverse=True)
    by_name = sorted(range(len(distinct)), key=lambda g: (names[int(distinct[g]) >> 32],
                                                          names[int(distinct[g]) & 0xFFFFFFFF]))
    rank = np.empty(len(distinct), dtype=np.int64)
    rank[by_name] = np.arange(len(distinct))
    order = np.lexsort((runs.key_order(), np.frombuffer(runs.trial, dtype=np.int64), rank[group_of.reshape(-1)]))
    del model, task, pairs, group_of
    for start in range(0, len(order), _CHUNK):  # a list of Python ints for a chunk at a time, not for every run
        for slot in order[start:start + _CHUNK].tolist():
            yield runs.key(slot), slot


_CHUNK = 4096
