"""The transport registry: built-in names, registering more, selection by config or client, clear errors."""

from __future__ import annotations

import subprocess
import sys

import msgspec
import orjson
import pytest

from mpcbench_async import ConfigError, LLMCallRecord, Message, ModelConfig
from mpcbench_async.llm import (
    ChatRequest,
    Endpoint,
    LLMClient,
    MockTransport,
    NativeTransport,
    ReplayTransport,
    TransportOptions,
    _registry,
    register_transport,
    transport_names,
)
from mpcbench_async.llm._registry import create_transport
from tests.conftest import REPO

BUILT_IN = ["anthropic", "gemini", "native", "openai", "record", "replay"]


def reply(endpoint: Endpoint, request: ChatRequest) -> dict:
    return {"choices": [{"message": {"content": f"{endpoint.model} says hi"}}]}


@pytest.fixture
def registry(monkeypatch):
    """Registrations made by a test are undone after it."""
    monkeypatch.setattr(_registry, "_FACTORIES", dict(_registry._FACTORIES))


class TestRegistry:
    def test_built_in_names(self):
        """anthropic, gemini, native, openai, record and replay are registered."""
        assert BUILT_IN == transport_names()

    def test_create_by_name(self, tmp_path):
        """Names create their transports; record and replay get their store from the options."""
        store = tmp_path / "s.jsonl"
        store.touch()
        replay = create_transport("replay", TransportOptions(store=store))
        assert (NativeTransport, "native", ReplayTransport, store) == (
            type(create_transport("native")), create_transport("native").name, type(replay), replay.store.path)

    def test_unknown_name_lists_the_registered_ones(self):
        """An unknown name is a ConfigError naming it and every registered transport."""
        with pytest.raises(ConfigError) as caught:
            create_transport("carrier-pigeon")
        assert ("unknown transport 'carrier-pigeon'; registered transports: anthropic, gemini, native, openai, "
                "record, replay") == str(caught.value)

    @pytest.mark.parametrize("name", ["record", "replay"])
    def test_store_transports_without_a_store_say_how_to_give_one(self, name):
        """record and replay without a store file name the two places to set it."""
        with pytest.raises(ConfigError) as caught:
            LLMClient(transport=name).check_models(["sim/echo"])
        assert (f"transport {name!r} needs a store file: set \"store\" beside \"transport\" in model_config.json, "
                "or pass LLMClient(store=PATH)") == str(caught.value)

    async def test_registered_transport_is_selected_by_config(self, registry):
        """A transport registered under a new name is chosen by a model's "transport" setting."""
        register_transport("canned", lambda options: MockTransport(reply))
        records: list[LLMCallRecord] = []
        config = ModelConfig.from_dict({"models": {"sim/echo": {"transport": "canned"}}})
        async with LLMClient(config, call_sink=records.append) as client:
            result = await client.chat("sim/echo", [Message(role="user", content="x")])
        assert ("sim/echo says hi", ["mock"]) == (result.content, [r.transport for r in records])

    async def test_one_transport_per_name_and_store_is_shared_by_models(self, registry):
        """Two models with the same transport name share one instance (one connection pool)."""
        made: list[TransportOptions] = []

        def factory(options: TransportOptions) -> MockTransport:
            made.append(options)
            return MockTransport(reply)

        register_transport("counted", factory)
        async with LLMClient(ModelConfig.from_dict({"defaults": {"transport": "counted"}})) as client:
            for model in ("sim/a", "sim/b", "sim/a"):
                await client.chat(model, [Message(role="user", content="x")])
        assert [TransportOptions()] == made

    async def test_client_name_overrides_the_config(self, registry):
        """transport= on the client wins over every model's configured transport."""
        register_transport("canned", lambda options: MockTransport(reply))
        records: list[LLMCallRecord] = []
        async with LLMClient(ModelConfig.from_dict({"defaults": {"transport": "openai"}}), transport="canned",
                             call_sink=records.append) as client:
            await client.chat("sim/echo", [Message(role="user", content="x")])
        assert ["mock"] == [r.transport for r in records]


class TestConfig:
    @pytest.mark.parametrize(("raw", "where"), [({"models": {"gpt-x": {"transport": "grpc"}}}, "models.gpt-x"),
                                                ({"defaults": {"transport": "grpc"}}, "defaults")])
    def test_unknown_transport_in_config_names_file_entry_and_field(self, raw, where):
        """A transport name nobody registered is rejected when the config is read, listing the registered ones."""
        with pytest.raises(ConfigError) as caught:
            ModelConfig.from_dict(raw, source="mc.json")
        assert (f"mc.json: {where}: unknown transport 'grpc'; registered transports: anthropic, gemini, native, "
                "openai, record, replay - at `$.transport`") == str(caught.value)

    def test_cli_exits_2_on_an_unknown_transport(self, tmp_path):
        """The CLI reports an unknown transport in model_config.json as one error line, exit code 2."""
        config = tmp_path / "model_config.json"
        config.write_bytes(orjson.dumps({"agent_models": ["sim/echo"], "models": {"sim/echo": {"transport": "grpc"}}}))
        done = subprocess.run([sys.executable, "-m", "mpcbench_async", "sweep", "--config", str(config),
                               "--prompts", str(REPO / "prompt_config.json"), "--out", str(tmp_path / "out")],
                              capture_output=True, text=True, cwd=tmp_path)
        assert (2, f"error: {config}: models.sim/echo: unknown transport 'grpc'; registered transports: "
                   "anthropic, gemini, native, openai, record, replay - at `$.transport`\n") == (
            done.returncode, done.stderr)


class TestCallRecords:
    def test_native_calls_are_written_exactly_as_before(self):
        """A native call record has no transport field on disk (others have); an old record reads as native."""
        assert b'{"model":"m","key":"k","status":"ok","usage":{}}' == msgspec.json.encode(
            LLMCallRecord(model="m", key="k", status="ok"))
        assert b'{"model":"m","key":"k","status":"ok","usage":{},"transport":"replay"}' == msgspec.json.encode(
            LLMCallRecord(model="m", key="k", status="ok", transport="replay"))
        assert "native" == msgspec.json.decode(b'{"model":"m","key":"k","status":"ok"}', type=LLMCallRecord).transport
