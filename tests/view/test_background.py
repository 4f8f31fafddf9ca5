"""The viewer while its index is built in the background: the overview from a fresh summary.json at once, the
other pages saying how far the build is; summary.json used only when it is newer than what it summarizes."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import msgspec
import pytest
from aiohttp.test_utils import TestClient, TestServer

from mpcbench_async.sweep import Summary, summarize
from mpcbench_async.view import BackgroundIndex, make_app, open_index
from mpcbench_async.view._index import fresh_summary
from tests.view.conftest import ERROR_KEY
from tests.view.dom import Element, parse

INDEX_PAGES = ["/runs", f"/run/{ERROR_KEY}", "/compare"]
SUMMARIZED = ("runs.jsonl", "judgements.jsonl", "calls.jsonl")


def write_summary_json(sweep_dir: Path, *, runs: int, stale: bool = False) -> Summary:
    """The sweep's own summary with ``runs`` changed (so a page shows which summary it used), as summary.json:
    newer than every file it summarizes, or (``stale``) older than runs.jsonl."""
    summary = summarize(sweep_dir)
    summary.runs = runs
    path = sweep_dir / "summary.json"
    path.write_bytes(msgspec.json.encode(summary))
    newest = max((sweep_dir / name).stat().st_mtime_ns for name in SUMMARIZED)
    at = newest - 10**9 if stale else newest + 10**9
    os.utime(path, ns=(at, at))
    return summary


class Held:
    """An index build held at its start (``hold`` is its ``on_build``) until the test releases it."""

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()

    def hold(self) -> None:
        self.entered.set()
        self.release.wait()

    async def started(self) -> None:
        """Wait until the build has reached ``hold`` (in a worker thread: the event loop keeps serving)."""
        assert await asyncio.to_thread(self.entered.wait, 60)


@pytest.fixture
async def held() -> AsyncIterator[tuple[Held, Callable[[BackgroundIndex], TestClient]]]:
    """A held build, and test clients of viewers (made with no grace: a page never waits for the build)."""
    build = Held()
    clients: list[TestClient] = []

    def client(state: BackgroundIndex) -> TestClient:
        made = TestClient(TestServer(make_app(state, grace_s=0)))
        clients.append(made)
        return made

    yield build, client
    build.release.set()
    for made in clients:
        await made.close()


async def get(client: TestClient, path: str, status: int = 200) -> Element:
    response = await client.get(path)
    assert status == response.status
    return parse(await response.text())


def counts(doc: Element) -> str:
    return doc.one("p", id="counts").text.split(",")[0]


def indexing_text(sweep_dir: Path) -> str:
    mb = ((sweep_dir / "runs.jsonl").stat().st_size + (sweep_dir / "judgements.jsonl").stat().st_size) / 2**20
    return f"indexing 0 of {mb:,.0f} MB of runs.jsonl and judgements.jsonl …"


class TestWhileBuilding:
    async def test_the_overview_is_served_from_a_fresh_summary_json_while_the_build_is_held(self, sweep_dir, held):
        build, client = held
        write_summary_json(sweep_dir, runs=4242)
        state = BackgroundIndex(sweep_dir, on_build=build.hold).start()
        async with client(state) as c:
            await build.started()
            doc = await get(c, "/")
            assert not state.done and state.index is None
            assert "4242 kept runs" == counts(doc)
            assert ["sim/echo", "sim/oracle-agent"] == [
                tr.attrs["data-model"] for tr in doc.one("table", id="leaderboard").one("tbody").all("tr")]
            assert doc.one("section", id="heatmap").one("svg")
            build.release.set()
            assert await state.wait(60)
            assert "4242 kept runs" == counts(await get(c, "/"))  # the same summary, now stored with the index

    @pytest.mark.parametrize("path", INDEX_PAGES)
    async def test_pages_needing_the_index_say_how_far_it_is_and_reload_until_ready(self, sweep_dir, held, path):
        build, client = held
        write_summary_json(sweep_dir, runs=4242)
        state = BackgroundIndex(sweep_dir, on_build=build.hold).start()
        async with client(state) as c:
            await build.started()
            doc = await get(c, path)
            assert indexing_text(sweep_dir) == doc.one("p", id="indexing").text
            assert "1" == doc.one("head").one("meta", http_equiv="refresh").attrs["content"]
            assert "Indexing the sweep" == doc.one("head").one("title").text
            assert ["/", "/runs", "/compare", "/settings"] == [a.attrs["href"] for a in doc.one("nav").all("a")]
            assert [] == doc.all("table", id="runs")
            build.release.set()
            assert await state.wait(60)
            doc = await get(c, path)
            assert [] == doc.all("p", id="indexing") == doc.all("meta", http_equiv="refresh")
            assert "18 runs" in (await get(c, "/runs")).one(id="page-info").text

    async def test_without_a_fresh_summary_the_overview_waits_for_the_build(self, sweep_dir, held):
        build, client = held
        write_summary_json(sweep_dir, runs=4242, stale=True)
        state = BackgroundIndex(sweep_dir, on_build=build.hold).start()
        async with client(state) as c:
            await build.started()
            assert indexing_text(sweep_dir) == (await get(c, "/")).one("p", id="indexing").text
            build.release.set()
            assert await state.wait(60)
            assert "18 kept runs" == counts(await get(c, "/"))

    async def test_a_failed_build_is_said_on_the_pages_that_need_the_index(self, sweep_dir, held):
        _, client = held

        def fail() -> None:
            raise RuntimeError("disk on fire")

        state = BackgroundIndex(sweep_dir, on_build=fail).start()
        assert await state.wait(60)
        async with client(state) as c:
            doc = await get(c, "/runs", status=500)
            assert "The index of this sweep could not be built: RuntimeError: disk on fire" == doc.one(
                "p", id="index-error").text


class TestSummaryJson:
    def test_fresh_is_decoded_exactly(self, sweep_dir):
        written = write_summary_json(sweep_dir, runs=4242)
        assert written == fresh_summary(sweep_dir)

    @pytest.mark.parametrize("name", SUMMARIZED)
    def test_older_than_a_file_it_summarizes_is_ignored(self, sweep_dir, name):
        write_summary_json(sweep_dir, runs=4242)
        later = (sweep_dir / "summary.json").stat().st_mtime_ns + 10**9
        path = sweep_dir / name
        os.utime(path, ns=(later, later))
        assert fresh_summary(sweep_dir) is None

    def test_missing_or_undecodable_is_ignored(self, sweep_dir):
        assert fresh_summary(sweep_dir) is None
        write_summary_json(sweep_dir, runs=4242)
        (sweep_dir / "summary.json").write_bytes(b'{"out_dir": 3}')
        assert fresh_summary(sweep_dir) is None

    def test_the_index_stores_a_fresh_one_and_computes_a_stale_one(self, sweep_dir):
        written = write_summary_json(sweep_dir, runs=4242)
        assert written == open_index(sweep_dir).summary
        write_summary_json(sweep_dir, runs=4242, stale=True)  # summary.json changed: the index is rebuilt
        again = open_index(sweep_dir)
        assert again.rebuilt
        assert summarize(sweep_dir) == again.summary


class TestOneRead:
    def test_lines_the_index_skips_are_counted_as_the_summary_counts_them(self, sweep_dir):
        """The index reads runs and judgements once for itself and the summary: undecodable lines and a torn
        last line are counted per file exactly as ``summarize`` counts them."""
        with (sweep_dir / "runs.jsonl").open("ab") as fh:
            fh.write(b'{"key": "run-x", "status": "ok"}\nnot json\n{"key": "torn')
        with (sweep_dir / "judgements.jsonl").open("ab") as fh:
            fh.write(b"[1, 2]\n")
        summary = open_index(sweep_dir).summary
        assert {"runs.jsonl": 3, "judgements.jsonl": 1} == summary.skipped_lines
        assert summarize(sweep_dir) == summary
