"""``report --html``: one self-contained file with the overview and the worst and best runs' transcripts."""

from __future__ import annotations

import re

from mpcbench_async.sweep import kept_runs
from mpcbench_async.view import open_index, render_report, write_report
from mpcbench_async.view._pages import overview_body, run_details
from tests.view.conftest import AGENTS
from tests.view.dom import parse


def _ars(row) -> float:
    return sum(s[0] for s in row.scores.values()) / len(row.scores)


class TestReport:
    def test_the_overview_sections_and_charts(self, sweep_dir):
        doc = parse(render_report(open_index(sweep_dir)))
        rows = doc.one("table", id="leaderboard").one("tbody").all("tr")
        assert list(AGENTS) == [tr.attrs["data-model"] for tr in rows]
        assert [] == doc.one("table", id="leaderboard").all("a")  # no links to viewer pages in a shared file
        assert doc.one("section", id="heatmap").one("svg")
        assert "unknown" == doc.one("section", id="certificate").attrs["data-status"]  # as on the viewer's overview
        charts = doc.one(id="leaderboard-section").all("svg")
        assert 2 == len(charts)
        for chart in charts:
            assert ["0", "1", "2", "3", "4", "5"] == [g.one("text").text for g in chart.all("g", cls="tick")]
            assert list(AGENTS) == [t.text for t in chart.all("text", cls="bar-label")]

    def test_worst_and_best_runs_by_mean_ars(self, sweep_dir):
        index = open_index(sweep_dir)
        doc = parse(render_report(index, worst=3, best=2))
        judged = sorted((r for r in kept_runs(sweep_dir) if r.status == "ok"), key=lambda r: (_ars(r), r.key))
        worst = [r.attrs["data-key"] for r in doc.one("section", id="worst").all(cls="run")]
        best = [r.attrs["data-key"] for r in doc.one("section", id="best").all(cls="run")]
        assert [r.key for r in judged[:3]] == worst
        assert [r.key for r in sorted(judged, key=lambda r: (-_ars(r), r.key))[:2]] == best

    def test_a_run_block_is_the_run_pages_markup(self, sweep_dir):
        """The report embeds exactly what ``/run/KEY`` shows (the same render function)."""
        index = open_index(sweep_dir)
        text = render_report(index, worst=1, best=0)
        key = parse(text).one("section", id="worst").one(cls="run").attrs["data-key"]
        row = index.run(key)
        assert run_details(row, index.record(row), index.judgements(row)) in text
        assert overview_body(index, links=False) in text

    def test_no_reference_leaves_the_file(self, sweep_dir):
        """No http(s) reference in markup: the only one is the echoed link, escaped inside a transcript."""
        index = open_index(sweep_dir)
        text = render_report(index, worst=20, best=0)
        doc = parse(text)
        assert not any(e.attrs.get(a, "").startswith(("http:", "https:", "//"))
                       for e in doc.all() for a in ("src", "href", "action", "xmlns"))
        outside = re.sub(r"<pre>.*?</pre>", "", text, flags=re.S)
        assert [] == re.findall(r"https?://", outside)
        assert re.findall(r"https?://", text), "the echoed link is in some transcript"
        assert 1 == len(doc.all("script"))  # the page's own; the model's <script> is text

    def test_written_to_the_given_file(self, sweep_dir, tmp_path):
        out = tmp_path / "shared.html"
        write_report(open_index(sweep_dir), out, worst=2, best=2)
        doc = parse(out.read_text())
        assert (2, 2) == (len(doc.one(id="worst").all(cls="run")), len(doc.one(id="best").all(cls="run")))


class TestEmptySweep:
    def test_a_sweep_without_runs_still_gives_a_report(self, tmp_path):
        (tmp_path / "manifest.json").write_text('{"command": "x", "config_hash": "", "prompts_hash": "", '
                                                '"versions": {}, "started_at": "2026-11-23T00:00:00+00:00"}')
        doc = parse(render_report(open_index(tmp_path)))
        assert [] == doc.one("table", id="leaderboard").one("tbody").all("tr")
        assert "No judged run." == doc.one("section", id="worst").one("p").text
