"""The summary's statistics over tasks, trials and judges, computed from the kept-run table (``_table``).

How each number is built (the summary, ``compare`` and the viewer share ``stats``):

- A run's score on an axis (ARS or SGR) is the mean over the judges that scored it;
  a task's is the mean over its scored trials. Per agent model, an axis is the mean
  over tasks with a 95% percentile-bootstrap interval over tasks — tasks, not runs,
  are the sample: trials of one task are not independent evidence.
- The check rate is the pooled rate (checks passed over checks applied, as
  ``check_pass_rate``), its interval a bootstrap over tasks of the same pooled rate.
- pass^k for k = 1, 2, 4, 8, … and K, the most trials of a task (``stats.pass_ks``; or the
  ks a caller names): tau-bench's C(c, k) / C(n, k) averaged over the tasks with ≥ k
  trials; infrastructure errors are not trials.
- Paired differences: for every two agent models, B − A on the runs of the same task
  and trial that both have scores (A before B in name order), per axis; the interval
  resamples tasks (a task's trials move together), the sign test counts runs.
- Judge agreement: for every two judge models, over the runs both scored (every agent
  model), quadratic-weighted kappa and Spearman per axis; spread: per run scored by
  two judges or more, max − min across them, its mean and max.
- Trial variance: per task with ≥ 2 scored trials, the sample variance of its runs'
  scores; the mean over those tasks.

Every bootstrap uses seed 0, so the same files give the same summary, byte for byte.
Values are rounded to 4 decimals (p-values are kept as computed).
"""

from __future__ import annotations

import functools
import itertools
import math
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

import msgspec
import numpy as np

from ..stats import (
    Interval,
    Paired,
    bootstrap_mean_ci,
    paired_by_task,
    pass_hat_k,
    pass_ks,
    spearman,
    weighted_kappa,
)
from ._reading import SCORED, Judges, Runs, as_numpy
from ._summary_types import (
    Agreement,
    Estimate,
    JudgePair,
    JudgeSpread,
    ModelPair,
    ModelStats,
    PassK,
    Spread,
    TrialVariance,
)
from ._table import RunRow, chain, judge_chains, run_order

__all__ = ["Agreement", "Estimate", "JudgePair", "JudgeSpread", "ModelPair", "ModelStats", "PassK", "Spread",
           "Statistics", "TrialVariance", "statistics", "statistics_of"]

AXES = ("ars", "sgr")

class Statistics(msgspec.Struct, kw_only=True):
    models: dict[str, ModelStats] = {}
    paired: list[ModelPair] = []
    judge_agreement: list[JudgePair] = []
    judge_spread: JudgeSpread | None = None


def statistics(rows: Iterable[RunRow], *, pass_k: Sequence[int] | None = None) -> Statistics:
    """Every statistic of the module docstring, from kept runs given as rows, in ``kept_runs``' order (``compare``
    and tests; the summary reads the reader's columns instead: ``statistics_of``).

    ``rows`` may be a stream: each model's runs are kept as packed columns (``_Columns``: ~40 bytes a run, no object
    per run) and the judges' scores per pair of judges as packed doubles, not the rows.
    ``pass_k``: the ks of pass^k (default: 1, 2, 4, … and the most trials of a task)."""
    by_model: dict[str, _Columns] = {}
    scores = _JudgeScores()
    for row in rows:
        given = sorted((judge, float(a), float(s)) for judge, (a, s) in row.scores.items()
                       if a is not None and s is not None)
        columns = by_model.get(row.agent_model)
        if columns is None:
            columns = by_model[row.agent_model] = _Columns()
        columns.add(row, _mean(given))
        scores.add(given)
    return _statistics({model: columns.tasks for model, columns in by_model.items()}, scores, pass_k)


def statistics_of(runs: Runs, judges: Judges, *, pass_k: Sequence[int] | None = None) -> Statistics:
    """``statistics`` of the reader's kept runs and judgements (``iter_run_rows(runs, judges, ordered=True)``'s
    rows), read from their packed columns where they lie.

    Why: the summary's statistics copied each run's task, trial, outcome, checks and scores into columns of their
    own (~40 bytes a run, and ~60 more while they were ordered), the largest part of a sweep's last step of memory
    (issue 31). Held here: the runs' order and each run's first judgement (4 bytes a run each); each task's values
    are gathered while it is computed."""
    kept = _Kept(runs, judges)
    scores = _JudgeScores()
    if kept.after is not None:  # several judges: the runs two or more scored, in the rows' order
        first, after = kept.first, np.frombuffer(kept.after, dtype=np.int32)
        heads = first[kept.order]
        several = kept.order[heads >= 0][after[heads[heads >= 0]] >= 0]
        del heads
        for run in several.tolist():
            scores.add(kept.given(run))
    return _statistics(kept.models(), scores, pass_k)


def _statistics(models: dict[str, Callable[[], Iterator[_Task]]], scores: _JudgeScores,
                pass_k: Sequence[int] | None) -> Statistics:
    """The statistics of each model's tasks (a fresh iterator per call) and of the judges' scores."""
    return Statistics(models={model: _model(tasks(), pass_k) for model, tasks in sorted(models.items())},
                      paired=_paired(models), judge_agreement=_agreement(scores.judged),
                      judge_spread=_spread(scores.ranges))


_UNSCORED = (math.nan, math.nan)
_PASSED = {None: -1, False: 0, True: 1}


class _Task(NamedTuple):
    """One model's runs of one task, in the rows' order: trial, passed (-1 no trial, 0, 1), checks passed and
    applied, and the judges' mean ARS and SGR (NaN: no judge scored it)."""

    name: str
    trial: np.ndarray
    passed: np.ndarray
    checks_passed: np.ndarray
    checks_total: np.ndarray
    ars: np.ndarray
    sgr: np.ndarray


def _mean(given: list[tuple[str, float, float]]) -> tuple[float, float]:
    """A run's score per axis: the mean over the judges that scored it (``given``: in judge name order)."""
    if not given:
        return _UNSCORED
    ars, sgr = [a for _, a, _ in given], [s for _, _, s in given]
    return sum(ars) / len(ars), sum(sgr) / len(sgr)


class _JudgeScores:
    """The judges' scores of the runs two or more judges scored, for the agreement and the spread."""

    def __init__(self) -> None:
        self.judged: dict[tuple[str, str], array[float]] = defaultdict(lambda: array("d"))  # ARS a, SGR a, ARS b, …
        self.ranges = array("d")  # per run scored by two judges or more: (max − min) of ARS, then of SGR

    def add(self, given: list[tuple[str, float, float]]) -> None:
        if len(given) < 2:
            return
        ars, sgr = [a for _, a, _ in given], [s for _, _, s in given]
        self.ranges.extend((max(ars) - min(ars), max(sgr) - min(sgr)))
        for (judge_a, ars_a, sgr_a), (judge_b, ars_b, sgr_b) in itertools.combinations(given, 2):
            self.judged[(judge_a, judge_b)].extend((ars_a, sgr_a, ars_b, sgr_b))


class _Columns:
    """One agent model's rows as packed columns, in the order they came (an index per run).

    Why: at 100k runs a tuple per run (and a dict of cells for the paired differences) was ~25 MiB; these columns
    are ~40 bytes a run. A run no judge scored has NaN scores."""

    __slots__ = ("task_ids", "task", "trial", "passed", "checks_passed", "checks_total", "ars", "sgr")

    def __init__(self) -> None:
        self.task_ids: dict[str, int] = {}  # task id -> its number in ``task``
        self.task, self.trial, self.passed = array("i"), array("q"), array("b")  # passed: -1 no trial, 0, 1
        self.checks_passed, self.checks_total = array("i"), array("i")
        self.ars, self.sgr = array("d"), array("d")

    def add(self, row: RunRow, scores: tuple[float, float]) -> None:
        self.task.append(self.task_ids.setdefault(row.task_id, len(self.task_ids)))
        self.trial.append(row.trial)
        self.passed.append(_PASSED[row.passed])
        self.checks_passed.append(row.checks_passed)
        self.checks_total.append(row.checks_total)
        self.ars.append(scores[0])
        self.sgr.append(scores[1])

    def tasks(self) -> Iterator[_Task]:
        """Each task's runs, tasks in name order, runs in the order they came."""
        names = sorted(self.task_ids)
        rank = np.empty(len(names), dtype=np.int32)
        for position, name in enumerate(names):
            rank[self.task_ids[name]] = position
        ranks = rank[np.frombuffer(self.task, dtype=np.int32)] if self.task else np.empty(0, dtype=np.int32)
        order = np.argsort(ranks, kind="stable")
        bounds = np.searchsorted(ranks[order], np.arange(len(names) + 1)).tolist()
        columns = [np.frombuffer(column, dtype=dtype) for column, dtype in (
            (self.trial, np.int64), (self.passed, np.int8), (self.checks_passed, np.int32),
            (self.checks_total, np.int32), (self.ars, np.float64), (self.sgr, np.float64))]
        for name, (lo, hi) in zip(names, itertools.pairwise(bounds), strict=True):
            trials = order[lo:hi]
            yield _Task(name, *(column[trials] for column in columns))


class _Kept:
    """The reader's kept runs and judgements seen as each model's tasks (``statistics_of``): the runs' order by
    model, task, trial and key, each model's tasks as ranges of it, and numpy views of the columns."""

    def __init__(self, runs: Runs, judges: Judges) -> None:
        self.names = runs.names.names
        self.order = run_order(runs)
        first, self.after = judge_chains(judges)
        self.first = np.frombuffer(first, dtype=np.int32)
        self._first = first  # the buffer ``first`` views
        self.ok, self.retryable, self.trial, self.checks_passed, self.checks_applied = (as_numpy(column) for column in (
            runs.ok, runs.retryable, runs.trial, runs.checks_passed, runs.checks_applied))
        self.judges = judges
        self.verdict, self.ars, self.sgr = (as_numpy(column) for column in (judges.verdict_n, judges.ars, judges.sgr))
        model_n, task_n = as_numpy(runs.model_n)[self.order], as_numpy(runs.task_n)[self.order]
        cuts = np.flatnonzero((model_n[1:] != model_n[:-1]) | (task_n[1:] != task_n[:-1])) + 1
        bounds = [0, *cuts.tolist(), len(self.order)] if len(self.order) else [0]
        self.groups: dict[str, list[tuple[str, int, int]]] = defaultdict(list)  # model -> (task, lo, hi) of order
        for lo, hi in itertools.pairwise(bounds):
            self.groups[self.names[model_n[lo]]].append((self.names[task_n[lo]], lo, hi))

    def models(self) -> dict[str, Callable[[], Iterator[_Task]]]:
        return {model: functools.partial(self.tasks, groups) for model, groups in self.groups.items()}

    def tasks(self, groups: list[tuple[str, int, int]]) -> Iterator[_Task]:
        for name, lo, hi in groups:
            yield self.task(name, self.order[lo:hi])

    def task(self, name: str, slots: np.ndarray) -> _Task:
        """The runs ``slots`` of one task, as ``iter_run_rows``' rows and ``statistics`` would see them."""
        ok, applied, checks_passed = self.ok[slots] != 0, self.checks_applied[slots], self.checks_passed[slots]
        passed = np.where(ok, np.where(applied > 0, checks_passed == applied, -1),
                          np.where(self.retryable[slots] != 0, -1, 0)).astype(np.int8)
        judge = self.first[slots]
        scored = judge >= 0
        scored[scored] = self.verdict[judge[scored]] == SCORED
        ars, sgr = np.full(len(slots), math.nan), np.full(len(slots), math.nan)
        ars[scored], sgr[scored] = self.ars[judge[scored]], self.sgr[judge[scored]]
        if self.after is not None:  # a run judged twice or more: its judges' mean, as ``statistics`` takes it
            after = np.frombuffer(self.after, dtype=np.int32)
            has = judge >= 0
            for index in np.flatnonzero(has)[after[judge[has]] >= 0].tolist():
                ars[index], sgr[index] = _mean(self.given(int(slots[index])))
        return _Task(name, self.trial[slots], passed, checks_passed, applied, ars, sgr)

    def given(self, run: int) -> list[tuple[str, float, float]]:
        """(judge, ARS, SGR) of each judge that scored ``run``, in judge name order; a judge's latest kept
        judgement of it counts, as in ``iter_run_rows``' scores."""
        judges, names = self.judges, self.names
        latest: dict[str, tuple[int, int] | None] = {}
        for slot in chain(self._first, self.after, run):
            latest[names[judges.model_n[slot]]] = (judges.ars[slot], judges.sgr[slot]) \
                if judges.verdict_n[slot] == SCORED else None
        return sorted((judge, float(v[0]), float(v[1])) for judge, v in latest.items() if v is not None)


def _model(tasks: Iterable[_Task], pass_k: Sequence[int] | None) -> ModelStats:
    means: list[tuple[float, float]] = []  # per scored task: the mean of its scored trials, per axis
    variances: list[tuple[float, float]] = []  # per task with ≥ 2 scored trials: their sample variance, per axis
    checks: list[tuple[int, int]] = []  # per task where some check applied: (passed, applied)
    counts: list[tuple[int, int]] = []  # per task: (trials, passed trials) for pass^k
    for task in tasks:
        scored = ~np.isnan(task.ars)
        # Python sums over the values in run order: the same floats as one tuple per run gave, bit for bit.
        ars_scored, sgr_scored = task.ars[scored].tolist(), task.sgr[scored].tolist()
        if ars_scored:
            means.append((sum(ars_scored) / len(ars_scored), sum(sgr_scored) / len(sgr_scored)))
        if len(ars_scored) >= 2:
            variances.append((_variance(ars_scored), _variance(sgr_scored)))
        applied = int(task.checks_total.sum())
        if applied:
            checks.append((int(task.checks_passed.sum()), applied))
        counts.append((int((task.passed >= 0).sum()), int((task.passed == 1).sum())))
    stats = ModelStats(ars=_estimate([m[0] for m in means]), sgr=_estimate([m[1] for m in means]))
    if checks:
        weights = [n for _, n in checks]
        stats.check_rate = Estimate(tasks=len(checks), mean=_round(sum(p for p, _ in checks) / sum(weights)),
                                    ci=_interval(bootstrap_mean_ci([p / n for p, n in checks], weights=weights)))
    stats.pass_hat_k = [PassK(k=k, tasks=sum(n >= k for n, _ in counts), value=_round(pass_hat_k(counts, k)))
                        for k in pass_ks(max((n for n, _ in counts), default=0), pass_k)]
    if variances:
        stats.trial_variance = TrialVariance(tasks=len(variances), **{
            axis: _round(sum(v[i] for v in variances) / len(variances)) for i, axis in enumerate(AXES)})
    return stats


def _cells(tasks: Iterable[_Task]) -> dict[tuple[str, int], tuple[float, float]]:
    """(task, trial) → (ARS, SGR) of the scored runs, for the paired differences."""
    cells: dict[tuple[str, int], tuple[float, float]] = {}
    for task in tasks:
        scored = ~np.isnan(task.ars)
        cells.update(zip(((task.name, trial) for trial in task.trial[scored].tolist()),
                         zip(task.ars[scored].tolist(), task.sgr[scored].tolist(), strict=True), strict=True))
    return cells


def _paired(models: dict[str, Callable[[], Iterator[_Task]]]) -> list[ModelPair]:
    """B − A per axis over the task × trial cells both scored; the CI resamples tasks (``stats.paired_by_task``)."""
    cells: dict[str, dict[tuple[str, int], tuple[float, float]]] = {}  # built for the models that have a pair
    pairs = []
    for a, b in itertools.combinations(sorted(models), 2):
        for model in (a, b):
            if model not in cells:
                cells[model] = _cells(models[model]())
        if cells[a].keys() & cells[b].keys():
            pairs.append(ModelPair(model_a=a, model_b=b, **{
                axis: _rounded(paired_by_task({c: v[i] for c, v in cells[a].items()},
                                              {c: v[i] for c, v in cells[b].items()}))
                for i, axis in enumerate(AXES)}))
    return pairs


def _agreement(judged: dict[tuple[str, str], array[float]]) -> list[JudgePair]:
    """Per pair of judges (in name order), over the runs both scored: (ARS a, SGR a, ARS b, SGR b) rows."""
    pairs = []
    for (a, b), scores in sorted(judged.items()):
        both = np.frombuffer(scores, dtype=float).reshape(-1, 4).astype(int)
        pairs.append(JudgePair(judge_a=a, judge_b=b, n=len(both), **{
            axis: Agreement(kappa=_round(weighted_kappa(both[:, i], both[:, i + 2])),
                            spearman=_round(spearman(both[:, i], both[:, i + 2]))) for i, axis in enumerate(AXES)}))
    return pairs


def _spread(ranges: array[float]) -> JudgeSpread | None:
    if not ranges:
        return None
    runs = len(ranges) // 2
    return JudgeSpread(runs=runs, **{
        axis: Spread(mean=round(sum(ranges[i::2]) / runs, 4), max=max(ranges[i::2])) for i, axis in enumerate(AXES)})


def _variance(values: list[float]) -> float:
    """The sample variance (n − 1) of two values or more."""
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / (len(values) - 1)


def _estimate(values: list[float]) -> Estimate:
    if not values:
        return Estimate()
    return Estimate(tasks=len(values), mean=_round(sum(values) / len(values)), ci=_interval(bootstrap_mean_ci(values)))


def _rounded(paired: Paired) -> Paired:
    paired.mean_diff, paired.ci = _round(paired.mean_diff), _interval(paired.ci)
    return paired


def _interval(ci: Interval | None) -> Interval | None:
    return None if ci is None else Interval(low=round(ci.low, 4), high=round(ci.high, 4))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
