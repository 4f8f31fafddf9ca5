"""Tool calls off the event loop: each unit's share of workers, a time limit that stops the call, a size cap.

Blocking tools wait on a ``threading.Event`` the test controls (never on a clock), and every test opens its
gate before it ends. Tools that run "too long" spin on ``checkpoint()``; a ``StepClock`` makes time pass only
when a checkpoint reads it, so whether and where a call stops is decided by the code, not by the machine.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import gc
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpcbench_async import ToolWorkerTimeout
from mpcbench_async._checkpoint import checkpoint
from mpcbench_async.mpcbench import run_agent
from mpcbench_async.mpcbench._agent import RawToolCall, _run_tools
from mpcbench_async.mpcbench.tools import TOOL_RESULT_MAX_BYTES, ToolBackend, ToolPool, cap_result
from mpcbench_async.mpcbench.tools._execution import run_tool
from mpcbench_async.records import FunctionCall, ToolCall
from tests.mpcbench.test_agent import DATA, PROMPTS, task_with_script

FINAL = {"content": '{"final_answer": "done", "rationale": "r"}'}
NO_FILES = {"files": [], "total_matches": 0}


class StepClock:
    """Time that passes only when read: each reading in a thread advances that thread's clock by ``step`` s.

    A tool call's limit of ``timeout_s`` is then ``timeout_s / step`` checkpoints of its own, whatever else runs.
    """

    def __init__(self, step: float) -> None:
        self.step = step
        self._local = threading.local()

    def __call__(self) -> float:
        now = getattr(self._local, "now", 0.0) + self.step
        self._local.now = now
        return now


def calls(*pairs: tuple[str, dict]) -> dict:
    """One scripted model reply making the given tool calls (``(api name, arguments)`` pairs) at once."""
    return {"tool_calls": [{"name": name, "arguments": arguments} for name, arguments in pairs]}


def search(query: str) -> tuple[str, dict]:
    return "GoogleDrive_gdrive_search", {"query": query}


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """The event blocked tools wait for; the test sets it, and teardown sets it in case an assertion failed."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def make_pool() -> Callable[..., ToolPool]:
    """Tool pools of the test's own (nothing to close: every call ends before its run does)."""
    return ToolPool


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


class Spinning:
    """Drive search replaced by a loop that only ends at a checkpoint's stop; notes entries, exits and overlap."""

    def __init__(self, monkeypatch, on_enter: Callable[[], None] = lambda: None) -> None:
        self.entered: list[str] = []
        self.exited: list[str] = []
        self.running = self.most = 0
        self._lock = threading.Lock()
        self._on_enter = on_enter
        monkeypatch.setattr(ToolBackend, "drive_search", lambda backend, args: self(args.query))

    def __call__(self, query: str) -> dict:
        refuse_event_loop()
        with self._lock:
            self.entered.append(query)
            self.running += 1
            self.most = max(self.most, self.running)
        self._on_enter()
        try:
            while True:
                checkpoint()
        finally:
            with self._lock:
                self.running -= 1
                self.exited.append(query)


def signal_from_thread(event: asyncio.Event) -> Callable[[], None]:
    """A callable a worker thread may call to set ``event`` on the test's loop."""
    loop = asyncio.get_running_loop()
    return lambda: loop.call_soon_threadsafe(event.set)


def tool_messages(sent: list) -> list[str]:
    """The tool messages of the last request, in the order the model receives them."""
    return [m.content for m in sent[-1] if m.role == "tool"]


def stopped_error(tool: str, limit: str) -> dict:
    return {"error": f"{tool} took longer than {limit} s and was stopped. Narrow the query (a shorter date range, "
                     "fewer people, a more specific search) and try again"}


class TestOffTheEventLoop:
    async def test_blocked_tool_does_not_block_another_run(self, make_client, make_pool, gate, monkeypatch):
        """While one run's tool is stuck in its thread, another run on the same loop calls tools and finishes."""
        entered, started = asyncio.Event(), []
        block_drive_search(monkeypatch, gate, started, on_enter=signal_from_thread(entered))
        client, pool, finished = make_client("native"), make_pool(2), []

        async def slow() -> None:
            finished.append(await run_agent(client, "sim/scripted", task_with_script([calls(search("plan")), FINAL]),
                                            DATA, PROMPTS, key="slow", tool_pool=pool, tool_timeout_s=600))

        async with anyio.create_task_group() as group:
            group.start_soon(slow)
            await entered.wait()  # the slow run's tool now holds its worker until the gate opens
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


    async def test_the_pools_threads_end_with_the_pool(self):
        """A pool's threads start as calls need them and end once the pool is collected (tests make many pools)."""
        pool = ToolPool(4, inline_s=0)  # every call to a thread
        share, backend = pool.share(), ToolBackend(DATA)
        await run_tool(backend, "Slack_search_messages", '{"query": "launch"}', share=share)
        threads = [t for t in threading.enumerate() if getattr(t, "_args", ())[:1] == (pool._threads,)]
        assert 1 == pool._threads.started == len(threads)
        del pool, share
        gc.collect()
        threads[0].join(timeout=10)
        assert not threads[0].is_alive()


    async def test_call_in_thread_waits_for_its_call_even_when_cancelled(self, gate):
        """As ``anyio.to_thread.run_sync``: a cancelled caller leaves only once its call has ended in its thread."""
        from mpcbench_async.mpcbench.tools._threads import ToolThreads, call_in_thread

        threads, ended, entered = ToolThreads(1), [], threading.Event()

        def read() -> str:
            refuse_event_loop()
            entered.set()
            gate.wait()
            ended.append("read")
            return "answer"

        assert "answer" == await call_in_thread(threads, lambda: "answer")
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(call_in_thread, threads, read)
                await anyio.to_thread.run_sync(entered.wait)
                scope.cancel()
                gate.set()
        assert (True, ["read"]) == (scope.cancelled_caught, ended)
        threads.close()

    async def test_threads_pickle_as_a_fresh_pool_of_their_size(self):
        """A stage sent to a Ray worker carries its threads: the copy is the same size and name and starts its own
        threads when called (queues, locks and running threads stay in the process that made them)."""
        import pickle

        from mpcbench_async.mpcbench.tools._threads import ToolThreads, call_in_thread

        threads = ToolThreads(3, name="mpcbench-checks")
        assert "first" == await call_in_thread(threads, lambda: "first")
        copy = pickle.loads(pickle.dumps(threads))
        assert (3, "mpcbench-checks", 0, 1) == (copy.size, copy.name, copy.started, threads.started)
        assert "copy" == await call_in_thread(copy, lambda: "copy")
        threads.close()
        copy.close()


class TestUnitShares:
    async def test_a_unit_with_ten_stuck_calls_cannot_take_the_pool(self, make_client, make_pool, gate, monkeypatch):
        """One run's ten parallel calls, all stuck, hold only its share (2 of 3 workers): another run's call
        runs and its run finishes while they are still stuck; the stuck run finishes once they return."""
        entered, started = asyncio.Event(), []
        both = asyncio.Event()
        loop = asyncio.get_running_loop()
        block_drive_search(monkeypatch, gate, started,
                           on_enter=lambda: len(started) == 2 and loop.call_soon_threadsafe(both.set))
        client, pool, finished = make_client("native"), make_pool(3, per_unit=2), []
        stuck_steps = [calls(*(search(f"q{i}") for i in range(10))), FINAL]

        async def stuck() -> None:
            finished.append(await run_agent(client, "sim/scripted", task_with_script(stuck_steps), DATA, PROMPTS,
                                            key="stuck", tool_pool=pool, tool_timeout_s=600))

        async with anyio.create_task_group() as group:
            group.start_soon(stuck)
            await both.wait()  # two of its calls hold the unit's two workers; eight wait behind them
            steps = [calls(("Slack_search_messages", {"query": "launch review"})), FINAL]
            other = await run_agent(client, "sim/scripted", task_with_script(steps), DATA, PROMPTS, key="other",
                                    tool_pool=pool, tool_timeout_s=600)
            assert ("final", False, [], 2) == (other.stop_reason, other.raw_tool_calls[0].timed_out, finished,
                                               len(started))
            entered.set()
            gate.set()
        [run] = finished
        assert ("final", [NO_FILES] * 10) == (run.stop_reason, [c.result for c in run.raw_tool_calls])
        assert sorted(f"q{i}" for i in range(10)) == sorted(started)

    async def test_calls_beyond_the_share_wait_for_the_units_own_and_each_gets_its_full_limit(
            self, make_client, monkeypatch):
        """With a share of 1, a reply's three calls that each run until stopped run one after another; each is
        stopped only by its own limit (counted while it runs), so all three return the time-limit error."""
        spinning = Spinning(monkeypatch)
        pool = ToolPool(4, per_unit=1, timeout_s=1.0, clock=StepClock(0.001))  # 1000 checkpoints a call
        steps = [calls(search("a"), search("b"), search("c")), FINAL]
        run = await run_agent(make_client("native"), "sim/scripted", task_with_script(steps), DATA, PROMPTS,
                              key="k", tool_pool=pool)
        assert (["a", "b", "c"], ["a", "b", "c"], 1) == (spinning.entered, spinning.exited, spinning.most)
        assert [stopped_error("GoogleDrive.gdrive_search", "1")] * 3 == [c.result for c in run.raw_tool_calls]
        assert ([True] * 3, "final") == ([c.timed_out for c in run.raw_tool_calls], run.stop_reason)


class TestTimeLimit:
    async def test_a_call_past_its_limit_is_stopped_and_the_model_is_told(self, spy_client, monkeypatch):
        """A tool that never ends by itself is stopped at a checkpoint once its limit passes (its thread has
        left it when the run goes on); the model gets the time-limit error, the call is timed_out, the run ends
        final."""
        spinning = Spinning(monkeypatch)
        run = await run_agent(spy_client, "sim/scripted", task_with_script([calls(search("plan")), FINAL]), DATA,
                              PROMPTS, key="k", tool_pool=ToolPool(2), tool_timeout_s=0.01)
        error = stopped_error("GoogleDrive.gdrive_search", "0.01")
        assert (["plan"], ["plan"]) == (spinning.entered, spinning.exited)
        assert ("final", "done", 2) == (run.stop_reason, run.final_answer, run.turns)
        assert [RawToolCall(tool_name="GoogleDrive.gdrive_search", arguments={"query": "plan"}, result=error,
                            result_bytes=0, truncated=False, timed_out=True)] == run.raw_tool_calls
        assert [orjson.dumps(error).decode()] == tool_messages(spy_client.sent)

    async def test_a_stopped_calls_partial_results_are_freed_at_once(self, monkeypatch):
        """What the stopped tool had built is released as it unwinds, without waiting for a garbage collection
        (the stop's traceback, which holds the tool's frames, is not kept as the context of the error)."""
        built: list[weakref.ref] = []

        class Partial:
            """Stands for the slots a pathological search has built so far."""

        def builds_then_spins(backend, args):
            partial = Partial()
            built.append(weakref.ref(partial))
            while True:
                checkpoint()

        monkeypatch.setattr(ToolBackend, "drive_search", builds_then_spins)
        gc.disable()
        try:
            outcome = await run_tool(ToolBackend(DATA), "GoogleDrive_gdrive_search", '{"query": "x"}',
                                     share=ToolPool(1, timeout_s=1.0, clock=StepClock(0.1)).share())
            assert (True, [None]) == (outcome.timed_out, [ref() for ref in built])
        finally:
            gc.enable()

    async def test_a_cancelled_run_stops_its_running_tool(self, make_client, monkeypatch):
        """Cancelling a run (an interrupted sweep) stops its tool at the next checkpoint, long before the tool's
        limit: when the cancelled scope is left, the tool's thread has left the tool."""
        entered = asyncio.Event()
        spinning = Spinning(monkeypatch, on_enter=signal_from_thread(entered))
        client = make_client("native")
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(run_agent, client, "sim/scripted",
                                 task_with_script([calls(search("plan")), FINAL]), DATA, PROMPTS)
                await entered.wait()
                scope.cancel()
        assert (True, ["plan"], ["plan"]) == (scope.cancelled_caught, spinning.entered, spinning.exited)

    async def test_a_cancelled_run_stops_every_parallel_call(self, make_client, monkeypatch):
        """The calls of one reply run as tasks of the run: cancelling the run stops each of them, and the run
        ends only once both threads have left the tool."""
        entered = asyncio.Event()
        signal = signal_from_thread(entered)
        spinning = Spinning(monkeypatch, on_enter=lambda: len(spinning.entered) == 2 and signal())
        client = make_client("native")
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(run_agent, client, "sim/scripted",
                                 task_with_script([calls(search("plan"), search("more")), FINAL]), DATA, PROMPTS)
                await entered.wait()
                scope.cancel()
        assert (True, ["more", "plan"], ["more", "plan"]) == (
            scope.cancelled_caught, sorted(spinning.entered), sorted(spinning.exited))

    async def test_a_failing_parallel_call_stops_the_others(self, make_client, monkeypatch):
        """A call that raises (a bug, not a tool's error, which the model receives) cancels the reply's other
        calls and reaches the run's caller in an ExceptionGroup once they have ended, as from a task group."""
        entered = asyncio.Event()
        spinning = Spinning(monkeypatch, on_enter=signal_from_thread(entered))

        async def broken(backend, name, arguments, **_):
            if "read_file" not in name:
                return await original(backend, name, arguments, **_)
            await entered.wait()
            raise RuntimeError("a bug")

        from mpcbench_async.mpcbench import _agent
        original = _agent.run_tool
        monkeypatch.setattr(_agent, "run_tool", broken)
        with pytest.raises(ExceptionGroup) as caught:
            await run_agent(make_client("native"), "sim/scripted", task_with_script(
                [calls(search("plan"), ("GoogleDrive_gdrive_read_file", {"file_id": "f1"})), FINAL]), DATA, PROMPTS)
        assert (["a bug"], ["plan"], ["plan"]) == ([str(e) for e in caught.value.exceptions], spinning.entered,
                                                   spinning.exited)

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


class TestWhoseFault:
    async def test_waiting_for_a_worker_is_an_infrastructure_error(self, make_client, gate, monkeypatch):
        """With the pool's one worker held by another unit, a call that waits past the pool's wait never runs:
        its run ends in a retryable ToolWorkerTimeout error naming the tool, with no tool result for the model."""
        entered, started = asyncio.Event(), []
        block_drive_search(monkeypatch, gate, started, on_enter=signal_from_thread(entered))
        client, pool, finished = make_client("native"), ToolPool(1, wait_s=0.01), []

        async def holder() -> None:
            finished.append(await run_agent(client, "sim/scripted", task_with_script([calls(search("hold")), FINAL]),
                                            DATA, PROMPTS, key="holder", tool_pool=pool))

        async with anyio.create_task_group() as group:
            group.start_soon(holder)
            await entered.wait()  # the holder's call runs in the only worker until the gate opens
            steps = [calls(("Slack_search_messages", {"query": "launch review"})), FINAL]
            starved = await run_agent(client, "sim/scripted", task_with_script(steps), DATA, PROMPTS, key="starved",
                                      tool_pool=pool)
            gate.set()
        assert ("error", "ToolWorkerTimeout", True, [], 1) == (
            starved.stop_reason, starved.error_class, starved.retryable, starved.raw_tool_calls, starved.turns)
        assert ("Slack.search_messages waited 0.01 s for a tool worker and never ran: all 1 were running other "
                "units' calls (an infrastructure limit, not the model's doing; a resume runs this unit again)"
                ) == starved.error
        assert (["hold"], "final", None) == (started, finished[0].stop_reason, finished[0].error_class)

    async def test_a_slow_tool_is_the_models_business(self, make_client, monkeypatch):
        """A call stopped by its own limit is a tool result for the model, not an error of the run."""
        Spinning(monkeypatch)
        run = await run_agent(make_client("native"), "sim/scripted", task_with_script([calls(search("x")), FINAL]),
                              DATA, PROMPTS, tool_pool=ToolPool(1, timeout_s=1.0, clock=StepClock(0.5)))
        assert ("final", None, False, [True]) == (run.stop_reason, run.error_class, run.retryable,
                                                 [c.timed_out for c in run.raw_tool_calls])


PATHOLOGICAL = [
    ("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
     {"email_addresses": ["asha@q.io"], "start_date": "2026-01-01", "end_date": "9999-12-31", "slot_minutes": 5,
      "include_weekends": True}),
    ("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
     {"email_addresses": [f"p{i}@q.io" for i in range(200_000)], "start_date": "2025-08-19"}),
    ("Slack_search_messages", {"query": " ".join(f"word{i}" for i in range(200_000))}),
    ("GoogleDrive_gdrive_search", {"query": " ".join(f"word{i}" for i in range(200_000))}),
    ("GoogleContacts_SearchContactsByName", {"name": " ".join(f"word{i}" for i in range(200_000))}),
    ("Gmail_SearchThreads", {"query": " ".join(f"word{i}" for i in range(200_000))}),
    ("Jira_SearchIssuesWithJql", {"jql": " OR ".join(f'text ~ "w{i}"' for i in range(100_000))}),
]


def pathological_data() -> object:
    """DATA with enough records that every search and JQL has work per query word."""
    sources = dict(DATA.sources)
    sources["drive"] = {"files": [{"id": "f1", "name": "plan", "content": "plan " * 50}]}
    sources["gmail"] = {"threads": [{"id": "t1", "subject": "plan", "messages": [
        {"from": "asha@q.io", "to": ["x@q.io"], "body": "plan", "date": "2025-08-18T10:00:00+05:30"}]}]}
    sources["jira"] = {"projects": [], "issues": [{"key": "A-1", "summary": "plan", "description": "plan"}]}
    return dataclasses.replace(DATA, sources=sources)


class TestEveryLongToolStops:
    @pytest.mark.parametrize(("tool", "arguments"), PATHOLOGICAL, ids=[f"{t}-{i}" for i, (t, _) in
                                                                        enumerate(PATHOLOGICAL)])
    async def test_pathological_arguments_are_stopped_at_a_checkpoint(self, tool, arguments):
        """Arguments that make a tool's work explode (millennia of days, thousands of people or query words,
        a JQL of 100,000 clauses) are stopped by the limit: 200 checkpoints of a clock that only moves there."""
        share = ToolPool(1, timeout_s=1.0, clock=StepClock(0.005)).share()
        outcome = await run_tool(ToolBackend(pathological_data()), tool, orjson.dumps(arguments).decode(),
                                 share=share)
        assert (True, "took longer than 1 s and was stopped") == (
            outcome.timed_out, outcome.result["error"].split(". ")[0].split(" ", 1)[1])

    async def test_a_normal_call_passes_few_checkpoints(self):
        """The same tools with ordinary arguments finish well inside that budget (no false stops)."""
        share = ToolPool(1, timeout_s=1.0, clock=StepClock(0.005), memo=False).share()
        backend = ToolBackend(pathological_data())
        ordinary = [("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree", {"email_addresses": ["asha@q.io"]}),
                    ("Slack_search_messages", {"query": "launch review"}), ("GoogleDrive_gdrive_search",
                                                                           {"query": "plan"}),
                    ("Gmail_SearchThreads", {"query": "plan"}), ("Jira_SearchIssuesWithJql", {"jql": 'text ~ "plan"'})]
        outcomes = [await run_tool(backend, tool, orjson.dumps(args).decode(), share=share) for tool, args in ordinary]
        assert [False] * 5 == [o.timed_out for o in outcomes]
        assert [1, 1] == [len(outcomes[3].result["threads"]), outcomes[4].result["total"]]


class TestDirectUse:
    async def test_run_tool_raises_only_for_the_infrastructure(self, gate, monkeypatch):
        """``run_tool`` raises ToolWorkerTimeout when its share cannot get a worker, with the tool and the wait."""
        entered, started = asyncio.Event(), []
        block_drive_search(monkeypatch, gate, started, on_enter=signal_from_thread(entered))
        pool, backend = ToolPool(1, wait_s=0.01), ToolBackend(DATA)
        async with anyio.create_task_group() as group:
            group.start_soon(functools.partial(run_tool, backend, "GoogleDrive_gdrive_search", '{"query": "hold"}',
                                               share=pool.share()))
            await entered.wait()
            with pytest.raises(ToolWorkerTimeout) as caught:
                await run_tool(backend, "Slack_search_messages", '{"query": "x"}', share=pool.share())
            gate.set()
        assert ("Slack.search_messages", 0.01, True) == (caught.value.tool, caught.value.waited_s,
                                                         caught.value.retryable)

    def test_tools_called_directly_never_stop(self):
        """Outside a pool (a direct ``ToolBackend.call``) checkpoints do nothing: the call runs to its end."""
        result = ToolBackend(DATA).call("GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree",
                                        {"email_addresses": ["asha@q.io"], "start_date": "2025-08-19",
                                         "end_date": "2026-08-18"})
        assert 261 == len(result["slots"])


class Readers:
    """A clock (a ``StepClock``) that notes which threads read it: a call's inline attempt reads it on the loop's."""

    def __init__(self, step: float) -> None:
        self.steps, self.threads = StepClock(step), set[int]()

    def __call__(self) -> float:
        self.threads.add(threading.get_ident())
        return self.steps()


MIXED = [  # every kind of outcome: a ranked result, a result over the cap, bad arguments, an unknown tool, a stop
    ("Slack_search_messages", {"query": "launch review"}),
    ("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree", {"email_addresses": ["asha@q.io"], "start_date": "2025-08-19",
                                                        "end_date": "2026-08-18"}),
    ("GoogleDrive_gdrive_search", {"query": 7}),
    ("Trello_search", {}),
    PATHOLOGICAL[0],
]


class TestInlineFirst:
    """Built-in tool calls run on the event loop under a budget of checkpoints' clock readings, else in a thread."""

    async def test_a_normal_call_runs_on_the_loop_and_hands_nothing_to_a_thread(self, spy_client):
        """With a budget a normal call stays inside (2 ms on a clock moving 1 µs per reading: 2,000 checkpoints),
        a whole run's calls finish on the loop: no job reaches the pool's threads."""
        pool = ToolPool(2, clock=StepClock(1e-6), memo=False)
        steps = [calls(("Slack_search_messages", {"query": "launch review"}),
                       ("GoogleContacts_SearchContactsByName", {"name": "Asha"})),
                 calls(("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree", {"email_addresses": ["asha@q.io"]})), FINAL]
        run = await run_agent(spy_client, "sim/scripted", task_with_script(steps), DATA, PROMPTS, key="k",
                              tool_pool=pool)
        assert ("final", 3, 0, 0) == (run.stop_reason, len(run.raw_tool_calls), pool._threads.submitted,
                                      pool._threads.started)
        assert "Asha Rao" == run.raw_tool_calls[0].result["messages"][0]["author"]

    async def test_every_outcome_is_the_same_inline_or_in_a_thread(self, spy_client):
        """A result, a capped one, bad arguments, an unknown tool and a call stopped by its limit: the same record
        and the same message for the model whether the call ran inline first or went to a thread at once."""
        def run_with(pool: ToolPool):
            steps = [*(calls(call) for call in MIXED), FINAL]
            return run_agent(spy_client, "sim/scripted", task_with_script(steps), DATA, PROMPTS, key="k",
                             tool_pool=pool, tool_timeout_s=1.0, tool_result_max_bytes=4096)

        inline_first = ToolPool(2, clock=StepClock(1e-4), memo=False)  # 20 readings inline, 10,000 to the limit
        inline = await run_with(inline_first)
        sent_inline, spy_client.sent = spy_client.sent, []
        threaded = await run_with(ToolPool(2, inline_s=0, clock=StepClock(1e-4), memo=False))
        assert inline.raw_tool_calls == threaded.raw_tool_calls
        assert tool_messages(sent_inline) == tool_messages(spy_client.sent)
        assert [False, True, False, False, False] == [c.truncated for c in inline.raw_tool_calls]
        assert [False, False, False, False, True] == [c.timed_out for c in inline.raw_tool_calls]
        assert ["invalid", "unknown"] == [c.result["error"].split()[0] for c in inline.raw_tool_calls[2:4]]
        # The free-slot search over a year passes more than 20 checkpoints, as does the stopped one: both moved.
        assert 2 == inline_first._threads.submitted

    async def test_a_pathological_call_moves_to_a_thread_after_its_budget_and_ends_as_before(self):
        """A call past the budget is dropped on the loop and run again, from its start, in a thread with its whole
        limit: stopped there after 1 s of its own clock, as a call that never ran inline."""
        clock = Readers(0.005)
        pool = ToolPool(1, timeout_s=1.0, clock=clock)
        tool, arguments = PATHOLOGICAL[0]
        outcome = await run_tool(ToolBackend(pathological_data()), tool, orjson.dumps(arguments).decode(),
                                 share=pool.share())
        assert (True, stopped_error("GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree", "1")) == (
            outcome.timed_out, outcome.result)
        assert (1, 2) == (pool._threads.submitted, len(clock.threads))
        assert threading.get_ident() in clock.threads

    async def test_a_replaced_or_inherited_tool_never_runs_inline(self, monkeypatch):
        """Only the shipped class's own code runs on the loop: a tool replaced on the class (which may block) or a
        subclass's goes to a thread at once, even with a budget it could never use up (a clock standing still)."""
        ran_on: list[int] = []

        class Mine(ToolBackend):
            pass

        pool = ToolPool(2, clock=lambda: 0.0)
        assert (True, False) == (ToolBackend(DATA).checkpointed, Mine(DATA).checkpointed)
        await run_tool(Mine(DATA), "Slack_search_messages", '{"query": "launch"}', share=pool.share())
        monkeypatch.setattr(ToolBackend, "drive_search", lambda backend, args: ran_on.append(threading.get_ident())
                            or NO_FILES)
        replaced = ToolBackend(DATA)
        outcome = await run_tool(replaced, "GoogleDrive_gdrive_search", '{"query": "x"}', share=pool.share())
        assert (False, NO_FILES, 2) == (replaced.checkpointed, outcome.result, pool._threads.submitted)
        assert threading.get_ident() not in ran_on
        monkeypatch.undo()
        assert ToolBackend(DATA).checkpointed

    @pytest.mark.parametrize("inline_s", [-0.001, float("nan")])
    def test_an_unusable_inline_budget_is_refused(self, inline_s):
        """0 sends every call to a thread; a negative or NaN budget is refused, naming the setting."""
        with pytest.raises(ValueError) as caught:
            ToolPool(inline_s=inline_s)
        assert f"a tool pool's inline_s must be 0 or more seconds, got {inline_s}" == str(caught.value)
        assert 0 == ToolPool(inline_s=0).inline_s

    def test_an_inline_call_raises_what_it_raises(self):
        """Only the budget's own stop is caught: the call's errors reach the caller as they would from a thread."""
        from mpcbench_async.mpcbench.tools._threads import MISSED, run_inline

        def spins() -> None:
            while True:
                checkpoint()

        with pytest.raises(ZeroDivisionError):
            run_inline(lambda: 1 / 0, 0.002, StepClock(0.001))
        assert (MISSED, 3) == (run_inline(spins, 0.002, StepClock(0.001)), run_inline(lambda: 3, 0.002, StepClock(1)))


LEDGER = "date,account,amount\n" + "2025-08-01,payouts-settlement,1250.00\n" * 26_000  # about 1 MB, as a Drive file


class TestMemo:
    """A built-in call that ended on its own is kept per scenario data: the same call again is not run."""

    @staticmethod
    def counting_clock() -> tuple[list[int], Callable[[], float]]:
        readings: list[int] = []
        return readings, lambda: len(readings) * 1e-6 + (readings.append(1) or 0)

    async def test_a_repeated_call_gets_the_same_outcome_without_running(self):
        """The next trial's backend over the same data, the same tool and arguments: the kept outcome, no
        checkpoint reached; another cap or other arguments run; a dict's keys in another order are the same call."""
        readings, clock = self.counting_clock()
        data, share = dataclasses.replace(DATA), ToolPool(2, clock=clock).share()
        query = {"query": "launch review", "limit": 5}
        first = await run_tool(ToolBackend(data), "Slack_search_messages", query, share=share)
        ran = len(readings)
        again = await run_tool(ToolBackend(data), "Slack_search_messages", dict(reversed(query.items())),
                               share=share)
        assert (True, ran) == (again is first, len(readings))
        capped = await run_tool(ToolBackend(data), "Slack_search_messages", query, share=share, max_bytes=2048)
        other = await run_tool(ToolBackend(data), "Slack_search_messages", {"query": "launch"}, share=share)
        assert (False, False) == (capped is first, other is first)
        assert len(readings) > ran
        assert 1 == data.derived("tool_outcomes", dict).hits

    async def test_a_replys_kept_and_refused_calls_take_no_task_and_the_rest_run_as_before(self):
        """Of a reply's calls, those kept from an identical earlier call and those refused for their size end at
        once, without a task; one left to run is awaited as it is, several each in a task; the outcomes are what
        each call alone gives, in the order of the calls."""
        data, share = dataclasses.replace(DATA), ToolPool(2).share()
        backend = ToolBackend(data)
        a, b = '{"query": "launch review"}', '{"query": "settlement"}'
        kept = await run_tool(backend, "Slack_search_messages", a, share=share)
        one = ToolCall(id="1", function=FunctionCall(name="Slack_search_messages", arguments=a))
        two = ToolCall(id="2", function=FunctionCall(name="Slack_search_messages", arguments=b))
        three = ToolCall(id="3", function=FunctionCall(name="GoogleContacts_SearchContactsByName",
                                                       arguments='{"name": "Asha"}'))
        four = ToolCall(id="4", function=FunctionCall(name="GoogleContacts_SearchContactsByName",
                                                      arguments='{"name": "Rao"}'))
        big = ToolCall(id="5", function=FunctionCall(name="Slack_search_messages", arguments="x" * 20_000))
        loop, tasks = asyncio.get_running_loop(), []

        def counted(loop: asyncio.AbstractEventLoop, coro: Any) -> asyncio.Task[Any]:
            tasks.append(coro)
            return asyncio.Task(coro, loop=loop)

        loop.set_task_factory(counted)
        try:
            first = await _run_tools(backend, [one, two, big], [None, None, 20_000], share=share, timeout_s=None,
                                     max_bytes=TOOL_RESULT_MAX_BYTES)
            ran = len(tasks)
            second = await _run_tools(backend, [one, two, three, four], [None] * 4, share=share, timeout_s=None,
                                      max_bytes=TOOL_RESULT_MAX_BYTES)
        finally:
            loop.set_task_factory(None)
        assert (0, 2) == (ran, len(tasks))  # b ran as it is; then only the two contacts calls needed a task each
        assert kept is first[0] is second[0] and first[1] is second[1]
        assert first[2].result["error"].startswith("the arguments of Slack.search_messages are 20,000 bytes")
        fresh = ToolBackend(dataclasses.replace(DATA))  # nothing kept: each call runs alone
        assert second[2:] == [await run_tool(fresh, "GoogleContacts_SearchContactsByName", arguments, share=share)
                              for arguments in ('{"name": "Asha"}', '{"name": "Rao"}')]

    async def test_a_stopped_call_is_not_kept_and_its_repeat_is_stopped_again(self):
        pool = ToolPool(1, timeout_s=1.0, clock=StepClock(0.005))
        data, (tool, arguments) = pathological_data(), PATHOLOGICAL[0]
        outcomes = [await run_tool(ToolBackend(data), tool, orjson.dumps(arguments).decode(), share=pool.share())
                    for _ in range(2)]
        assert ([True, True], 2, 0) == ([o.timed_out for o in outcomes], pool._threads.submitted,
                                        len(data.derived("tool_outcomes", dict)))

    async def test_without_memo_or_for_a_replaced_tool_every_call_runs(self, monkeypatch):
        readings, clock = self.counting_clock()
        data, share = dataclasses.replace(DATA), ToolPool(2, clock=clock, memo=False).share()
        for _ in range(2):
            await run_tool(ToolBackend(data), "Slack_search_messages", '{"query": "launch"}', share=share)
        once = len(readings) // 2
        assert once > 0
        monkeypatch.setattr(ToolBackend, "drive_search", lambda backend, args: NO_FILES)
        share = ToolPool(2).share()
        for _ in range(2):
            await run_tool(ToolBackend(data), "GoogleDrive_gdrive_search", '{"query": "x"}', share=share)
        assert ("tool_outcomes" not in data._derived, 2) == (True, share.pool._threads.submitted)


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
