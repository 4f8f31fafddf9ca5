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
from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence

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

Scores = tuple[float, float]  # (ARS, SGR)
_Run = tuple[str, int, bool | None, int, int, Scores | None]  # task, trial, passed, checks passed, applied, scores


class Statistics(msgspec.Struct, kw_only=True):
    models: dict[str, ModelStats] = {}
    paired: list[ModelPair] = []
    judge_agreement: list[JudgePair] = []
    judge_spread: JudgeSpread | None = None


def statistics(rows: Iterable[RunRow], *, pass_k: Sequence[int] | None = None) -> Statistics:
    """Every statistic of the module docstring, from the kept runs (plain loops per run, numpy per sample).

    ``rows`` may be a stream (``iter_run_rows``): only a compact tuple per run (``_Run``) and the judges' scores
    per pair of judges (packed doubles) are kept, not the rows. ``pass_k``: the ks of pass^k (default: 1, 2, 4, …
    and the most trials of a task)."""
    by_model: dict[str, list[_Run]] = defaultdict(list)
    judged: dict[tuple[str, str], array[float]] = defaultdict(lambda: array("d"))  # ARS a, SGR a, ARS b, SGR b
    ranges = array("d")  # per run scored by two judges or more: (max − min) of ARS, then of SGR
    # One tuple per distinct (ARS, SGR) mean, shared by the runs that have it: judges give a few scores, so at
    # 100k runs this is a handful of tuples instead of 100k tuples and 200k floats (10 MiB).
    distinct: dict[Scores, Scores] = {}
    for row in rows:
        given = sorted((judge, float(a), float(s)) for judge, (a, s) in row.scores.items()
                       if a is not None and s is not None)
        ars, sgr = [a for _, a, _ in given], [s for _, _, s in given]
        mean = (sum(ars) / len(ars), sum(sgr) / len(sgr)) if given else None
        by_model[row.agent_model].append((row.task_id, row.trial, row.passed, row.checks_passed, row.checks_total,
                                          distinct.setdefault(mean, mean) if mean is not None else None))
        if len(given) >= 2:
            ranges.extend((max(ars) - min(ars), max(sgr) - min(sgr)))
            for (judge_a, ars_a, sgr_a), (judge_b, ars_b, sgr_b) in itertools.combinations(given, 2):
                judged[(judge_a, judge_b)].extend((ars_a, sgr_a, ars_b, sgr_b))
    return Statistics(models={model: _model(runs, pass_k) for model, runs in sorted(by_model.items())},
                      paired=_paired(by_model), judge_agreement=_agreement(judged), judge_spread=_spread(ranges))


def _model(runs: list[_Run], pass_k: Sequence[int] | None) -> ModelStats:
    tasks: dict[str, list[_Run]] = defaultdict(list)
    for run in sorted(runs, key=lambda r: r[0]):
        tasks[run[0]].append(run)
    scored = [[run[5] for run in trials if run[5] is not None] for trials in tasks.values()]
    scored = [trials for trials in scored if trials]  # (ARS, SGR) of each scored trial, per task
    means = [(sum(s[0] for s in trials) / len(trials), sum(s[1] for s in trials) / len(trials)) for trials in scored]
    stats = ModelStats(ars=_estimate([m[0] for m in means]), sgr=_estimate([m[1] for m in means]))
    checks = [(sum(run[3] for run in trials), sum(run[4] for run in trials)) for trials in tasks.values()]
    checks = [(p, n) for p, n in checks if n]  # the tasks where some check applied
    if checks:
        weights = [n for _, n in checks]
        stats.check_rate = Estimate(tasks=len(checks), mean=_round(sum(p for p, _ in checks) / sum(weights)),
                                    ci=_interval(bootstrap_mean_ci([p / n for p, n in checks], weights=weights)))
    counts = [(sum(run[2] is not None for run in trials), sum(run[2] is True for run in trials))
              for trials in tasks.values()]
    stats.pass_hat_k = [PassK(k=k, tasks=sum(n >= k for n, _ in counts), value=_round(pass_hat_k(counts, k)))
                        for k in pass_ks(max((n for n, _ in counts), default=0), pass_k)]
    repeated = [trials for trials in scored if len(trials) >= 2]
    if repeated:
        stats.trial_variance = TrialVariance(tasks=len(repeated), **{
            axis: _round(sum(_variance([s[i] for s in trials]) for trials in repeated) / len(repeated))
            for i, axis in enumerate(AXES)})
    return stats


def _paired(by_model: dict[str, list[_Run]]) -> list[ModelPair]:
    """B − A per axis over the task × trial cells both scored; the CI resamples tasks (``stats.paired_by_task``)."""
    cells = {model: {(run[0], run[1]): run[5] for run in runs if run[5] is not None}
             for model, runs in by_model.items()}
    pairs = []
    for a, b in itertools.combinations(sorted(by_model), 2):
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
