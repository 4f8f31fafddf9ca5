"""Sweep against sweep: per agent model × task deltas, with intervals where trials allow, and per model overall.

What counts is each directory's kept runs of its current experiment, exactly as
its summary counts them (``sweep.kept_runs``). Infrastructure errors are not
trials: they are counted apart and left out. A trial's axis score (ARS, SGR) is
the mean over the judges that scored it, its check pass rate the share of the
checks that applied which passed; a cell (model × task) averages its trials.

A cell's change counts (a regression or an improvement) when its confidence
interval excludes 0. The interval needs at least two trials with a value on each
side: a paired bootstrap over trial indices when both sides ran the same ones,
else an unpaired one (each side resampled on its own). Without an interval, an
axis counts when it moves by at least ``min_delta`` points, checks when they go
from all passing to not (or back). New failures are changes of outcome: no
task-level error in A and one in B (``ok → error``), or every trial passing in A
and one failing in B (``passed → failed``; a trial passes as in the summary).
Per model, B − A is the summary's paired difference (``stats.paired_by_task``): over the
task × trial cells both sides scored (a task whose trial numbers differ pairs its two
means as one cell), the interval resampling tasks, the sign test counting cells; the
means shown are over the tasks both sides have. Models and tasks present on one side
only are listed, not compared. Tariff reports the sweeps wrote
(``<suite>_<model>.json``) are compared as ``compare`` compares two reports, file
by file, and their findings join the lists.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec
import numpy as np

from .._exceptions import InputError
from ..stats import Interval, Paired, paired_by_task, paired_difference
from ..sweep import RunRow, kept_runs
from ._findings import LABELS, Finding, NewFailure, interval_text
from ._levels import LevelsComparison, compare_levels, has_levels
from ._reports import ReportComparison, compare_tariff_reports
from ._settings import setting_differences

__all__ = ["Delta", "ModelComparison", "OverTasks", "Side", "SweepComparison", "TaskComparison", "compare_sweeps"]

METRICS = ("ars", "sgr", "checks")
RESAMPLES = 2000
SEED = 0


class Side(msgspec.Struct, kw_only=True):
    """One side's runs of a model × task (a trial passes as in the summary: its checks, else ARS ≥ 4)."""

    trials: int = 0  # kept runs that are trials
    errors: int = 0  # task-level errors among them
    infra_errors: int = 0  # infrastructure errors: not trials, left out
    passed: int = 0
    failed: int = 0


class Delta(msgspec.Struct, kw_only=True):
    """One measure of a cell in A and B (None: no trial with a value), ``b − a`` and its interval."""

    a: float | None = None
    b: float | None = None
    delta: float | None = None
    ci: Interval | None = None
    ci_kind: str | None = None  # paired (same trial indices on both sides) | unpaired


class TaskComparison(msgspec.Struct, kw_only=True):
    task_id: str
    task_type: str
    a: Side
    b: Side
    ars: Delta
    sgr: Delta
    checks: Delta  # check pass rate, 0–1


class OverTasks(msgspec.Struct, kw_only=True):
    """Means over the tasks with a value on both sides, and B − A paired by task."""

    a: float | None
    b: float | None
    paired: Paired


class ModelComparison(msgspec.Struct, kw_only=True):
    model: str
    ars: OverTasks
    sgr: OverTasks
    checks: OverTasks
    tasks: list[TaskComparison] = []
    tasks_only_in_a: list[str] = []
    tasks_only_in_b: list[str] = []


class SweepComparison(msgspec.Struct, kw_only=True):
    kind: str = "sweeps"
    a: str
    b: str
    min_delta: float
    confidence: float
    settings_differ: list[str] = []  # B's settings that differ from A's (manifests): why deltas may not be the model's
    settings_unknown: list[str] = []  # the sides ("A", "B") without a manifest.json: their settings are not compared
    models: list[ModelComparison] = []
    models_only_in_a: list[str] = []
    models_only_in_b: list[str] = []
    tariff: list[ReportComparison] = []  # the tariff reports (<suite>_<model>.json) both directories have
    tariff_only_in_a: list[str] = []
    tariff_only_in_b: list[str] = []
    levels: list[LevelsComparison] = []  # the three-level MPCBench groups both directories ran
    regressions: list[Finding] = []  # of the agent runs, then of each tariff report
    improvements: list[Finding] = []
    new_failures: list[NewFailure] = []


# -- one side of one cell --------------------------------------------------------------------------------------


class _Cell:
    """A side's trials of one model × task: counts, and per measure the value of each trial index."""

    def __init__(self, rows: Sequence[RunRow]) -> None:
        self.task_type = rows[0].task_type
        self.side = Side()
        self.values: dict[str, dict[int, float]] = {m: {} for m in METRICS}
        for row in rows:
            if row.infra_error:
                self.side.infra_errors += 1
                continue
            self.side.trials += 1
            self.side.errors += row.status != "ok"
            self.side.passed += row.passed is True
            self.side.failed += row.passed is False
            for metric, value in _trial_values(row).items():
                if value is not None:
                    self.values[metric][row.trial] = value

    def mean(self, metric: str) -> float | None:
        values = self.values[metric]
        return statistics.fmean(values.values()) if values else None


def _trial_values(row: RunRow) -> dict[str, float | None]:
    """ARS and SGR as the mean over the judges that scored the run; the check pass rate over applied checks."""
    out: dict[str, float | None] = {}
    for axis, metric in enumerate(("ars", "sgr")):
        scored = [value for scores in row.scores.values() if (value := scores[axis]) is not None]
        out[metric] = statistics.fmean(scored) if scored else None
    out["checks"] = row.checks_passed / row.checks_total if row.checks_total else None
    return out


# -- intervals -------------------------------------------------------------------------------------------------


def _unpaired_ci(a: Sequence[float], b: Sequence[float], confidence: float) -> Interval:
    """Percentile bootstrap of mean(b) − mean(a), each side resampled on its own (seeded, as ``stats``)."""
    rng = np.random.default_rng(SEED)
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    means_a = xa[rng.integers(0, xa.size, size=(RESAMPLES, xa.size))].mean(axis=1)
    means_b = xb[rng.integers(0, xb.size, size=(RESAMPLES, xb.size))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means_b - means_a, [tail, 1 - tail])
    return Interval(low=float(low), high=float(high))


def _interval(a: dict[int, float], b: dict[int, float], confidence: float) -> tuple[Interval | None, str | None]:
    """Paired over trial indices when both sides have the same ones, else unpaired; None under two per side."""
    if len(a) < 2 or len(b) < 2:
        return None, None
    if a.keys() == b.keys():
        trials = sorted(a)
        paired = paired_difference([a[t] for t in trials], [b[t] for t in trials], confidence=confidence,
                                   resamples=RESAMPLES, seed=SEED)
        return paired.ci, "paired"
    return _unpaired_ci(list(a.values()), list(b.values()), confidence), "unpaired"


def _round(value: float | None) -> float | None:
    """Four decimals, and never ``-0.0`` (a float-noise difference would print as ``-0.00``)."""
    return None if value is None else round(value, 4) + 0.0


def _rounded_ci(ci: Interval | None) -> Interval | None:
    return None if ci is None else Interval(low=round(ci.low, 4) + 0.0, high=round(ci.high, 4) + 0.0)


# -- comparing ---------------------------------------------------------------------------------------------------


class _Comparer:
    """Fills one ``SweepComparison``: the cells of each shared model, and the findings they make."""

    def __init__(self, out: SweepComparison) -> None:
        self.out = out

    def delta(self, model: str, task: str, metric: str, a: _Cell, b: _Cell) -> Delta:
        """The measure in A and B, its interval, and the finding it makes (if any)."""
        mean_a, mean_b = a.mean(metric), b.mean(metric)
        if mean_a is None or mean_b is None:
            return Delta(a=_round(mean_a), b=_round(mean_b))
        ci, kind = _interval(a.values[metric], b.values[metric], self.out.confidence)
        shown_a, shown_b, shown_ci = round(mean_a, 4), round(mean_b, 4), _rounded_ci(ci)
        change = round(mean_b - mean_a, 4) + 0.0
        found = self.rule(metric, mean_a, mean_b, shown_ci)  # decided on the interval as shown
        if found is not None:
            better, rule = found
            (self.out.improvements if better else self.out.regressions).append(
                Finding(model=model, task=task, metric=metric, a=shown_a, b=shown_b, delta=change, ci=shown_ci,
                        rule=rule))
        return Delta(a=shown_a, b=shown_b, delta=change, ci=shown_ci, ci_kind=kind)

    def rule(self, metric: str, a: float, b: float, ci: Interval | None) -> tuple[bool, str] | None:
        """(better, why) when the change counts, else None (see the module docstring)."""
        if ci is not None:
            if ci.high < 0 or ci.low > 0:
                return ci.low > 0, f"{interval_text(metric, ci, self.out.confidence)} excludes 0"
            return None
        if metric == "checks":
            if a == 1.0 and b < 1.0:
                return False, "checks passed → failed, no CI"
            if a < 1.0 and b == 1.0:
                return True, "checks failed → passed, no CI"
            return None
        step = self.out.min_delta - 1e-9  # scores are means of integers: no float noise may decide
        if b - a <= -step:
            return False, f"drop ≥ {self.out.min_delta:g}, no CI"
        if b - a >= step:
            return True, f"rise ≥ {self.out.min_delta:g}, no CI"
        return None

    def new_failure(self, model: str, task: str, a: Side, b: Side) -> None:
        if a.trials and not a.errors and b.errors:
            self.out.new_failures.append(NewFailure(model=model, task=task, change="ok → error",
                                                    detail=f"{b.errors} of {b.trials} trial(s) in B ended in an "
                                                    "error"))
        elif a.passed and not a.failed and b.failed:
            self.out.new_failures.append(NewFailure(model=model, task=task, change="passed → failed",
                                                    detail=f"{b.failed} of {b.trials} trial(s) in B failed"))

    def model(self, model: str, cells_a: dict[str, _Cell], cells_b: dict[str, _Cell]) -> ModelComparison:
        tasks = []
        for task in sorted(cells_a.keys() & cells_b.keys()):
            a, b = cells_a[task], cells_b[task]
            deltas = {metric: self.delta(model, task, metric, a, b) for metric in METRICS}
            self.new_failure(model, task, a.side, b.side)
            tasks.append(TaskComparison(task_id=task, task_type=b.task_type, a=a.side, b=b.side, **deltas))
        over = {metric: _over_tasks(tasks, metric, cells_a, cells_b, self.out.confidence) for metric in METRICS}
        return ModelComparison(model=model, tasks=tasks, tasks_only_in_a=sorted(cells_a.keys() - cells_b.keys()),
                               tasks_only_in_b=sorted(cells_b.keys() - cells_a.keys()), **over)


def _over_tasks(tasks: Iterable[TaskComparison], metric: str, cells_a: dict[str, _Cell], cells_b: dict[str, _Cell],
                confidence: float) -> OverTasks:
    """The means over the tasks both sides have, and B − A as the summary pairs two models (``paired_by_task``)."""
    a: list[float] = []
    b: list[float] = []
    pairs_a: dict[tuple[str, int], float] = {}
    pairs_b: dict[tuple[str, int], float] = {}
    for task in tasks:
        delta: Delta = getattr(task, metric)
        if delta.a is None or delta.b is None:
            continue
        a.append(delta.a)
        b.append(delta.b)
        va, vb = cells_a[task.task_id].values[metric], cells_b[task.task_id].values[metric]
        shared = sorted(va.keys() & vb.keys())
        for trial in shared:
            pairs_a[(task.task_id, trial)], pairs_b[(task.task_id, trial)] = va[trial], vb[trial]
        if not shared:  # no trial number in common: the task's two means, as one cell
            pairs_a[(task.task_id, -1)], pairs_b[(task.task_id, -1)] = delta.a, delta.b
    p = paired_by_task(pairs_a, pairs_b, confidence=confidence, resamples=RESAMPLES, seed=SEED)
    paired = Paired(n=p.n, mean_diff=_round(p.mean_diff), ci=_rounded_ci(p.ci), wins=p.wins, losses=p.losses,
                    ties=p.ties, sign_p=_round(p.sign_p))
    return OverTasks(a=_round(statistics.fmean(a)) if a else None, b=_round(statistics.fmean(b)) if b else None,
                     paired=paired)


def _cells(kept: Iterable[RunRow]) -> dict[str, dict[str, _Cell]]:
    """model → task → its cell, from the directory's kept runs."""
    rows: dict[tuple[str, str], list[RunRow]] = defaultdict(list)
    for row in kept:
        rows[(row.agent_model, row.task_id)].append(row)
    cells: dict[str, dict[str, _Cell]] = defaultdict(dict)
    for (model, task), found in sorted(rows.items()):
        cells[model][task] = _Cell(found)
    return cells


def compare_sweeps(a: str | Path, b: str | Path, *, min_delta: float = 1.0, confidence: float = 0.95,
                   allow_mixed_scoring: bool = False) -> SweepComparison:
    """Compare sweep directory ``b`` against ``a`` (see the module docstring for what counts)."""
    a, b = Path(a), Path(b)
    rows_a, rows_b = kept_runs(a), kept_runs(b)
    cells_a, cells_b = _cells(rows_a), _cells(rows_b)
    differ, unknown = setting_differences(a, b)
    reports_a, reports_b = _reports(a), _reports(b)
    for path, cells, reports in ((a, cells_a, reports_a), (b, cells_b, reports_b)):
        if not cells and not reports and not has_levels(path):
            raise InputError(f"{path}: nothing to compare (runs.jsonl holds no agent run of the current experiment, "
                             "there is no tariff report and no levels.jsonl)")
    out = SweepComparison(a=str(a), b=str(b), min_delta=min_delta, confidence=confidence,
                          settings_differ=differ, settings_unknown=unknown,
                          models_only_in_a=sorted(cells_a.keys() - cells_b.keys()),
                          models_only_in_b=sorted(cells_b.keys() - cells_a.keys()),
                          tariff_only_in_a=sorted(reports_a - reports_b),
                          tariff_only_in_b=sorted(reports_b - reports_a))
    comparer = _Comparer(out)
    out.models = [comparer.model(model, cells_a[model], cells_b[model])
                  for model in sorted(cells_a.keys() & cells_b.keys())]
    _mark_judge_errors(out.regressions + out.improvements, {"A": (a, rows_a), "B": (b, rows_b)})
    out.tariff = [compare_tariff_reports(a / name, b / name, allow_mixed_scoring=allow_mixed_scoring)
                  for name in sorted(reports_a & reports_b)]
    for report in out.tariff:
        out.regressions += report.regressions
        out.improvements += report.improvements
        out.new_failures += report.new_failures
    out.levels, regressions, improvements, failures = compare_levels(a, b, confidence=confidence)
    out.regressions += regressions
    out.improvements += improvements
    out.new_failures += failures
    return out


def _mark_judge_errors(findings: Iterable[Finding], sides: dict[str, tuple[Path, list[RunRow]]]) -> None:
    """Note on each judge-score finding the runs of its model × task where people's labels (``labels.jsonl`` of
    either side) put a judge two points or more from their own score on that axis (``labels.judge_errors``)."""
    from ..labels import LabelledRun, judge_errors, read_labels

    found: dict[tuple[str, str, str], list[str]] = defaultdict(list)  # (model, task, ARS|SGR) -> notes
    for side, (path, rows) in sides.items():
        labels = read_labels(path)
        if not labels.latest:
            continue
        where = {row.key: row for row in rows}
        runs = [LabelledRun(key=key, passed=where[key].passed, scores=where[key].scores)
                for key in labels.by_run() if key in where]
        for key, notes in judge_errors(runs, labels).items():
            row = where[key]
            for note in notes:
                axis, _, detail = note.partition(": ")
                found[(row.agent_model, row.task_id, axis)].append(f"{side} {key} trial {row.trial}: {detail}")
    for finding in findings:
        marked = found.get((finding.model, finding.task, LABELS[finding.metric])) if finding.suite is None else None
        if marked:
            finding.judge_error = "; ".join(marked)


def _reports(out_dir: Path) -> set[str]:
    """The tariff reports a sweep wrote: ``<suite>_<model>.json`` beside its results ``<suite>_<model>.jsonl``
    (``levels_summary.json`` is the levels suite's table, compared from ``levels.jsonl``)."""
    return {f"{path.stem}.json" for path in out_dir.glob("*_*.jsonl") if (out_dir / f"{path.stem}.json").is_file()
            and path.stem != "levels_summary"}
