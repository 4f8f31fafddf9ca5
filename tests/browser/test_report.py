"""``mpcbench-async report DIR --html`` opened from file:// in headless Chromium: one offline, self-contained page.

The same checks as the viewer's: the leaderboard's numbers, the worst and best runs' transcripts equal to
their records, markup from model output shown as text, no console error, and no request but the file itself.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from statistics import mean

import pytest

from tests.browser.conftest import AGENTS, CLI, INJECTED, Sweep, Watched, browser_missing
from tests.browser.dom import AXES, assert_leaderboard, assert_run, run_ars

WORST, BEST = 8, 3  # sim/lazy-agent's 8 runs score below all of sim/oracle-agent's
MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


@pytest.fixture(scope="module")
def report(sweep: Sweep, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    proc = subprocess.run([sys.executable, "-c", CLI, "report", str(sweep.out), "--html", "--out", str(out),
                           "--worst", str(WORST), "--best", str(BEST)], capture_output=True, text=True, check=False)
    assert 0 == proc.returncode, proc.stderr
    return out


def rank(sweep: Sweep, key: str) -> tuple[float, float]:
    """What orders the worst and best runs: mean ARS over judges, then mean SGR."""
    sgr = mean(j["judgement"]["scores"][AXES[1]]["score"] for j in sweep.judgements if j["run_key"] == key)
    return run_ars(sweep, key), sgr


def test_report_from_file_shows_the_overview_and_the_worst_and_best_runs(watched: Watched, report: Path,
                                                                         sweep: Sweep, tmp_path: Path):
    """The leaderboard, heatmap and tariff section as in the viewer; --worst 8 / --best 3 blocks ordered by mean
    ARS then SGR over judges, the first of each (the best one with tool calls) equal to its records."""
    page = watched.page
    page.goto(report.as_uri())
    assert page.title()
    assert_leaderboard(page, sweep)
    assert all(name in (page.locator("section#heatmap svg").text_content() or "") for name in AGENTS)
    assert 1 == page.locator('section#tariff .tariff-report[data-model="sim/tariff"]').count()
    ranks = sorted(rank(sweep, r["key"]) for r in sweep.runs)
    worst, best = page.locator("section#worst .run"), page.locator("section#best .run")
    keys = "blocks => blocks.map(b => b.dataset.key)"
    shown_worst, shown_best = worst.evaluate_all(keys), best.evaluate_all(keys)
    assert ranks[:WORST] == [rank(sweep, k) for k in shown_worst]
    assert ranks[::-1][:BEST] == [rank(sweep, k) for k in shown_best]
    assert WORST + BEST == len(set(shown_worst + shown_best))
    for block, calls_tools in [(worst.first, False), (best.first, True)]:
        key = block.get_attribute("data-key")
        assert key is not None
        assert calls_tools == bool(sweep.run(key)["run"]["raw_tool_calls"])
        assert_run(block, sweep.run(key), [j for j in sweep.judgements if j["run_key"] == key])
    assert INJECTED in page.locator("section#worst").inner_text()  # every lazy run is among the worst 8
    assert page.evaluate("window.injected") is None
    page.screenshot(path=tmp_path / "report.png", full_page=True)
    assert [] == watched.errors
    assert [report.as_uri()] == watched.foreign_requests()  # the file itself, nothing else
