"""The summary's statistics as short tables, built once for both the terminal and ``summary.md``.

Each section is a heading, a sentence saying what its numbers are, a header and
rows of text cells; ``_summary`` lays them out as a padded grid or a Markdown
table. Sections that do not apply are left out (no paired table with one agent
model, no agreement with one judge).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..stats import Interval, Paired, format_p
from ..sweep import Estimate, Summary

__all__ = ["Section", "pct", "stat_sections"]


class Section(NamedTuple):
    heading: str
    about: str  # what the numbers are, one sentence
    header: list[str]
    rows: list[list[str]]
    right: set[int]  # right-aligned columns
    note: str = ""  # a line after the table


def stat_sections(summary: Summary, name: Callable[[str], str]) -> list[Section]:
    """The sections that apply to ``summary``; ``name`` shortens model names (the terminal's aliases)."""
    sections = [_over_tasks(summary, name), _paired(summary, name), _agreement(summary, name)]
    return [s for s in sections if s is not None]


def _over_tasks(summary: Summary, name: Callable[[str], str]) -> Section | None:
    models = [m for m in summary.models if m.stats.ars.tasks or m.stats.check_rate.tasks or m.stats.pass_hat_k]
    if not models:
        return None
    ks = sorted({p.k for m in models for p in m.stats.pass_hat_k})  # a column per k any model reports
    rows = []
    for m in models:
        s = m.stats
        passes = {p.k: pct(p.value) for p in s.pass_hat_k}
        rows.append([name(m.model), f"{m.tasks_checked}/{m.tasks}", _score(s.ars),
                     _score(s.sgr), _rate(s.check_rate), *(passes.get(k, "–") for k in ks), _num(s.trial_variance.ars),
                     _num(s.trial_variance.sgr)])
    header = ["agent model", "checked/tasks", "ARS", "SGR", "checks", *(f"pass^{k}" for k in ks), "var ARS", "var SGR"]
    return Section("Over tasks", "per agent model: mean [95% bootstrap CI over tasks] of each task's mean over "
                   "judges and trials; checks = passed / applied; pass^k = chance that k of a checked task's trials "
                   "all pass (infrastructure errors and unverified runs, where no check applied, are not trials; "
                   "k = 1, 2, 4, 8, … and the most trials of a task); var = "
                   "mean variance of a task's scores across trials",
                   header, rows, right=set(range(1, len(header))))


def _paired(summary: Summary, name: Callable[[str], str]) -> Section | None:
    if not summary.paired:
        return None
    rows = []
    for pair in summary.paired:
        for axis, paired in (("ARS", pair.ars), ("SGR", pair.sgr)):
            rows.append([name(pair.model_a), name(pair.model_b), axis, str(paired.n), _signed(paired.mean_diff),
                         _interval(paired.ci, _signed), str(paired.wins), str(paired.losses), str(paired.ties),
                         _p(paired)])
    return Section("Paired differences", "B − A over the task × trial runs both models have scores for (a run's "
                   "score: the mean over its judges); CI over tasks; wins = runs where B scored above A; p = exact "
                   "two-sided sign test",
                   ["A", "B", "axis", "n", "B − A", "95% CI", "wins", "losses", "ties", "p"], rows,
                   right=set(range(3, 10)))


def _agreement(summary: Summary, name: Callable[[str], str]) -> Section | None:
    if not summary.judge_agreement:
        return None
    rows = [[name(p.judge_a), name(p.judge_b), str(p.n), _num(p.ars.kappa), _num(p.ars.spearman), _num(p.sgr.kappa),
             _num(p.sgr.spearman)] for p in summary.judge_agreement]
    note = ""
    if summary.judge_spread is not None:
        spread = summary.judge_spread
        note = (f"judge spread (max − min of a run's scores, over the {spread.runs} runs scored by two judges or "
                f"more): ARS mean {spread.ars.mean:.2f}, max {spread.ars.max:g}; SGR mean {spread.sgr.mean:.2f}, "
                f"max {spread.sgr.max:g}")
    return Section("Judge agreement", "over the runs both judges scored: κ = quadratic-weighted Cohen's kappa, "
                   "ρ = Spearman (– where undefined, e.g. one score throughout)",
                   ["judge A", "judge B", "n", "ARS κ", "ARS ρ", "SGR κ", "SGR ρ"], rows, right=set(range(2, 7)),
                   note=note)


def _interval(ci: Interval | None, fmt: Callable[[float], str]) -> str:
    return "–" if ci is None else f"[{fmt(ci.low)}, {fmt(ci.high)}]"


def _score(estimate: Estimate) -> str:
    """``3.42 [3.10, 3.71]``; the mean alone with a single task; ``–`` with none."""
    if estimate.mean is None:
        return "–"
    ci = "" if estimate.ci is None else " " + _interval(estimate.ci, lambda x: f"{x:.2f}")
    return f"{estimate.mean:.2f}{ci}"


def _rate(estimate: Estimate) -> str:
    if estimate.mean is None:
        return "–"
    ci = "" if estimate.ci is None else " " + _interval(estimate.ci, pct)
    return f"{pct(estimate.mean)}{ci}"


def pct(value: float | None) -> str:
    """A share as a whole percentage: ``42%``."""
    return "–" if value is None else f"{100 * value:.0f}%"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.2f}"


def _p(paired: Paired) -> str:
    return format_p(paired.sign_p)
