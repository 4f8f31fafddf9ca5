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

from ..report import Bar, bar_chart, esc, fmt, heatmap, href, pct, table
from ..stats import Interval, Paired
from ..sweep import ModelSummary, Summary
from ._certificate import certificate_section
from ._index import SweepIndex
from ._levels import levels_section
from ._tariff import tariff_section

if TYPE_CHECKING:  # a run's page imports them (``SweepIndex.record``); the first page needs none of them
    from ..mpcbench import AgentRunRecord, JudgeRecord

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
    from ..stats import format_p

    return (_num(p.n) + _estimate(p.mean_diff, p.ci) + _num(f"{p.wins}/{p.losses}/{p.ties}")
            + _num(format_p(p.sign_p)))


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
    sort: str = ""  # a column of _SORTS ("": the sweep's order: model, family, task, trial)
    desc: bool = False
    q: str = ""  # text the final answer contains (any case)

    def order(self) -> str:
        default = "model, family, task, trial, key"
        if self.sort not in _SORTS:
            return default
        return f"{_SORTS[self.sort]} {'DESC' if self.desc else 'ASC'}, {default}"

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


# The runs list's sortable columns: the query parameter -> its SQL (whitelisted: never a user's text in SQL).
_SORTS = {"model": "model", "task": "task", "family": "family", "trial": "trial", "status": "status, infra_error",
          "error": "error", "ars": "ars", "sgr": "sgr", "checks": "checks_passed * 1.0 / NULLIF(checks_total, 0)",
          "pass": "passed"}
_RUN_HEADER = (("run", ""), ("model", "model"), ("task", "task"), ("family", "family"), ("trial", "trial"),
               ("status", "status"), ("error", "error"), ("ARS", "ars"), ("SGR", "sgr"), ("judges (ARS/SGR)", ""),
               ("checks", "checks"), ("pass", "pass"))

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
            f'<td class="error">{esc(row["error"] or "")}</td>{_num(fmt(row["ars"]))}{_num(fmt(row["sgr"]))}'
            f'<td class="scores">{esc(_scores_text(row))}</td>'
            f'{_num(checks)}<td>{passed}</td></tr>')


def _sort_header(query: RunsQuery, keep: dict[str, Any]) -> str:
    """The runs table's header: each sortable column a link (again: the other direction), the current one marked."""
    cells = []
    for label, key in _RUN_HEADER:
        if not key:
            cells.append(f"<th>{esc(label)}</th>")
            continue
        on = query.sort == key
        mark = (" ▼" if query.desc else " ▲") if on else ""
        link = href("/runs", **keep, sort=key, desc=1 if on and not query.desc else None)
        cells.append(f'<th data-sort="{key}"{" aria-sort" if on else ""}><a href="{link}">{esc(label)}{mark}</a></th>')
    return "<thead><tr>" + "".join(cells) + "</tr></thead>"


def runs_body(index: SweepIndex, query: RunsQuery) -> str:
    where, params = query.where()
    per_page = max(1, query.per_page)
    matches = index.answer_matches(where, params, query.q) if query.q else None
    total = index.count(where, params) if matches is None else len(matches)
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, query.page), pages)
    if matches is None:
        rows = index.runs(where, params, order=query.order(), limit=per_page, offset=(page - 1) * per_page)
    else:  # the matching runs in the chosen order, then this page of them
        found = [r for r in index.runs(where, params, order=query.order()) if r["key"] in matches]
        rows = found[(page - 1) * per_page:page * per_page]
    keep = {"model": query.model, "task": query.task, "family": query.family, "status": query.status,
            "q": query.q, "per_page": per_page if per_page != PER_PAGE else None}
    form = ('<form id="filters" method="get" action="/runs">'
            + _select("model", "model", index.distinct("model"), query.model)
            + _select("task", "task", index.distinct("task"), query.task)
            + _select("family", "family", index.distinct("family"), query.family)
            + _select("status", "status", list(_STATUS_FILTERS), query.status)
            + f'<label>answer contains <input type="search" name="q" value="{esc(query.q)}"></label>'
            + (f'<input type="hidden" name="sort" value="{esc(query.sort)}">' if query.sort in _SORTS else "")
            + ('<input type="hidden" name="desc" value="1">' if query.sort in _SORTS and query.desc else "")
            + (f'<input type="hidden" name="per_page" value="{per_page}">' if per_page != PER_PAGE else "")
            + '<button type="submit">filter</button></form>')
    keep |= {"sort": query.sort if query.sort in _SORTS else None, "desc": 1 if query.desc else None}
    prev = (f'<a id="prev-page" href="{href("/runs", **keep, page=page - 1)}">← previous</a>' if page > 1
            else '<a id="prev-page" class="disabled muted">← previous</a>')
    nxt = (f'<a id="next-page" href="{href("/runs", **keep, page=page + 1)}">next →</a>' if page < pages
           else '<a id="next-page" class="disabled muted">next →</a>')
    pager = f'<p class="pager">{prev} <span id="page-info">page {page} of {pages} ({total} runs)</span> {nxt}</p>'
    head = _sort_header(query, {k: v for k, v in keep.items() if k not in ("sort", "desc")})
    return form + pager + f'<table id="runs">{head}<tbody>{"".join(run_row(r) for r in rows)}</tbody></table>'



# -- one run -------------------------------------------------------------------------------------------------


FOLD_LINES, FOLD_CHARS = 20, 1500  # a longer text shows its first lines folded, with "show all"


def _pre(value: Any) -> str:
    """A text as preformatted; a long one (a 50 kB tool result) folded to its first lines, with "show all"."""
    text = value if isinstance(value, str) else msgspec.json.format(msgspec.json.encode(value)).decode()
    lines = text.count("\n") + 1
    if lines <= FOLD_LINES and len(text) <= FOLD_CHARS:
        return f"<pre>{esc(text)}</pre>"
    label = f"show all ({lines:,} lines, {len(text):,} characters)"
    return (f'<div class="fold"><pre class="foldable">{esc(text)}</pre>'
            f'<button type="button" class="show-all" data-label="{esc(label)}">{esc(label)}</button></div>')


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


def _outcome(row: sqlite3.Row, record: AgentRunRecord) -> str:
    """What a reader asks first: did it run, and if not, why (the error and its message, not below a transcript)."""
    status = status_text(row)
    error = (f'<p id="run-error" class="status-error"><b>{esc(record.error_class)}</b>: {esc(record.error_message)}'
             "</p>") if record.status == "error" else ""
    return f'<div id="outcome"><p>status <b class="status-{esc(row["status"])}">{esc(status)}</b></p>{error}</div>'


def run_details(row: sqlite3.Row, record: AgentRunRecord, judgements: Sequence[JudgeRecord], *,
                search: bool = False) -> str:
    """A run's outcome, judgements (scores), checks, then its transcript and timings (the run page and each report
    ``.run`` block): what matters first, the long transcript below it; ``search``: a box to search the transcript
    (the run page: one transcript on the page)."""
    judged = "".join(_judgement(j) for j in judgements) or '<p class="muted">No kept judgement.</p>'
    return (f'<p class="run-meta">model <b>{esc(row["model"])}</b> · task <b>{esc(row["task"])}</b> '
            f'({esc(row["family"])}) · trial {esc(row["trial"])} · {esc(status_text(row))}</p>'
            f'{_outcome(row, record)}<h2>Scores</h2><div id="judgements">{judged}</div>'
            f"<h2>Checks</h2>{checks_table(record)}<h2>Transcript</h2>{_search_box() if search else ''}"
            f"{transcript(record)}"
            f"<h2>Timings</h2>{_timings(record)}")


def _search_box() -> str:
    """Search within the transcript: the page's script marks every match (and unfolds the texts holding one)."""
    return ('<p id="transcript-tools"><label>search this transcript <input id="transcript-search" type="search">'
            '</label> <span id="search-count" class="muted"></span></p>')


def run_body(index: SweepIndex, key: str) -> str | None:
    row = index.run(key)
    record = index.record(row) if row is not None else None
    if row is None or record is None:
        return None
    return run_details(row, record, index.judgements(row), search=True)


# -- compare -------------------------------------------------------------------------------------------------


def compare_body(index: SweepIndex, a: str, b: str) -> str:
    """Two agent models on the same tasks: per-task means and deltas, then the paired difference per axis."""
    from ..stats import paired_by_task  # numpy: imported by the compare page only

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
            cells.append(_runs_link(a, task, fmt(mean_a)) + _runs_link(b, task, fmt(mean_b))
                         + f'<td class="num delta"><a href="{href("/runs", task=task)}">{fmt(delta)}</a></td>')
        rows.append(f'<tr data-task="{esc(task)}"><td><a href="{href("/runs", task=task)}">{esc(task)}</a></td>'
                    f'{"".join(cells)}</tr>')
    summary_rows = []
    for axis, label in AXES:  # the summary's statistic (stats.paired_by_task): pairs by task × trial, resamples tasks
        by_side = {side: {(t, trial): r[axis] for (m, t, trial), r in scores.items()
                          if m == side and r[axis] is not None} for side in (a, b)}
        p = paired_by_task(by_side[a], by_side[b])
        summary_rows.append(f'<tr data-axis="{axis}"><td>{esc(label)}</td>{_paired(p)}</tr>')
    paired = table(None, ["axis", "pairs", "mean Δ (b − a) [95% CI]", "wins/losses/ties", "sign-test p"],
                   summary_rows)
    return (picker + "<h2>Per task (mean over trials)</h2>" + table("paired", header, rows)
            + "<h2>Paired over the same task × trial (mean over judges per run; 95% CI resampling tasks)</h2>"
            + f'<div id="paired-summary">{paired}</div>')


def _runs_link(model: str, task: str, text: str) -> str:
    """A compare cell that opens the runs it averages: the model's trials of the task, in the runs list."""
    return f'<td class="num"><a href="{href("/runs", model=model, task=task)}">{esc(text)}</a></td>'


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
