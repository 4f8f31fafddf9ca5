"""The kept runs of a sweep as one row each: what the statistics, ``compare`` and the viewer work from.

The rows are read through ``_reading``, the summary's own reader, so a row exists
exactly for each run the summary counts (the current experiment's kept record per
unit key) and ``scores`` holds exactly the judgements it counts (the kept one per
judge, of the run kept). Only the few fields a table needs are decoded.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec
import numpy as np

from ._reading import JudgeEntry, Reader, RunEntry

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


def run_rows(runs: dict[str, RunEntry], judges: dict[str, JudgeEntry]) -> list[RunRow]:
    """Rows of the reader's kept runs with their kept ok judgements (see ``RunRow``), sorted."""
    return list(iter_run_rows(runs, judges, ordered=True))


def iter_run_rows(runs: dict[str, RunEntry], judges: dict[str, JudgeEntry], *,
                  ordered: bool = False) -> Iterator[RunRow]:
    """``run_rows`` one at a time, for a caller that streams them (into sqlite, into the statistics): in the
    reader's order, or ``ordered`` as ``run_rows`` sorts them. Each row is built as it is yielded, so a 100k-run
    sweep never holds 100k rows at once; meanwhile only each run's kept judge (a list only for a run with two
    judges or more) and, ``ordered``, the order as packed integers are held."""
    kept: dict[int, JudgeEntry | list[JudgeEntry]] = {}
    for judge in judges.values():
        if judge.ok:
            held = kept.setdefault(id(judge.run), judge)
            if held is not judge:
                kept[id(judge.run)] = [*held, judge] if isinstance(held, list) else [held, judge]
    keys: Iterable[str] = runs
    if ordered:
        keys = _ordered(runs)
    for key in keys:
        run = runs[key]
        held = kept.pop(id(run), [])
        scores: dict[str, list[float | None]] = {
            j.model: [j.ars, j.sgr] if j.verdict == "scored" else [None, None]
            for j in (held if isinstance(held, list) else (held,))}
        yield RunRow(key=key, agent_model=run.model, task_id=run.task_id, task_type=run.task_type, trial=run.trial,
                     status="ok" if run.ok else "error", infra_error=not run.ok and run.retryable,
                     checks_passed=run.checks_passed, checks_total=run.checks_applied, passed=run.passed,
                     unverified=run.unverified,
                     scores=dict(sorted(scores.items())), error_class=run.error_class)


def _ordered(runs: dict[str, RunEntry]) -> Iterator[str]:
    """The keys of ``runs`` by agent model, task, trial and key: sorted as integer columns (numpy's lexsort), not
    as a tuple per run (at 100k runs those tuples were ~10 MiB at once)."""
    keys = sorted(runs)
    groups = {group: rank for rank, group in enumerate(sorted({(run.model, run.task_id) for run in runs.values()}))}
    group = np.fromiter((groups[(runs[k].model, runs[k].task_id)] for k in keys), dtype=np.int64, count=len(keys))
    trial = np.fromiter((runs[k].trial for k in keys), dtype=np.int64, count=len(keys))
    for position in np.lexsort((np.arange(len(keys)), trial, group)):
        yield keys[position]
