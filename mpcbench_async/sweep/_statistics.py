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

import itertools
import math
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence

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
from ._table import RunRow

__all__ = ["Agreement", "Estimate", "JudgePair", "JudgeSpread", "ModelPair", "ModelStats", "PassK", "Spread",
           "Statistics", "TrialVariance", "statistics"]

AXES = ("ars", "sgr")

class Statistics(msgspec.Struct, kw_only=True):
    models: dict[str, ModelStats] = {}
    paired: list[ModelPair] = []
    judge_agreement: list[JudgePair] = []
    judge_spread: JudgeSpread | None = None


def statistics(rows: Iterable[RunRow], *, pass_k: Sequence[int] | None = None) -> Statistics:
    """Every statistic of the module docstring, from the kept runs (plain loops per task, numpy per sample).

    ``rows`` may be a stream (``iter_run_rows``): each model's runs are kept as packed columns (``_Columns``: ~40
    bytes a run, no object per run) and the judges' scores per pair of judges as packed doubles, not the rows.
    ``pass_k``: the ks of pass^k (default: 1, 2, 4, … and the most trials of a task)."""
    by_model: dict[str, _Columns] = {}
    judged: dict[tuple[str, str], array[float]] = defaultdict(lambda: array("d"))  # ARS a, SGR a, ARS b, SGR b
    ranges = array("d")  # per run scored by two judges or more: (max − min) of ARS, then of SGR
    for row in rows:
        given = sorted((judge, float(a), float(s)) for judge, (a, s) in row.scores.items()
                       if a is not None and s is not None)
        ars, sgr = [a for _, a, _ in given], [s for _, _, s in given]
        columns = by_model.get(row.agent_model)
        if columns is None:
            columns = by_model[row.agent_model] = _Columns()
        columns.add(row, (sum(ars) / len(ars), sum(sgr) / len(sgr)) if given else _UNSCORED)
        if len(given) >= 2:
            ranges.extend((max(ars) - min(ars), max(sgr) - min(sgr)))
            for (judge_a, ars_a, sgr_a), (judge_b, ars_b, sgr_b) in itertools.combinations(given, 2):
                judged[(judge_a, judge_b)].extend((ars_a, sgr_a, ars_b, sgr_b))
    return Statistics(models={model: _model(runs, pass_k) for model, runs in sorted(by_model.items())},
                      paired=_paired(by_model), judge_agreement=_agreement(judged), judge_spread=_spread(ranges))


_UNSCORED = (math.nan, math.nan)
_PASSED = {None: -1, False: 0, True: 1}


class _Columns:
    """One agent model's kept runs as packed columns, in the order they came (an index per run).

    Why: at 100k runs a tuple per run (and a dict of cells for the paired differences) was ~25 MiB, the
    summary's largest step of memory; these columns are ~40 bytes a run. A run no judge scored has NaN scores."""

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

    def by_task(self) -> Iterator[np.ndarray]:
        """The run indices of each task, tasks in name order, runs in the order they came."""
        names = sorted(self.task_ids)
        rank = np.empty(len(names), dtype=np.int32)
        for position, name in enumerate(names):
            rank[self.task_ids[name]] = position
        ranks = rank[np.frombuffer(self.task, dtype=np.int32)] if self.task else np.empty(0, dtype=np.int32)
        order = np.argsort(ranks, kind="stable")
        bounds = np.searchsorted(ranks[order], np.arange(len(names) + 1)).tolist()
        # Held while the caller walks the tasks: 4 bytes a run (argsort's int64 order and the ranks were 16).
        order = order.astype(np.int32)
        del ranks
        for lo, hi in itertools.pairwise(bounds):
            yield order[lo:hi]

    def cells(self) -> dict[tuple[str, int], tuple[float, float]]:
        """(task, trial) → (ARS, SGR) of the scored runs, for the paired differences."""
        names = {number: name for name, number in self.task_ids.items()}
        return {(names[task], trial): (ars, sgr) for task, trial, ars, sgr in zip(
            self.task, self.trial, self.ars, self.sgr, strict=True) if not math.isnan(ars)}


def _model(runs: _Columns, pass_k: Sequence[int] | None) -> ModelStats:
    ars_all, sgr_all = np.frombuffer(runs.ars), np.frombuffer(runs.sgr)
    passed_all = np.frombuffer(runs.passed, dtype=np.int8)
    checks_passed, checks_total = np.frombuffer(runs.checks_passed, dtype=np.int32), \
        np.frombuffer(runs.checks_total, dtype=np.int32)
    means: list[tuple[float, float]] = []  # per scored task: the mean of its scored trials, per axis
    variances: list[tuple[float, float]] = []  # per task with ≥ 2 scored trials: their sample variance, per axis
    checks: list[tuple[int, int]] = []  # per task where some check applied: (passed, applied)
    counts: list[tuple[int, int]] = []  # per task: (trials, passed trials) for pass^k
    for trials in runs.by_task():
        ars, sgr = ars_all[trials], sgr_all[trials]
        scored = ~np.isnan(ars)
        # Python sums over the values in run order: the same floats as one tuple per run gave, bit for bit.
        ars_scored, sgr_scored = ars[scored].tolist(), sgr[scored].tolist()
        if ars_scored:
            means.append((sum(ars_scored) / len(ars_scored), sum(sgr_scored) / len(sgr_scored)))
        if len(ars_scored) >= 2:
            variances.append((_variance(ars_scored), _variance(sgr_scored)))
        applied = int(checks_total[trials].sum())
        if applied:
            checks.append((int(checks_passed[trials].sum()), applied))
        passed = passed_all[trials]
        counts.append((int((passed >= 0).sum()), int((passed == 1).sum())))
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


def _paired(by_model: dict[str, _Columns]) -> list[ModelPair]:
    """B − A per axis over the task × trial cells both scored; the CI resamples tasks (``stats.paired_by_task``)."""
    cells: dict[str, dict[tuple[str, int], tuple[float, float]]] = {}  # built for the models that have a pair
    pairs = []
    for a, b in itertools.combinations(sorted(by_model), 2):
        for model in (a, b):
            if model not in cells:
                cells[model] = by_model[model].cells()
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
