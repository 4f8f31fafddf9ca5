"""Two sweeps' three-level MPCBench runs against each other: per level × model × split, B − A paired by instance.

Each side counts its latest record per unit of its current experiment (``levels.jsonl``, the keys in
``experiment_keys.txt``), ok records only (an infrastructure error is not a trial). An instance's F1 is the mean
over its trials; the two sides are paired over the instances both ran (``stats.paired_difference``), and a change
counts when the interval excludes 0. An instance every A trial solved exactly and some B trial did not is a new
failure (``passed → failed``).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

import msgspec

from ..levels import LevelsRecord
from ..stats import Interval, paired_difference
from ..sweep import kept_levels_records
from ._findings import Finding, NewFailure

__all__ = ["LevelsComparison", "compare_levels", "has_levels"]

RESAMPLES = 2000
SEED = 0

Group = tuple[int, str, str]  # level, model, split


class LevelsComparison(msgspec.Struct, kw_only=True):
    """One level × model × split: mean F1 and EM on each side over the shared instances, and B − A."""

    level: int
    model: str
    split: str
    instances: int
    a_f1: float
    b_f1: float
    a_em: float
    b_em: float
    delta: float
    ci: Interval | None = None
    only_in_a: int = 0  # instances one side ran and the other did not
    only_in_b: int = 0


def has_levels(out_dir: Path) -> bool:
    return (out_dir / "levels.jsonl").is_file()


def _side(out_dir: Path) -> dict[Group, dict[str, list[LevelsRecord]]]:
    """(level, model, split) → instance → its ok trials, of the directory's current experiment."""
    groups: dict[Group, dict[str, list[LevelsRecord]]] = defaultdict(lambda: defaultdict(list))
    for record in kept_levels_records(out_dir, LevelsRecord):
        if record.status == "ok" and record.metrics is not None:
            groups[(record.level, record.model, record.split)][record.instance_id].append(record)
    return groups


def _mean(trials: list[LevelsRecord], exact: bool = False) -> float:
    return statistics.fmean(float(t.metrics.exact_match if exact else t.metrics.f1) for t in trials if t.metrics)


def compare_levels(a: Path, b: Path, *, confidence: float = 0.95
                   ) -> tuple[list[LevelsComparison], list[Finding], list[Finding], list[NewFailure]]:
    """Each group both sides ran, with the regressions, improvements and new failures it shows."""
    side_a, side_b = _side(a), _side(b)
    rows: list[LevelsComparison] = []
    regressions: list[Finding] = []
    improvements: list[Finding] = []
    failures: list[NewFailure] = []
    for group in sorted(side_a.keys() & side_b.keys()):
        level, model, split = group
        ia, ib = side_a[group], side_b[group]
        shared = sorted(ia.keys() & ib.keys())
        if not shared:
            continue
        fa, fb = [_mean(ia[i]) for i in shared], [_mean(ib[i]) for i in shared]
        paired = paired_difference(fa, fb, confidence=confidence, resamples=RESAMPLES, seed=SEED)
        row = LevelsComparison(level=level, model=model, split=split, instances=len(shared),
                               a_f1=statistics.fmean(fa), b_f1=statistics.fmean(fb),
                               a_em=statistics.fmean(_mean(ia[i], True) for i in shared),
                               b_em=statistics.fmean(_mean(ib[i], True) for i in shared),
                               delta=paired.mean_diff or 0.0, ci=paired.ci,
                               only_in_a=len(ia.keys() - ib.keys()), only_in_b=len(ib.keys() - ia.keys()))
        rows.append(row)
        if paired.ci is not None and (paired.ci.high < 0 or paired.ci.low > 0):
            finding = Finding(model=model, suite="levels", task=f"L{level} {split}", metric="f1", a=row.a_f1,
                              b=row.b_f1, delta=row.delta, ci=paired.ci,
                              rule=f"{confidence:.0%} CI of the mean F1 change, paired over {len(shared)} instances, "
                              "excludes 0")
            (regressions if paired.ci.high < 0 else improvements).append(finding)
        failures += [NewFailure(model=model, suite="levels", task=instance, change="passed → failed",
                                detail=f"L{level} {split}: exact in every A trial, not in every B trial")
                     for instance in shared if _mean(ia[instance], True) == 1.0 and _mean(ib[instance], True) < 1.0]
    return rows, regressions, improvements, failures


def render_levels_comparison(rows: list[LevelsComparison]) -> list[str]:
    """The Markdown section of a sweep comparison."""
    if not rows:
        return []
    lines = ["## MPCBench levels", "", "| level | model | split | instances | F1 A | F1 B | B − A [CI] | EM A | EM B |",
             "|---:|---|---|---:|---:|---:|---|---:|---:|"]
    for r in rows:
        ci = f" [{r.ci.low:+.2f}, {r.ci.high:+.2f}]" if r.ci else ""
        lines.append(f"| {r.level} | {r.model} | {r.split} | {r.instances} | {r.a_f1:.2f} | {r.b_f1:.2f} | "
                     f"{r.delta:+.2f}{ci} | {r.a_em:.0%} | {r.b_em:.0%} |")
    return [*lines, ""]
