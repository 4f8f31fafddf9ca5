"""The Gemini transport (generateContent / streamGenerateContent): the mapping both ways, recorded replies in the
documented shape, the embedded sim's Gemini endpoints, and a whole sweep that scores as the OpenAI shape does
(issue 29 points 1, 2)."""

from __future__ import annotations

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from mpcbench_async import LLMClient, ModelConfig
from mpcbench_async._redact import redact
from mpcbench_async.llm import ChatRequest, Endpoint
from mpcbench_async.llm._gemini import from_gemini, retry_hint, to_gemini
from mpcbench_async.llm._registry import create_transport
from mpcbench_async.sim import SimServer
from tests.llm.providers import FIXTURES, WEATHER, config, refused, sweep_results, user


def test_the_request_maps_system_calls_and_results():
    body = {"model": "gemini-x", "temperature": 0, "max_tokens": 64, "stop": "END", "tool_choice": "required",
            "tools": [WEATHER],
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Weather in SF and NYC?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather",
                                                                  "arguments": '{"location": "SF"}'}},
                    {"id": "c2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "15 C"},
                {"role": "tool", "tool_call_id": "c2", "content": "9:00"},
                {"role": "user", "content": "Thanks"}]}
    assert {
        "systemInstruction": {"parts": [{"text": "You are terse."}]},
        "tools": [{"functionDeclarations": [{"name": "get_weather", "description": "Weather at a place",
                                             "parameters": WEATHER["function"]["parameters"]}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
        "generationConfig": {"temperature": 0, "maxOutputTokens": 64, "stopSequences": ["END"]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in SF and NYC?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"location": "SF"}}},
                                        {"functionCall": {"name": "get_time", "args": {}}}]},
            {"role": "user", "parts": [  # results are named after the call they answer, in one user turn
                {"functionResponse": {"name": "get_weather", "response": {"content": "15 C"}}},
                {"functionResponse": {"name": "get_time", "response": {"content": "9:00"}}}]},
            {"role": "user", "parts": [{"text": "Thanks"}]}],
    } == to_gemini(body)


def test_a_recorded_function_call_reply():
    completion = from_gemini(orjson.loads((FIXTURES / "gemini_function_call.json").read_bytes()))
    [choice] = completion["choices"]
    assert ("Let me look up the theaters.", "tool_calls") == (choice["message"]["content"], choice["finish_reason"])
    assert [{"id": "call_0", "type": "function",
             "function": {"name": "find_theaters", "arguments": '{"location":"Mountain View, CA","movie":"Barbie"}'}}
            ] == choice["message"]["tool_calls"]
    assert {"prompt_tokens": 2108, "completion_tokens": 27 + 5, "total_tokens": 2140,
            "prompt_tokens_details": {"cached_tokens": 2048}} == completion["usage"]
    assert "content_filter" == from_gemini({"promptFeedback": {"blockReason": "SAFETY"}})["choices"][0][
        "finish_reason"]


def test_a_429s_retry_info_is_the_retry_after():
    body = orjson.dumps({"error": {"code": 429, "message": "Resource has been exhausted", "status":
                                   "RESOURCE_EXHAUSTED", "details": [
                                       {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}]}})
    assert {"retry-after": "17"} == retry_hint(429, body, {})
    assert {"Retry-After": "3"} == retry_hint(429, body, {"Retry-After": "3"})


@pytest.mark.parametrize("stream", [False, True])
async def test_recorded_replies_through_the_transport(stream):
    seen: list[dict] = []

    async def generate(request: web.Request) -> web.StreamResponse:
        seen.append({"path": request.path, "query": dict(request.query), "headers": dict(request.headers)})
        if not stream:
            return web.Response(body=(FIXTURES / "gemini_function_call.json").read_bytes(),
                                content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write((FIXTURES / "gemini_stream.txt").read_bytes())
        return response

    app = web.Application()
    app.router.add_post("/v1beta/models/{name}", generate)
    async with TestServer(app) as server:
        transport = create_transport("gemini")
        endpoint = Endpoint(model="gem", api_model="gemini-2.0-flash", base_url=str(server.make_url("/v1beta")),
                            api_key="AIzaTestKey")
        body = {"model": "gemini-2.0-flash", "messages": [{"role": "user", "content": "Weather?"}],
                "tools": [WEATHER], **({"stream": True} if stream else {})}
        try:
            completion = await transport.complete(endpoint, ChatRequest(body=body, payload=b"", key="k1"))
        finally:
            await transport.aclose()
    [sent] = seen
    method = "streamGenerateContent" if stream else "generateContent"
    assert (f"/v1beta/models/gemini-2.0-flash:{method}", "AIzaTestKey") == (sent["path"],
                                                                          sent["headers"]["x-goog-api-key"])
    assert ({"alt": "sse"} if stream else {}) == sent["query"]
    message = completion.choices[0].message
    if stream:
        assert ("The weather in Boston is cold.", [("get_weather", '{"location":"Boston, MA"}')], 3) == (
            message.content, [(c.function.name, c.function.arguments) for c in message.tool_calls or []],
            completion.stream.chunks if completion.stream else None)
        assert (9, 14) == (completion.usage.prompt_tokens, completion.usage.completion_tokens)
    else:
        assert ["find_theaters"] == [c.function.name for c in message.tool_calls or []]


@pytest.mark.parametrize("text, key", [
    ("x-api-key: sk-ant-api03-Zx81kQ0aB7cD9eF1gH3iJ5kL7mN9oP1qR3sT5uV7",
     "sk-ant-api03-Zx81kQ0aB7cD9eF1gH3iJ5kL7mN9oP1qR3sT5uV7"),
    ('{"x-goog-api-key": "AIzaSyA1234567890abcdefghijklmnopqrstu"}', "AIzaSyA1234567890abcdefghijklmnopqrstu"),
    ("POST https://h/v1beta/models/m:generateContent?key=Qw3rTy7uIo9pAs1dFg5hJk8l failed", "Qw3rTy7uIo9pAs1dFg5hJk8l"),
])
def test_each_providers_key_is_redacted_unregistered(text, key):
    """Each provider's key header, and a key in a URL, masked by its shape alone (no key registered)."""
    out = redact(text)
    assert key not in out and key[4:-4] not in out


@pytest.mark.parametrize("stream", [False, True])
async def test_the_sim_gives_the_same_reply_as_the_openai_shape(stream):
    async with SimServer(seed=7) as sim:
        replies = {}
        for provider in ("openai", "gemini"):
            async with LLMClient(config(provider), sim_base_url=sim.base_url) as client:
                replies[provider] = [await client.chat(model, user("Plan the review of release 4"), tools=[WEATHER],
                                                       stream=stream)
                                     for model in ("sim/echo", "sim/oracle-agent")]
    for native, gemini in zip(replies["openai"], replies["gemini"], strict=True):
        assert (native.content, native.finish_reason) == (gemini.content, gemini.finish_reason)
        assert [(c.function.name, orjson.loads(c.function.arguments)) for c in native.tool_calls] == [
            (c.function.name, orjson.loads(c.function.arguments)) for c in gemini.tool_calls]
        assert (gemini.ttft_s is not None) == stream


async def test_the_sims_429_is_resource_exhausted_and_retried():
    from mpcbench_async import RateLimitError

    async with SimServer(seed=7) as sim:
        model = "sim/echo?fault=429&fail_first=1"
        exc = await refused(sim, "gemini", model, RateLimitError)
        async with LLMClient(config("gemini"), sim_base_url=sim.base_url) as client:
            result = await client.chat(model, user("again"), key="k-429b")
        assert 2 == sim.stats.received["k-429b"]
    assert 429 == exc.status and exc.retry_after is not None
    assert (2, "echo: again") == (result.attempts, result.content)


async def test_a_sweep_scores_the_same_through_generate_content(tmp_path):
    async with SimServer(seed=11) as sim:
        summaries, answers = {}, {}
        for provider in ("openai", "gemini"):
            summaries[provider], answers[provider] = await sweep_results(tmp_path / provider, sim, provider)
    assert summaries["openai"] == summaries["gemini"]
    assert answers["openai"] == answers["gemini"]

async def test_the_key_comes_from_gemini_api_key_or_google_api_key(monkeypatch):
    from mpcbench_async import MissingAPIKeyError

    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    cfg = ModelConfig.from_dict({"models": {"gemini-2.5-flash": {"provider": "gemini"}}})
    assert ("gemini", "GEMINI_API_KEY") == (cfg.settings_for("gemini-2.5-flash").transport,
                                            cfg.settings_for("gemini-2.5-flash").api_key_env)
    client = LLMClient(cfg)
    try:
        with pytest.raises(MissingAPIKeyError,
                           match=r"set the environment variable GEMINI_API_KEY \(or GOOGLE_API_KEY\)"):
            client.check_models(["gemini-2.5-flash"])
    finally:
        await client.aclose()
    monkeypatch.setenv("GOOGLE_API_KEY", "AIzaFallbackKey0123456789")
    client = LLMClient(cfg)
    try:
        client.check_models(["gemini-2.5-flash"])
    finally:
        await client.aclose()


async def test_the_sims_503_is_unavailable_in_googles_shape_and_retried():
    from mpcbench_async import ServerError

    async with SimServer(seed=7) as sim:
        model = "sim/echo?fault=503&fail_first=1"
        exc = await refused(sim, "gemini", model, ServerError)
        async with LLMClient(config("gemini"), sim_base_url=sim.base_url) as client:
            result = await client.chat(model, user("again"), key="k-503b", stream=True)
    assert 503 == exc.status
    assert (2, "echo: again") == (result.attempts, result.content)


async def test_a_stream_without_a_finish_reason_is_cut_off():
    from mpcbench_async import BadResponseError

    async def generate(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write((FIXTURES / "gemini_stream.txt").read_bytes().split(b"\r\n\r\n")[0] + b"\r\n\r\n")
        return response

    app = web.Application()
    app.router.add_post("/v1beta/models/{name}", generate)
    async with TestServer(app) as server:
        transport = create_transport("gemini")
        endpoint = Endpoint(model="gem", api_model="gemini-2.0-flash", base_url=str(server.make_url("/v1beta")))
        body = {"model": "gemini-2.0-flash", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        try:
            with pytest.raises(BadResponseError, match="the stream ended before a finishReason"):
                await transport.complete(endpoint, ChatRequest(body=body, payload=b"", key="k"))
        finally:
            await transport.aclose()
