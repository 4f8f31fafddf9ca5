"""``mpcbench-async view`` in headless Chromium: what a person sees and clicks, checked against the sweep's files.

Every test also asserts that the page logged no console error, threw no exception and requested nothing
but the viewer's own origin on 127.0.0.1, and saves a screenshot under its tmp_path.
"""

from __future__ import annotations

from pathlib import Path
from statistics import mean
from urllib.parse import quote

import pytest

from tests.browser.conftest import (
    AGENTS,
    INJECTED,
    JUDGES,
    REBOUND,
    TRIALS,
    Sweep,
    Watched,
    browser_missing,
    serve_viewer,
)
from tests.browser.dom import assert_leaderboard, assert_run, cells_by_header, run_ars

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def assert_clean(watched: Watched, viewer: str) -> None:
    assert [] == watched.errors
    assert [] == watched.foreign_requests(viewer)
    assert all(url.startswith("http://127.0.0.1:") for url in watched.requests)


def page_info(watched: Watched) -> str:
    return watched.page.locator("#page-info").inner_text().strip()


def row_keys(watched: Watched) -> list[str]:
    return watched.page.locator("table#runs tbody tr").evaluate_all("rows => rows.map(r => r.dataset.key)")


def test_overview_leaderboard_heatmap_and_tariff(watched: Watched, viewer: str, sweep: Sweep, tmp_path: Path):
    """The leaderboard has one row per agent model with summary.json's numbers; the heatmap labels both axes
    with the models and task families; the tariff section shows the tariff model's prefix accuracies."""
    page = watched.page
    assert 200 == page.goto(viewer).status
    assert page.title() and page.locator("nav a").count() >= 3
    assert_leaderboard(page, sweep)
    heatmap = page.locator("section#heatmap svg").text_content() or ""
    families = sorted({r["task_type"] for r in sweep.runs})
    assert all(name in heatmap for name in [*AGENTS, *families]), heatmap
    tariff = page.locator('section#tariff .tariff-report[data-model="sim/tariff"]')
    assert ["2", "4", "6", "8", "10"] == tariff.locator("table.prefix-accuracy td[data-digits]").evaluate_all(
        "cells => cells.map(c => c.dataset.digits)")
    page.screenshot(path=tmp_path / "overview.png", full_page=True)
    assert_clean(watched, viewer)


def test_runs_paging_next_prev_covers_every_kept_run_once(watched: Watched, viewer: str, sweep: Sweep,
                                                          tmp_path: Path):
    """5 per page: 16 runs are 4 pages; next walks them (5, 5, 5, 1 rows), prev walks back, and the pages
    together list every run of runs.jsonl exactly once, each row showing its record's model, task and trial."""
    page = watched.page
    page.goto(viewer + "runs?per_page=5")
    seen: list[list[str]] = []
    for number in range(1, 5):
        assert f"page {number} of 4 (16 runs)" == page_info(watched)
        seen.append(row_keys(watched))
        if number < 4:
            with page.expect_navigation():
                page.click("a#next-page")
    assert [5, 5, 5, 1] == [len(keys) for keys in seen]
    assert sorted(r["key"] for r in sweep.runs) == sorted(k for keys in seen for k in keys)
    assert page.locator("a#next-page").get_attribute("href") is None  # the last page has no next
    with page.expect_navigation():
        page.click("a#prev-page")
    assert ("page 3 of 4 (16 runs)", seen[2]) == (page_info(watched), row_keys(watched))
    table = page.locator("table#runs")
    for key in seen[2]:
        record, cells = sweep.run(key), cells_by_header(table, table.locator(f'tbody tr[data-key="{key}"]'))
        assert (key, record["model"], record["task_id"], record["task_type"], str(record["trial"]), "ok") == (
            cells["run"], cells["model"], cells["task"], cells["family"], cells["trial"], cells["status"])
    page.screenshot(path=tmp_path / "runs-page-3.png", full_page=True)
    assert_clean(watched, viewer)


def test_runs_filters_from_the_form(watched: Watched, viewer: str, sweep: Sweep, tmp_path: Path):
    """Choosing a model, then a family, in form#filters reloads the table with just those runs (paging kept)."""
    page = watched.page
    page.goto(viewer + "runs?per_page=5")
    model = "sim/oracle-agent"
    with page.expect_navigation():
        page.select_option('form#filters select[name="model"]', model)
    mine = [r for r in sweep.runs if r["model"] == model]
    assert f"page 1 of 2 ({len(mine)} runs)" == page_info(watched)
    assert set(row_keys(watched)) < {r["key"] for r in mine}
    with page.expect_navigation():
        page.select_option('form#filters select[name="family"]', "planning")
    planning = sorted(r["key"] for r in mine if r["task_type"] == "planning")
    assert (f"page 1 of 1 ({len(planning)} runs)", planning) == (page_info(watched), sorted(row_keys(watched)))
    assert len(planning) == 2 * TRIALS  # t0 and t3 are planning tasks
    page.screenshot(path=tmp_path / "runs-filtered.png", full_page=True)
    assert_clean(watched, viewer)


def test_run_page_shows_the_transcript_checks_and_judgements(watched: Watched, viewer: str, sweep: Sweep,
                                                             tmp_path: Path):
    """Clicking a run in the table opens its page: each tool call's name, arguments and result equal the
    run record's, then the final answer, the checks and every judge's scores and rationale."""
    page = watched.page
    record = max(sweep.runs, key=lambda r: (len(r["run"]["raw_tool_calls"]), len(r["checks"]), r["key"]))
    assert len(record["run"]["raw_tool_calls"]) >= 3 and record["checks"]
    page.goto(viewer + "runs?" + f"model={quote(record['model'], safe='')}")
    with page.expect_navigation():
        page.click(f'table#runs tbody tr[data-key="{record["key"]}"] a')
    assert page.url == viewer + f"run/{record['key']}"
    judgements = [j for j in sweep.judgements if j["run_key"] == record["key"]]
    assert len(JUDGES) == len(judgements)
    assert_run(page, record, judgements)
    timings = page.locator("#timings").inner_text()
    assert str(record["run"]["usage"]["total_tokens"]) in timings
    page.screenshot(path=tmp_path / "run.png", full_page=True)
    assert_clean(watched, viewer)


def test_compare_page_pairs_two_models_task_by_task(watched: Watched, viewer: str, sweep: Sweep, tmp_path: Path):
    """Picking two models shows one row per task with each model's mean ARS over trials (a run's ARS being
    the mean over its judges) and the difference b − a; the paired summary counts every task × trial."""
    page = watched.page
    page.goto(viewer + "compare")
    a, b = AGENTS
    page.select_option('form#pickers select[name="a"]', a)
    page.select_option('form#pickers select[name="b"]', b)
    with page.expect_navigation():
        page.click('form#pickers button[type="submit"]')
    table = page.locator("table#paired")
    tasks = sorted({r["task_id"] for r in sweep.runs})
    assert tasks == table.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.task)")
    for task in tasks:
        means = [mean(run_ars(sweep, r["key"]) for r in sweep.runs if r["model"] == m and r["task_id"] == task)
                 for m in (a, b)]
        cells = cells_by_header(table, table.locator(f'tbody tr[data-task="{task}"]'))
        assert [f"{means[0]:.2f}", f"{means[1]:.2f}", f"{means[1] - means[0]:.2f}"] == [
            cells[f"ARS {a}"], cells[f"ARS {b}"], cells["ARS Δ (b − a)"]]
    pairs = len(tasks) * TRIALS
    summary = page.locator("#paired-summary table")
    assert [str(pairs)] * 2 == [cells_by_header(summary, row)["pairs"] for row in summary.locator("tbody tr").all()]
    page.screenshot(path=tmp_path / "compare.png", full_page=True)
    assert_clean(watched, viewer)


def test_markup_in_model_output_shows_as_text(watched: Watched, viewer: str, sweep: Sweep, tmp_path: Path):
    """A prompt and an answer holding <script> and <img onerror> are shown literally: nothing runs or loads."""
    page = watched.page
    record = next(r for r in sweep.runs if r["model"] == "sim/lazy-agent" and r["task_id"] == "t1")
    assert INJECTED in record["run"]["final_answer"]
    page.goto(viewer + f"run/{record['key']}")
    assert INJECTED in page.locator("#final-answer").inner_text()
    assert INJECTED in page.locator('#transcript .message[data-role="user"]').inner_text()
    assert (None, 0) == (page.evaluate("window.injected"), page.locator("#transcript img, main script").count())
    page.screenshot(path=tmp_path / "escaped.png", full_page=True)
    assert_clean(watched, viewer)


def test_unknown_run_is_a_404_page_with_the_nav(watched: Watched, viewer: str):
    response = watched.page.goto(viewer + "run/run-0000000000000000")
    assert 404 == response.status
    assert "run-0000000000000000" in watched.page.locator("main").inner_text()
    assert watched.page.locator("nav a").count() >= 3
    assert [] == watched.foreign_requests(viewer)


def test_the_csp_blocks_inline_script_and_a_rebound_host_name_is_refused(watched: Watched, viewer: str):
    """The linked stylesheet and script work under the viewer's CSP, which blocks a script injected inline; the
    viewer reached under another name that resolves to 127.0.0.1 (DNS rebinding) answers 421 and no page."""
    page = watched.page
    page.goto(viewer + "runs")
    assert "rgb(34, 51, 68)" == page.evaluate("getComputedStyle(document.querySelector('nav')).backgroundColor")
    page.evaluate("() => { const s = document.createElement('script'); s.textContent = 'window.inlined = 1';"
                  " document.body.appendChild(s); }")
    assert page.evaluate("window.inlined") is None
    assert [e for e in watched.errors if "Content Security Policy" in e] == watched.errors != []
    rebound = viewer.replace("127.0.0.1", REBOUND)
    response = page.goto(rebound)
    assert 421 == response.status
    assert page.locator("body").inner_text().startswith("421 Misdirected Request")


def test_records_a_running_sweep_appends_appear_without_a_restart(watched: Watched, sweep: Sweep, tmp_path: Path):
    """A viewer on a sweep that is still writing: a run appended to runs.jsonl (its key in the experiment's list,
    as a sweep writes it) shows up in the open runs list, which reloads itself once the viewer's next index is
    ready; no restart, no click."""
    import shutil

    import orjson

    out = tmp_path / "live"
    shutil.copytree(sweep.out, out, ignore=shutil.ignore_patterns(".view", ".lock"))
    page = watched.page
    with serve_viewer(out, tmp_path) as viewer:
        page.goto(viewer + "runs")
        before = page_info(watched)
        first = orjson.loads((out / "runs.jsonl").read_bytes().splitlines()[0])
        with (out / "experiment_keys.txt").open("a") as keys:
            keys.write("run-f000000000000001\n")
        with (out / "runs.jsonl").open("ab") as runs:
            runs.write(orjson.dumps({**first, "key": "run-f000000000000001", "trial": 7}) + b"\n")
        page.locator('table#runs tr[data-key="run-f000000000000001"]').wait_for(timeout=30_000)
        after = page_info(watched)
        page.screenshot(path=tmp_path / "live.png", full_page=True)
    total = len(sweep.runs)
    assert (f"page 1 of 1 ({total} runs)", f"page 1 of 1 ({total + 1} runs)") == (before, after)
    assert [] == watched.errors


def test_long_texts_fold_and_the_transcript_search_marks_matches(watched: Watched, sweep: Sweep, tmp_path: Path):
    """A 60-line tool result shows folded, with "show all" (its box then as tall as its text); the search box marks
    every match in the transcript, unfolding the result that holds one, and counts them."""
    import shutil

    import orjson

    out = tmp_path / "fold"
    shutil.copytree(sweep.out, out, ignore=shutil.ignore_patterns(".view", ".lock"))
    record = next(r for r in sweep.runs if r["run"] and r["run"]["raw_tool_calls"])
    long_result = "\n".join(f"line {i}: zebra-{i}" if i % 20 == 0 else f"line {i}" for i in range(60))
    calls = [{**record["run"]["raw_tool_calls"][0], "result": long_result}, *record["run"]["raw_tool_calls"][1:]]
    newer = {**record, "run": {**record["run"], "raw_tool_calls": calls}}  # a newer record of the run: the kept one
    with (out / "runs.jsonl").open("ab") as runs:
        runs.write(orjson.dumps(newer) + b"\n")
    page = watched.page
    with serve_viewer(out, tmp_path) as viewer:
        page.goto(viewer + f"run/{record['key']}")
        fold = page.locator(".fold").first
        text = fold.locator("pre.foldable")
        folded = text.evaluate("e => [e.clientHeight, e.scrollHeight]")
        button = fold.locator("button.show-all")
        assert "show all (60 lines, " in button.inner_text()
        assert folded[0] < folded[1]  # cut to its first lines
        button.click()
        opened = text.evaluate("e => [e.clientHeight, e.scrollHeight]")
        assert opened[0] == opened[1] and "show less" == button.inner_text()
        button.click()  # folded again
        page.fill("#transcript-search", "ZEBRA")
        marks = page.locator("#transcript mark.hit")
        assert ["zebra"] * 3 == marks.all_inner_texts()
        assert "3 matches" == page.locator("#search-count").inner_text()
        assert "show less" == button.inner_text()  # the result holding the matches unfolded itself
        page.screenshot(path=tmp_path / "search.png", full_page=True)
        page.fill("#transcript-search", "")
        assert 0 == marks.count() and "" == page.locator("#search-count").inner_text()
    assert [] == watched.errors
