"""The viewer on a sweep that ran the three-level MPCBench: its table on the overview, every run, one transcript."""

from __future__ import annotations

from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from mpcbench_async.levels import generate_level, write_generated
from mpcbench_async.sweep import run_sweep
from mpcbench_async.view import make_app, open_index
from tests.conftest import REPO
from tests.sweep_options import sweep_options
from tests.view.dom import parse


async def _levels_sweep(tmp_path: Path) -> Path:
    generated = generate_level(3, 3, seed=11)
    write_generated(generated, tmp_path / "data")
    out = tmp_path / "out"
    result = await run_sweep(sweep_options(config=REPO / "model_config.json", prompts=REPO / "prompt_config.json",
                                          out=out, suites=["levels"], models=["sim/oracle-agent", "sim/lazy-agent"],
                                          levels_data=tmp_path / "data", handle_signals=False))
    assert result.outcome.ok == 6
    return out


async def test_the_overview_lists_the_levels_table_and_every_run_opens_its_transcript(tmp_path):
    """The overview's levels table has one row per model (level 3, the generated split); /levels lists the six
    runs; a run's page shows its outcome, each proposed candidate against the gold and the conversation with its
    tool calls; an unknown key is a 404."""
    out = await _levels_sweep(tmp_path)
    index = open_index(out)
    try:
        async with TestClient(TestServer(make_app(index))) as client:
            overview = parse(await (await client.get("/")).text())
            runs = parse(await (await client.get("/levels")).text())
            oracle = next(tr for tr in runs.one("table", id="levels-runs").all("tr", cls="levels-run")
                          if "sim/oracle-agent" in tr.text)
            run = parse(await (await client.get(f"/levels/{oracle.attrs['data-key']}")).text())
            missing = await client.get("/levels/levels-nope")
    finally:
        index.close()
    rows = overview.one("table", id="levels-table").one("tbody").all("tr")
    assert [(tr.attrs["data-level"], tr.attrs["data-model"]) for tr in rows] == [
        ("3", "sim/lazy-agent"), ("3", "sim/oracle-agent")]
    assert "6 runs" == runs.one(id="levels-count").text
    assert "F1 1.00, precision 1.00, recall 1.00, exact yes" in run.one(id="levels-outcome").text
    assert [c.attrs["data-match"] for c in run.one("table", id="levels-answer").all("tr", cls="candidate")] == [
        "hit", "hit", "hit"]
    names = {call.one(cls="tool-name").text for call in run.one(id="transcript").all(cls="tool-call")}
    assert {"get_current_time", "search_person", "list_rooms", "get_room_availability"} <= names
    assert missing.status == 404
