"""The sweep summary as a terminal table and as ``summary.md``.

Both say what every column means, never cut a model name (the terminal sizes
its columns to the names; names longer than ``ALIAS_OVER`` characters get a short
alias listed under the table), follow the table with the statistics over tasks,
paired differences and judge agreement (``_stats``; sections that do not
apply are left out), give the tariff suites their own section, list the errors
by class with an example and what to do, and state what was left out of the
counts and why. ``summary.md`` wraps its paragraphs at ``PROSE_WIDTH`` columns;
its tables stay one row a line, and none grows with the number of trials (the
pass^k columns are 1, 2, 4, 8, … and the most trials: ``stats.pass_ks``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from ..labels import LABELS, SHORT, Calibration
from ..llm import LEDGER
from ..stats import Interval
from ..sweep import AxisStats, ErrorClass, JudgeView, Spend, Summary
from ._certificate import certificate_sections
from ._stats import Section, pct, stat_sections

__all__ = ["ALIAS_OVER", "render_markdown", "render_table"]

ALIAS_OVER = 40
PROSE_WIDTH = 100  # summary.md wraps its paragraphs here (Markdown joins the lines again); tables are as wide as needed

LEGEND = (
    "ARS = answer-requirements satisfaction, SGR = source-grounded reasoning: judge scores 0–5, mean ± standard "
    "error. checks = deterministic checks passed (n/a excluded). pass^k = share of checked tasks whose k trials all "
    "passed (k = the fewest trials of a task; infrastructure errors and unverified runs are not trials). "
    "checked = tasks with a verified trial / tasks run; unver = unverified runs: no check applied, so only the "
    "judge speaks for them and they never count as a pass. err = task-level errors "
    "(runs and judgements); infra = infrastructure errors (rate limits, 5xx, timeouts, connections: rerunning "
    "the same command retries them); unsc = judgements left unscored. tokens, cost $ = kept/spent: in the "
    "records counted / every call made, redone and failed work included (≤: with unsettled calls at their worst "
    "case). p50, p95 = agent call latency in s."
)


def _fmt(axis: AxisStats) -> str:
    return "–" if axis.mean is None else f"{axis.mean:.2f} ± {axis.stderr:.2f}"


def _qty(n: int) -> str:
    """A token count in a few characters: 9876, 12.3k, 4.56M."""
    if n < 10_000:
        return str(n)
    return f"{n / 1e3:.1f}k" if n < 1_000_000 else f"{n / 1e6:.2f}M"


def _kept_spent(kept: Spend, spent: Spend) -> tuple[str, str]:
    return f"{_qty(kept.tokens)}/{_qty(spent.tokens)}", f"{kept.cost_text()}/{spent.cost_text()}"


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value >= 0.1 else "< 0.1 s"


def _wall(summary: Summary) -> str:
    if summary.invocations == 0:
        return "wall time unknown (no readable manifest.json)"
    if summary.wall_s is None:
        return "wall time unknown (no invocation has recorded its finish)"
    text = f"wall time {_seconds(summary.wall_s)}"
    if summary.invocations > 1:
        latest = "unknown" if summary.last_wall_s is None else _seconds(summary.last_wall_s)
        text += f" over {summary.invocations} invocations (latest {latest})"
    if summary.unfinished_invocations:
        text += f"; {summary.unfinished_invocations} invocation(s) stopped without a finish time, not counted"
    return text


def _counted(summary: Summary) -> str:
    parts = [f"{summary.runs} runs", f"{summary.judgements} judgements"]
    if summary.tariff_cases:
        parts.append(f"{summary.tariff_cases} tariff cases")
    return (f"counted: {', '.join(parts)}; {summary.calls} LLM calls for them (redone attempts included; "
            f"calls.jsonl holds {summary.directory_calls.calls}{_priced(summary.directory_calls)}); {_wall(summary)}")


def _unsettled(summary: Summary) -> str | None:
    """What the unsettled calls are and how they count (``None`` when there are none)."""
    text = summary.directory_calls.unsettled_text()
    if not text:
        return None
    return (f"{text} — sent, but their replies were never recorded (the sweep was killed, or the call cancelled, "
            f"while they were in flight; their intents are in {LEDGER}); the provider may have billed them, so spent "
            "and budgets count each at its worst case")


def _priced(calls: Spend) -> str:
    """What of ``calls`` has no known price or came from the response cache (nothing when neither)."""
    parts = [f"{calls.unpriced_calls} of models with no known price, cost unknown (set models.<name>.prices)"
             if calls.unpriced_calls else "",
             f"{calls.cached_calls} answered by the response cache ($0 spent; all calls worth ${calls.value_usd:.4f})"
             if calls.cached_calls else ""]
    return "".join(f", {part}" for part in parts if part)


def _left_out(summary: Summary) -> list[str]:
    """What the counts leave out and why, one sentence each (nothing when nothing was left out)."""
    parts = []
    if summary.duplicates_ignored:
        parts.append(f"{summary.duplicates_ignored} duplicate record(s) of units already kept are not counted "
                     "(the last ok record of a unit counts)")
    if summary.stale_judgements:
        parts.append(f"{summary.stale_judgements} stale judgement(s) are not counted (they judged an earlier run "
                     "of a unit that was run again)")
    if summary.orphan_judgements:
        parts.append(f"{summary.orphan_judgements} judgement(s) of runs without an ok record are not counted")
    if summary.other_experiments:
        parts.append(f"{summary.other_experiments} record(s) of earlier experiments in this directory are not "
                     "counted (see manifest.json)")
    if summary.skipped_lines:
        files = ", ".join(f"{name} {n}" for name, n in sorted(summary.skipped_lines.items()))
        parts.append(f"{sum(summary.skipped_lines.values())} line(s) that do not decode as records are not "
                     f"counted ({files})")
    return parts


def _aliases(summary: Summary) -> dict[str, str]:
    """Short stand-ins (``#1``, ``#2``, …) for model names too long for a terminal column."""
    names = {m.model for m in summary.models} | {v.judge_model for m in summary.models for v in m.judges}
    names |= {j.model for j in summary.judge_calls} | {t.model for t in summary.tariff}
    names |= {e.model for e in summary.errors}
    long = sorted(n for n in names if len(n) > ALIAS_OVER)
    return {name: f"#{i}" for i, name in enumerate(long, start=1)}


def _grid(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    """Columns as wide as their widest cell (nothing is cut); ``right`` columns are right-aligned."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=False)))
        return " ".join(padded)

    head = line(header).rstrip()
    return [head, "-" * len(head), *(line(row).rstrip() for row in rows)]


def _error_lines(errors: list[ErrorClass], name: dict[str, str]) -> list[str]:
    lines = []
    for e in errors:
        infra = (f"{e.retryable} infrastructure, a rerun retries them" if e.retryable == e.count
                 else f"{e.retryable} of them infrastructure" if e.retryable else "task-level")
        where = ", ".join(f"{f} {n}" for f, n in sorted(e.files.items()))
        at = f" at {e.endpoint}" if e.endpoint else ""
        lines += [f"  {e.error_class} × {e.count}: {name.get(e.model, e.model)}{at} ({infra}; {where})",
                  f"    e.g. {e.example}", f"    what to do: {e.hint}"]
    return lines


def render_table(summary: Summary) -> str:
    """The terminal summary: the model table and its legend, the statistics, tariff suites, errors by class, what was
    counted."""
    alias = _aliases(summary)

    def name(model: str) -> str:
        return alias.get(model, model)

    rows = []
    for m in summary.models:
        for v in m.judges or [JudgeView(judge_model="–")]:
            tokens, cost = _kept_spent(m.kept, m.spent)
            rows.append([name(m.model), name(v.judge_model), _fmt(v.ars), _fmt(v.sgr), pct(m.check_pass_rate),
                         pct(m.pass_at_k) + (f" k={m.k}" if m.k else ""), f"{m.tasks_checked}/{m.tasks}",
                         str(m.unverified), str(m.errors + v.errors),
                         str(m.infra_errors + v.infra_errors), str(v.unscored), tokens, cost,
                         f"{m.latency_p50_s or 0:.3f}", f"{m.latency_p95_s or 0:.3f}"])
    lines: list[str] = []
    if rows or not summary.tariff:  # a tariff-only sweep has no agent table to show
        lines = _grid(["agent model", "judge", "ARS", "SGR", "checks", "pass^k", "checked", "unver", "err", "infra",
                       "unsc", "tokens kept/spent", "cost $ kept/spent", "p50", "p95"], rows, right=set(range(2, 15)))
        lines += textwrap.wrap(LEGEND, width=max(100, len(lines[0])), break_on_hyphens=False)
    for section in [*stat_sections(summary, name), *certificate_sections(summary)]:
        lines += ["", *textwrap.wrap(f"{section.heading}: {section.about}:", width=100, break_on_hyphens=False)]
        lines += _grid(section.header, section.rows, section.right)
        lines += textwrap.wrap(section.note, width=100, break_on_hyphens=False)
    if summary.judge_calls:
        spends = [(name(j.model), j.spent.calls, *_kept_spent(j.kept, j.spent)) for j in summary.judge_calls]
        lines.append("judge calls: " + "; ".join(f"{model} {calls} calls, tokens {tokens}, cost $ {cost}"
                                                 for model, calls, tokens, cost in spends))
    if summary.tariff:
        lines += ["", "tariff suites (an errored case is a failure scoring 0):"] if lines else [
            "tariff suites (an errored case is a failure scoring 0):"]
        lines += _grid(["suite", "model", "cases", "passed", "pass rate", "avg score", "err", "infra",
                        "tokens kept/spent", "cost $ kept/spent"],
                       [[t.suite + ("" if t.scoring == "project" else f" ({t.scoring} scoring)"), name(t.model),
                         str(t.cases), str(t.passed), pct(t.pass_rate),
                         f"{t.average_score or 0:.3f}", str(t.errors), str(t.infra_errors),
                         *_kept_spent(t.kept, t.spent)] for t in summary.tariff], right=set(range(2, 10)))
    lines += ["", "errors by class and model:" if summary.errors else "errors: none"]
    lines += _error_lines(summary.errors, alias)
    if alias:
        lines += ["", "models: " + "; ".join(f"{a} = {full}" for full, a in alias.items())]
    lines += ["", _counted(summary)]
    unsettled = _unsettled(summary)
    lines += [f"  {unsettled}"] if unsettled else []
    lines += [f"  {part}" for part in _left_out(summary)]
    return "\n".join(lines)


def render_markdown(summary: Summary) -> str:
    """``summary.md``: the overall table, the statistics, scores per task type, judge calls, tariff suites, errors,
    what counted."""
    unsettled = _unsettled(summary)
    lines = ["# Sweep summary", "", *_prose(f"Directory: `{summary.out_dir}`; {_counted(summary)}."), "",
             *([*_prose(_sentence(unsettled)), ""] if unsettled else []), *_prose(LEGEND), "",
             "| agent model | judge | ARS | SGR | checks passed | pass^k | tasks checked | unverified | errors | "
             "infra errors | unscored | tokens kept | tokens spent | cost $ kept | cost $ spent | p50 s | p95 s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m in summary.models:
        for v in m.judges or [JudgeView(judge_model="–")]:
            lines.append(f"| {m.model} | {v.judge_model} | {_fmt(v.ars)} | {_fmt(v.sgr)} | {pct(m.check_pass_rate)} "
                         f"| {pct(m.pass_at_k)}{f' (k={m.k})' if m.k else ''} | {m.tasks_checked} of {m.tasks} "
                         f"| {m.unverified} | {m.errors + v.errors} "
                         f"| {m.infra_errors + v.infra_errors} | {v.unscored} | {m.kept.tokens} | {m.spent.tokens} "
                         f"| {m.kept.cost_text()} | "
                         f"{m.spent.cost_text()} | {m.latency_p50_s or 0:.3f} | {m.latency_p95_s or 0:.3f} |")
    for section in [*stat_sections(summary, str), *certificate_sections(summary)]:
        lines += ["", f"## {section.heading}", "", *_prose(_sentence(section.about)), "", *_markdown_table(section)]
        lines += ["", *_prose(_sentence(section.note))] if section.note else []
    if isinstance(summary.calibration, Calibration):
        lines += ["", *_calibration(summary.calibration)]
    lines += ["", "## By task type", "", "| agent model | judge | task type | n | ARS | SGR |",
              "|---|---|---|---:|---:|---:|"]
    for m in summary.models:
        for v in m.judges:
            for task_type, axes in sorted(v.by_task_type.items()):
                lines.append(f"| {m.model} | {v.judge_model} | {task_type} | {axes['ars'].n} | {_fmt(axes['ars'])} "
                             f"| {_fmt(axes['sgr'])} |")
    if summary.judge_calls:
        lines += ["", "## Judge calls", "", "| judge model | calls | tokens kept | tokens spent | cost $ kept | "
                  "cost $ spent | p50 s | p95 s |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for j in summary.judge_calls:
            lines.append(f"| {j.model} | {j.spent.calls} | {j.kept.tokens} | {j.spent.tokens} | {j.kept.cost_text()} "
                         f"| {j.spent.cost_text()} | {j.latency_p50_s or 0:.3f} | {j.latency_p95_s or 0:.3f} |")
    if summary.tariff:
        lines += ["", "## Tariff suites", "", "An errored case is a failure scoring 0, as in the suite's report.", "",
                  "| suite | model | cases | passed | pass rate | average score | errors | infra errors | "
                  "tokens kept | tokens spent | cost $ kept | cost $ spent |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for t in summary.tariff:
            lines.append(f"| {t.suite} | {t.model} | {t.cases} | {t.passed} | {pct(t.pass_rate)} | "
                         f"{t.average_score or 0:.3f} | {t.errors} | {t.infra_errors} | {t.kept.tokens} | "
                         f"{t.spent.tokens} | {t.kept.cost_text()} | {t.spent.cost_text()} |")
    lines += ["", "## Errors", ""]
    if summary.errors:
        lines += ["| error class | model | endpoint | count | infrastructure | records | example | what to do |",
                  "|---|---|---|---:|---:|---|---|---|"]
        for e in summary.errors:
            where = ", ".join(f"{f} {n}" for f, n in sorted(e.files.items()))
            lines.append(f"| {e.error_class} | {e.model} | {e.endpoint or '–'} | {e.count} | {e.retryable} | {where} "
                         f"| {_cell(e.example)} | {_cell(e.hint)} |")
    else:
        lines.append("None: every counted record is ok.")
    if summary.warnings:
        lines += ["", "## Data warnings", "", *(f"- {_cell(w)}" for w in summary.warnings)]
    left_out = _left_out(summary)
    if left_out:
        lines += ["", "## Left out of the counts", ""]
        lines += [line for part in left_out for line in _prose(f"- {part}", indent="  ")]
    return "\n".join(lines) + "\n"


def _calibration(c: Calibration) -> list[str]:
    """The judges' and checks' agreement with people's labels (labels.jsonl), with n and 95% intervals."""
    def value(v: float | None, ci: Interval | None) -> str:
        return "–" if v is None else f"{v:.2f}" + ("" if ci is None else f" [{ci.low:.2f}, {ci.high:.2f}]")

    lines = ["## Calibration against human labels", "", *_prose(
        f"{c.labelled_runs} labelled run(s) of this sweep, {c.label_lines} label line(s) in {LABELS} (the latest "
        f"per run and item counts); skipped: {c.torn_lines} torn and {c.foreign_lines} foreign line(s), and "
        f"{c.orphan_labels} label(s) of runs this sweep does not keep. Intervals: 95% bootstrap over the labelled "
        "runs."), ""]
    if c.judges:
        lines += ["| judge | axis | n | weighted κ | Spearman ρ | within 1 point |", "|---|---|---:|---|---|---|"]
        lines += [f"| {a.judge} | {SHORT[a.axis]} | {a.n} | {value(a.kappa, a.kappa_ci)} | "
                  f"{value(a.spearman, a.spearman_ci)} | {value(a.within_one, a.within_one_ci)} |" for a in c.judges]
        lines.append("")
    names = {"outcome": "outcome: checks' pass/fail against correct/wrong", "all checks": "all checks"}
    shares = [*c.checks, *([c.outcome] if c.outcome else [])]
    if shares:
        lines += ["| agreement with people | n | share |", "|---|---:|---|"]
        lines += [f"| {names.get(s.what, 'check ' + s.what)} | {s.n} | {value(s.share, s.ci)} |" for s in shares]
        lines.append("")
    return lines + [line for w in c.warnings for line in _prose(f"- warning: {_cell(w)}", indent="  ")]


def _prose(text: str, *, indent: str = "") -> list[str]:
    """A paragraph of summary.md as lines of at most ``PROSE_WIDTH`` characters (a longer word stays whole);
    ``indent`` starts every line after the first (a list item's)."""
    return textwrap.wrap(text, width=PROSE_WIDTH, subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=False)


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + "."


def _markdown_table(section: Section) -> list[str]:
    align = "|".join("---:" if i in section.right else "---" for i in range(len(section.header)))
    return [f"| {' | '.join(section.header)} |", f"|{align}|", *(f"| {' | '.join(row)} |" for row in section.rows)]


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|")
