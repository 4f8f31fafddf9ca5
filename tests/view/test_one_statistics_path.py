"""One statistics path (issue 28 point 2): the same pair of agent models shows the same difference, interval and
p-value in the summary's Markdown, the viewer's Overview, its Compare page and the HTML report.

The Compare page used to resample task × trial pairs one by one, where the summary resamples tasks (trials of one
task move together): its intervals were too narrow, and its p-value printed ``0.0000`` where the terminal said
``< 0.001``. Every place now calls ``stats.paired_by_task`` and ``stats.format_p``.
"""

from __future__ import annotations

import re

from aiohttp.test_utils import TestClient, TestServer

from mpcbench_async.report import render_markdown
from mpcbench_async.stats import format_p, paired_by_task
from mpcbench_async.sweep import kept_runs, summarize
from mpcbench_async.view import make_app, open_index, render_report
from tests.view.dom import parse

NUMBER = re.compile(r"[-+]?\d+\.\d+")


def figures(*texts: str) -> list[float]:
    """The numbers shown (the difference, then the interval's ends), read back from text as a reader sees them."""
    return [float(x) for text in texts for x in NUMBER.findall(text)]


async def test_the_pair_shows_the_same_interval_and_p_everywhere(sweep_dir):
    summary = summarize(sweep_dir)
    [pair] = summary.paired
    a, b = pair.model_a, pair.model_b
    index = open_index(sweep_dir)
    try:
        async with TestClient(TestServer(make_app(index))) as client:
            overview = parse(await (await client.get("/")).text())
            compare = parse(await (await client.get(f"/compare?a={a}&b={b}")).text())
        report = parse(render_report(index))
    finally:
        index.close()
    markdown = render_markdown(summary).splitlines()
    scores = {(r.agent_model, r.task_id, r.trial): r.scores for r in kept_runs(sweep_dir) if r.status == "ok"}
    for i, axis in enumerate(("ars", "sgr")):
        paired = getattr(pair, axis)
        assert paired.ci is not None
        expected = [round(paired.mean_diff, 2), round(paired.ci.low, 2), round(paired.ci.high, 2)]
        p = format_p(paired.sign_p)
        # the summary's own figure is stats.paired_by_task over the task × trial cells both models scored
        cells = {m: {(t, trial): sum(s[i] for s in judged.values()) / len(judged)
                     for (model, t, trial), judged in scores.items() if model == m and judged} for m in (a, b)}
        again = paired_by_task(cells[a], cells[b])
        assert (paired.n, paired.ci) == (again.n, type(paired.ci)(low=round(again.ci.low, 4),
                                                                   high=round(again.ci.high, 4)))
        shown = {}
        for place, doc in (("overview", overview), ("report", report)):
            cells_shown = [td.text for td in doc.one("table", id="model-pairs").one("tr", data_axis=axis).all("td")]
            shown[place] = (figures(cells_shown[4]), cells_shown[6])
        compared = [td.text for td in compare.one(id="paired-summary").one("tr", data_axis=axis).all("td")]
        shown["compare page"] = (figures(compared[2]), compared[4])
        [line] = [row for row in markdown if row.startswith(f"| {a} | {b} | {axis.upper()} |")]
        columns = [c.strip() for c in line.strip("|").split("|")]
        shown["summary.md"] = (figures(columns[4], columns[5]), columns[9])
        assert {place: (expected, p) for place in shown} == shown
