"""How far the judges and the checks agree with people: calibration from the labels of a sweep's kept runs.

- **Judge–human**, per judge model and axis, over the runs where a person scored the axis (1–5) and the judge
  scored the run (0–5): quadratic-weighted kappa (``stats.weighted_kappa``, six categories), Spearman's rho, and
  the share within one point; each with a 95% percentile-bootstrap interval over the labelled runs (seeded).
- **Check–human**, per check and over all checks: the share of labelled check verdicts people marked ``right``,
  with its bootstrap interval.
- **Outcome**: over runs a person marked ``correct`` or ``wrong`` and a check decided (passed or failed), the
  share where the two agree (``unsure`` and unverified runs are left out).

Every figure comes with ``n``. Only the runs the sweep keeps count; labels of other runs are reported (``orphan``).
``judge_errors`` names the runs where a judge and a person differ by two points or more on an axis: what
``compare`` calls a regression humans labelled as a judge error.
"""

from __future__ import annotations

from collections.abc import Container, Iterable

import msgspec

from ..stats import Interval, bootstrap_ci, bootstrap_mean_ci, spearman, weighted_kappa
from ._store import AXES, LabelSet

__all__ = ["Agreement", "Calibration", "CheckAgreement", "LabelledRun", "calibrate", "judge_errors"]

JUDGE_ERROR_POINTS = 2  # a judge this far from a person's score on an axis is wrong there, as people see it
SHORT = {"answer_requirements_satisfaction": "ARS", "source_grounded_reasoning": "SGR"}


class LabelledRun(msgspec.Struct, kw_only=True):
    """What calibration needs of a kept run: its key, whether it passed its checks, and each judge's scores."""

    key: str
    passed: bool | None  # None: unverified (no check applied) or an infrastructure error
    scores: dict[str, list[float | None]] = {}  # judge model -> [ARS, SGR]; None: unscored


class Agreement(msgspec.Struct, kw_only=True):
    """One judge model against people on one axis, over ``n`` runs both scored."""

    judge: str
    axis: str
    n: int
    kappa: float | None = None
    kappa_ci: Interval | None = None
    spearman: float | None = None
    spearman_ci: Interval | None = None
    within_one: float | None = None
    within_one_ci: Interval | None = None


class CheckAgreement(msgspec.Struct, kw_only=True):
    """A share of agreement with people (``what``: a check's name, ``all checks`` or ``outcome``) over ``n``."""

    what: str
    n: int
    share: float | None = None
    ci: Interval | None = None


class Calibration(msgspec.Struct, kw_only=True):
    """The agreement of the judges and checks with people's labels, and what of the labels did not count."""

    labelled_runs: int = 0  # kept runs with at least one label
    label_lines: int = 0  # every label line read (history included)
    torn_lines: int = 0
    foreign_lines: int = 0
    orphan_labels: int = 0  # latest labels of runs the sweep does not keep
    judges: list[Agreement] = []
    checks: list[CheckAgreement] = []
    outcome: CheckAgreement | None = None
    warnings: list[str] = []  # one line per torn or foreign line, and per run labelled but not kept


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _interval(ci: Interval | None) -> Interval | None:
    return None if ci is None else Interval(low=round(ci.low, 4), high=round(ci.high, 4))


def _agreement(judge: str, axis: str, pairs: list[tuple[float, float]]) -> Agreement:
    import numpy as np

    data = np.asarray(pairs, dtype=float).reshape(-1, 2)
    judged, human = data[:, 0], data[:, 1]
    near = (np.abs(judged - human) <= 1).astype(float)
    n = len(pairs)
    return Agreement(
        judge=judge, axis=axis, n=n,
        kappa=_round(weighted_kappa(judged, human)),
        kappa_ci=_interval(bootstrap_ci(lambda i: weighted_kappa(judged[i], human[i]), n)),
        spearman=_round(spearman(judged, human)),
        spearman_ci=_interval(bootstrap_ci(lambda i: spearman(judged[i], human[i]), n)),
        within_one=_round(float(near.mean())) if n else None, within_one_ci=_interval(bootstrap_mean_ci(near)))


def _share(what: str, agreed: list[bool]) -> CheckAgreement:
    values = [float(a) for a in agreed]
    return CheckAgreement(what=what, n=len(values), share=_round(sum(values) / len(values)) if values else None,
                          ci=_interval(bootstrap_mean_ci(values)))


def calibrate(runs: Iterable[LabelledRun], labels: LabelSet, kept: Container[str] | None = None) -> Calibration:
    """The agreement figures of ``labels`` over the sweep's labelled kept ``runs`` (see the module docstring);
    ``kept``: the keys of every kept run (default: those of ``runs``), for the labels of runs not kept."""
    by_run = labels.by_run()
    labelled_runs = {run.key: run for run in runs}
    kept = labelled_runs if kept is None else kept
    pairs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    checks: dict[str, list[bool]] = {}
    outcome: list[bool] = []
    labelled = 0
    for key, items in sorted(by_run.items()):
        run = labelled_runs.get(key)
        if run is None:
            continue
        labelled += 1
        for item, label in items.items():
            kind, _, name = item.partition(":")
            if kind == "axis":
                column = AXES.index(name)
                for judge, scores in run.scores.items():
                    if (judged := scores[column]) is not None:
                        pairs.setdefault((judge, name), []).append((float(judged), float(label.value)))
            elif kind == "check":
                checks.setdefault(name, []).append(label.value == "right")
            elif label.value != "unsure" and run.passed is not None:
                outcome.append((label.value == "correct") == run.passed)
    orphans = labels.orphans(kept)
    every_check = [agreed for verdicts in checks.values() for agreed in verdicts]
    return Calibration(
        labelled_runs=labelled, label_lines=labels.lines, torn_lines=labels.torn_lines,
        foreign_lines=labels.foreign_lines,
        orphan_labels=sum(1 for run_key, _ in labels.latest if run_key not in kept),
        judges=[_agreement(judge, axis, found) for (judge, axis), found in sorted(pairs.items())],
        checks=([_share("all checks", every_check)] if every_check else [])
        + [_share(name, found) for name, found in sorted(checks.items())],
        outcome=_share("outcome", outcome) if outcome else None,
        warnings=[*labels.problems, *orphans])


def judge_errors(runs: Iterable[LabelledRun], labels: LabelSet) -> dict[str, list[str]]:
    """Run key → where a judge and a person differ by ``JUDGE_ERROR_POINTS`` or more (``"ARS: sim/judge 1,
    human 4"``), for the labelled runs among ``runs``."""
    by_run = labels.by_run()
    found: dict[str, list[str]] = {}
    for run in runs:
        for column, axis in enumerate(AXES):
            label = by_run.get(run.key, {}).get(f"axis:{axis}")
            if label is None:
                continue
            for judge, scores in sorted(run.scores.items()):
                judged = scores[column]
                if judged is not None and abs(judged - float(label.value)) >= JUDGE_ERROR_POINTS:
                    found.setdefault(run.key, []).append(f"{SHORT[axis]}: {judge} {judged:g}, human {label.value}")
    return found
