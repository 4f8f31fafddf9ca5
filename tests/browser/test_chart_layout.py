"""Chart labels in a real browser: never overlapping, never cut (issue 30 point 4), checked by bounding boxes.

The charts are rendered from long model names (a router's vendor/model@version names) into a page Chromium lays
out, and the viewer's own Overview is served for a sweep with such names in a narrow window; every label's box must
lie inside its SVG (and the window) and no two labels' boxes may intersect.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from mpcbench_async.report import Bar, bar_chart, heatmap
from tests.browser.conftest import Sweep, Watched, browser_missing, serve_viewer

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

NAMES = ["openrouter/anthropic/claude-3.5-sonnet-20241022", "openrouter/openai/gpt-4o-2024-08-06",
         "together/meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo", "sim/echo",
         "a-very-long-self-hosted-model-name-that-goes-on-and-on-beyond-forty-characters"]
FAMILIES = ["calendar_scheduling_with_constraints", "email_reply", "jira_ticket_triage_and_prioritisation"]


def boxes(watched: Watched, markup: str, selector: str) -> tuple[dict, list[dict]]:
    page = watched.page
    page.set_content(f"<!DOCTYPE html><html><body style='margin:0'>{markup}</body></html>")
    svg = page.locator("svg").bounding_box()
    labels = [page.locator(selector).nth(i).bounding_box() for i in range(page.locator(selector).count())]
    return svg, labels


def inside(box: dict, svg: dict) -> bool:
    return (box["x"] >= svg["x"] - 0.5 and box["y"] >= svg["y"] - 0.5
            and box["x"] + box["width"] <= svg["x"] + svg["width"] + 0.5
            and box["y"] + box["height"] <= svg["y"] + svg["height"] + 0.5)


def overlap(a: dict, b: dict) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


@pytest.mark.parametrize("names", [NAMES, NAMES[:2], ["m1", "m2", "m3"]])
def test_bar_labels_never_overlap_and_stay_in_the_chart(watched: Watched, names: list[str], tmp_path: Path):
    chart = bar_chart([Bar(n, 3.0, 2.5, 3.5) for n in names], title="ARS by agent model", axis_label="score",
                      domain=(0.0, 5.0))
    svg, labels = boxes(watched, chart, "text.bar-label")
    assert len(names) == len(labels)
    assert all(inside(b, svg) for b in labels), (svg, labels)
    assert not any(overlap(a, b) for i, a in enumerate(labels) for b in labels[i + 1:]), labels
    full = watched.page.locator("g.label title").all_text_contents()
    assert names == full  # the whole name on hover, however the label is cut
    watched.page.screenshot(path=tmp_path / "bars.png")


def test_heatmap_labels_are_never_cut(watched: Watched, tmp_path: Path):
    values = {(m, f): 3.0 for m in NAMES for f in FAMILIES}
    chart = heatmap(NAMES, FAMILIES, values, title="Mean ARS", domain=(0.0, 5.0), row_axis="agent model",
                    column_axis="task family")
    svg, rows = boxes(watched, chart, "text.row-label")
    columns = [watched.page.locator("text.column-label").nth(i).bounding_box() for i in range(len(FAMILIES))]
    assert all(inside(b, svg) for b in rows + columns), (svg, rows, columns)
    labels = rows + columns
    assert not any(overlap(a, b) for i, a in enumerate(labels) for b in labels[i + 1:])
    cells = [watched.page.locator("g.cell rect").nth(i).bounding_box() for i in range(len(NAMES) * len(FAMILIES))]
    assert not any(overlap(label, cell) for label in labels for cell in cells)  # no label under a cell
    watched.page.screenshot(path=tmp_path / "heatmap.png")


LONG = {"sim/lazy-agent": NAMES[2], "sim/oracle-agent": NAMES[4]}  # the fixture's agents, renamed


def test_the_overviews_charts_in_a_narrow_window_keep_their_labels_apart_and_in_view(watched: Watched, sweep: Sweep,
                                                                                    tmp_path: Path):
    """The real Overview of a sweep whose agent models have long names, in a 700 px wide window: each chart's labels
    lie inside their SVG and the window's width, none overlaps another, and each names its model in full on hover."""
    out = tmp_path / "long-names"
    shutil.copytree(sweep.out, out, ignore=shutil.ignore_patterns(".view", ".lock", "summary.*"))
    for name, field in (("runs.jsonl", "model"), ("judgements.jsonl", "agent_model")):
        lines = [orjson.loads(line) for line in (out / name).read_bytes().splitlines()]
        (out / name).write_bytes(b"".join(orjson.dumps({**r, field: LONG.get(r[field], r[field])}) + b"\n"
                                          for r in lines))
    page = watched.page
    page.set_viewport_size({"width": 700, "height": 900})
    with serve_viewer(out, tmp_path) as viewer:
        page.goto(viewer)
        charts = page.locator("svg")
        assert charts.count() >= 3  # two bar charts and the heatmap
        for i in range(charts.count()):
            chart = charts.nth(i)
            svg = chart.bounding_box()
            assert svg["x"] >= 0 and svg["x"] + svg["width"] <= 700 + 0.5, svg
            texts = chart.locator("text.bar-label, text.row-label, text.column-label")
            labels = [texts.nth(j).bounding_box() for j in range(texts.count())]
            assert labels
            assert all(inside(b, svg) for b in labels), (svg, labels)
            assert not any(overlap(a, b) for j, a in enumerate(labels) for b in labels[j + 1:]), labels
        hover = set(page.locator("svg g.label title").all_text_contents())
        assert set(LONG.values()) <= hover
        page.screenshot(path=tmp_path / "overview-narrow.png", full_page=True)
    assert [] == watched.errors
