"""The viewer's three-level MPCBench pages: the table on the overview, every run, one run's transcript.

Read from the sweep's ``levels.jsonl`` (``sweep.kept_levels_records``: the current experiment's kept record per
unit) and ``levels_summary.json``, not from the runs index: a levels sweep has a few thousand records, read in
milliseconds. A transcript shows the conversation as the model saw it (the user prompt, each assistant turn with
its tool calls, each tool result) and the answer against the gold, candidate by candidate.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from ..levels import LevelsRecord
from ..report import esc, fmt, href, pct, table

__all__ = ["levels_run_body", "levels_runs_body", "levels_section"]


def _rows(out_dir: Path) -> list[dict[str, Any]]:
    path = out_dir / "levels_summary.json"
    if not path.is_file():
        return []
    try:
        return list(msgspec.json.decode(path.read_bytes()).get("rows", []))
    except (msgspec.DecodeError, AttributeError):
        return []


def levels_section(out_dir: Path, *, links: bool = True) -> str:
    """The overview's section: per level × model × split, F1 with its CI, EM, pass^k, the published cell."""
    rows = _rows(out_dir)
    if not rows:
        return ""

    def row(r: dict[str, Any]) -> str:
        ci = r.get("f1_ci")
        published = (f"{fmt(r['published_f1'])} / {pct(r['published_em'])}" if r.get("published_f1") is not None
                     else "–")
        cells = [str(r["level"]), esc(r["model"]), esc(r["split"]), str(r["instances"]), str(r["runs"]),
                 fmt(r["mean_f1"]) + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else ""), pct(r["em_rate"]),
                 esc(", ".join(f"{k} {fmt(v)}" for k, v in r.get("pass_k", {}).items())), published,
                 esc(r.get("supports_published") or "–")]
        return (f'<tr data-level="{r["level"]}" data-model="{esc(r["model"])}" data-split="{esc(r["split"])}">'
                + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")

    header = ["level", "model", "split", "instances", "runs", "mean F1 [95% CI]", "EM", "pass^k", "published F1 / EM",
              "published cell"]
    link = f'<p><a href="{href("/levels")}">Every levels run</a></p>' if links else ""
    return (f'<section id="levels"><h2>MPCBench levels</h2>{table("levels-table", header, map(row, rows))}'
            f"{link}</section>")


def levels_runs_body(out_dir: Path, *, model: str = "", level: str = "") -> str:
    """Every kept levels run (filtered by model and level), linked to its transcript."""
    from ..levels import LevelsRecord  # the levels runs pages only: not the overview's imports
    from ..sweep import kept_levels_records

    records = [r for r in kept_levels_records(out_dir, LevelsRecord)
               if (not model or r.model == model) and (not level or str(r.level) == level)]
    records.sort(key=lambda r: (r.level, r.split, r.instance_id, r.model, r.trial))

    def row(r: LevelsRecord) -> str:
        m = r.metrics
        cells = [f'<a href="{href(f"/levels/{r.key}")}">{esc(r.instance_id)}</a>', str(r.level), esc(r.split),
                 esc(r.model), str(r.trial), esc(r.status if r.status == "ok" else f"error: {r.error_class}"),
                 fmt(m.f1) if m else "–", ("yes" if m.exact_match else "no") if m else "–", esc(r.stop_reason or "–")]
        return (f'<tr class="levels-run" data-key="{esc(r.key)}" data-status="{esc(r.status)}">'
                + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")

    header = ["instance", "level", "split", "model", "trial", "status", "F1", "exact", "stopped"]
    return f'<p id="levels-count">{len(records)} runs</p>' + table("levels-runs", header, map(row, records))


def _pre(text: Any) -> str:
    return f"<pre>{esc(text)}</pre>"


def _turn(message: dict[str, Any]) -> str:
    role = str(message.get("role", ""))
    body = _pre(message["content"]) if message.get("content") else ""
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {})
        body += (f'<div class="tool-call"><span class="tool-name">{esc(fn.get("name"))}</span>'
                 f'<div class="tool-args">{_pre(fn.get("arguments"))}</div></div>')
    return f'<div class="message" data-role="{esc(role)}"><div class="role">{esc(role)}</div>{body}</div>'


def levels_run_body(out_dir: Path, key: str) -> str | None:
    """One run: how it ended, its answer against the gold, and its transcript; ``None`` for an unknown key."""
    from ..levels import LevelsRecord  # the levels runs pages only: not the overview's imports
    from ..sweep import kept_levels_records

    record = next((r for r in kept_levels_records(out_dir, LevelsRecord) if r.key == key), None)
    if record is None:
        return None
    m = record.metrics
    facts = (f'<p id="levels-outcome">{esc(record.instance_id)} · level {record.level} · {esc(record.split)} · '
             f"{esc(record.model)} · trial {record.trial} · {esc(record.status)}"
             + (f" ({esc(record.error_class)}: {esc(record.error_message)})" if record.status != "ok" else "")
             + (f" · F1 {fmt(m.f1)}, precision {fmt(m.precision)}, recall {fmt(m.recall)}, exact "
                f"{'yes' if m.exact_match else 'no'}" if m else "")
             + f" · stopped: {esc(record.stop_reason or '–')} after {record.turns} turn(s)</p>")
    gold = {tuple(g) for g in record.gold or []}
    pred = {tuple(p) for p in record.pred or []}
    answer = [f'<tr class="candidate" data-match="{"hit" if tuple(c) in gold else "miss"}">'
              f'<td>{esc(" · ".join(c))}</td><td>{"in gold" if tuple(c) in gold else "not in gold"}</td></tr>'
              for c in record.pred or []]
    answer += [f'<tr class="candidate" data-match="missed"><td>{esc(" · ".join(g))}</td><td>gold, not proposed</td>'
               f"</tr>" for g in record.gold or [] if tuple(g) not in pred]
    turns = "".join(_turn(message) for message in record.trace)
    return (facts + "<h2>Answer against the gold</h2>" + table("levels-answer", ["candidate", ""], answer)
            + f'<h2>Transcript</h2><div id="transcript">{turns}</div>')
