"""The bytes ``LLMClient`` sends are still ``orjson.dumps`` of the body built whole, now that each message's bytes
are kept and joined (``llm/_request.py``): byte for byte at the sim, with the same body and key, over real agent
conversations and over messages changed in place between turns."""

from __future__ import annotations

import gc
import hashlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import msgspec
import orjson
import pytest
from aiohttp import web

from mpcbench_async import mpcbench
from mpcbench_async.llm import LLMClient, ModelConfig, _request
from mpcbench_async.llm._config import ModelSettings
from mpcbench_async.records import ChatResult, FunctionCall, Message, ToolCall, ToolSchema
from mpcbench_async.sim import SimServer
from tests.conftest import REPO

CONFIG = ModelConfig.from_dict({"defaults": {"params": {"max_tokens": 16, "temperature": 0.0}}})


def whole(settings: ModelSettings, api_model: str, messages: Sequence[Message], tools: Sequence[ToolSchema] | None,
          params: Mapping[str, Any], key: str | None) -> tuple[dict[str, Any], bytes, str]:
    """The request as ``LLMClient._request`` built it before this change, verbatim: (body, bytes, key)."""
    merged = {**settings.params, **params}
    if merged.get("stream") is True and "stream_options" not in merged:
        merged["stream_options"] = {"include_usage": True}
    if settings.reasoning:
        merged.pop("temperature", None)
        if "max_tokens" in merged:
            merged["max_completion_tokens"] = merged.pop("max_tokens")
    body: dict[str, Any] = {"model": api_model, "messages": msgspec.to_builtins(messages)}
    if tools:
        body["tools"] = msgspec.to_builtins(tools)
    body.update(merged)
    payload = orjson.dumps(body)
    return body, payload, key if key is not None else hashlib.blake2b(payload, digest_size=12).hexdigest()


class CapturingSim(SimServer):
    """The sim, keeping every chat request's body as it arrived and its ``Idempotency-Key``."""

    def __init__(self) -> None:
        super().__init__(seed=7)
        self.arrived: list[tuple[bytes, str]] = []

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.arrived.append((await request.read(), request.headers["Idempotency-Key"]))
        return await super()._chat(request)


class Witness(LLMClient):
    """A client that notes, before each call, the request the whole-body encoding makes of its messages then."""

    expected: list[tuple[bytes, str]]

    async def chat(self, model: str, messages: Sequence[Message], tools: Sequence[ToolSchema] | None = None, *,
                   key: str | None = None, cache_extra: Mapping[str, Any] | None = None,
                   **params: Any) -> ChatResult:
        state = self._state(model)
        _, payload, sent_key = whole(state.settings, state.endpoint.api_model, messages, tools, params, key)
        self.expected.append((payload, sent_key))
        return await super().chat(model, messages, tools, key=key, cache_extra=cache_extra, **params)


@pytest.fixture
async def sim() -> AsyncIterator[CapturingSim]:
    async with CapturingSim() as server:
        yield server


@pytest.fixture
async def client(sim: CapturingSim) -> AsyncIterator[Witness]:
    async with Witness(CONFIG, sim_base_url=sim.base_url) as witness:
        witness.expected = []
        yield witness


class CountingOrjson:
    """``orjson`` as ``llm/_request`` uses it, counting the bytes its ``dumps`` makes."""

    def __init__(self) -> None:
        self.encoded = 0

    def dumps(self, value: Any) -> bytes:
        out = orjson.dumps(value)
        self.encoded += len(out)
        return out


async def test_real_agent_runs_and_their_judge_send_the_same_bytes(sim, client, monkeypatch):
    """The oracle agent on shipped tasks of each type (tool calls, tool results of several KB, a growing
    conversation), then the judge of each run: every request is byte for byte the whole-body encoding, and only
    what is new in a request is encoded (the guard of issue 31's request encoding: a third of the bytes sent)."""
    counting = CountingOrjson()
    monkeypatch.setattr(_request, "orjson", counting)
    prompts = mpcbench.load_prompts(REPO / "prompt_config.json")
    paths = mpcbench.list_tasks(REPO / "tasks")
    chosen = [path for kind in ("planning", "email_reply", "document_generation")
              for path in [p for p in paths if p.parent.name == kind][:2]]
    for path in chosen:
        task = mpcbench.load_task(path)
        data = mpcbench.load_task_data(task, REPO / "data")
        run = await mpcbench.run_agent(client, "sim/oracle-agent", task, data, prompts, key=path.stem)
        assert "final" == run.stop_reason and run.turns > 2
        judge_input = mpcbench.build_judge_input(run, task)
        await mpcbench.run_judge(client, "sim/judge", judge_input, prompts, agent_model=run.model,
                                 scenario_id=task.scenario_id, max_attempts=1, key=path.stem)
    assert len(chosen) * 4 < len(sim.arrived)
    assert client.expected == sim.arrived
    assert 15_000 < max(len(body) for body, _ in sim.arrived)  # tool results of several KB among them
    # 141,117 bytes encoded for 389,207 sent (0.36): each turn's new messages, the tools once, each judge's input;
    # 1.0 and more when each body is encoded whole
    assert counting.encoded / sum(len(body) for body, _ in sim.arrived) <= 0.4
    gc.collect()
    assert {} == client._requests._kept  # the runs' messages are gone, and their kept bytes with them


ODD = "naïve café — 東京 🚀 \u2028\u2029 \x00\x1f \"quoted\" \\back\\slash </script> \ud7ff\ue000"


async def test_odd_content_and_messages_changed_between_turns(sim, client):
    """Unicode, escapes, a 300 KB tool result, tool calls, ``None`` content, and messages changed in place between
    turns (content, role, name, tool_call_id, tool calls added and removed, one dropped and another made):
    each request is the whole-body encoding of the messages as they are then, with its hash as the default key."""
    tools = (msgspec.convert({"function": {"name": "find", "description": ODD}}, ToolSchema),)
    system = Message(role="system", content=ODD)
    user = Message(role="user", content="first " + ODD)
    call = ToolCall(id="c1", function=FunctionCall(name="find", arguments='{"q": "' + ODD + '"}'))
    messages = [system, user, Message(role="assistant", content=None, tool_calls=[call]),
                Message(role="tool", tool_call_id="c1", content="x" * 300_000 + ODD)]

    async def turn(**params: Any) -> None:
        await client.chat("sim/echo", messages, tools, **params)

    await turn()
    await turn(stream=True)  # the same messages again: kept bytes, and the stream options at the end
    user.content = "second " + ODD  # changed in place
    await turn()
    system.role = "user"
    system.name = "renamed"
    await turn()
    messages[3].tool_call_id = "c2"
    user.tool_calls = [call]  # a kept message gains tool calls ...
    await turn()
    user.tool_calls = None  # ... and loses them
    await turn()
    dropped = messages.pop(1)
    dropped_id = id(dropped)
    assert dropped_id in client._requests._kept
    del dropped, user
    gc.collect()
    assert dropped_id not in client._requests._kept  # freed with its message: no id can find stale bytes
    messages.insert(1, Message(role="user", content="third " + ODD))  # perhaps at the freed one's address
    await turn(temperature=0.5)
    messages.append(Message(role="user", content=""))
    await turn()
    assert 8 == len(sim.arrived)
    assert client.expected == sim.arrived
    assert len(client._requests._kept) == 4  # every plain message of the conversation; the tool call's is not kept
    messages.clear()
    del system
    gc.collect()
    assert {} == client._requests._kept


SHORT = [Message(role="system", content="s"), Message(role="user", content="u")]  # with a third: joined from parts


class TestBuilder:
    """``build`` against the whole-body encoding where the sim cannot go: values that are no strings, subclasses,
    params that replace the body's own keys, a reasoning model, short requests (encoded whole)."""

    def build(self, client: LLMClient, messages: Sequence[Message], tools: Sequence[ToolSchema] | None = None,
              params: Mapping[str, Any] | None = None, model: str = "sim/echo") -> None:
        state = client._state(model)
        request = client._requests.build(state.settings, state.endpoint.api_model, messages, tools, params or {},
                                         None)
        assert whole(state.settings, state.endpoint.api_model, messages, tools, params or {}, None) == (
            request.body, request.payload, request.key)

    async def test_values_that_are_no_strings_are_encoded_every_time(self):
        async with LLMClient(CONFIG, sim_base_url="http://127.0.0.1:9/v1") as client:
            parts = [{"type": "text", "text": ODD}]
            message = Message(role="user", content=parts)  # type: ignore[arg-type]  # as a caller might
            self.build(client, [*SHORT, message])
            parts[0]["text"] = "changed inside"
            self.build(client, [*SHORT, message])
            assert set(map(id, SHORT)) == set(client._requests._kept)

    async def test_a_subclass_with_a_field_of_its_own_is_encoded_every_time(self):
        class Tagged(Message, kw_only=True):
            tag: list[str] = msgspec.field(default_factory=list)

        async with LLMClient(CONFIG, sim_base_url="http://127.0.0.1:9/v1") as client:
            message = Tagged(role="user", content=ODD, tag=["a"])
            self.build(client, [*SHORT, message])
            message.tag.append("b")
            self.build(client, [*SHORT, message])
            assert set(map(id, SHORT)) == set(client._requests._kept)

    @pytest.mark.parametrize("params", [{"model": "other"}, {"messages": []}, {"tools": []}, {"tools": None},
                                        {"stream": True, "stop": ["\n"], "n": 1.5, "seed": None}, {}])
    async def test_params_of_any_name(self, params):
        tools = (msgspec.convert({"function": {"name": "find"}}, ToolSchema),)
        async with LLMClient(CONFIG, sim_base_url="http://127.0.0.1:9/v1") as client:
            for messages in ([], [Message(role="user", content=ODD)], [*SHORT, Message(role="user", content=ODD)]):
                self.build(client, messages, tools, params)
                self.build(client, messages, None, params)

    async def test_short_requests_without_tools_are_encoded_whole(self):
        async with LLMClient(CONFIG, sim_base_url="http://127.0.0.1:9/v1") as client:
            self.build(client, SHORT)
            self.build(client, SHORT[:1])
            assert {} == client._requests._kept

    async def test_a_reasoning_model(self):
        config = ModelConfig.from_dict({"models": {"sim/echo": {"reasoning": True,
                                                                "params": {"max_tokens": 9, "temperature": 1}}}})
        async with LLMClient(config, sim_base_url="http://127.0.0.1:9/v1") as client:
            self.build(client, [*SHORT, Message(role="user", content=ODD)])
