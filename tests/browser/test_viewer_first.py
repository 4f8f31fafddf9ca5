"""The viewer shows what matters first (issue 28 point 3), in headless Chromium: the runs list's error and score
columns, sorting and search over answers; a run's outcome above its transcript; Compare's cells leading to their
runs; the Settings page from the manifest; and a live sweep's appended records, the second one through the
incremental index. Expected values come from the sweep's own files; layout from bounding boxes.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import quote

import orjson
import pytest

import mpcbench_async
from tests.browser.conftest import AGENTS, JUDGES, Sweep, Watched, browser_missing, serve_viewer
from tests.browser.dom import run_ars

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

ERROR_KEY = "run-e000000000000001"


def keys_on_page(watched: Watched) -> list[str]:
    return watched.page.locator("table#runs tbody tr").evaluate_all("rows => rows.map(r => r.dataset.key)")


def column(watched: Watched, name: str) -> list[str]:
    """The texts of the runs table's column headed ``name``, top to bottom."""
    headers = [h.strip() for h in watched.page.locator("table#runs thead th").all_inner_texts()]
    at = next(i for i, h in enumerate(headers) if h.rstrip(" ▲▼") == name)
    return [t.strip() for t in watched.page.locator(f"table#runs tbody tr td:nth-child({at + 1})").all_inner_texts()]


def with_an_errored_run(sweep: Sweep, out: Path) -> dict:
    """A copy of the sweep with one more run, ended by an error (its key listed as a sweep lists it)."""
    shutil.copytree(sweep.out, out, ignore=shutil.ignore_patterns(".view", ".lock"))
    first = sweep.runs[0]
    error = {**first, "key": ERROR_KEY, "trial": 5, "status": "error", "error_class": "ContentFilterError",
             "error_message": "the reply was filtered", "run": None, "checks": []}
    with (out / "experiment_keys.txt").open("a") as keys:
        keys.write(ERROR_KEY + "\n")
    with (out / "runs.jsonl").open("ab") as runs:
        runs.write(orjson.dumps(error) + b"\n")
    return error


def test_runs_list_error_and_score_columns_sort_and_search(watched: Watched, viewer: str, sweep: Sweep):
    """Clicking the ARS header sorts the runs by their ARS (again: the other way); the ARS column holds each run's
    mean over judges; a search for a word of some answers lists exactly the runs whose answer holds it."""
    page = watched.page
    page.goto(viewer + "runs")
    with page.expect_navigation():
        page.click('table#runs th[data-sort="ars"] a')
    shown = column(watched, "ARS")
    expected = sorted(run_ars(sweep, r["key"]) for r in sweep.runs)
    assert [f"{v:.2f}" for v in expected] == shown
    assert [""] * len(shown) == column(watched, "error")  # the fixture sweep has no error
    with page.expect_navigation():
        page.click('table#runs th[data-sort="ars"] a')
    assert [f"{v:.2f}" for v in reversed(expected)] == column(watched, "ARS")
    word = sweep.runs[0]["run"]["final_answer"].split()[0]
    page.fill('form#filters input[name="q"]', word.upper())
    with page.expect_navigation():
        page.press('form#filters input[name="q"]', "Enter")
    holding = sorted(r["key"] for r in sweep.runs if word.casefold() in r["run"]["final_answer"].casefold())
    assert holding and sorted(keys_on_page(watched)) == holding
    assert [] == watched.errors


def test_errored_run_shows_its_error_first_and_in_the_list(watched: Watched, sweep: Sweep, tmp_path: Path):
    """The error column names the class, sorting by it puts the errored run first (descending); its page opens
    with the status and the error's message inside the first screen, above the scores, checks and transcript."""
    with_an_errored_run(sweep, tmp_path / "errored")
    page = watched.page
    with serve_viewer(tmp_path / "errored", tmp_path) as viewer:
        page.goto(viewer + "runs?sort=error&desc=1")
        assert ERROR_KEY == keys_on_page(watched)[0]
        assert "ContentFilterError" == column(watched, "error")[0]
        with page.expect_navigation():
            page.click(f'table#runs tr[data-key="{ERROR_KEY}"] a')
        error = page.locator("#run-error")
        assert error.inner_text().startswith("ContentFilterError: the reply was filtered")
        tops = [page.locator(sel).first.bounding_box()["y"] for sel in
                ("#outcome", "#run-error", "#judgements", "#checks, h2:has-text('Checks')", "#transcript")]
        assert tops == sorted(tops)
        box = error.bounding_box()
        assert box["y"] + box["height"] <= page.viewport_size["height"]  # seen without scrolling
        page.screenshot(path=tmp_path / "errored-run.png", full_page=True)
    assert [] == watched.errors


def test_compare_cells_lead_to_their_runs(watched: Watched, viewer: str, sweep: Sweep):
    """A model's cell of a task on the Compare page opens the runs list of that model and task."""
    page = watched.page
    a, b = AGENTS
    page.goto(viewer + f"compare?a={quote(a, safe='')}&b={quote(b, safe='')}")
    task = sorted({r["task_id"] for r in sweep.runs})[0]
    with page.expect_navigation():
        page.locator(f'table#paired tbody tr[data-task="{task}"] td.num a').first.click()
    assert sorted(r["key"] for r in sweep.runs if r["model"] == a and r["task_id"] == task) == \
        sorted(keys_on_page(watched))
    assert [] == watched.errors


def test_settings_page_shows_the_manifest(watched: Watched, viewer: str, sweep: Sweep):
    """The nav's Settings link shows the models with their roles, the prompt digests, the project's version and
    the one invocation, as manifest.json holds them."""
    manifest = orjson.loads((sweep.out / "manifest.json").read_bytes())
    page = watched.page
    page.goto(viewer)
    with page.expect_navigation():
        page.click("#nav a:has-text('Settings')")
    roles = {m: page.locator(f'tr[data-model="{m}"] td').nth(1).inner_text() for m in (*AGENTS, *JUDGES)}
    assert {**{m: "agent" for m in AGENTS}, **{m: "judge" for m in JUDGES}} == roles
    digests = page.locator("table#prompt-digests tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.prompt, r.cells[1].innerText])")
    assert [*sorted(manifest["fingerprint"]["prompts"].items()), ["(file)", manifest["prompts_hash"]]] == \
        [tuple(d) if d[0] != "(file)" else d for d in digests]
    assert mpcbench_async.__version__ == page.locator('tr[data-package="mpcbench-async"] td').nth(1).inner_text()
    assert len(manifest["history"]) == page.locator("table#invocations tbody tr").count()
    assert [] == watched.errors


def test_a_live_sweeps_runs_appear_one_after_another(watched: Watched, sweep: Sweep, tmp_path: Path):
    """Two runs appended one after the other to a served sweep appear in the open runs list without a restart:
    the first through a full read, the second through the incremental index (only the appended line read)."""
    out = tmp_path / "live"
    shutil.copytree(sweep.out, out, ignore=shutil.ignore_patterns(".view", ".lock"))
    new = ["run-f000000000000001", "run-f000000000000002"]
    with (out / "experiment_keys.txt").open("a") as keys:  # a sweep lists its keys when it starts
        keys.write("".join(f"{key}\n" for key in new))
    page = watched.page
    with serve_viewer(out, tmp_path) as viewer:
        page.goto(viewer + "runs")
        for trial, key in enumerate(new, start=7):
            with (out / "runs.jsonl").open("ab") as runs:
                runs.write(orjson.dumps({**sweep.runs[0], "key": key, "trial": trial}) + b"\n")
            page.locator(f'table#runs tr[data-key="{key}"]').wait_for(timeout=30_000)
        info = page.locator("#page-info").inner_text().strip()
    assert f"page 1 of 1 ({len(sweep.runs) + 2} runs)" == info
    assert [] == watched.errors
