"""The viewer's pages as HTML bodies: overview, runs table, one run, compare — shared with the report.

Why one module of render functions: the live viewer and the single-file report
show the same leaderboard, heatmap, tariff section and transcripts, so both
call these (no twins). Ids and classes here are the DOM contract the browser
tests (tests/browser) rely on (``table#leaderboard``, ``.tool-call`` …): change
them together.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from ..stats import Interval, Paired
from ..sweep import ModelSummary, Summary
from ._certificate import certificate_section
from ._html import esc, fmt, href, pct, table
from ._index import SweepIndex
from ._levels import levels_section
from ._svg import Bar, bar_chart, heatmap
from ._tariff import tariff_section

if TYPE_CHECKING:  # a run's page imports them (``SweepIndex.record``); the first page needs none of them
    from ..sweep import AgentRunRecord, JudgeRecord

__all__ = ["PER_PAGE", "RunsQuery", "Summarized", "compare_body", "overview_body", "run_body", "run_details",
           "runs_body", "transcript"]

PER_PAGE = 50
AXES = (("ars", "answer requirements (ARS)"), ("sgr", "source-grounded reasoning (SGR)"))


def _num(value: Any) -> str:
    return f'<td class="num">{esc(value)}</td>'


# -- overview ------------------------------------------------------------------------------------------------


def _estimate(mean: float | None, ci: Interval | None, *, percent: bool = False) -> str:
    """A mean with its 95% interval, e.g. ``3.42 [3.10, 3.71]`` (no interval for fewer than two tasks)."""
    show = pct if percent else fmt
    shown = f' <span class="ci muted">[{show(ci.low)}, {show(ci.high)}]</span>' if ci is not None else ""
    return f'<td class="num">{show(mean)}{shown}</td>'


def leaderboard(summary: Summary, *, links: bool = True) -> str:
    """One row per agent model, every figure the summary's (``links``: the model names link to its runs)."""
    models = summary.models
    ks = sorted({p.k for m in models for p in m.stats.pass_hat_k})
    header = ["agent model", "ARS (0–5) [95% CI]", "SGR (0–5) [95% CI]", "check pass rate [95% CI]",
              *(f"pass^{k}" for k in ks), "tasks checked", "unverified", "runs", "errors", "infra errors",
              "tokens (kept)", "cost USD (kept)",
              "latency p50 / p95 s", "trial variance ARS / SGR"]
    rows = []
    for m in models:
        passes = {p.k: p.value for p in m.stats.pass_hat_k}
        rows.append(
            f'<tr data-model="{esc(m.model)}"><td>{_model_cell(m.model, links)}</td>'
            + _estimate(m.stats.ars.mean, m.stats.ars.ci) + _estimate(m.stats.sgr.mean, m.stats.sgr.ci)
            + _estimate(m.stats.check_rate.mean, m.stats.check_rate.ci, percent=True)
            + "".join(f'<td class="num pass-k" data-k="{k}">{pct(passes.get(k))}</td>' for k in ks)
            + _num(f"{m.tasks_checked} of {m.tasks}") + _num(m.unverified)
            + _num(m.runs) + _num(m.errors) + _num(m.infra_errors) + _num(m.kept.tokens)
            + _num(m.kept.cost_text()) + _num(f"{fmt(m.latency_p50_s)} / {fmt(m.latency_p95_s)}")
            + _num(f"{fmt(m.stats.trial_variance.ars)} / {fmt(m.stats.trial_variance.sgr)}") + "</tr>")
    return ('<section id="leaderboard-section"><h2>Leaderboard</h2><p class="muted">Per agent model, over tasks: '
            "judge scores (a run's score is the mean over its judges, a task's the mean over its trials) and the "
            "check pass rate, each with a 95% bootstrap interval over tasks; pass^k = chance that k trials of a "
            "checked task all pass (infrastructure errors are not trials, nor are unverified runs: no check applied, "
            "so the judge alone spoke and they never count as a pass); tasks checked = tasks with a verified trial; "
            "trial variance = mean over tasks of the variance "
            "of their trials' scores.</p>"
            + table("leaderboard", header, rows) + _score_chart(models) + "</section>")


def _model_cell(model: str, links: bool) -> str:
    return f'<a href="{href("/runs", model=model)}">{esc(model)}</a>' if links else esc(model)


def _score_chart(models: Sequence[ModelSummary]) -> str:
    charts = []
    for axis, label in AXES:
        estimates = [(m.model, getattr(m.stats, axis)) for m in models]
        bars = [Bar(name, e.mean, e.ci.low if e.ci else None, e.ci.high if e.ci else None) for name, e in estimates]
        charts.append(bar_chart(bars, title=f"{label} by agent model (95% CI)", axis_label="score (0–5)",
                                domain=(0.0, 5.0)))
    return '<div class="charts">' + "".join(charts) + "</div>"


def heatmap_section(summary: Summary) -> str:
    """Mean ARS per agent model × task family over the kept scored judgements (every judge's), from the summary's
    per-judge, per-task-type means weighted by their counts: the overview needs no index."""
    families = sorted({family for m in summary.models for j in m.judges for family in j.by_task_type})
    values: dict[tuple[str, str], float] = {}
    for m in summary.models:
        for family in families:
            cells = [j.by_task_type[family]["ars"] for j in m.judges if family in j.by_task_type]
            n = sum(c.n for c in cells if c.mean is not None)
            if n:
                values[(m.model, family)] = round(sum(c.n * c.mean for c in cells if c.mean is not None) / n, 2)
    svg = heatmap([m.model for m in summary.models], families, values,
                  title="Mean ARS (0–5) per agent model and task family", domain=(0.0, 5.0),
                  row_axis="agent model", column_axis="task family (task_type)")
    return f'<section id="heatmap"><h2>Model × task family</h2>{svg}</section>'


def _paired(p: Paired) -> str:
    return (_num(p.n) + _estimate(p.mean_diff, p.ci) + _num(f"{p.wins}/{p.losses}/{p.ties}")
            + _num(fmt(p.sign_p, 4)))


def _paired_tables(summary: Summary) -> str:
    """The summary's paired differences between agent models and agreement between judges, when there are some."""
    out = []
    if summary.paired:
        rows = [f'<tr data-a="{esc(p.model_a)}" data-b="{esc(p.model_b)}" data-axis="{axis}"><td>{esc(p.model_a)}'
                f"</td><td>{esc(p.model_b)}</td><td>{axis.upper()}</td>{_paired(getattr(p, axis))}</tr>"
                for p in summary.paired for axis, _ in AXES]
        out.append('<section id="paired-models"><h2>Paired differences (b − a, same task × trial)</h2>'
                   + table("model-pairs", ["a", "b", "axis", "pairs", "mean diff [95% CI]", "wins/losses/ties",
                                           "sign-test p"], rows) + "</section>")
    if summary.judge_agreement:
        rows = [f'<tr data-a="{esc(j.judge_a)}" data-b="{esc(j.judge_b)}" data-axis="{axis}"><td>{esc(j.judge_a)}'
                f"</td><td>{esc(j.judge_b)}</td><td>{axis.upper()}</td>{_num(j.n)}"
                f"{_num(fmt(getattr(j, axis).kappa, 3))}{_num(fmt(getattr(j, axis).spearman, 3))}</tr>"
                for j in summary.judge_agreement for axis, _ in AXES]
        spread = summary.judge_spread
        note = (f'<p class="muted">Spread (max − min across judges) over {spread.runs} runs: ARS mean '
                f"{fmt(spread.ars.mean)}, max {fmt(spread.ars.max)}; SGR mean {fmt(spread.sgr.mean)}, max "
                f"{fmt(spread.sgr.max)}.</p>") if spread is not None else ""
        out.append('<section id="judge-agreement"><h2>Judge agreement</h2>'
                   + table("agreement", ["judge a", "judge b", "axis", "runs", "weighted kappa", "Spearman"], rows)
                   + note + "</section>")
    return "".join(out)


def errors_section(summary: Summary) -> str:
    """Why units failed, as the summary groups them (class × model, count, an example, what to do); none: no
    section. Right after the counts: a failure is what a reader must see before any score."""
    if not summary.errors:
        return ""
    rows = [f'<tr data-error-class="{esc(e.error_class)}"><td>{esc(e.error_class)}</td>'
            f"<td>{esc(e.model)}</td>{_num(e.count)}{_num(e.retryable)}<td>{esc(e.example)}</td>"
            f"<td>{esc(e.hint)}</td></tr>" for e in summary.errors]
    return ('<section id="errors"><h2>Errors</h2>'
            + table("error-classes", ["error class", "model", "count", "infrastructure", "example (the provider's "
                                      "message)", "what to do"], rows) + "</section>")


class Summarized(Protocol):
    """What the overview is rendered from: a summary and its sweep's directory (an index, or one being built)."""

    @property
    def summary(self) -> Summary: ...

    @property
    def out_dir(self) -> Path: ...


def overview_body(sweep: Summarized, chapters: Mapping[str, str] | None = None, *, links: bool = True) -> str:
    """Counts, errors by class, leaderboard, validity certificate, heatmap, tariff section, paired and agreement tables
    (``links``: to viewer pages).
    All from the summary and the tariff reports: the overview is served before the runs index is ready."""
    s = sweep.summary
    intro = (f'<p id="counts">{s.runs} kept runs, {s.judgements} judgements, {s.tariff_cases} tariff cases; '
             f"{s.duplicates_ignored} duplicate records ignored, {s.stale_judgements} stale and "
             f"{s.orphan_judgements} orphan judgements, {s.other_experiments} records of earlier experiments.</p>")
    return (intro + errors_section(s) + leaderboard(s, links=links) + certificate_section(s) + heatmap_section(s)
            + tariff_section(sweep.out_dir, chapters) + levels_section(sweep.out_dir, links=links) + _paired_tables(s))


# -- runs ----------------------------------------------------------------------------------------------------


class RunsQuery(msgspec.Struct, kw_only=True):
    """The runs page's filters and page (every field optional)."""

    model: str = ""
    task: str = ""
    family: str = ""
    status: str = ""
    page: int = 1
    per_page: int = PER_PAGE

    def where(self) -> tuple[str, tuple[Any, ...]]:
        clauses, params = [], []
        for column in ("model", "task", "family"):
            value = getattr(self, column)
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        status = _STATUS_FILTERS.get(self.status)
        if status:
            clauses.append(status)
        return " AND ".join(clauses), tuple(params)


_STATUS_FILTERS = {"ok": "status = 'ok'", "error": "status = 'error' AND infra_error = 0",
                   "infra": "status = 'error' AND infra_error = 1", "passed": "passed = 1", "failed": "passed = 0",
                   "unverified": "status = 'ok' AND checks_total = 0"}


def status_text(row: sqlite3.Row) -> str:
    if row["status"] == "ok":
        return "ok"
    return "infra error" if row["infra_error"] else "error"


def _select(name: str, label: str, options: Sequence[str], chosen: str) -> str:
    opts = "".join(f'<option value="{esc(o)}"{" selected" if o == chosen else ""}>{esc(o or "all")}</option>'
                   for o in ["", *options])
    return f'<label>{esc(label)} <select name="{esc(name)}">{opts}</select></label>'


def _scores_text(row: sqlite3.Row) -> str:
    scores = msgspec.json.decode(row["scores"] or "{}")
    return "; ".join(f"{judge}: {fmt(s[0], 0)}/{fmt(s[1], 0)}" for judge, s in sorted(scores.items()))


def run_row(row: sqlite3.Row) -> str:
    checks = f"{row['checks_passed']}/{row['checks_total']}" if row["checks_total"] else "–"
    passed = {None: "–", 1: "pass", 0: "fail"}[row["passed"]]
    if row["status"] == "ok" and not row["checks_total"]:
        passed = "unverified"  # no check applied: the judge alone is no pass
    return (f'<tr data-key="{esc(row["key"])}"><td><a href="{href("/run/" + row["key"])}">{esc(row["key"])}</a></td>'
            f'<td>{esc(row["model"])}</td><td>{esc(row["task"])}</td><td>{esc(row["family"])}</td>'
            f'{_num(row["trial"])}<td class="status-{esc(row["status"])}">{esc(status_text(row))}</td>'
            f'{_num(fmt(row["ars"]))}{_num(fmt(row["sgr"]))}<td class="scores">{esc(_scores_text(row))}</td>'
            f'{_num(checks)}<td>{passed}</td></tr>')


def runs_body(index: SweepIndex, query: RunsQuery) -> str:
    where, params = query.where()
    total = index.count(where, params)
    per_page = max(1, query.per_page)
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, query.page), pages)
    rows = index.runs(where, params, limit=per_page, offset=(page - 1) * per_page)
    keep = {"model": query.model, "task": query.task, "family": query.family, "status": query.status,
            "per_page": per_page if per_page != PER_PAGE else None}
    form = ('<form id="filters" method="get" action="/runs">'
            + _select("model", "model", index.distinct("model"), query.model)
            + _select("task", "task", index.distinct("task"), query.task)
            + _select("family", "family", index.distinct("family"), query.family)
            + _select("status", "status", list(_STATUS_FILTERS), query.status)
            + (f'<input type="hidden" name="per_page" value="{per_page}">' if per_page != PER_PAGE else "")
            + '<button type="submit">filter</button></form>')
    prev = (f'<a id="prev-page" href="{href("/runs", **keep, page=page - 1)}">← previous</a>' if page > 1
            else '<a id="prev-page" class="disabled muted">← previous</a>')
    nxt = (f'<a id="next-page" href="{href("/runs", **keep, page=page + 1)}">next →</a>' if page < pages
           else '<a id="next-page" class="disabled muted">next →</a>')
    pager = f'<p class="pager">{prev} <span id="page-info">page {page} of {pages} ({total} runs)</span> {nxt}</p>'
    header = ["run", "model", "task", "family", "trial", "status", "ARS", "SGR", "judges (ARS/SGR)", "checks", "pass"]
    return form + pager + table("runs", header, [run_row(r) for r in rows])


# -- one run -------------------------------------------------------------------------------------------------


def _pre(value: Any) -> str:
    text = value if isinstance(value, str) else msgspec.json.format(msgspec.json.encode(value)).decode()
    return f"<pre>{esc(text)}</pre>"


def _message(role: str, body: str) -> str:
    return f'<div class="message" data-role="{role}"><div class="role">{role}</div>{body}</div>'


def transcript(record: AgentRunRecord) -> str:
    """The run as a conversation: the task prompt, each tool call with its arguments and result, the answer."""
    run = record.run
    if run is None:
        return (f'<div id="transcript"><p class="status-error">No transcript: the run ended in '
                f'{esc(record.error_class)}: {esc(record.error_message)}</p></div>')
    parts = [_message("user", _pre(run.user_prompt))]
    for i, call in enumerate(run.raw_tool_calls, start=1):
        flags = " (result cut to the size cap)" if call.truncated else ""
        flags += " (timed out)" if call.timed_out else ""
        parts.append(_message("assistant", f'<div class="tool-call" data-step="{i}"><span class="step muted">step '
                                           f'{i}</span> <span class="tool-name">{esc(call.tool_name)}</span>'
                                           f'<div class="tool-args"><span class="label muted">arguments</span>'
                                           f'{_pre(call.arguments)}</div><div class="tool-result"><span '
                                           f'class="label muted">result</span>{_pre(call.result)}'
                                           f'<span class="muted">{esc(flags)}</span></div></div>'))
    answer = f'<div id="final-answer">{_pre(run.final_answer)}</div>'
    if run.rationale:
        answer += f'<div class="rationale-agent"><b>rationale</b>{_pre(run.rationale)}</div>'
    parts.append(_message("assistant", answer))
    note = (f'<p class="muted">Stopped: {esc(run.stop_reason)} after {run.turns} turn(s); answer format '
            f"{esc(run.final_answer_format)}. The system prompt is the sweep's agent prompt (not stored per run).</p>")
    return f'<div id="transcript">{note}{"".join(parts)}</div>'


def checks_table(record: AgentRunRecord) -> str:
    rows = [f'<tr data-check="{esc(c.name)}"><td>{esc(c.name)}</td><td class="status-{esc(c.status)}">'
            f"{esc(c.status)}</td><td>{esc(c.detail)}</td></tr>" for c in record.checks]
    return table("checks", ["check", "status", "what it compared"], rows)


def _judgement(record: JudgeRecord) -> str:
    j = record.judgement
    head = f'<h3>{esc(record.judge_model)} <span class="muted">{esc(record.status)}</span></h3>'
    if j is None or j.scores is None:
        why = (j.problems if j is not None else None) or [record.error_message or "no scores"]
        return (f'<div class="judgement" data-judge="{esc(record.judge_model)}">{head}<p>'
                f'{esc(j.verdict if j else "error")}: {esc("; ".join(why))}</p></div>')
    s = j.scores
    return (f'<div class="judgement" data-judge="{esc(record.judge_model)}">{head}'
            f'<p>ARS <b class="score-ars">{s.answer_requirements_satisfaction.score}</b> · SGR '
            f'<b class="score-sgr">{s.source_grounded_reasoning.score}</b> · {j.attempts} attempt(s), '
            f"{j.usage.total_tokens} tokens, "
            f"{'cost unknown' if j.cost_usd is None else f'${j.cost_usd:.4f}'}</p>"
            f'<div class="rationale"><p><b>ARS:</b> {esc(s.answer_requirements_satisfaction.justification)}</p>'
            f'<p><b>SGR:</b> {esc(s.source_grounded_reasoning.justification)}</p></div></div>')


def _timings(record: AgentRunRecord) -> str:
    run = record.run
    rows = [("status", record.status + (f" ({record.error_class}: {record.error_message})" if record.error_class
                                        else "")),
            ("wall time s", fmt(record.finished_at - record.started_at, 3) if record.started_at else "–")]
    if run is not None:
        rows += [("run total s", fmt(run.timings.total_s, 3)), ("model s", fmt(run.timings.model_s, 3)),
                 ("tools s", fmt(run.timings.tools_s, 3)), ("turns", str(run.turns)),
                 ("tokens (prompt / completion / total)",
                  f"{run.usage.prompt_tokens} / {run.usage.completion_tokens} / {run.usage.total_tokens}"),
                 ("cost USD", "unknown" if run.cost_usd is None else f"{run.cost_usd:.6f}"),
                 ("tool calls", str(len(run.raw_tool_calls)))]
    rows.append(("retries", _retries(record)))
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    return f'<table id="timings"><tbody>{body}</tbody></table>'


def _retries(record: AgentRunRecord) -> str:
    return "retryable error" if record.retryable else "0 recorded (call-level retries are in calls.jsonl)"


def run_details(row: sqlite3.Row, record: AgentRunRecord, judgements: Sequence[JudgeRecord]) -> str:
    """A run's transcript, checks, judgements and timings (the run page and each report ``.run`` block)."""
    judged = "".join(_judgement(j) for j in judgements) or '<p class="muted">No kept judgement.</p>'
    return (f'<p class="run-meta">model <b>{esc(row["model"])}</b> · task <b>{esc(row["task"])}</b> '
            f'({esc(row["family"])}) · trial {esc(row["trial"])} · {esc(status_text(row))}</p>'
            f"<h2>Transcript</h2>{transcript(record)}<h2>Checks</h2>{checks_table(record)}"
            f'<h2>Judgements</h2><div id="judgements">{judged}</div><h2>Timings</h2>{_timings(record)}')


def run_body(index: SweepIndex, key: str) -> str | None:
    row = index.run(key)
    record = index.record(row) if row is not None else None
    if row is None or record is None:
        return None
    return run_details(row, record, index.judgements(row))


# -- compare -------------------------------------------------------------------------------------------------


def compare_body(index: SweepIndex, a: str, b: str) -> str:
    """Two agent models on the same tasks: per-task means and deltas, then the paired difference per axis."""
    from ..stats import paired_difference  # numpy: imported by the compare page only

    models = index.distinct("model")
    picker = ('<form id="pickers" method="get" action="/compare">' + _select("a", "model a", models, a)
              + _select("b", "model b", models, b) + '<button type="submit">compare</button></form>')
    if not a or not b:
        return picker + '<p class="muted">Pick two agent models.</p>'
    scores: dict[tuple[str, str, int], sqlite3.Row] = {}  # (model, task, trial) -> kept ok run
    by_task: dict[str, dict[str, list[sqlite3.Row]]] = {}
    for row in index.runs("model IN (?, ?) AND status = 'ok'", (a, b), order="task, trial"):
        scores[(row["model"], row["task"], row["trial"])] = row
        by_task.setdefault(row["task"], {}).setdefault(row["model"], []).append(row)
    header = ["task", f"ARS {a}", f"ARS {b}", "ARS Δ (b − a)", f"SGR {a}", f"SGR {b}", "SGR Δ (b − a)"]
    rows = []
    for task, runs in sorted(by_task.items()):
        cells = []
        for axis, _ in AXES:
            mean_a = _mean([r[axis] for r in runs.get(a, [])])
            mean_b = _mean([r[axis] for r in runs.get(b, [])])
            delta = None if mean_a is None or mean_b is None else mean_b - mean_a
            cells.append(_num(fmt(mean_a)) + _num(fmt(mean_b)) + f'<td class="num delta">{fmt(delta)}</td>')
        rows.append(f'<tr data-task="{esc(task)}"><td>{esc(task)}</td>{"".join(cells)}</tr>')
    summary_rows = []
    for axis, label in AXES:
        pairs = [(r[axis], scores[(b, t, trial)][axis]) for (m, t, trial), r in sorted(scores.items())
                 if m == a and (b, t, trial) in scores and r[axis] is not None
                 and scores[(b, t, trial)][axis] is not None]
        p = paired_difference([x for x, _ in pairs], [y for _, y in pairs])
        summary_rows.append(f'<tr data-axis="{axis}"><td>{esc(label)}</td>{_paired(p)}</tr>')
    paired = table(None, ["axis", "pairs", "mean Δ (b − a) [95% CI]", "wins/losses/ties", "sign-test p"],
                   summary_rows)
    return (picker + "<h2>Per task (mean over trials)</h2>" + table("paired", header, rows)
            + "<h2>Paired over the same task × trial (mean over judges per run)</h2>"
            + f'<div id="paired-summary">{paired}</div>')


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
