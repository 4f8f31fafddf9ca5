"""Markdown for a comparison: what counts first (regressions, improvements, new failures), then the tables.

Tariff reports keep the tariff compare's own Markdown (``tariff.render_diff``, one
copy) and add the score of every case both reports have.
"""

from __future__ import annotations

from pathlib import Path

from ..stats import format_p
from ..tariff import CHANGE_THRESHOLD, render_diff
from ._findings import (
    Finding,
    NewFailure,
    bounds_text,
    change_text,
    failure_line,
    finding_line,
    value_text,
)
from ._levels import render_levels_comparison
from ._reports import ReportComparison
from ._sweeps import Delta, ModelComparison, OverTasks, Side, SweepComparison, TaskComparison

__all__ = ["render_markdown"]

NONE = "(none)"


def render_markdown(comparison: SweepComparison | ReportComparison) -> str:
    if isinstance(comparison, ReportComparison):
        return _report_markdown(comparison)
    return _sweep_markdown(comparison)


def _section(title: str, rows: list[str]) -> list[str]:
    return [f"## {title} ({len(rows)})", "", *(rows or [NONE]), ""]


def _findings(title: str, findings: list[Finding]) -> list[str]:
    return _section(title, [f"- {finding_line(f)}" for f in findings])


def _failures(failures: list[NewFailure]) -> list[str]:
    return _section("New failures", [f"- {failure_line(f)}" for f in failures])


def _names(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) or NONE


# -- sweeps ------------------------------------------------------------------------------------------------------


def _cell(metric: str, d: Delta) -> list[str]:
    """``A → B`` and the change, with its interval (and ``unpaired`` when the trials did not pair)."""
    change = change_text(metric, d.delta)
    if d.ci is not None:
        change += f" {bounds_text(metric, d.ci, unit=False)}" + (" unpaired" if d.ci_kind == "unpaired" else "")
    return [f"{value_text(metric, d.a)} → {value_text(metric, d.b)}", change]


def _counts(a: Side, b: Side) -> list[str]:
    trials = f"{a.trials} / {b.trials}"
    if a.infra_errors or b.infra_errors:
        trials += f" (+{a.infra_errors} / {b.infra_errors} infra, left out)"
    return [trials, f"{a.errors} / {b.errors}"]


def _task_row(t: TaskComparison) -> str:
    cells = [t.task_id, t.task_type, *_counts(t.a, t.b)]
    for metric in ("ars", "sgr", "checks"):
        cells += _cell(metric, getattr(t, metric))
    return "| " + " | ".join(cells) + " |"


def _over_row(label: str, metric: str, o: OverTasks) -> str:
    p = o.paired
    ci = "–" if p.ci is None else bounds_text(metric, p.ci)
    sign = format_p(p.sign_p)
    return (f"| {label} | {p.n} | {value_text(metric, o.a)} | {value_text(metric, o.b)} | "
            f"{change_text(metric, p.mean_diff)} | {ci} | {p.wins} / {p.losses} / {p.ties} | {sign} |")


def _model(m: ModelComparison, confidence: float) -> list[str]:
    level = f"{100 * confidence:g}%"
    return [f"## Model `{m.model}`", "",
             f"Over the tasks both sides have, with a value on both (A and B: means over tasks). B − A as the "
             f"summary pairs two models: over the task × trial pairs both scored (a task whose trial numbers differ "
             f"is one pair of its means), {level} bootstrap CI resampling tasks, sign test over the pairs:", "",
             f"| measure | pairs | A | B | Δ | {level} CI | B better / worse / tied | sign-test p |",
             "|---|---:|---:|---:|---:|---|---|---:|",
             _over_row("ARS", "ars", m.ars), _over_row("SGR", "sgr", m.sgr), _over_row("checks", "checks", m.checks),
             "", f"Per task (Δ with its {level} CI where each side has at least 2 trials with a value):", "",
             "| task | type | trials A / B | errors A / B | ARS A → B | Δ ARS | SGR A → B | Δ SGR | checks A → B | "
             "Δ checks |", "|---|---|---|---|---|---|---|---|---|---|",
             *(_task_row(t) for t in m.tasks), "",
             f"Tasks only in A: {_names(m.tasks_only_in_a)}  ", f"Tasks only in B: {_names(m.tasks_only_in_b)}", ""]


def _settings(differ: list[str], unknown: list[str]) -> list[str]:
    """The settings B ran with that differ from A's, before any delta: a change there is no change of the model."""
    if unknown:
        return [f"Settings not compared: {' and '.join(unknown)} {'has' if len(unknown) == 1 else 'have'} no "
                "readable manifest.json.", ""]
    if not differ:
        return ["Both sweeps ran with the same settings (models' parameters, prompts, max_turns, judges, versions).",
                ""]
    return [f"## Settings that differ ({len(differ)})", "",
            "A delta below may come from these rather than from the model.", "", *(f"- {line}" for line in differ), ""]


def _points(value: float) -> str:
    return f"{value:g} point" + ("" if value == 1 else "s")


def _sweep_markdown(c: SweepComparison) -> str:
    level = f"{100 * c.confidence:g}%"
    lines = ["# Sweep comparison", "", f"A: `{c.a}`  ", f"B: `{c.b}`", "",
             "Per agent model × task over its trials (infrastructure errors are not trials) and judges: ARS and SGR "
             "are the judge axes (0–5), checks the share of deterministic checks passed. A change counts when its "
             f"{level} CI excludes 0 (at least 2 trials with a value on each side: paired by trial, unpaired when "
             f"the trial indices differ); without a CI, when an axis moves by at least {_points(c.min_delta)} or "
             "the checks go from all passing to not (or back)."
             + (" Tariff reports both sweeps wrote are compared case by case (a score change of at least "
                f"{CHANGE_THRESHOLD:g} counts; errors are failures scoring 0)." if c.tariff else ""), "",
             *_settings(c.settings_differ, c.settings_unknown),
             *_findings("Regressions", c.regressions), *_findings("Improvements", c.improvements),
             *_failures(c.new_failures)]
    for model in c.models:
        lines += _model(model, c.confidence)
    for report in c.tariff:
        lines += _sweep_report(report)
    lines += render_levels_comparison(c.levels)
    lines += ["## On one side only (not compared)", "", f"Agent models only in A: {_names(c.models_only_in_a)}  ",
              f"Agent models only in B: {_names(c.models_only_in_b)}  ",
              f"Tariff reports only in A: {_names(c.tariff_only_in_a)}  ",
              f"Tariff reports only in B: {_names(c.tariff_only_in_b)}"]
    return "\n".join(lines) + "\n"


# -- tariff reports ----------------------------------------------------------------------------------------------


def _case_rows(c: ReportComparison) -> list[str]:
    """The score of every case both reports have (errors shown as such; they score 0)."""
    d = c.diff

    def score(case_id: str, value: float, errors: dict[str, str]) -> str:
        return "error" if case_id in errors else f"{value:.2f}"

    return ["| case | type | A | B | Δ |", "|---|---|---:|---:|---:|",
            *(f"| {case_id} | {case_type} | {score(case_id, a, d.baseline_errors)} | "
              f"{score(case_id, b, d.current_errors)} | {b - a:+.2f} |" for case_id, case_type, a, b in d.changes)]


def _report_markdown(c: ReportComparison) -> str:
    lines = [render_diff(c.diff, c.a, c.b).rstrip("\n"), "",
             f"## Score per case (the {c.diff.shared} cases in both runs)", "",
             f"A: suite `{c.suite_a}`, model `{c.model_a}`. B: suite `{c.suite_b}`, model `{c.model_b}`.", "",
             *_case_rows(c)]
    return "\n".join(lines) + "\n"


def _sweep_report(c: ReportComparison) -> list[str]:
    """A tariff report of both sweeps, in short: its counts, the change per case type and per case."""
    d = c.diff
    return [f"## Tariff report `{Path(c.b).name}` (suite `{c.suite_b}`, model `{c.model_b}`)", "",
            f"{d.shared} cases in both, average score change {d.average_change:+.4f} (errors score 0); improved "
            f"{len(d.improved)}, regressed {len(d.regressed)}, new failures {len(d.new_failures)}, added "
            f"{len(d.added)}, removed {len(d.removed)}.", "",
            "| case type | cases | Δ average |", "|---|---:|---:|",
            *(f"| {k} | {v.cases} | {v.average_change:+.4f} |" for k, v in d.by_case_type.items()), "",
            *_case_rows(c), ""]
