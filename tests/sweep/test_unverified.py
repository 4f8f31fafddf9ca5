"""Issue 26 point 2: a run no check applied to is ``unverified`` — never a pass, whatever the judge says — in
pass^k, the summary table, summary.md, the statistics, the per-run table and the viewer's leaderboard."""

from __future__ import annotations

from mpcbench_async.report import render_markdown, render_table
from mpcbench_async.sweep import kept_runs, summarize
from mpcbench_async.view._pages import leaderboard

from .summary_lines import judgement, run, write


def _sweep(tmp_path):
    """Model m: t1 checked and passing (2 trials), t2 and t3 with no applicable check and a judge ARS of 5, t4
    checked and failing. Model n: only unverified runs."""
    runs = [run("r1a", task="t1", trial=0, checks="p"), run("r1b", task="t1", trial=1, checks="pn"),
            run("r2", task="t2", checks="nn"), run("r3", task="t3", checks=""),
            run("r4", task="t4", checks="pf"), run("r5", model="n", task="t1", checks="n")]
    judges = [judgement(f"j-{r['key']}", r["key"], ars=5, sgr=5, model=r["model"]) for r in runs]
    write(tmp_path / "runs.jsonl", *runs)
    write(tmp_path / "judgements.jsonl", *judges)
    return summarize(tmp_path)


def test_a_judge_alone_never_makes_a_pass(tmp_path):
    """m: 2 of its 4 tasks are checked, pass^1 = 1/2 over those two (t1 passes, t4 fails) — with the old fallback
    to ARS ≥ 4 it was 3/4; its 2 unverified runs are counted apart. n has no checked task: no pass^k at all."""
    m, n = _sweep(tmp_path).models
    assert ("m", 4, 2, 2, 0.5, 1) == (m.model, m.tasks, m.tasks_checked, m.unverified, m.pass_at_k, m.k)
    assert [(1, 2, 0.5), (2, 1, 1.0)] == [(p.k, p.tasks, p.value) for p in m.stats.pass_hat_k]
    assert ("n", 1, 0, 1, None, 0, []) == (n.model, n.tasks, n.tasks_checked, n.unverified, n.pass_at_k, n.k,
                                           n.stats.pass_hat_k)


def test_the_per_run_table_marks_unverified_runs(tmp_path):
    """A row of an unverified run has ``passed`` None and ``unverified`` set; a checked run's is False."""
    _sweep(tmp_path)
    rows = {row.key: row for row in kept_runs(tmp_path)}
    assert (None, True) == (rows["r2"].passed, rows["r2"].unverified)
    assert (True, False) == (rows["r1b"].passed, rows["r1b"].unverified)
    assert (False, False) == (rows["r4"].passed, rows["r4"].unverified)


def test_the_tables_show_tasks_checked_and_unverified_runs(tmp_path):
    """The terminal table has ``checked`` (2/4) and ``unver`` (2) columns; summary.md says ``2 of 4`` and the
    leaderboard lists both, and each legend says an unverified run never counts as a pass."""
    summary = _sweep(tmp_path)
    table = render_table(summary)
    header, _, m_row, n_row = table.splitlines()[:4]
    assert header.split()[6:10] == ["pass^k", "checked", "unver", "err"]
    assert m_row.split()[8:13] == ["75%", "50%", "k=1", "2/4", "2"]
    assert n_row.split()[8:12] == ["–", "–", "0/1", "1"]
    assert "they never count as a pass" in " ".join(table.split())
    markdown = render_markdown(summary)
    assert "| pass^k | tasks checked | unverified |" in markdown
    assert "| 50% (k=1) | 2 of 4 | 2 |" in markdown
    board = leaderboard(summary)
    assert '<td class="num">2 of 4</td><td class="num">2</td>' in board
    assert "never count as a pass" in board
