"""The sim's streamed replies over real HTTP: OpenAI-shaped chunks, token counts, fixed output length, cuts."""

from __future__ import annotations

import aiohttp
import openai
import orjson
import pytest

from mpcbench_async.perf import sim_subprocess
from mpcbench_async.sim import SimServer
from mpcbench_async.sim._stream import stream_events

USAGE_ON = {"stream": True, "stream_options": {"include_usage": True}}


def body(model: str, text: str = "hello streaming world", **extra: object) -> bytes:
    return orjson.dumps({"model": model, "messages": [{"role": "user", "content": text}], **extra})


async def post(sim: SimServer, payload: bytes, key: str = "k") -> tuple[int, dict[str, str], bytes, bool]:
    """Status, headers, the body bytes that arrived, and whether the body ended properly."""
    received = b""
    async with aiohttp.ClientSession() as session:
        async with session.post(sim.base_url + "/chat/completions", data=payload,
                                headers={"Idempotency-Key": key}) as resp:
            try:
                async for data in resp.content.iter_any():
                    received += data
            except aiohttp.ClientPayloadError:
                return resp.status, dict(resp.headers), received, False
            return resp.status, dict(resp.headers), received, True


def events(raw: bytes) -> list[dict | str]:
    """The ``data:`` payloads of an SSE body: decoded chunks, and ``"[DONE]"``."""
    out: list[dict | str] = []
    for event in raw.split(b"\n\n"):
        if event:
            assert event.startswith(b"data: ")
            data = event.removeprefix(b"data: ")
            out.append("[DONE]" if data == b"[DONE]" else orjson.loads(data))
    return out


def deltas(chunks: list[dict | str]) -> list[dict]:
    return [c["choices"][0]["delta"] for c in chunks if isinstance(c, dict) and c["choices"]]


class TestStreamShape:
    async def test_a_streamed_reply_is_the_plain_one_in_openai_chunks(self, sim):
        """Role chunk, one chunk per reported completion token, finish chunk, usage chunk, [DONE]."""
        status, _, plain, _ = await post(sim, body("sim/echo"))
        status, headers, raw, ended = await post(sim, body("sim/echo", **USAGE_ON))
        reply = orjson.loads(plain)
        chunks = events(raw)
        assert (200, True, "text/event-stream") == (status, ended, headers["Content-Type"])
        assert {"role": "assistant", "content": ""} == chunks[0]["choices"][0]["delta"]
        tokens = [d["content"] for d in deltas(chunks)[1:-1]]
        assert reply["usage"]["completion_tokens"] == len(tokens)
        assert reply["choices"][0]["message"]["content"] == "".join(tokens)
        assert [{}, "stop"] == [chunks[-3]["choices"][0]["delta"], chunks[-3]["choices"][0]["finish_reason"]]
        assert ([], reply["usage"]) == (chunks[-2]["choices"], chunks[-2]["usage"])
        assert "[DONE]" == chunks[-1]
        assert {"chat.completion.chunk"} == {c["object"] for c in chunks[:-1]}

    async def test_no_usage_chunk_unless_asked(self, sim):
        """Without stream_options.include_usage no chunk carries usage."""
        _, _, raw, _ = await post(sim, body("sim/echo", stream=True))
        chunks = events(raw)
        assert "[DONE]" == chunks[-1] and "stop" == chunks[-2]["choices"][0]["finish_reason"]
        assert not any("usage" in c for c in chunks[:-1])

    async def test_tool_calls_stream_as_indexed_deltas(self, sim):
        """Each call's first delta carries id, type and name; later ones argument fragments; chunks = tokens."""
        script = [{"tool_calls": [{"name": "Slack_search_messages", "arguments": {"query": "release", "limit": 5}},
                                  {"name": "Jira_get", "arguments": {"key": "AB-1"}}]}]
        messages = [{"role": "system", "content": "SIM_SCRIPT:" + orjson.dumps(script).decode()},
                    {"role": "user", "content": "go"}]
        plain = orjson.loads((await post(sim, orjson.dumps({"model": "sim/scripted", "messages": messages})))[2])
        _, _, raw, _ = await post(sim, orjson.dumps({"model": "sim/scripted", "messages": messages, **USAGE_ON}))
        chunks = events(raw)
        parts = [p for d in deltas(chunks) for p in d.get("tool_calls", ())]
        expected = plain["choices"][0]["message"]["tool_calls"]
        for index, call in enumerate(expected):
            mine = [p for p in parts if p["index"] == index]
            assert {"id": call["id"], "type": "function", "name": call["function"]["name"]} == {
                "id": mine[0]["id"], "type": mine[0]["type"], "name": mine[0]["function"]["name"]}
            assert all(set(p) == {"index", "function"} and set(p["function"]) == {"arguments"} for p in mine[1:])
            assert call["function"]["arguments"] == "".join(p["function"]["arguments"] for p in mine)
        assert {"role": "assistant", "content": None} == deltas(chunks)[0]
        assert plain["usage"]["completion_tokens"] == len(deltas(chunks)[1:-1])
        assert "tool_calls" == chunks[-3]["choices"][0]["finish_reason"]

    def test_tokens_split_evenly_across_content_and_calls(self):
        """10 characters of content and a 10-character call make 5 pieces of 4 (the piece at the seam has both)."""
        completion = {"id": "c", "created": 0, "model": "m", "usage": {"completion_tokens": 5},
                      "choices": [{"finish_reason": "tool_calls", "message": {
                          "content": "abcdefghij", "tool_calls": [
                              {"id": "call_1", "function": {"name": "fn", "arguments": '{"a":"b"}'}}]}}]}
        raw, tokens = stream_events(completion, include_usage=False)
        assert 5 == tokens
        assert [
            {"content": "abcd"},
            {"content": "efgh"},
            {"content": "ij", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                              "function": {"name": "fn", "arguments": ""}}]},
            {"tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]},
            {"tool_calls": [{"index": 0, "function": {"arguments": ':"b"}'}}]},
        ] == deltas(events(b"".join(raw)))[1:-1]

    async def test_prompt_tokens_do_not_count_the_stream_flags(self, sim):
        """The same prompt streamed or not reports the same prompt tokens."""
        plain = orjson.loads((await post(sim, body("sim/echo")))[2])
        streamed = events((await post(sim, body("sim/echo", **USAGE_ON)))[2])
        assert plain["usage"] == streamed[-2]["usage"]


class TestOutputTokens:
    @pytest.mark.parametrize(("tokens", "content"), [
        (2, "echo: he"),
        (8, "echo: hello streaming world lorem ipsum"[:32]),
    ])
    async def test_content_is_exactly_n_tokens_streamed_or_not(self, sim, tokens, content):
        """output_tokens=N cuts the reply or pads it with filler words to 4N characters, N completion tokens."""
        model = f"sim/echo?output_tokens={tokens}"
        plain = orjson.loads((await post(sim, body(model)))[2])
        chunks = events((await post(sim, body(model, **USAGE_ON)))[2])
        assert (content, tokens) == (plain["choices"][0]["message"]["content"], plain["usage"]["completion_tokens"])
        assert [4] * tokens == [len(d["content"]) for d in deltas(chunks)[1:-1]]

    @pytest.mark.parametrize(("option", "message"), [
        ("tokens_per_s=-1", "Expected `float` >= 0.0 - at `$.tokens_per_s`"),
        ("output_tokens=0", "Expected `int` >= 1 - at `$.output_tokens`"),
    ])
    async def test_bad_stream_options_are_a_400_naming_the_field(self, sim, option, message):
        status, _, raw, _ = await post(sim, body(f"sim/echo?{option}", **USAGE_ON))
        assert (400, f"bad sim options in model name 'sim/echo?{option}': {message}") == (
            status, orjson.loads(raw)["error"]["message"])


class TestCut:
    @pytest.mark.parametrize("option", ["fault=cut&fail_first=1", "pcut=1"])
    async def test_a_cut_stream_breaks_off_after_half_its_events(self, sim, option):
        """The first half of the events arrive, then the connection closes: no [DONE], not completed."""
        model = f"sim/echo?{option}&output_tokens=6"  # role + 6 tokens + finish + usage + [DONE] = 10 events
        status, _, raw, ended = await post(sim, body(model, **USAGE_ON), key="k-cut")
        chunks = events(raw)
        assert (200, False, 5) == (status, ended, len(chunks))
        assert "[DONE]" not in chunks
        assert ({"k-cut": 1}, {}, {"cut": 1}) == (sim.stats.received, sim.stats.completed, sim.stats.faults)

    async def test_a_cut_plain_reply_is_truncated(self, sim):
        """Cut on a non-streamed request: the body breaks off short of its length."""
        status, _, raw, ended = await post(sim, body("sim/echo?fault=cut&fail_first=1"), key="k-cut")
        assert (200, False) == (status, ended)
        assert raw.startswith(b'{"id": "chatcmpl-cut"')
        assert {} == sim.stats.completed

    async def test_the_retry_after_a_cut_completes(self, sim):
        """fail_first=1: the second request for the key streams whole."""
        payload = body("sim/echo?fault=cut&fail_first=1", **USAGE_ON)
        assert False is (await post(sim, payload, key="k-cut"))[3]
        assert True is (await post(sim, payload, key="k-cut"))[3]
        assert ({"k-cut": 2}, {"k-cut": 1}) == (sim.stats.received, sim.stats.completed)


class TestServe:
    def test_sim_serve_streams_to_the_openai_sdks_own_parser(self):
        """`sim serve --tokens-per-s --output-tokens`: the SDK's own stream parser reads its chunks and usage."""
        with sim_subprocess(["--tokens-per-s", "1000", "--output-tokens", "5"]) as base_url:
            client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)
            chunks = list(client.chat.completions.create(
                model="sim/echo", messages=[{"role": "user", "content": "yo"}], stream=True,
                stream_options={"include_usage": True}))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert ("echo: yo lorem ipsum", 5) == (text, chunks[-1].usage.completion_tokens)
        assert 5 == sum(1 for c in chunks if c.choices and c.choices[0].delta.content)
