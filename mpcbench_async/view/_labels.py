"""People's labels in the viewer: the labels block of a run page, saving a label, the next unlabelled run and
the calibration page (``/labels``). Reading and writing ``labels.jsonl`` is the ``labels`` package's.

Writing is off unless the viewer was started with ``--annotate --annotator NAME``: without it the block only
shows the labels there are, and a POST is refused (403). With it, ``POST /run/KEY/labels`` appends the form's
labels (each item whose value, person or reason changed) with the annotator's name and the time.

Why the request checks (CSRF): the server is on loopback and refuses foreign ``Host`` names (DNS rebinding),
but any web page the person has open may still make their browser send a form POST to 127.0.0.1. A POST is
therefore accepted only when its ``Origin`` is this viewer's own (or, with no ``Origin`` or a ``null`` one — what
browsers send for a form POST under the viewer's ``Referrer-Policy: no-referrer`` — when the browser says
``Sec-Fetch-Site: same-origin``) and it carries the token put into this start's forms (random per start, so a
page elsewhere cannot know it). The page's script (``labels.js``, a file of the viewer's origin as the CSP
requires) adds one shortcut: ``j`` or ``n`` opens the next unlabelled run in the current filter.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import sqlite3
from collections.abc import Awaitable, Callable, Mapping
from importlib.resources import files
from typing import Any

import msgspec
from aiohttp import web

from ..labels import (
    AXES,
    CHECK_VALUES,
    LABELS,
    OUTCOMES,
    REASON_MAX,
    SHORT,
    Calibration,
    Label,
    LabelledRun,
    append_labels,
    calibrate,
    label_problem,
    now_iso,
    read_labels,
)
from ..report import esc, href, table
from ._index import SweepIndex
from ._pages import _STATUS_FILTERS as STATUSES
from ._pages import RunsQuery
from ._pages import _select as select

__all__ = ["LABELS_SCRIPT_PATH", "enable_labels", "labels_block"]

LABELS_SCRIPT_PATH = "/static/labels.js"
FILTERS = ("model", "task", "family", "status")
_IndexOf = Callable[[web.Request], Awaitable["SweepIndex | web.Response"]]


class Annotating(msgspec.Struct, frozen=True):
    """Who labels in this viewer, and this start's form token."""

    annotator: str
    token: str


ANNOTATING_KEY: web.AppKey[Annotating | None] = web.AppKey("annotating", object)  # type: ignore[arg-type]
INDEX_OF_KEY: web.AppKey[_IndexOf] = web.AppKey("index_of", object)  # type: ignore[arg-type]


def enable_labels(app: web.Application, index_of: _IndexOf, page: Callable[[str, str], str],
                  annotator: str | None) -> None:
    """Add the labels routes to the viewer's ``app`` (``index_of``: the server's wait for its index; ``page``: its
    page shell); writing only with an ``annotator``."""
    app[ANNOTATING_KEY] = Annotating(annotator=annotator, token=secrets.token_urlsafe(32)) if annotator else None
    app[INDEX_OF_KEY] = index_of
    script = (files(__package__) / "labels.js").read_text(encoding="utf-8")

    async def serve_script(_request: web.Request) -> web.Response:
        return web.Response(text=script, content_type="text/javascript", charset="utf-8",
                            headers={"Cache-Control": "no-cache"})

    async def calibration(request: web.Request) -> web.Response:
        index = await index_of(request)
        if isinstance(index, web.Response):
            return index
        body = await asyncio.to_thread(_calibration_body, index, request.query)
        return web.Response(text=page("Labels and calibration", body), content_type="text/html", charset="utf-8",
                            headers={"Cache-Control": "no-store"})

    app.router.add_post("/run/{key}/labels", _save)
    app.router.add_get("/labels/next", _next)
    app.router.add_get("/labels", calibration)
    app.router.add_get(LABELS_SCRIPT_PATH, serve_script)


def _filters(query: Mapping[str, str]) -> dict[str, str]:
    return {name: query.get(name, "") for name in FILTERS if query.get(name, "")}


def labels_block(app: web.Application, index: SweepIndex, row: sqlite3.Row, query: Mapping[str, str]) -> str:
    """The run page's labels section: the latest labels of the run and, when annotating, the form."""
    record = index.record(row)
    checks = {c.name: c.status for c in record.checks} if record is not None else {}
    judged: dict[str, list[Any]] = msgspec.json.decode(row["scores"] or "{}")
    latest = read_labels(index.out_dir).by_run().get(row["key"], {})
    annotating = app[ANNOTATING_KEY]
    filters = _filters(query)
    rows = [f'<tr data-item="{esc(item)}"><td>{esc(item)}</td><td class="label-value">{esc(label.value)}</td>'
            f"<td>{esc(label.annotator)}</td><td>{esc(label.at)}</td><td>{esc(label.reason)}</td></tr>"
            for item, label in sorted(latest.items())]
    shown = (table("labels-latest", ["item", "label", "by", "at", "reason"], rows) if rows
             else '<p class="muted" id="labels-none">No label yet.</p>')
    nxt = (f'<p><a id="labels-next" href="{href("/labels/next", after=row["key"], **filters)}">next unlabelled run'
           f' →</a> · <a href="/labels">calibration</a></p>')
    if annotating is None:
        return (f'<section id="labels"><h2>Human labels</h2>{shown}<p class="muted">Read-only: start the viewer with '
                f"--annotate --annotator NAME to label runs.</p>{nxt}</section>")

    def radios(item: str, values: tuple[Any, ...]) -> str:
        current = latest[item].value if item in latest else None
        return "".join(f'<label><input type="radio" name="{esc(item)}" value="{esc(v)}"'
                       f'{" checked" if v == current else ""}> {esc(v)}</label> ' for v in values)

    fields = [f'<fieldset data-item="outcome"><legend>outcome</legend>{radios("outcome", OUTCOMES)}</fieldset>']
    for column, axis in enumerate(AXES):
        scores = "; ".join(f"{judge} {s[column]:g}" for judge, s in sorted(judged.items()) if s[column] is not None)
        fields.append(f'<fieldset data-item="axis:{axis}"><legend>{esc(axis)} (1–5; judges: {esc(scores or "–")})'
                      f"</legend>{radios(f'axis:{axis}', (1, 2, 3, 4, 5))}</fieldset>")
    for name, status in checks.items():
        fields.append(f'<fieldset data-item="check:{esc(name)}"><legend>check {esc(name)} said '
                      f"{esc(status)}: is it</legend>{radios(f'check:{name}', CHECK_VALUES)}</fieldset>")
    hidden = "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in filters.items())
    form = (f'<form id="label-form" method="post" action="{href("/run/" + row["key"] + "/labels")}">'
            f'<input type="hidden" name="token" value="{esc(annotating.token)}">{hidden}{"".join(fields)}'
            f'<p><label>reason <textarea name="reason" rows="3" cols="80" maxlength="{REASON_MAX}"></textarea>'
            '</label></p><p><button type="submit" name="then" value="stay">save</button> '
            '<button type="submit" name="then" value="next" id="label-save-next">save and next unlabelled</button>'
            "</p></form>")
    return (f'<section id="labels"><h2>Human labels</h2>{shown}<p class="muted">Labelling as '
            f"<b>{esc(annotating.annotator)}</b>; each save appends to {esc(LABELS)} (the sweep's records are never "
            f"changed). Key j or n: the next unlabelled run.</p>{form}{nxt}</section>"
            f'<script src="{LABELS_SCRIPT_PATH}"></script>')  # only here: a read-only page's scripts stay as they were


def _refused(status: int, why: str) -> web.Response:
    return web.Response(text=f"{status}: {why}\n", status=status, content_type="text/plain",
                        headers={"Cache-Control": "no-store"})


def _same_origin(request: web.Request) -> bool:
    """The POST comes from this viewer's own page: its ``Origin``, or — when that is absent or ``null``, as browsers
    send it under the viewer's ``Referrer-Policy: no-referrer`` — the browser's ``Sec-Fetch-Site: same-origin``."""
    origin = request.headers.get("Origin")
    if origin is None or origin == "null":
        return request.headers.get("Sec-Fetch-Site") == "same-origin"
    return origin == f"{request.scheme}://{request.host}"


async def _save(request: web.Request) -> web.StreamResponse:
    annotating = request.app[ANNOTATING_KEY]
    if annotating is None:
        return _refused(403, "labels are read-only in this viewer: start it with --annotate --annotator NAME")
    if not _same_origin(request):
        return _refused(403, "a label must be sent from this viewer's own page (Origin or Sec-Fetch-Site differs)")
    form = await request.post()
    token = form.get("token")
    if not isinstance(token, str) or not hmac.compare_digest(token.encode(), annotating.token.encode()):
        return _refused(403, "this form is not from this viewer's current start: reload the run page")
    index = await request.app[INDEX_OF_KEY](request)
    if isinstance(index, web.Response):
        return index
    key = request.match_info["key"]
    row = index.run(key)
    record = index.record(row) if row is not None else None
    if row is None or record is None:
        return _refused(404, f"no kept run with key {key} in this sweep")
    checks = {f"check:{c.name}" for c in record.checks}
    reason = str(form.get("reason", "")).strip()
    if len(reason) > REASON_MAX:
        return _refused(400, f"reason: at most {REASON_MAX} characters")
    labels, at = [], now_iso()
    latest = (await asyncio.to_thread(read_labels, index.out_dir)).by_run().get(key, {})
    for item, raw in form.items():
        if item in ("token", "reason", "then", *FILTERS) or not isinstance(raw, str) or not raw:
            continue
        if item.startswith("check:") and item not in checks:
            return _refused(400, f"{item}: this run has no such check")
        value: str | int = int(raw) if item.startswith("axis:") and raw.isdigit() else raw
        if (problem := label_problem(item, value)) is not None:
            return _refused(400, problem)
        before = latest.get(item)
        if before is None or (before.value, before.annotator, before.reason) != (value, annotating.annotator, reason):
            labels.append(Label(run_key=key, item=item, value=value, annotator=annotating.annotator, at=at,
                                reason=reason))
    if not labels and not latest:
        return _refused(400, "choose at least one label (outcome, a score or a check)")
    await asyncio.to_thread(append_labels, index.out_dir, labels)
    filters = _filters({k: v for k, v in form.items() if isinstance(v, str)})
    if form.get("then") == "next":
        raise web.HTTPSeeOther(_unescaped(href("/labels/next", after=key, **filters)))
    raise web.HTTPSeeOther(_unescaped(href("/run/" + key, **filters)) + "#labels")


def _unescaped(link: str) -> str:
    """``href``'s link as a Location header (it escapes for HTML attributes)."""
    return link.replace("&amp;", "&")


async def _next(request: web.Request) -> web.StreamResponse:
    """The next run after ``after``, in the runs page's order and filter, with no label yet (wrapping around)."""
    index = await request.app[INDEX_OF_KEY](request)
    if isinstance(index, web.Response):
        return index
    filters = _filters(request.query)
    where, params = RunsQuery(model=filters.get("model", ""), task=filters.get("task", ""),
                              family=filters.get("family", ""), status=filters.get("status", "")).where()
    keys = [row["key"] for row in index.runs(where, params)]
    labelled = (await asyncio.to_thread(read_labels, index.out_dir)).by_run()
    after = request.query.get("after", "")
    start = keys.index(after) + 1 if after in keys else 0
    for key in keys[start:] + keys[:start]:
        if key not in labelled:
            raise web.HTTPSeeOther(_unescaped(href("/run/" + key, **filters)) + "#labels")
    raise web.HTTPSeeOther(_unescaped(href("/labels", done=1, **filters)))


class _Kept:
    """The index's kept run keys, as a container (one lookup per labelled run, not a set of every key)."""

    def __init__(self, index: SweepIndex) -> None:
        self.index = index

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.index.run(key) is not None


def _calibration_body(index: SweepIndex, query: Mapping[str, str]) -> str:
    labels = read_labels(index.out_dir)
    runs = []
    for key in sorted(labels.by_run()):
        row = index.run(key)
        if row is not None:
            passed = None if row["passed"] is None else bool(row["passed"])
            runs.append(LabelledRun(key=key, passed=passed, scores=msgspec.json.decode(row["scores"] or "{}")))
    done = ('<p id="labels-done">Every run in this filter has a label.</p>' if query.get("done") else "")
    choices = {name: index.distinct(name) for name in FILTERS[:3]} | {"status": list(STATUSES)}
    start = ('<form id="labels-start" method="get" action="/labels/next">'
             + "".join(select(name, name, choices[name], query.get(name, "")) for name in FILTERS)
             + '<button type="submit">label the next unlabelled run</button></form>')
    return done + start + calibration_html(calibrate(runs, labels, _Kept(index)))


def _value(value: float | None, ci: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" + ("" if ci is None else f' <span class="muted">[{ci.low:.2f}, {ci.high:.2f}]</span>')


def calibration_html(c: Calibration) -> str:
    """The judges' and checks' agreement with people, as the /labels page shows it."""
    about = (f'<p id="labels-counts">{c.labelled_runs} labelled run(s), {c.label_lines} label line(s) in '
             f"{esc(LABELS)} (the latest per run and item counts); skipped: {c.torn_lines} torn and "
             f"{c.foreign_lines} foreign line(s), and {c.orphan_labels} label(s) of runs this sweep does not keep. "
             "Intervals: 95% bootstrap over the labelled runs.</p>")
    judges = table("calibration-judges", ["judge", "axis", "n", "weighted κ", "Spearman ρ", "within 1 point"], [
        f'<tr data-judge="{esc(a.judge)}" data-axis="{esc(a.axis)}"><td>{esc(a.judge)}</td><td>{SHORT[a.axis]}</td>'
        f'<td class="num">{a.n}</td><td class="num">{_value(a.kappa, a.kappa_ci)}</td>'
        f'<td class="num">{_value(a.spearman, a.spearman_ci)}</td>'
        f'<td class="num">{_value(a.within_one, a.within_one_ci)}</td></tr>' for a in c.judges])
    shares = table("calibration-checks", ["agreement with people", "n", "share"], [
        f'<tr data-what="{esc(s.what)}"><td>{esc(s.what)}</td><td class="num">{s.n}</td>'
        f'<td class="num">{_value(s.share, s.ci)}</td></tr>' for s in [*c.checks, *([c.outcome] if c.outcome else [])]])
    warnings = "".join(f"<li>{esc(w)}</li>" for w in c.warnings)
    return (about + "<h2>Judges against people</h2>" + judges + "<h2>Checks against people</h2>" + shares
            + (f'<h2>Warnings</h2><ul id="labels-warnings">{warnings}</ul>' if warnings else ""))
