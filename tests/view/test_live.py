"""A live viewer: records a running sweep appends appear without a restart (issue 28 point 3).

The viewer looks at the sweep's files at most once a second; when they changed it builds the next index in a thread
while the pages keep the current one, and takes it when ready (``/live`` counts the replacements, the pages poll it).
The tests wait for that thread by joining it, never by sleeping.
"""

from __future__ import annotations

import orjson
from aiohttp.test_utils import TestClient, TestServer

from mpcbench_async.view import BackgroundIndex, make_app
from tests.view.dom import parse

NEW_KEY = "run-f000000000000001"


def append_a_run(sweep_dir) -> None:
    """One more ok run of a new trial, as a running sweep appends it."""
    runs = sweep_dir / "runs.jsonl"
    first = orjson.loads(runs.read_bytes().splitlines()[0])
    with runs.open("ab") as fh:
        fh.write(orjson.dumps({**first, "key": NEW_KEY, "trial": 7}) + b"\n")


async def test_appended_records_appear_and_the_version_grows(sweep_dir):
    state = BackgroundIndex(sweep_dir)
    try:
        async with TestClient(TestServer(make_app(state))) as client:
            before = parse(await (await client.get("/runs")).text()).one(id="page-info").text
            assert {"version": 0} == await (await client.get("/live")).json()
            append_a_run(sweep_dir)
            state._checked_at = -1.0  # the files were looked at a moment ago: look again now
            assert {"version": 0} == await (await client.get("/live")).json()  # the next index is being built
            assert state._rebuilding is not None
            state._rebuilding.join()
            assert {"version": 1} == await (await client.get("/live")).json()
            doc = parse(await (await client.get("/runs")).text())
            assert doc.one("tr", data_key=NEW_KEY)
            assert ("page 1 of 1 (18 runs)", "page 1 of 1 (19 runs)") == (before, doc.one(id="page-info").text)
            overview = parse(await (await client.get("/")).text()).one(id="counts").text
            assert overview.startswith("19 kept runs")
            state._checked_at = -1.0
            assert {"version": 1} == await (await client.get("/live")).json()  # nothing new: no build
            assert not state._rebuilding.is_alive()
    finally:
        state.close()
