"""Agents' lock-step waves on a batch model (issue 29 point 4), against the sim's Batch API: a wave is sent when
every member waits, cut at ``max_requests`` or ``max_wait_s``; a request failing in a wave is resubmitted in a
later one, alone; each wave is reported. ``max_wait_s`` is a minute where a wave must close early (it would hang
the test otherwise) and 50 ms where the age cut is the point."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mpcbench_async.llm import LLMClient, ModelConfig, WaveLog, WaveReport
from mpcbench_async.records import Message
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep._waves import wave_line

LONG = {"max_wait_s": 60, "poll_s": 0, "poll_max_s": 0}


def config(model: str = "sim/echo", **batch: Any) -> ModelConfig:
    entry: dict[str, Any] = {"batch": {**LONG, **batch}}
    return ModelConfig.from_dict({"agent_models": [model], "models": {model: entry}})


async def member(client: LLMClient, model: str, name: str, turns: int, out: list[str]) -> None:
    """An agent-like loop: ``turns`` calls, each after the last one's reply, as one wave member."""
    with client.wave_member(model):
        for turn in range(turns):
            reply = await client.chat(model, [Message(role="user", content=f"{name} turn {turn}")],
                                      key=f"{name}/turn{turn}")
            out.append(reply.content or "")


def cuts(client: LLMClient) -> list[tuple[str, int]]:
    return [(r.cut, r.requests) for log in client.wave_logs() for r in log.reports]


async def test_a_wave_closes_as_soon_as_every_member_waits(sim: SimServer):
    """Three members of two turns each: two waves of three requests, each sent when the third member joined (not
    after the minute's max_wait_s); the log says the longest run took two turns."""
    out: list[str] = []
    async with LLMClient(config(), sim_base_url=sim.base_url) as client:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for name in ("a", "b", "c"):
                    tg.start_soon(member, client, "sim/echo", name, 2, out)
        assert ([("waiting", 3), ("waiting", 3)], [2]) == (cuts(client), [log.turns for log in client.wave_logs()])
    assert sorted(f"echo: {n} turn {t}" for n in "abc" for t in range(2)) == sorted(out)
    assert ({"batches": 2}, {f"{n}/turn{t}": 1 for n in "abc" for t in range(2)}) == (
        sim.stats.batch_creates, sim.stats.batch_billed)


async def test_a_wave_is_cut_at_its_size_limit(sim: SimServer):
    """max_requests 2, three members: the first wave is cut full at two; the third request waits alone in the
    next one, sent at once because every member is then waiting (two on the first batch, one gathering)."""
    out: list[str] = []
    async with LLMClient(config(max_requests=2), sim_base_url=sim.base_url) as client:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for name in ("a", "b", "c"):
                    tg.start_soon(member, client, "sim/echo", name, 1, out)
        assert [("size", 2), ("waiting", 1)] == cuts(client)
    assert 3 == len(out) and {"batches": 2} == sim.stats.batch_creates


async def test_a_wave_is_cut_at_its_age_limit_so_a_slow_member_does_not_hold_it(sim: SimServer):
    """Two members, one busy (its tools, say) until the other's reply is back: the first wave goes at max_wait_s
    (50 ms) with one request; the slow member's request goes in its own wave, at once, as it is then the only one."""
    out: list[str] = []
    first_back = anyio.Event()

    async def quick(client: LLMClient) -> None:
        await member(client, "sim/echo", "quick", 1, out)
        first_back.set()

    async def slow(client: LLMClient) -> None:
        with client.wave_member("sim/echo"):
            await first_back.wait()
            await member(client, "sim/echo", "slow", 1, out)  # nested: still one member

    async with LLMClient(config(max_wait_s=0.05), sim_base_url=sim.base_url) as client:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(quick, client)
                tg.start_soon(slow, client)
        assert [("age", 1), ("waiting", 1)] == cuts(client)
    assert ["echo: quick turn 0", "echo: slow turn 0"] == out


async def test_a_request_failing_in_a_wave_is_resubmitted_in_the_next_one_alone(sim: SimServer):
    """Each request's first run fails (500): the wave's two requests go again in a second wave (both members then
    wait), and each is billed once; a 400 instead fails its call alone, not resubmitted."""
    out: list[str] = []
    model = "sim/echo?fault=500&fail_first=1"
    async with LLMClient(config(model), sim_base_url=sim.base_url) as client:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for name in ("a", "b"):
                    tg.start_soon(member, client, model, name, 1, out)
        assert [("waiting", 2), ("waiting", 2)] == cuts(client)
    assert ({"a/turn0": 1, "b/turn0": 1}, 2) == (sim.stats.batch_billed, len(out))


def test_the_wave_line_states_waves_wall_bound_and_ratio():
    """The line: batches and requests, the wall from the first request to the last result, the bound (the longest
    run's turns × the mean batch latency) and their ratio."""
    reports = [WaveReport(model="m", batch_id=f"b{i}", requests=n, cut="waiting", started=10.0 + 2 * i,
                          submitted=10.1 + 2 * i, ended=11.6 + 2 * i) for i, n in enumerate((3, 3, 1))]
    line = wave_line([WaveLog(model="m", turns=3, reports=reports)])
    assert ("agent waves: 3 batches (7 requests), wall 5.60 s, bound 4.50 s (3 turns x 1.50 s per batch), "
            "ratio 1.24") == line
    assert wave_line([]) is None


@pytest.mark.parametrize("model", ["sim/echo"])
async def test_a_client_without_members_reports_no_waves(sim: SimServer, model: str):
    """Judges alone on a batch model (no member): batches as before, no wave log."""
    async with LLMClient(config(model, max_wait_s=0.01), sim_base_url=sim.base_url) as client:
        await client.chat(model, [Message(role="user", content="q")], key="k")
        assert [] == client.wave_logs()
