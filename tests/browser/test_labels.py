"""Labelling runs through the real run page in Chromium: ``view DIR --annotate --annotator NAME`` on a sweep of the
shipped tasks, the form filled and saved, "save and next unlabelled" and the ``j`` key walking the filter, and the
calibration page's kappa computed from exactly the labels the clicks wrote. Screenshots under the test's tmp_path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import orjson
import pytest

from mpcbench_async.stats import weighted_kappa
from tests.browser.conftest import CLI, Watched, records, serve_viewer
from tests.conftest import REPO

ARS, SGR = "axis:answer_requirements_satisfaction", "axis:source_grounded_reasoning"


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped tasks × the shipped sim models, one trial, by the real ``mpcbench-async sweep``."""
    out = tmp_path_factory.mktemp("shipped") / "sweep"
    done = subprocess.run([sys.executable, "-c", CLI, "sweep", "--out", str(out), "--no-certificate", "--quiet"],
                          cwd=REPO, capture_output=True, check=False)
    assert 0 == done.returncode, done.stderr.decode()
    return out


def human_score(judge: int, n: int) -> int:
    """The scores the test's person gives: mostly the judge's (at least 1), now and then one or two points off."""
    return max(1, min(5, judge + (0, 0, 1, 0, -1, 2, 0)[n % 7]))


def run_key(url: str) -> str:
    return unquote(url).split("/run/", 1)[1].split("?", 1)[0].split("#", 1)[0]


def test_labelling_runs_through_the_page(watched: Watched, shipped: Path, tmp_path: Path):
    page: Any = watched.page
    runs = {r["key"]: r for r in records(shipped / "runs.jsonl")}
    judged = {j["run_key"]: j["judgement"]["scores"] for j in records(shipped / "judgements.jsonl")}
    every = sorted(runs)
    before = (shipped / "runs.jsonl").read_bytes()
    with serve_viewer(shipped, tmp_path, "--annotate", "--annotator", "Ada") as url:
        page.goto(f"{url}labels/next")
        labelled: dict[str, int] = {}
        for n in range(len(every) - 2):  # leave two runs unlabelled, for the j key below
            key = run_key(page.url)
            assert key not in labelled
            score = human_score(judged[key]["answer_requirements_satisfaction"]["score"], n)
            page.check(f'#label-form input[name="outcome"][value="{"correct" if score >= 4 else "wrong"}"]')
            page.check(f'#label-form input[name="{ARS}"][value="{score}"]')
            page.check(f'#label-form input[name="{SGR}"][value="3"]')
            for check in runs[key]["checks"]:
                page.check(f'#label-form input[name="check:{check["name"]}"][value="right"]')
            page.fill("#label-form textarea[name=reason]", f"run {n}: read the answer against the sources")
            if n == 0:
                page.screenshot(path=str(tmp_path / "label-form.png"), full_page=True)
            with page.expect_navigation():
                page.click("#label-save-next")
            labelled[key] = score
        # j opens the next unlabelled run of the filter: one of the two left, never a labelled one
        first_left = run_key(page.url)
        assert first_left not in labelled
        page.keyboard.press("j")
        page.wait_for_url(lambda u: "/run/" in u and run_key(u) != first_left)
        assert run_key(page.url) not in labelled
        shown_key = next(k for k in every if k in labelled)
        page.goto(f"{url}run/{shown_key}")
        page.screenshot(path=str(tmp_path / "labelled-run.png"), full_page=True)
        shown = page.eval_on_selector_all("#labels-latest tr[data-item]", "rows => rows.map(r => [r.dataset.item, "
                                          "r.querySelector('.label-value').textContent])")
        assert [ARS, str(labelled[shown_key])] in shown
        page.goto(f"{url}labels")
        page.screenshot(path=str(tmp_path / "calibration.png"), full_page=True)
        row = page.eval_on_selector(f'#calibration-judges tr[data-judge="sim/judge"][data-axis="{ARS[5:]}"]',
                                    "r => Array.from(r.querySelectorAll('td'), c => c.textContent)")
    lines = [orjson.loads(line) for line in (shipped / "labels.jsonl").read_bytes().splitlines()]
    assert {"Ada"} == {line["annotator"] for line in lines}
    assert labelled == {line["run_key"]: line["value"] for line in lines if line["item"] == ARS}
    assert before == (shipped / "runs.jsonl").read_bytes()
    keys = sorted(labelled)
    kappa = weighted_kappa([judged[k]["answer_requirements_satisfaction"]["score"] for k in keys],
                           [labelled[k] for k in keys])
    assert ["sim/judge", "ARS", str(len(labelled))] == row[:3]
    assert row[3].startswith(f"{kappa:.2f} [")
    (tmp_path / "kappa.txt").write_text(f"n={len(labelled)} weighted kappa={kappa:.4f} row={row}\n")
    assert [] == watched.errors
    assert [] == watched.foreign_requests(url)
