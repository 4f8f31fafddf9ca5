"""The simulated provider: routes, counters, fault choice and policies, over real HTTP."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator

import aiohttp
import orjson
import pytest

from mpcbench_async.sim import FaultSpec, SimServer
from mpcbench_async.sim._faults import choose_fault
from mpcbench_async.sim._policies import Reply, echo, scripted
from mpcbench_async.sim._registry import _SERVING, POLICIES, register_policy


async def post(sim: SimServer, body: bytes, key: str | None = None) -> tuple[int, dict]:
    headers = {"Idempotency-Key": key} if key else {}
    async with aiohttp.ClientSession() as session:
        async with session.post(sim.base_url + "/chat/completions", data=body, headers=headers) as resp:
            return resp.status, orjson.loads(await resp.read())


class TestRoutes:
    async def test_models_lists_the_registered_policies(self, sim):
        """GET /v1/models lists every sim policy in OpenAI's list format."""
        async with aiohttp.ClientSession() as session:
            async with session.get(sim.base_url + "/models") as resp:
                data = orjson.loads(await resp.read())
        from mpcbench_async.sim._registry import POLICIES

        assert sorted(POLICIES) == [m["id"] for m in data["data"]]
        assert {"sim/echo", "sim/scripted", "sim/judge", "sim/lazy-agent"} <= set(POLICIES)
        assert "list" == data["object"]

    async def test_bad_body_is_a_400_saying_what_is_needed(self, sim):
        """A body without model/messages is rejected with a message saying what is required."""
        status, data = await post(sim, b'{"messages": "nope"}')
        assert (400, "request body must be JSON with a string 'model' and a list 'messages'") == (
            status, data["error"]["message"])

    async def test_bad_fault_option_names_the_field(self, sim):
        """A mistyped option in a model-name suffix is a 400 naming the field."""
        body = orjson.dumps({"model": "sim/echo?p429=lots", "messages": []})
        status, data = await post(sim, body)
        assert 400 == status
        assert "bad sim options in model name 'sim/echo?p429=lots': Expected `float`, got `str` - at `$.p429`" == (
            data["error"]["message"])

    async def test_counts_received_and_completed_per_key(self, sim):
        """Every request counts as received; only full 200 replies count as completed."""
        body = orjson.dumps({"model": "sim/echo?fault=500&fail_first=1", "messages": [{"role": "user",
                                                                                     "content": "x"}]})
        assert 500 == (await post(sim, body, key="k1"))[0]
        assert 200 == (await post(sim, body, key="k1"))[0]
        async with aiohttp.ClientSession() as session:
            async with session.get(sim.base_url.removesuffix("/v1") + "/sim/stats") as resp:
                stats = orjson.loads(await resp.read())
        assert ({"k1": 2}, {"k1": 1}, {"500": 1, "200": 1}) == (
            stats["received"], stats["completed"], stats["statuses"])

    async def test_key_defaults_to_a_hash_of_the_body(self, sim):
        """Without an Idempotency-Key the same body counts under the same key."""
        body = orjson.dumps({"model": "sim/echo", "messages": [{"role": "user", "content": "same"}]})
        await post(sim, body)
        await post(sim, body)
        assert [2] == list(sim.stats.received.values())

    async def test_completion_shape(self, sim):
        """A reply has the OpenAI chat.completion shape with usage."""
        body = orjson.dumps({"model": "sim/echo", "messages": [{"role": "user", "content": "hi"}]})
        status, data = await post(sim, body, key="shape")
        assert 200 == status
        assert {"role": "assistant", "content": "echo: hi"} == data["choices"][0]["message"]
        assert "stop" == data["choices"][0]["finish_reason"]
        usage = data["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


class TestFaultChoice:
    def test_fail_first_is_exact(self):
        """fault + fail_first gives that fault to the first N attempts of each key, then none."""
        spec = FaultSpec(fault="503", fail_first=2)
        assert ["503", "503", None, None] == [choose_fault(spec, seed=1, key="a", attempt=n) for n in range(4)]

    def test_random_faults_are_a_function_of_seed_key_and_attempt(self):
        """The same (seed, key, attempt) always draws the same fault, whatever the order of requests."""
        spec = FaultSpec(p429=0.1, p500=0.05, p502=0.05, pdrop=0.05)
        forward = [choose_fault(spec, seed=3, key=f"k{i}", attempt=0) for i in range(2000)]
        backward = [choose_fault(spec, seed=3, key=f"k{i}", attempt=0) for i in reversed(range(2000))]
        assert forward == backward[::-1]
        counts = {kind: forward.count(kind) for kind in ("429", "500", "502", "drop", None)}
        assert 2000 == sum(counts.values())
        assert 150 <= counts["429"] <= 250  # 10% of 2000, seeded
        assert 1400 <= counts[None] <= 1600  # 75%

    def test_a_units_later_try_draws_anew_and_its_first_keeps_the_old_draws(self):
        """Unit attempt 0 (no header) draws what (seed, key, attempt) always drew; a later try of the unit draws
        other faults for the same key and attempt, the same ones every time."""
        spec = FaultSpec(p500=0.5)
        old = [random.Random(f"3:k{i}:0").random() < 0.5 for i in range(400)]
        first = [choose_fault(spec, seed=3, key=f"k{i}", attempt=0) == "500" for i in range(400)]

        def later() -> list[bool]:
            return [choose_fault(spec, seed=3, key=f"k{i}", attempt=0, unit_attempt=1) == "500" for i in range(400)]

        assert old == first and later() == later()
        assert 120 <= sum(a != b for a, b in zip(first, later(), strict=True)) <= 280  # independent draws: about half

    async def test_the_unit_attempt_header_reaches_the_fault_draw(self, sim):
        """A key whose first request fails at p500=0.5 gets, as try 1 of its unit, the draw of that try."""
        spec = FaultSpec(p500=0.5)
        key = next(f"k{i}" for i in range(100) if choose_fault(spec, seed=sim.seed, key=f"k{i}", attempt=0)
                   and not choose_fault(spec, seed=sim.seed, key=f"k{i}", attempt=0, unit_attempt=1))
        body = orjson.dumps({"model": "sim/echo?p500=0.5", "messages": [{"role": "user", "content": "x"}]})
        assert 500 == (await post(sim, body, key=key))[0]
        sim.reset()  # a new embedded sim: its counts start again
        async with aiohttp.ClientSession() as session:
            async with session.post(sim.base_url + "/chat/completions", data=body,
                                    headers={"Idempotency-Key": key, "X-Mpcbench-Unit-Attempt": "1"}) as resp:
                assert 200 == resp.status

    def test_overrides_parse_from_the_model_suffix(self):
        """Query-string options override the server defaults and are typed."""
        spec = FaultSpec(latency_ms=5).with_overrides("p429=0.25&rpm=60&fault=drop&fail_first=1")
        assert (5.0, 0.25, 60, "drop", 1) == (spec.latency_ms, spec.p429, spec.rpm, spec.fault, spec.fail_first)


class TestPolicies:
    def test_echo_respects_max_tokens(self):
        """Echo replies with the last user message, capped at max_tokens × 4 characters."""
        request = {"messages": [{"role": "user", "content": "first"}, {"role": "user", "content": "second msg"}],
                   "max_tokens": 2}
        assert "echo: se" == echo(request).content

    def test_scripted_plays_the_step_for_the_turn(self):
        """The scripted policy plays step N after N assistant turns, and repeats the last step."""
        script = orjson.dumps([{"tool_calls": [{"name": "t", "arguments": {"a": 1}}]}, {"content": "end"}]).decode()
        messages = [{"role": "system", "content": "SIM_SCRIPT: " + script}, {"role": "user", "content": "go"}]
        first = scripted({"messages": messages})
        assert [{"name": "t", "arguments": '{"a":1}'}] == first.tool_calls
        turn = messages + [{"role": "assistant", "content": None}, {"role": "tool", "content": "r"}]
        assert "end" == scripted({"messages": turn}).content
        again = turn + [{"role": "assistant", "content": "end"}, {"role": "user", "content": "more"}]
        assert "end" == scripted({"messages": again}).content

    def test_scripted_without_script_says_so(self):
        """Without a SIM_SCRIPT marker the scripted policy answers with an explanation, not an error."""
        assert "scripted: no SIM_SCRIPT in the conversation" == scripted(
            {"messages": [{"role": "user", "content": "x"}]}).content


@pytest.mark.parametrize("kind", ["drop", "truncate", "malformed", "timeout"])
async def test_broken_replies_count_as_not_completed(kind):
    """Connection-level faults never count as completed calls."""
    async with SimServer(seed=1, defaults=FaultSpec(hang_s=0.05)) as sim:
        body = orjson.dumps({"model": f"sim/echo?fault={kind}&fail_first=1", "messages": []})
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:
            try:
                async with session.post(sim.base_url + "/chat/completions", data=body,
                                        headers={"Idempotency-Key": "b"}) as resp:
                    await resp.read()
            except aiohttp.ClientError:
                pass
        assert ({"b": 1}, {}, {kind: 1}) == (sim.stats.received, sim.stats.completed, sim.stats.faults)


class TestServiceTime:
    """``latency_ms`` is the service time from the request's arrival: the sim's own work is inside it."""

    @pytest.fixture
    def made(self) -> Iterator[tuple[list[str], asyncio.Event]]:
        """A policy ``sim/test-made`` that notes each request's last message as it makes the reply (and sets the
        event)."""
        calls: list[str] = []
        event = asyncio.Event()

        @register_policy("test-made")
        def policy(body: dict) -> Reply:
            calls.append(body["messages"][-1]["content"])
            event.set()
            return Reply(content="made")

        yield calls, event
        POLICIES.pop("sim/test-made")
        _SERVING.clear()

    async def test_the_reply_is_made_during_the_wait(self, sim, made):
        """The policy answers as the request arrives, not once the latency has passed: a sim busy with a burst
        of requests does not answer each later than ``latency_ms`` by its own work (issue 31)."""
        body = orjson.dumps({"model": "sim/test-made?latency_ms=600000", "messages": [{"role": "user",
                                                                                     "content": "q"}]})
        calls, event = made
        request = asyncio.create_task(post(sim, body, key="k"))
        await asyncio.wait_for(event.wait(), 60)  # the latency is 600 s: only a policy run before the wait sets it
        assert (["q"], False, {"k": 1}, {}) == (calls, request.done(), sim.stats.received, sim.stats.completed)
        request.cancel()

    async def test_a_fault_comes_before_the_policy(self, sim, made):
        """With a fault the wait comes first and the policy never runs (the fault's reply needs none)."""
        body = orjson.dumps({"model": "sim/test-made?latency_ms=1&fault=500&fail_first=1",
                             "messages": [{"role": "user", "content": "q"}]})
        calls, _ = made
        assert (500, []) == ((await post(sim, body, key="k"))[0], calls)
        assert (200, ["q"]) == ((await post(sim, body, key="k"))[0], calls)
