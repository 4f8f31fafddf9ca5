"""A live viewer: records a running sweep appends appear without a restart (issue 28 point 3).

The viewer looks at the sweep's files at most once a second; when they changed it reads them in a thread while the
pages keep the current index: the first change in full, into a new index, and from then on only the lines appended
since, whose rows go into the index in use (``/live`` counts the updates, the pages poll it). Each incremental index
is checked against a full build of the same files. The tests wait for that thread by joining it, never by sleeping.
"""

from __future__ import annotations

import os
import sqlite3

import orjson
from aiohttp.test_utils import TestClient, TestServer

from mpcbench_async.view import BackgroundIndex, make_app
from mpcbench_async.view._build import build
from mpcbench_async.view._index import Progress
from tests.view.dom import parse

NEW_KEY = "run-f000000000000001"


def run_line(sweep_dir, key: str, trial: int) -> bytes:
    """One more ok run of a new trial (a copy of the first record), as a running sweep appends it."""
    first = orjson.loads((sweep_dir / "runs.jsonl").read_bytes().splitlines()[0])
    return orjson.dumps({**first, "key": key, "trial": trial}) + b"\n"


def append(path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


def append_a_run(sweep_dir) -> None:
    append(sweep_dir / "runs.jsonl", run_line(sweep_dir, NEW_KEY, 7))


def judgement_line(sweep_dir, run_key: str, key: str) -> bytes:
    """A judgement of ``run_key`` (a copy of the first run's by the first judge)."""
    first = orjson.loads((sweep_dir / "runs.jsonl").read_bytes().splitlines()[0])
    judged = next(orjson.loads(line) for line in (sweep_dir / "judgements.jsonl").read_bytes().splitlines()
                  if orjson.loads(line)["run_key"] == first["key"] and orjson.loads(line)["status"] == "ok")
    return orjson.dumps({**judged, "key": key, "run_key": run_key, "trial": 7}) + b"\n"


def contents(db: sqlite3.Connection) -> tuple[list[tuple], list[tuple], bytes]:
    """Every row of an index, and its summary: what a full build and the live updates must agree on."""
    runs = [tuple(r) for r in db.execute("SELECT * FROM runs ORDER BY key")]
    judges = [tuple(r) for r in db.execute("SELECT * FROM judges ORDER BY key")]
    return runs, judges, bytes(db.execute("SELECT value FROM meta WHERE name = 'summary'").fetchone()[0])


def full_build(sweep_dir) -> tuple[list[tuple], list[tuple], bytes]:
    db = sqlite3.connect(":memory:")
    build(db, sweep_dir, b"", Progress())
    return contents(db)


def look_again(state: BackgroundIndex) -> int:
    """Make the viewer look at the files now, wait for its thread, take what it read; the version."""
    state._checked_at = -1.0  # the files were looked at a moment ago: look again now
    state.refresh()
    assert state._rebuilding is not None
    state._rebuilding.join()
    return state.refresh()


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


def test_after_the_first_change_only_the_appended_tail_is_read(sweep_dir):
    """The first change is read in full (a new index); then each look reads only the bytes appended since — a torn
    last line is left until it is complete — and writes their rows into the index in use, which then holds what a
    full build of the same files holds: rows, judgements' positions and summary."""
    state = BackgroundIndex(sweep_dir).start()
    try:
        state._thread.join()
        first_index = state.index
        append_a_run(sweep_dir)
        assert 1 == look_again(state)
        assert state.index is not first_index  # the first change: a new index, read in full
        assert state._tail is not None
        live_index = state.index
        assert contents(live_index.db) == full_build(sweep_dir)

        second = run_line(sweep_dir, "run-f000000000000002", 8)
        append(sweep_dir / "runs.jsonl", second[:40])  # being appended: torn
        assert 2 == look_again(state)
        assert 40 == state._tail.reader.progress.done  # the torn line's bytes, left where they are
        assert state._tail.reader.start["runs.jsonl"] == (sweep_dir / "runs.jsonl").stat().st_size - 40
        assert state.index.run("run-f000000000000002") is None
        assert contents(live_index.db) == full_build(sweep_dir)  # a full build skips the torn line too

        judged = judgement_line(sweep_dir, "run-f000000000000002", "judge-f000000000000002")
        append(sweep_dir / "runs.jsonl", second[40:])
        append(sweep_dir / "judgements.jsonl", judged)
        assert 3 == look_again(state)
        assert state.index is live_index  # caught up in place
        assert len(second) + len(judged) == state._tail.reader.progress.done  # only the new lines, read whole
        row = state.index.run("run-f000000000000002")
        assert (8, "ok") == (row["trial"], row["status"]) and row["ars"] is not None
        assert 1 == len(state.index.judgements(row))
        assert contents(live_index.db) == full_build(sweep_dir)
        assert 20 == state.index.summary.runs  # 18 kept runs and the two appended

        later = (sweep_dir / "runs.jsonl").stat().st_mtime_ns + 10**9
        os.utime(sweep_dir / "runs.jsonl", ns=(later, later))  # a new modification time, no new line: nothing new
        assert 3 == look_again(state)
        assert 0 == state._tail.reader.progress.done and not state.index.changed()
    finally:
        state.close()


def test_a_line_that_replaces_a_kept_run_is_read_in_full_again(sweep_dir):
    """A redone unit (a newer record of a kept run, whose judgements must be looked at again) is no mere append:
    the viewer builds the index again, and it equals a full build."""
    state = BackgroundIndex(sweep_dir).start()
    try:
        state._thread.join()
        append_a_run(sweep_dir)
        assert 1 == look_again(state)
        live_index = state.index
        redone = orjson.loads(run_line(sweep_dir, NEW_KEY, 7))
        redone["run"]["final_answer"] = "redone"
        append(sweep_dir / "runs.jsonl", orjson.dumps(redone) + b"\n")
        assert 2 == look_again(state)
        assert state.index is not live_index
        assert contents(state.index.db) == full_build(sweep_dir)
        assert "redone" == state.index.record(state.index.run(NEW_KEY)).run.final_answer
    finally:
        state.close()
