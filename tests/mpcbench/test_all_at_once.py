"""A reply's parallel tool calls run as tasks and are waited for as a task group would (``_agent._all_at_once``):
all of them, or the first failure, the others cancelled and waited for, the errors in one group."""

from __future__ import annotations

import asyncio

import pytest

from mpcbench_async.mpcbench._agent import _all_at_once


def blocked_calls(cancelled: list[int]):
    """A call that waits until cancelled, noting its index in ``cancelled`` when it is."""
    blocked = asyncio.Event()

    async def waits(index: int) -> None:
        try:
            await blocked.wait()
        except asyncio.CancelledError:
            cancelled.append(index)
            raise

    return waits


async def test_every_call_ends_before_it_returns():
    ended: list[int] = []
    gates = [asyncio.Event() for _ in range(3)]

    async def call(index: int) -> None:
        await gates[index].wait()
        ended.append(index)

    waiting = asyncio.ensure_future(_all_at_once([call(i) for i in range(3)]))
    for index in (2, 0):  # in any order; the wait lasts until the last
        gates[index].set()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert not waiting.done()
    gates[1].set()
    await waiting
    assert ended == [2, 0, 1]


async def test_a_failure_cancels_the_others_and_is_raised_once_they_ended():
    cancelled: list[int] = []
    waits = blocked_calls(cancelled)

    async def fails() -> None:
        raise KeyError("boom")

    with pytest.raises(BaseExceptionGroup) as caught:
        await _all_at_once([waits(0), fails(), waits(2)])
    assert [type(e) for e in caught.value.exceptions] == [KeyError]
    assert sorted(cancelled) == [0, 2]


async def test_a_cancelled_caller_cancels_the_calls_and_waits_for_them():
    cancelled: list[int] = []
    waits = blocked_calls(cancelled)
    waiting = asyncio.ensure_future(_all_at_once([waits(0), waits(1)]))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert cancelled == [0, 1]


async def test_nothing_to_run_returns_at_once():
    await _all_at_once([])
