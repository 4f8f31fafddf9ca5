"""The Gemini API transport (generateContent, streamGenerateContent?alt=sse): the mapping both ways, replies as the
API documents them, the embedded sim's endpoints, and a whole sweep that scores as the OpenAI shape does."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from mpcbench_async import LLMClient, MissingAPIKeyError, ModelConfig
from mpcbench_async.llm import ChatRequest, Endpoint, create_transport
from mpcbench_async.llm._gemini import from_gemini, to_gemini
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import SweepOptions, run_sweep, summarize
from mpcbench_async.testing import write_workspace
from tests.llm.test_anthropic import WEATHER, user
from tests.sweep.conftest import FAST_RETRY

FIXTURES = Path(__file__).parent.parent / "fixtures" / "providers"


def test_the_request_maps_to_contents_parts_and_declarations():
    body = {"model": "gemini-2.5-flash", "max_tokens": 99, "temperature": 0.2, "stop": ["END"], "tools": [WEATHER],
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Weather in SF?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather",
                                                                  "arguments": '{"location": "SF"}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "15 C"}]}
    assert {
        "systemInstruction": {"parts": [{"text": "You are terse."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in SF?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"location": "SF"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "get_weather",
                                                             "response": {"content": "15 C"}}}]}],
        "tools": [{"functionDeclarations": [{"name": "get_weather", "description": "Weather at a place",
                                             "parameters": WEATHER["function"]["parameters"]}]}],
        "generationConfig": {"temperature": 0.2, "maxOutputTokens": 99, "stopSequences": ["END"]},
    } == to_gemini(body)


def test_a_documented_function_call_reply():
    completion = from_gemini(orjson.loads((FIXTURES / "gemini_function_call.json").read_bytes()))
    [choice] = completion["choices"]
    assert ("tool_calls", None) == (choice["finish_reason"], choice["message"]["content"])
    assert [{"id": "call_Xb0SaKqnC4-b1dkP6v_x6AM_0", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"location":"Boston, MA"}'}}] \
        == choice["message"]["tool_calls"]
    assert {"prompt_tokens": 76, "completion_tokens": 17, "total_tokens": 93,
            "prompt_tokens_details": {"cached_tokens": 32}} == completion["usage"]


@pytest.mark.parametrize("stream", [False, True])
async def test_through_the_transport_with_the_key_in_a_header(stream):
    seen: list[tuple[str, dict]] = []

    async def generate(request: web.Request) -> web.StreamResponse:
        seen.append((request.path_qs, dict(request.headers)))
        if not stream:
            return web.Response(body=(FIXTURES / "gemini_function_call.json").read_bytes(),
                                content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write((FIXTURES / "gemini_stream.txt").read_bytes())
        return response

    app = web.Application()
    app.router.add_post("/v1beta/models/{target:.+}", generate)
    async with TestServer(app) as server:
        transport = create_transport("gemini")
        endpoint = Endpoint(model="gemini", api_model="gemini-2.5-flash", base_url=str(server.make_url("/v1beta")),
                            api_key="AIza-test-key")
        body = {"model": "gemini-2.5-flash", "messages": [{"role": "user", "content": "Weather?"}],
                **({"stream": True} if stream else {})}
        try:
            completion = await transport.complete(endpoint, ChatRequest(body=body, payload=b"", key="k1"))
        finally:
            await transport.aclose()
    [(path, headers)] = seen
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    assert f"/v1beta/models/gemini-2.5-flash:{method}" == path and "key=" not in path
    assert ("AIza-test-key", None) == (headers["x-goog-api-key"], headers.get("Authorization"))
    message = completion.choices[0].message
    if stream:
        assert ("The weather in Boston is sunny.", 20) == (message.content, completion.usage.total_tokens)
        assert completion.stream is not None and 2 == completion.stream.chunks
    else:
        assert ["get_weather"] == [c.function.name for c in message.tool_calls or []]


async def test_a_missing_key_names_its_variable(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    client = LLMClient(ModelConfig.from_dict({"models": {"gemini-2.5-flash": {"provider": "gemini"}}}))
    try:
        with pytest.raises(MissingAPIKeyError, match="set the environment variable GEMINI_API_KEY"):
            client.check_models(["gemini-2.5-flash"])
    finally:
        await client.aclose()


@pytest.mark.parametrize("stream", [False, True])
async def test_the_sim_answers_as_the_openai_shape(stream):
    async with SimServer(seed=7) as sim:
        replies = {}
        for provider in ("openai", "gemini"):
            config = ModelConfig.from_dict({"defaults": {"provider": provider, **FAST_RETRY}})
            async with LLMClient(config, sim_base_url=sim.base_url) as client:
                replies[provider] = [await client.chat(model, user("Plan the review of release 4"), tools=[WEATHER],
                                                       stream=stream) for model in ("sim/echo", "sim/oracle-agent")]
    for native, gemini in zip(replies["openai"], replies["gemini"], strict=True):
        assert (native.content, native.finish_reason) == (gemini.content, gemini.finish_reason)
        assert [(c.function.name, orjson.loads(c.function.arguments)) for c in native.tool_calls] == [
            (c.function.name, orjson.loads(c.function.arguments)) for c in gemini.tool_calls]


async def test_a_sweep_scores_the_same_through_generate_content(tmp_path):
    results = {}
    async with SimServer(seed=11) as sim:
        for provider in ("openai", "gemini"):
            root = write_workspace(tmp_path / provider, base_url=sim.base_url, tasks=3,
                                   agent_models=("sim/oracle-agent", "sim/lazy-agent"),
                                   defaults={**FAST_RETRY, "provider": provider})
            out = tmp_path / provider / "out"
            await run_sweep(SweepOptions(config=root / "model_config.json", prompts=root / "prompt_config.json",
                                         out=out, tasks_dir=root / "tasks", data_dir=root / "data",
                                         scenarios_dir=root / "scenarios", handle_signals=False, certificate=False))
            results[provider] = ({(m.model, m.stats.ars.mean, m.stats.sgr.mean, m.stats.check_rate.mean)
                                  for m in summarize(out).models},
                                 sorted((r["model"], r["task_id"], r["run"]["final_answer"])
                                        for r in map(orjson.loads, (out / "runs.jsonl").read_bytes().splitlines())))
    assert results["openai"] == results["gemini"]
