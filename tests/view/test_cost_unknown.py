"""The viewer shows an unknown price as unknown, never as $0 (issue 15): a run record or judgement whose
``cost_usd`` is ``null`` (a model with no known price) is indexed without a cost and its page says ``unknown``."""

from __future__ import annotations

from pathlib import Path

import orjson
from aiohttp.test_utils import TestClient, TestServer

from mpcbench_async.view import make_app, open_index
from tests.view.dom import parse

UNPRICED = "sim/oracle-agent"  # its records are rewritten as if its price were unknown


def unprice(path: Path, model_field: str, record_field: str | None) -> None:
    """Set ``cost_usd`` to null in the ``record_field`` (or the line itself) of every line whose ``model_field`` is
    ``UNPRICED``."""
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    for line in lines:
        record = line.get(record_field) if record_field else line
        if line.get(model_field) == UNPRICED and record:
            record["cost_usd"] = None
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


async def test_a_null_cost_is_indexed_as_none_and_shown_as_unknown(sweep_dir):
    """The unpriced agent's runs have no cost in the index and 'unknown' on their page, as do their judgements and
    its leaderboard cost (from its calls); a priced (free sim) model keeps its numbers."""
    unprice(sweep_dir / "calls.jsonl", "model", None)
    unprice(sweep_dir / "runs.jsonl", "model", "run")
    unprice(sweep_dir / "judgements.jsonl", "agent_model", "judgement")
    index = open_index(sweep_dir)
    try:
        unpriced, free = index.runs("model = ?", (UNPRICED,))[0], index.runs("model = 'sim/echo'")[0]
        assert (None, 0.0) == (unpriced["cost"], free["cost"])
        async with TestClient(TestServer(make_app(index))) as client:
            pages = [parse(await (await client.get(f"/run/{row['key']}")).text()) for row in (unpriced, free)]
            board = parse(await (await client.get("/")).text()).one("table", id="leaderboard")
    finally:
        index.close()
    costs = [{tr.one("th").text: tr.one("td").text for tr in doc.one("table", id="timings").all("tr")}["cost USD"]
             for doc in pages]
    assert ["unknown", "0.000000"] == costs
    judged = [j.text for j in pages[0].one(id="judgements").all(cls="judgement")]
    assert judged and all("tokens, cost unknown" in text and "$" not in text for text in judged)
    assert all("tokens, $0.0000" in j.text for j in pages[1].one(id="judgements").all(cls="judgement"))
    column = [th.text for th in board.one("thead").all("th")].index("cost USD (kept)")
    assert {UNPRICED: "unknown", "sim/echo": "0.0000"} == {
        tr.attrs["data-model"]: tr.all("td")[column].text for tr in board.one("tbody").all("tr")}
