"""What a comparison flags, in one shape for sweeps and tariff reports, so CI scripts read one list.

A ``Finding`` is a change of one measure of one task (or tariff case) that the
comparison's rule counts as real — a confidence interval that excludes 0, or,
without one, a change past the threshold; it carries that rule in words. A
``NewFailure`` is a change of outcome: something that worked in A and does not in B.
"""

from __future__ import annotations

import msgspec

from ..stats import Interval

__all__ = ["Finding", "NewFailure", "bounds_text", "change_text", "failure_line", "finding_line", "interval_text",
           "value_text"]

LABELS = {"ars": "ARS", "sgr": "SGR", "checks": "checks", "score": "score", "f1": "F1"}


class Finding(msgspec.Struct, kw_only=True):
    """A regression or an improvement: ``metric`` of ``task`` went from ``a`` to ``b``."""

    model: str  # the agent model, or the model of B's tariff report
    suite: str | None = None  # the tariff suite of a case (None for an MPCBench task)
    task: str  # task id, or tariff case id
    metric: str  # ars | sgr | checks (check pass rate, 0–1) | score (tariff case score, 0–1) | f1 (levels, 0–1)
    a: float
    b: float
    delta: float
    ci: Interval | None = None
    rule: str  # why it counts, in words
    # A judge score's change where people's labels (labels.jsonl) say a judge was wrong on runs of this task: which
    # runs, and how far apart judge and person were; left out of the JSON when no label says so.
    judge_error: str | msgspec.UnsetType = msgspec.UNSET


class NewFailure(msgspec.Struct, kw_only=True):
    """Worked in A, not in B: ``ok → error`` (a task-level error) or ``passed → failed`` (or ``passed → error``)."""

    model: str
    suite: str | None = None
    task: str
    change: str
    detail: str = ""


def _where(f: Finding | NewFailure) -> str:
    return " / ".join(f"`{part}`" for part in (f.model, f.suite, f.task) if part is not None)


def value_text(metric: str, value: float | None) -> str:
    """A measure as shown: checks as a percentage, scores with two decimals, ``–`` for no value."""
    if value is None:
        return "–"
    return f"{100 * value:.1f}%" if metric == "checks" else f"{value:.2f}"


def change_text(metric: str, value: float | None) -> str:
    """A change as shown: checks in percentage points, scores signed with two decimals."""
    if value is None:
        return "–"
    return f"{100 * value:+.1f} pp" if metric == "checks" else f"{value:+.2f}"


def bounds_text(metric: str, ci: Interval, *, unit: bool = True) -> str:
    """``[-2.00, -0.50]`` (checks: ``[-50.0, 0.0] pp``, the unit left out beside a change that states it)."""
    if metric == "checks":
        return f"[{100 * ci.low:.1f}, {100 * ci.high:.1f}]" + (" pp" if unit else "")
    return f"[{ci.low:.2f}, {ci.high:.2f}]"


def interval_text(metric: str, ci: Interval, confidence: float) -> str:
    """``95% CI [-2.00, -0.50]``."""
    return f"{100 * confidence:g}% CI {bounds_text(metric, ci)}"


def finding_line(f: Finding) -> str:
    """One line: where, what, from → to, the change and the rule that counts it."""
    line = (f"{_where(f)} {LABELS[f.metric]}: {value_text(f.metric, f.a)} → "
            f"{value_text(f.metric, f.b)} ({change_text(f.metric, f.delta)}; {f.rule})")
    if isinstance(f.judge_error, str):
        line += f" — judge error, as people labelled it: {f.judge_error}"
    return line


def failure_line(f: NewFailure) -> str:
    return f"{_where(f)}: {f.change}" + (f" ({f.detail})" if f.detail else "")
