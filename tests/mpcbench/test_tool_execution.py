"""Tool calls off the event loop: bounded threads, a time limit per call, a size cap per result, order kept.

Blocking tools wait on a ``threading.Event`` the test controls (never on a clock); every pool a test makes
is closed at teardown after its gate is opened, so no thread outlives the test.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Callable, Iterator

import anyio
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpcbench_async.mpcbench import RawToolCall, run_agent
from mpcbench_async.mpcbench.tools import TOOL_RESULT_MAX_BYTES, ToolBackend, ToolPool, cap_result
from tests.mpcbench.test_agent import DATA, PROMPTS, task_with_script

FINAL = {"content": '{"final_answer": "done", "rationale": "r"}'}
NO_FILES = {"files": [], "total_matches": 0}


def calls(*pairs: tuple[str, dict]) -> dict:
    """One scripted model reply making the given tool calls (``(api name, arguments)`` pairs) at once."""
    return {"tool_calls": [{"name": name, "arguments": arguments} for name, arguments in pairs]}


def search(query: str) -> tuple[str, dict]:
    return "GoogleDrive_gdrive_search", {"query": query}


@pytest.fixture
def gate() -> threading.Event:
    """The event blocked tools wait for; only the test (or the teardown of its pools) sets it."""
    return threading.Event()


@pytest.fixture
def make_pool(gate: threading.Event) -> Iterator[Callable[[int], ToolPool]]:
    """Tool pools of the test's own; teardown opens the gate, then waits for every pool thread to finish."""
    pools: list[ToolPool] = []

    def build(threads: int = 2) -> ToolPool:
        pools.append(ToolPool(threads))
        return pools[-1]

    yield build
    gate.set()
    for pool in pools:
        pool.close(wait=True)


@pytest.fixture
def spy_client(make_client, monkeypatch):
    """A native client that keeps every message list it sends, so tests see the tool messages the model got."""
    client = make_client("native")
    client.sent = []
    real = client.chat

    async def chat(model, messages, tools=None, **kw):
        client.sent.append(list(messages))
        return await real(model, messages, tools, **kw)

    monkeypatch.setattr(client, "chat", chat)
    return client


def refuse_event_loop() -> None:
    """Fail (instead of freezing the loop forever) when a blocking test tool is called on the event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return  # a worker thread: blocking here is what the test wants
    raise AssertionError("the tool ran on the event loop's thread")


def block_drive_search(monkeypatch, gate: threading.Event, started: list[str],
                       on_enter: Callable[[], None] = lambda: None) -> None:
    """Make Drive search note its query, call ``on_enter``, then block in its thread until ``gate`` is set."""
    def blocked(self, args):
        started.append(args.query)
        on_enter()
        refuse_event_loop()
        gate.wait()
        return NO_FILES

    monkeypatch.setattr(ToolBackend, "drive_search", blocked)


def tool_messages(sent: list) -> list[str]:
    """The tool messages of the last request, in the order the model receives them."""
    return [m.content for m in sent[-1] if m.role == "tool"]


class TestOffTheEventLoop:
    async def test_blocked_tool_does_not_block_another_run(self, make_client, make_pool, gate, monkeypatch):
        """While one run's tool is stuck in its thread, another run on the same loop calls tools and finishes."""
        loop, entered, started = asyncio.get_running_loop(), asyncio.Event(), []
        block_drive_search(monkeypatch, gate, started, on_enter=lambda: loop.call_soon_threadsafe(entered.set))
        client, pool, finished = make_client("native"), make_pool(2), []

        async def slow() -> None:
            finished.append(await run_agent(client, "sim/scripted", task_with_script([calls(search("plan")), FINAL]),
                                            DATA, PROMPTS, key="slow", tool_pool=pool, tool_timeout_s=600))

        async with anyio.create_task_group() as group:
            group.start_soon(slow)
            await entered.wait()  # the slow run's tool now holds its thread until the gate opens
            steps = [calls(("Slack_search_messages", {"query": "launch review"})), FINAL]
            fast = await run_agent(client, "sim/scripted", task_with_script(steps), DATA, PROMPTS, key="fast",
                                   tool_pool=pool, tool_timeout_s=600)
            assert ("final", [], ["plan"]) == (fast.stop_reason, finished, started)
            assert "Asha Rao" == fast.raw_tool_calls[0].result["messages"][0]["author"]
            gate.set()
        assert [("final", NO_FILES, False)] == [
            (r.stop_reason, r.raw_tool_calls[0].result, r.raw_tool_calls[0].timed_out) for r in finished]

    async def test_parallel_calls_come_back_in_call_order(self, spy_client, make_pool, gate, monkeypatch):
        """Calls of one reply run at once; results are logged and sent in call order even when they finish out of it."""
        done: list[str] = []

        def search_waits_for_read(self, args):
            refuse_event_loop()
            gate.wait()  # set by the read below: the search can only finish after it, and only if both run at once
            done.append("search")
            return NO_FILES

        def read_opens_gate(self, args):
            done.append("read")
            gate.set()
            return {"error": f"no file with id or name {args.file_id!r}"}

        monkeypatch.setattr(ToolBackend, "drive_search", search_waits_for_read)
        monkeypatch.setattr(ToolBackend, "drive_read", read_opens_gate)
        steps = [calls(search("budget"), ("GoogleDrive_gdrive_read_file", {"file_id": "f9"})), FINAL]
        run = await run_agent(spy_client, "sim/scripted", task_with_script(steps), DATA, PROMPTS, key="k",
                              tool_pool=make_pool(2), tool_timeout_s=60)
        assert ["read", "search"] == done
        assert ['Step 1: GoogleDrive.gdrive_search({"query":"budget"})',
                'Step 2: GoogleDrive.gdrive_read_file({"file_id":"f9"})'] == run.tool_trace_steps
        results = [NO_FILES, {"error": "no file with id or name 'f9'"}]
        assert results == [c.result for c in run.raw_tool_calls]
        assert [orjson.dumps(r).decode() for r in results] == tool_messages(spy_client.sent)


class TestTimeLimit:
    async def test_call_past_its_limit_returns_an_error_and_the_run_goes_on(self, spy_client, make_pool, gate,
                                                                            monkeypatch):
        """A tool that never returns gives the model a time-limit error, is marked timed_out, and the run ends final."""
        block_drive_search(monkeypatch, gate, [])
        run = await run_agent(spy_client, "sim/scripted", task_with_script([calls(search("plan")), FINAL]), DATA,
                              PROMPTS, key="k", tool_pool=make_pool(2), tool_timeout_s=0.01)
        error = {"error": "GoogleDrive.gdrive_search took longer than 0.01 s; its result was dropped. Narrow the "
                          "query (a shorter date range, fewer people, a more specific search) and try again"}
        assert ("final", "done", 2) == (run.stop_reason, run.final_answer, run.turns)
        assert [RawToolCall(tool_name="GoogleDrive.gdrive_search", arguments={"query": "plan"}, result=error,
                            result_bytes=0, truncated=False, timed_out=True)] == run.raw_tool_calls
        assert [orjson.dumps(error).decode()] == tool_messages(spy_client.sent)

    async def test_abandoned_calls_keep_their_threads_and_queued_ones_never_start(self, make_client, make_pool,
                                                                                  gate, monkeypatch):
        """With one pool thread held by a timed-out call, the next call times out queued and never runs at all."""
        started: list[str] = []
        block_drive_search(monkeypatch, gate, started)
        pool = make_pool(1)
        steps = [calls(search("first"), search("second")), FINAL]
        run = await run_agent(make_client("native"), "sim/scripted", task_with_script(steps), DATA, PROMPTS,
                              key="k", tool_pool=pool, tool_timeout_s=0.01)
        assert ([True, True], "final") == ([c.timed_out for c in run.raw_tool_calls], run.stop_reason)
        gate.set()
        pool.close(wait=True)  # the abandoned call finishes now; the queued one was dropped before it began
        assert ["first"] == started

    @pytest.mark.parametrize(("time_limit", "max_bytes", "message"), [
        (0, 65536, "tool_timeout_s must be a positive number of seconds, got 0"),
        (1.0, 100, "tool_result_max_bytes must be at least 1024 (room for the truncation marker), got 100"),
    ])
    async def test_unusable_limits_are_refused(self, make_client, time_limit, max_bytes, message):
        """A zero time limit or a cap too small for the marker is refused before any call, naming the parameter."""
        with pytest.raises(ValueError) as caught:
            await run_agent(make_client("native"), "sim/scripted", task_with_script([FINAL]), DATA, PROMPTS,
                            tool_timeout_s=time_limit, tool_result_max_bytes=max_bytes)
        assert message == str(caught.value)


LEDGER = "date,account,amount\n" + "2025-08-01,payouts-settlement,1250.00\n" * 26_000  # about 1 MB, as a Drive file


class TestResultCap:
    async def test_a_one_megabyte_file_is_cut_to_the_cap_with_a_marker(self, spy_client, make_pool):
        """Reading a 1 MB Drive file gives the model at most 64 KiB of valid JSON saying what was cut."""
        drive = {"files": [{"id": "f1", "name": "Q3 ledger.csv", "mimeType": "text/csv",
                            "modifiedTime": "2025-08-18T09:00:00+05:30", "content": LEDGER}]}
        data = dataclasses.replace(DATA, sources={**DATA.sources, "drive": drive})
        steps = [calls(("GoogleDrive_gdrive_read_file", {"file_id": "f1"})), FINAL]
        run = await run_agent(spy_client, "sim/scripted", task_with_script(steps), data, PROMPTS, key="k",
                              tool_pool=make_pool(2))
        [call] = run.raw_tool_calls
        [sent] = tool_messages(spy_client.sent)
        assert (True, False, 1_014_133, "final") == (call.truncated, call.timed_out, call.result_bytes,
                                                     run.stop_reason)
        assert call.result == orjson.loads(sent)
        assert TOOL_RESULT_MAX_BYTES >= len(sent.encode())
        assert {"id": "f1", "name": "Q3 ledger.csv", "mimeType": "text/csv",
                "modifiedTime": "2025-08-18T09:00:00+05:30", "truncated": True,
                "truncation_note": "result cut to 65,336 bytes of 1,014,133 ($.content: 63,552 of 988,020 "
                                   "characters); narrow your query to see the rest"} == {
            k: v for k, v in call.result.items() if k != "content"}
        assert (65_490, LEDGER[:63_552]) == (len(sent.encode()), call.result["content"])

    def test_lists_keep_their_leading_items_and_small_fields_stay_whole(self):
        """A long ranked list keeps its first items, the last one shortened to fill the room; counts stay whole."""
        messages = [{"id": f"m{i}", "channel": "payouts", "text": f"settlement batch {i} " + "ok " * 60}
                    for i in range(2000)]
        result = cap_result({"messages": messages, "total_matches": 2000}, 8192)
        assert 8177 == len(orjson.dumps(result))
        assert messages[:32] == result["messages"][:32]
        assert {"id": "m32", "channel": "payouts", "text": messages[32]["text"][:158]} == result["messages"][32]
        assert (33, 2000, True) == (len(result["messages"]), result["total_matches"], result["truncated"])
        assert ("result cut to 7,992 bytes of 491,815 ($.messages: 33 of 2,000 items; $.messages[32].text: 158 of "
                "200 characters); narrow your query to see the rest") == result["truncation_note"]

    def test_texts_are_cut_on_characters_not_bytes(self):
        """Multi-byte and escaped characters are never split: the kept text is a prefix that fits."""
        text = "회의 \"확정\"\n" * 400
        result = cap_result({"id": "f1", "content": text}, 1024)
        assert (964, text[:336]) == (len(orjson.dumps(result)), result["content"])
        assert ("result cut to 822 bytes of 7,624 ($.content: 336 of 3,200 characters); narrow your query to "
                "see the rest") == result["truncation_note"]

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(doc=st.dictionaries(st.text(max_size=120), st.recursive(
        st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False)
        | st.text(max_size=3000),
        lambda inner: st.lists(inner, max_size=30) | st.dictionaries(st.text(max_size=40), inner, max_size=8),
        max_leaves=200), min_size=1), max_bytes=st.integers(1024, 4096))
    def test_any_result_is_cut_to_valid_json_within_the_cap(self, doc, max_bytes):
        """Whatever shape a result has, the cut version is a JSON object within the cap that says it was cut."""
        capped = cap_result(doc, max_bytes)
        encoded = orjson.dumps(capped)
        assert (True, True) == (len(encoded) <= max_bytes, orjson.loads(encoded)["truncated"])

    async def test_a_result_that_is_not_json_becomes_an_error(self, make_client, make_pool, monkeypatch):
        """Data nested deeper than JSON encoders go gives the model an error, not a crashed run."""
        deep: list = []
        for _ in range(300):
            deep = [deep]
        monkeypatch.setattr(ToolBackend, "drive_search", lambda self, args: {"files": deep})
        run = await run_agent(make_client("native"), "sim/scripted", task_with_script([calls(search("x")), FINAL]),
                              DATA, PROMPTS, key="k", tool_pool=make_pool(2))
        assert ("final", {"error": "GoogleDrive.gdrive_search built a result that cannot be sent as JSON "
                                   "(Recursion limit reached); narrow the query or use another tool"}) == (
            run.stop_reason, run.raw_tool_calls[0].result)

    async def test_a_result_under_the_cap_is_sent_as_it_is(self, spy_client, make_pool):
        """A result that fits reaches the model unchanged, without a marker, its size logged."""
        steps = [calls(("GoogleContacts_SearchContactsByName", {"name": "Asha"})), FINAL]
        run = await run_agent(spy_client, "sim/scripted", task_with_script(steps), DATA, PROMPTS, key="k",
                              tool_pool=make_pool(2))
        contacts = {"contacts": [{"name": "Asha Rao", "email": "asha@q.io"}]}
        assert [RawToolCall(tool_name="GoogleContacts.SearchContactsByName", arguments={"name": "Asha"},
                            result=contacts, result_bytes=len(orjson.dumps(contacts)))] == run.raw_tool_calls
        assert [orjson.dumps(contacts).decode()] == tool_messages(spy_client.sent)
