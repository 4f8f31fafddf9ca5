"""The Anthropic Messages API transport: the mapping both ways, recorded replies from the API's documented examples,
the embedded sim's /v1/messages, and a whole sweep that scores as the OpenAI shape does (issue 29 points 1, 2)."""

from __future__ import annotations

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from mpcbench_async import LLMClient, MissingAPIKeyError, ModelConfig
from mpcbench_async.llm import ChatRequest, Endpoint
from mpcbench_async.llm._anthropic_shape import DEFAULT_MAX_TOKENS, from_anthropic, to_anthropic
from mpcbench_async.llm._registry import create_transport
from mpcbench_async.sim import FaultSpec, SimServer
from tests.llm.providers import FIXTURES, WEATHER, config, refused, sweep_results, user
from tests.sweep.conftest import FAST_RETRY


class TestRequestMapping:
    def test_system_tool_calls_and_results_become_blocks(self):
        body = {"model": "claude-x", "temperature": 0, "stop": "END", "tool_choice": "required", "tools": [WEATHER],
                "messages": [
                    {"role": "system", "content": "You are terse."},
                    {"role": "user", "content": "Weather in SF and NYC?"},
                    {"role": "assistant", "content": "Checking.", "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "get_weather",
                                                                      "arguments": '{"location": "SF"}'}},
                        {"id": "c2", "type": "function", "function": {"name": "get_weather",
                                                                      "arguments": "not json"}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "15 C"},
                    {"role": "tool", "tool_call_id": "c2", "content": "20 C"},
                    {"role": "user", "content": "Thanks"}]}
        assert {
            "model": "claude-x", "max_tokens": DEFAULT_MAX_TOKENS, "temperature": 0, "stop_sequences": ["END"],
            "system": [{"type": "text", "text": "You are terse."}],
            "tools": [{"name": "get_weather", "description": "Weather at a place",
                       "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}}}],
            "tool_choice": {"type": "any"},
            "messages": [
                {"role": "user", "content": "Weather in SF and NYC?"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"location": "SF"}},
                    {"type": "tool_use", "id": "c2", "name": "get_weather", "input": {"arguments": "not json"}}]},
                {"role": "user", "content": [  # the turn's results together, in one user message
                    {"type": "tool_result", "tool_use_id": "c1", "content": "15 C"},
                    {"type": "tool_result", "tool_use_id": "c2", "content": "20 C"}]},
                {"role": "user", "content": "Thanks"}],
        } == to_anthropic(body)

    def test_prompt_cache_marks_the_stable_prefix(self):
        body = {"model": "m", "max_tokens": 50, "tools": [WEATHER],
                "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]}
        out = to_anthropic(body, prompt_cache=True)
        assert ({"type": "ephemeral"}, {"type": "ephemeral"}, 50) == (
            out["system"][-1]["cache_control"], out["tools"][-1]["cache_control"], out["max_tokens"])
        assert "cache_control" not in orjson.dumps(out["messages"]).decode()


class TestRecordedReplies:
    """Replies as the API documents them, served by a small recorded server."""

    def test_a_tool_use_reply(self):
        completion = from_anthropic(orjson.loads((FIXTURES / "anthropic_tool_use.json").read_bytes()))
        [choice] = completion["choices"]
        assert ("I'll check the current weather in San Francisco for you.", "tool_calls") == (
            choice["message"]["content"], choice["finish_reason"])
        assert [{"id": "toolu_01A09q90qw90lq917835lq9", "type": "function",
                 "function": {"name": "get_weather",
                              "arguments": '{"location":"San Francisco, CA","unit":"celsius"}'}}] \
            == choice["message"]["tool_calls"]
        # cache reads and writes are prompt tokens; the reads are the cached ones (priced as cached input)
        assert {"prompt_tokens": 472 + 2051 + 1200, "completion_tokens": 89, "total_tokens": 472 + 2051 + 1200 + 89,
                "prompt_tokens_details": {"cached_tokens": 1200, "cache_write_tokens": 2051}} == completion["usage"]

    def test_cache_reads_and_writes_are_priced_as_such(self):
        """Sonnet 4.5 at the table's rates: input $3, cache read $0.30, cache write (5 min) $3.75, output $15."""
        from mpcbench_async.llm._prices import PRICE_TABLE
        from mpcbench_async.llm._wire import completion_from_builtins

        reply = from_anthropic(orjson.loads((FIXTURES / "anthropic_tool_use.json").read_bytes()))
        usage = completion_from_builtins(reply, model="claude", endpoint="e").usage
        assert usage is not None and (1200, 0) == usage.cached_and_reasoning() and 2051 == usage.cache_writes()
        prices = PRICE_TABLE["claude-sonnet-4-5"]
        assert 3.75 == prices.cache_write_per_1m
        assert pytest.approx((472 * 3.00 + 1200 * 0.30 + 2051 * 3.75 + 89 * 15.00) / 1e6, rel=1e-12) == prices.cost(
            usage.prompt_tokens or 0, usage.completion_tokens or 0, cached_tokens=1200, cache_write_tokens=2051)

    @pytest.mark.parametrize("stream", [False, True])
    async def test_through_the_transport(self, stream):
        seen: list[dict] = []

        async def messages(request: web.Request) -> web.StreamResponse:
            seen.append({"headers": dict(request.headers), "body": await request.json()})
            limits = {"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49",
                      "request-id": "req_018EeWyXxfu5pfWkrYcMdjWG"}
            if not stream:
                return web.Response(body=(FIXTURES / "anthropic_tool_use.json").read_bytes(),
                                    content_type="application/json", headers=limits)
            response = web.StreamResponse(headers={**limits, "Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write((FIXTURES / "anthropic_stream.txt").read_bytes())
            return response

        app = web.Application()
        app.router.add_post("/v1/messages", messages)
        async with TestServer(app) as server:
            transport = create_transport("anthropic")
            endpoint = Endpoint(model="claude", api_model="claude-sonnet-4-5", base_url=str(server.make_url("/v1")),
                                api_key="sk-ant-test")
            body = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "Weather in SF?"}],
                    "tools": [WEATHER], **({"stream": True} if stream else {})}
            try:
                completion = await transport.complete(endpoint, ChatRequest(body=body, payload=orjson.dumps(body),
                                                                            key="k1"))
            finally:
                await transport.aclose()
        [sent] = seen
        assert ("sk-ant-test", "2023-06-01", "k1") == (sent["headers"]["x-api-key"],
                                                       sent["headers"]["anthropic-version"],
                                                       sent["headers"]["Idempotency-Key"])
        assert "Authorization" not in sent["headers"] and sent["body"]["max_tokens"] == DEFAULT_MAX_TOKENS
        message = completion.choices[0].message
        assert ["get_weather"] == [c.function.name for c in message.tool_calls or []]
        assert {"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49"} \
            == completion.rate_limit_headers
        assert "req_018EeWyXxfu5pfWkrYcMdjWG" == completion.request_id
        if stream:
            assert ("Okay, let's check the weather for San Francisco, CA:", '{"location":"San Francisco, CA"}') == (
                message.content, message.tool_calls[0].function.arguments)
            assert completion.stream is not None and 6 == completion.stream.chunks  # 2 text + 4 input deltas


class TestAgainstTheSim:
    @pytest.mark.parametrize("stream", [False, True])
    async def test_the_same_reply_as_the_openai_shape(self, stream):
        tools = [WEATHER]
        async with SimServer(seed=7) as sim:
            replies = {}
            for provider in ("openai", "anthropic"):
                async with LLMClient(config(provider), sim_base_url=sim.base_url) as client:
                    replies[provider] = [await client.chat(model, user("Plan the review of release 4"), tools=tools,
                                                           stream=stream)
                                         for model in ("sim/echo", "sim/oracle-agent")]
        for native, anthropic in zip(replies["openai"], replies["anthropic"], strict=True):
            assert (native.content, native.finish_reason) == (anthropic.content, anthropic.finish_reason)
            assert [(c.function.name, c.function.arguments) for c in native.tool_calls] == [
                (c.function.name, orjson.dumps(orjson.loads(c.function.arguments)).decode())
                for c in anthropic.tool_calls]
            assert (anthropic.ttft_s is not None) == stream

    async def test_overloaded_529_is_retried(self):
        """The sim's 503 fault is Anthropic's 529 overloaded_error on /v1/messages: a retryable ServerError."""
        from mpcbench_async import ServerError

        async with SimServer(seed=7) as sim:
            assert 529 == (await refused(sim, "anthropic", "sim/echo?fault=503&fail_first=1", ServerError)).status
            async with LLMClient(config("anthropic"), sim_base_url=sim.base_url) as client:
                result = await client.chat("sim/echo?fault=503&fail_first=1", user("again"), key="k-529")
            assert 2 == sim.stats.received["k-529"]  # the first refused, the retry served
        assert (2, "echo: again") == (result.attempts, result.content)

    async def test_a_wrong_key_is_the_providers_401_with_the_key_masked(self, monkeypatch):
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong-0123456789")
        async with SimServer(seed=7, defaults=FaultSpec(api_key="sk-ant-right")) as sim:
            remote = ModelConfig.from_dict({"models": {"claude": {"provider": "anthropic", "model": "sim/echo",
                                                                  "base_url": sim.base_url, **FAST_RETRY}}})
            async with LLMClient(remote) as client:
                with pytest.raises(Exception) as exc:
                    await client.chat("claude", user("hi"))
        text = str(exc.value)
        assert "HTTP 401" in text and "Incorrect API key provided" in text
        assert "sk-ant-wrong-0123456789" not in text  # the key the sim quotes back is masked


class TestConfig:
    def test_the_provider_sets_the_transport_and_key_unless_set(self):
        cfg = ModelConfig.from_dict({"models": {"a": {"provider": "anthropic"},
                                                "b": {"provider": "anthropic", "api_key_env": "MY_KEY"}}})
        a, b = cfg.settings_for("a"), cfg.settings_for("b")
        assert ("anthropic", "ANTHROPIC_API_KEY", "anthropic", "MY_KEY") == (
            a.transport, a.api_key_env, b.transport, b.api_key_env)
        assert ("native", "OPENAI_API_KEY") == (cfg.settings_for("c").transport, cfg.settings_for("c").api_key_env)

    async def test_a_missing_key_names_its_variable(self, monkeypatch):
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        client = LLMClient(ModelConfig.from_dict({"models": {"claude-sonnet-4-5": {"provider": "anthropic"}}}))
        try:
            with pytest.raises(MissingAPIKeyError, match="set the environment variable ANTHROPIC_API_KEY"):
                client.check_models(["claude-sonnet-4-5"])
        finally:
            await client.aclose()


async def test_a_sweep_scores_the_same_through_the_messages_api(tmp_path):
    """Agents and judge on the Messages API (the sim's /v1/messages): the same answers, checks and scores as the
    same sweep on chat completions."""
    async with SimServer(seed=11) as sim:
        summaries, answers = {}, {}
        for provider in ("openai", "anthropic"):
            summaries[provider], answers[provider] = await sweep_results(tmp_path / provider, sim, provider)
        assert sim.stats.statuses.get("200", 0) > 0
    assert summaries["openai"] == summaries["anthropic"]
    assert answers["openai"] == answers["anthropic"]
