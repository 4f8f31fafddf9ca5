"""The attempts' deadline watchdog (``_deadlines``): cuts at the deadline, lets other cancellations win, stays small."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from mpcbench_async import LLMClient, LLMConnectionError, ModelConfig
from mpcbench_async.llm import MockTransport
from mpcbench_async.llm._deadlines import Deadlines

from .test_timeouts import HUNG, user


async def attempt(deadlines: Deadlines, seconds: float, outcome: list[str], name: str, *,
                  cancel_too: bool = False) -> None:
    """Wait forever as an attempt cut after ``seconds``; note how it ended (``cancel_too``: its task is cancelled
    from elsewhere too, in the loop iteration its deadline passes)."""
    task = asyncio.current_task()
    assert task is not None
    watched = deadlines.watch(deadlines.loop.time() + seconds, task)
    if cancel_too:
        deadlines.loop.call_soon(task.cancel)
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        outcome.append(f"{name}: {'cut' if watched.cut() else 'cancelled'}")
        if not watched.fired or cancel_too:
            raise
    finally:
        deadlines.end(watched)


class TestDeadlines:
    async def test_attempts_are_cut_at_their_deadline_in_order_and_only_they(self):
        deadlines = Deadlines(asyncio.get_running_loop())
        outcome: list[str] = []
        late = asyncio.create_task(attempt(deadlines, 60, outcome, "late"))
        first = asyncio.create_task(attempt(deadlines, 0.02, outcome, "first"))
        second = asyncio.create_task(attempt(deadlines, 0.04, outcome, "second"))
        await asyncio.gather(first, second)
        assert ["first: cut", "second: cut"] == outcome
        assert not late.done()
        late.cancel()  # a cancellation of its own: not the deadline's
        with pytest.raises(asyncio.CancelledError):
            await late
        assert ["first: cut", "second: cut", "late: cancelled"] == outcome

    async def test_a_cancellation_from_elsewhere_wins_over_a_deadline_passing_at_the_same_time(self):
        deadlines = Deadlines(asyncio.get_running_loop())
        outcome: list[str] = []
        both = asyncio.create_task(attempt(deadlines, -1, outcome, "both", cancel_too=True))
        with pytest.raises(asyncio.CancelledError):
            await both
        assert ["both: cancelled"] == outcome
        assert 1 == both.cancelling()  # the deadline withdrew its own request; the other one stands

    async def test_ended_attempts_leave_the_heap(self):
        """However long the deadlines, the heap holds about the attempts in flight (compacted at half done)."""
        deadlines = Deadlines(asyncio.get_running_loop())
        task = asyncio.current_task()
        assert task is not None
        sizes = []
        for _ in range(1000):
            deadlines.end(deadlines.watch(deadlines.loop.time() + 600, task))
            sizes.append(len(deadlines._heap))
        assert max(sizes) <= 130


class TestThroughTheClient:
    async def test_a_caller_cancelling_a_call_gets_its_cancellation_not_a_deadline_error(self, sim, make_client):
        client = make_client("native", ModelConfig.from_dict({"defaults": {"timeouts": {"call_deadline_s": 60}}}))
        with anyio.move_on_after(0.2) as scope:
            await client.chat(HUNG, user("x"), key="outer")
        assert scope.cancelled_caught
        assert 1 == sim.stats.received["outer"]

    async def test_an_attempt_that_turns_its_cut_into_an_error_keeps_the_error_and_leaves_no_cancellation(self):
        """A transport that catches the deadline's cancellation and raises its own error: that error stands, and the
        task is left with no cancellation request of the deadline's (as a cancel scope leaves none)."""

        async def swallowing(_endpoint, _request):
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                raise LLMConnectionError("connection closed", model="m", endpoint="e") from None

        config = ModelConfig.from_dict({"defaults": {"timeouts": {"call_deadline_s": 0.05},
                                                     "retry": {"max_attempts": 1}}})
        async with LLMClient(config, transport=MockTransport(swallowing)) as client:
            with pytest.raises(LLMConnectionError):
                await client.chat("m", user("x"), key="swallowed")
        task = asyncio.current_task()
        assert task is not None
        assert 0 == task.cancelling()
