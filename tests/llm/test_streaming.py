"""Streamed replies (``stream: true``): SSE parsing and assembly, both transports against the sim, timing records."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import msgspec
import orjson
import pytest
from aiohttp import web

from mpcbench_async import (
    BadResponseError,
    LLMCallRecord,
    LLMError,
    Message,
    ModelConfig,
    PermanentLLMError,
    RateLimitError,
    ServerError,
    Usage,
)
from mpcbench_async.llm import ChatRequest, Endpoint, LLMClient, RecordTransport, StreamTiming
from mpcbench_async.llm._layer import Call
from mpcbench_async.llm._registry import create_transport
from mpcbench_async.llm._store import CallStore
from mpcbench_async.llm._stream import SSEParser, StreamAssembler

TRANSPORTS = ["native", "openai"]
URL = "http://test/v1/chat/completions"


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


def scripted(steps: list[dict]) -> list[Message]:
    return [Message(role="system", content="SIM_SCRIPT:" + orjson.dumps(steps).decode()),
            Message(role="user", content="go")]


def chunk(delta: dict | None = None, *, finish: str | None = None, **extra: object) -> bytes:
    """One SSE event carrying a ``chat.completion.chunk`` (a delta of choice 0 unless ``choices`` is given)."""
    body: dict = {"id": "c1", "object": "chat.completion.chunk", "model": "m",
                  "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}], **extra}
    return b"data: " + orjson.dumps(body) + b"\n\n"


DONE = b"data: [DONE]\n\n"
USAGE = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}


def assemble(*parts: bytes, times: list[float] | None = None) -> tuple:
    """Feed ``parts`` (at ``times``, default 1, 2, 3…) to an assembler started at 0; the completion."""
    assembler = StreamAssembler(0.0, model="m", endpoint=URL)
    times = times or [float(i + 1) for i in range(len(parts))]
    for part, now in zip(parts, times, strict=True):
        assembler.feed(part, now)
    return assembler.finish(times[-1] + 1.0)


class TestSSEParser:
    def test_multi_line_data_fields_join_with_newlines(self):
        """Consecutive ``data:`` lines form one event, joined by \\n (JSON may be spread over lines)."""
        assert [("message", b'{"a":\n1}')] == SSEParser().feed(b'data: {"a":\ndata: 1}\n\n')

    def test_comments_event_names_and_unknown_fields(self):
        """``: ping`` comments and ``id:``/``retry:`` fields are skipped; ``event:`` names the event."""
        events = SSEParser().feed(b": ping\n\nid: 7\nretry: 10\nevent: error\ndata: x\n\ndata:y\n\n")
        assert [("error", b"x"), ("message", b"y")] == events

    @pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
    def test_every_line_end_fed_byte_by_byte(self, end):
        """\\n, \\r\\n and \\r all end lines, also when a read splits a \\r\\n."""
        stream = b"data: a" + end + b"data: b" + end + end + b": ping" + end + b"data: c" + end + end
        parser = SSEParser()
        events = [event for i in range(len(stream)) for event in parser.feed(stream[i:i + 1])]
        assert [("message", b"a\nb"), ("message", b"c")] == events + parser.close()

    @pytest.mark.parametrize("step", [1, 2, 64])
    def test_a_byte_order_mark_at_the_start_is_stripped(self, step):
        """A UTF-8 BOM before the first field (allowed by the SSE spec) does not hide the first event, however split."""
        stream = b"\xef\xbb\xbfdata: first\n\ndata: second\n\n"
        parser = SSEParser()
        events = [event for i in range(0, len(stream), step) for event in parser.feed(stream[i:i + step])]
        assert [("message", b"first"), ("message", b"second")] == events

    def test_an_event_without_its_blank_line_counts_at_the_end(self):
        """A last event not followed by a blank line is still delivered when the body ends."""
        parser = SSEParser()
        assert ([], [("message", b"[DONE]")]) == (parser.feed(b"data: [DONE]"), parser.close())


class TestAssembler:
    def test_content_finish_usage_and_timing(self):
        """Content concatenated; usage from the empty-choices usage chunk; TTFT/ITL from token chunks only."""
        completion = assemble(
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}) + chunk({"content": "!"}),  # two chunks in one read: one arrival time
            chunk(finish="stop") + b"data: " + orjson.dumps({"id": "c1", "choices": [], "usage": USAGE}) + b"\n\n",
            DONE,
            times=[1.0, 1.5, 2.25, 3.0, 3.5],
        )
        message = completion.choices[0].message
        assert ("Hello!", None, "stop") == (message.content, message.tool_calls, completion.choices[0].finish_reason)
        assert (5, 3, 8) == (completion.usage.prompt_tokens, completion.usage.completion_tokens,
                             completion.usage.total_tokens)
        assert StreamTiming(ttft_s=1.5, itl_s=[0.75, 0.0], chunks=3) == completion.stream

    def test_tool_calls_from_indexed_deltas(self):
        """Tool calls are put together by index: id and name once (repeats ignored), argument fragments joined."""
        completion = assemble(
            chunk({"role": "assistant", "content": None}),
            chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                   "function": {"name": "search", "arguments": ""}}]}),
            chunk({"tool_calls": [{"index": 0, "id": "call_a", "function": {"arguments": '{"q": '}}]}),
            chunk({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "open", "arguments": "{}"}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"x"}'}}]}),
            chunk(finish="tool_calls"),
            DONE,
        )
        calls = [(c.id, c.function.name, c.function.arguments) for c in completion.choices[0].message.tool_calls]
        assert [("call_a", "search", '{"q": "x"}'), ("call_b", "open", "{}")] == calls
        assert (None, "tool_calls") == (completion.choices[0].message.content, completion.choices[0].finish_reason)
        assert 4 == completion.stream.chunks

    def test_tool_calls_without_index_each_whole_in_its_chunk(self):
        """Gemini's OpenAI-compatible API: parallel calls without ``index``, one per chunk, each with its id.

        A new id starts a new call; a delta without id continues the last call (its next argument part).
        """
        completion = assemble(
            chunk({"role": "assistant", "tool_calls": [{"id": "a", "type": "function",
                                                        "function": {"name": "f", "arguments": '{"x":'}}]}),
            chunk({"tool_calls": [{"function": {"arguments": "1}"}}]}),
            chunk({"tool_calls": [{"id": "b", "type": "function", "function": {"name": "g", "arguments": '{"y":2}'}}]}),
            chunk({"tool_calls": [{"id": "b", "function": {"arguments": ""}}]}, finish="tool_calls"),
            DONE,
        )
        calls = [(c.id, c.function.name, c.function.arguments) for c in completion.choices[0].message.tool_calls]
        assert [("a", "f", '{"x":1}'), ("b", "g", '{"y":2}')] == calls

    def test_reasoning_deltas_are_timed_as_tokens_but_not_the_reply(self):
        """vLLM/DeepSeek ``reasoning_content`` and OpenRouter ``reasoning`` chunks: the first token is the first
        of them (TTFT 1.0, not the answer's 3.0) and each is a gap; the reply holds only the content."""
        completion = assemble(
            chunk({"role": "assistant", "reasoning_content": "Let me"}),
            chunk({"reasoning": " think"}),
            chunk({"content": "42"}, finish="stop"),
            DONE,
            times=[1.0, 2.0, 3.0, 4.0],
        )
        assert "42" == completion.choices[0].message.content
        assert StreamTiming(ttft_s=1.0, itl_s=[1.0, 1.0], chunks=3) == completion.stream

    def test_no_usage_sent_leaves_usage_empty(self):
        """A server that sends no usage chunk: no usage, as a non-streamed reply without usage."""
        completion = assemble(chunk({"content": "hi"}, finish="stop"), DONE)
        assert (None, "hi") == (completion.usage, completion.choices[0].message.content)

    def test_a_stream_without_done_was_cut(self):
        """The body ending before ``data: [DONE]`` is a BadResponseError (transient: retried)."""
        with pytest.raises(BadResponseError) as caught:
            assemble(chunk({"content": "hi"}), chunk(finish="stop"))
        assert (f"model 'm' at {URL}: stream ended before [DONE] after 2 events (the body ended)"
                == str(caught.value))

    @pytest.mark.parametrize(("event", "error", "text"), [
        (b'event: error\ndata: {"error": {"message": "overloaded", "type": "server_error"}}\n\n',
         ServerError, "HTTP 500: overloaded"),
        (b'data: {"error": {"message": "slow down", "type": "rate_limit_error", "code": null}}\n\n',
         RateLimitError, "HTTP 429: slow down"),
        (b'data: {"object": "error", "message": "too long", "type": "BadRequestError", "code": 400}\n\n',
         PermanentLLMError, "HTTP 400: too long"),
    ])
    def test_an_error_event_mid_stream(self, event, error, text):
        """An error event is the LLMError of its code (vLLM), else its type (OpenAI), else a server error."""
        with pytest.raises(error) as caught:
            assemble(chunk({"content": "partial"}), event, DONE)
        assert (error, f"model 'm' at {URL}: {text}") == (type(caught.value), str(caught.value))

    def test_an_undecodable_event(self):
        """An event that is not a JSON chunk is a BadResponseError quoting it."""
        with pytest.raises(BadResponseError, match=r"undecodable stream event .*: b'\{not json'"):
            assemble(b"data: {not json\n\n", DONE)

    @pytest.mark.parametrize("event", [
        b"data: {not json, your key sk-proj-SECRET1234567890abcdef\n\n",
        b'event: error\ndata: {"error": {"message": "Incorrect API key provided: sk-proj-SECRET1234567890abcdef",'
        b' "code": 401}}\n\n',
    ], ids=["undecodable", "error-event"])
    def test_a_key_the_server_echoes_in_the_stream_is_masked(self, event):
        """Server text quoted by a stream error (an undecodable event, an error event) has its secrets masked."""
        with pytest.raises(LLMError) as caught:
            assemble(chunk({"content": "a"}), event, DONE)
        assert "SECRET1234567890" not in str(caught.value) and "sk-***" in str(caught.value)


async def serve(handler: Callable[[web.Request], object]) -> AsyncIterator[str]:
    """A one-route loopback server answering chat completions with ``handler``; yields its base URL."""
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)  # type: ignore[arg-type]
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


def events_handler(parts: list[bytes], content_type: str = "text/event-stream"):
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": content_type, "x-ratelimit-remaining-requests": "9"})
        await response.prepare(request)
        for part in parts:
            await response.write(part)
        await response.write_eof()
        return response
    return handler


async def chat_with(parts: list[bytes], transport: str, content_type: str = "text/event-stream",
                    **params: object) -> tuple:
    """One streamed call through ``transport`` to a server sending ``parts``; the result and its record."""
    records: list[LLMCallRecord] = []
    async for url in serve(events_handler(parts, content_type)):
        config = ModelConfig.from_dict({"models": {"shape": {"base_url": url, "api_key_env": None}},
                                        "defaults": {"retry": {"max_attempts": 1}}})
        async with LLMClient(config, transport=transport, call_sink=records.append) as client:
            result = await client.chat("shape", user("hi"), stream=True, **params)
    return result, records


@pytest.mark.parametrize("transport", TRANSPORTS)
class TestRealWorldShapes:
    async def test_crlf_comments_and_split_writes(self, transport):
        """A stream with \\r\\n line ends, keep-alive comments and events split across writes assembles."""
        body = (b": ping\r\n\r\n" + chunk({"role": "assistant", "content": ""}) + chunk({"content": "Hi "})
                + chunk({"content": "there"}, finish="stop")
                + b"data: " + orjson.dumps({"choices": [], "usage": USAGE}) + b"\n\n" + DONE).replace(b"\n", b"\r\n")
        result, records = await chat_with([body[:37], body[37:90], body[90:]], transport)
        assert ("Hi there", "stop", 3) == (result.content, result.finish_reason, result.usage.completion_tokens)
        assert 1 == len(records[0].itl_s) and records[0].ttft_s == result.ttft_s

    async def test_a_server_that_ignores_stream_answers_json(self, transport):
        """``stream: true`` answered with a plain JSON completion still works (no stream timing)."""
        body = orjson.dumps({"id": "x", "choices": [{"message": {"role": "assistant", "content": "plain"},
                                                     "finish_reason": "stop"}], "usage": USAGE})
        result, records = await chat_with([body], transport, content_type="application/json")
        assert ("plain", None, None) == (result.content, result.ttft_s, records[0].itl_s)

    async def test_a_body_broken_after_done_keeps_the_reply(self, transport):
        """The whole reply and ``[DONE]`` arrived, then the connection closed before the chunked body's end:
        the reply is kept (one attempt), not retried and billed twice."""
        parts = [chunk({"content": "hello"}, finish="stop"),
                 b"data: " + orjson.dumps({"choices": [], "usage": USAGE}) + b"\n\n", DONE]

        async def handler(request: web.Request) -> web.StreamResponse:
            await request.read()
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            for part in parts:
                await response.write(part)
            assert request.transport is not None
            request.transport.close()  # flushes what was written, never the chunked body's last chunk
            return response

        records: list[LLMCallRecord] = []
        async for url in serve(handler):
            config = ModelConfig.from_dict({"models": {"shape": {"base_url": url, "api_key_env": None}}})
            async with LLMClient(config, transport=transport, call_sink=records.append) as client:
                result = await client.chat("shape", user("hi"), stream=True)
        assert ("hello", 1, 3) == (result.content, result.attempts, result.usage.completion_tokens)
        assert ["ok"] == [record.status for record in records]

    async def test_no_token_chunk_records_no_ttft(self, transport):
        """A stream whose chunks carry no token (role, finish and usage only): TTFT and TPOT null, no gaps."""
        parts = [chunk({"role": "assistant", "content": ""}), chunk(finish="stop"),
                 b"data: " + orjson.dumps({"choices": [], "usage": USAGE}) + b"\n\n", DONE]
        result, records = await chat_with(parts, transport)
        assert ("", None, None) == (result.content, result.ttft_s, result.tpot_s)
        assert (None, None, []) == (records[0].ttft_s, records[0].tpot_s, records[0].itl_s)

    async def test_reasoning_chunks_count_in_the_record(self, transport):
        """Three reasoning chunks then one of content: four token chunks, three gaps, the reply is the content."""
        parts = [chunk({"reasoning_content": f"step {i} "}) for i in range(3)]
        parts += [chunk({"content": "done"}, finish="stop"),
                  b"data: " + orjson.dumps({"choices": [], "usage": USAGE}) + b"\n\n", DONE]
        result, records = await chat_with(parts, transport)
        assert ("done", 3) == (result.content, len(records[0].itl_s))
        assert records[0].ttft_s is not None and records[0].tpot_s is not None

    async def test_an_error_event_mid_stream_fails_the_call(self, transport):
        """An error event after some content fails the call with the LLMError it stands for."""
        parts = [chunk({"content": "par"}), b'event: error\ndata: {"error": {"message": "bad input", '
                 b'"type": "invalid_request_error"}}\n\n']
        with pytest.raises(PermanentLLMError, match="HTTP 400: bad input$"):
            await chat_with(parts, transport)


TOOL_STEPS = [{"content": "Looking.", "tool_calls": [{"name": "Slack_search_messages",
                                                      "arguments": {"query": "release review", "limit": 5}},
                                                     {"name": "x", "arguments": {}}]}]
CONVERSATIONS = {
    "echo": ("sim/echo", user("hello streaming world")),
    "scripted-tools": ("sim/scripted", scripted(TOOL_STEPS)),
    "oracle-agent": ("sim/oracle-agent", [
        Message(role="system", content="Reference now: 2026-03-24T11:00:00+00:00"),
        Message(role="user", content="Write the weekly report for my team.")]),
    "judge": ("sim/judge", user("Judge this answer: the review is 30 minutes.")),
}


@pytest.mark.parametrize("transport", TRANSPORTS)
class TestAgainstTheSim:
    @pytest.mark.parametrize("conversation", sorted(CONVERSATIONS))
    async def test_streamed_and_plain_replies_are_the_same_result(self, sim, make_client, transport, conversation):
        """Streamed or not, the same request gives the same content, tool calls, finish reason and usage."""
        model, messages = CONVERSATIONS[conversation]
        client = make_client(transport)
        plain = await client.chat(model, messages, key="same")
        streamed = await client.chat(model, messages, key="same", stream=True)
        fields = ("content", "tool_calls", "finish_reason", "usage")
        assert [getattr(plain, f) for f in fields] == [getattr(streamed, f) for f in fields]
        assert (None, None) == (plain.ttft_s, plain.tpot_s)
        assert streamed.ttft_s is not None and streamed.usage.completion_tokens > 1
        if conversation != "echo":
            assert plain.tool_calls or conversation == "judge"

    async def test_ttft_tpot_and_itls_are_the_streams_own_figures(self, sim, make_client, transport):
        """latency_ms=300, tokens_per_s=100, output_tokens=20: the record has 20 tokens and their 19 inter-token
        gaps; TTFT is at least the 300 ms the sim waits before the first token (a delay can only add to it); TPOT
        is the span after the first token over the 19 gaps; the gaps (first to last token, each rounded to the
        microsecond) fit in that span; the result carries the record's figures.

        How close the figures come to the sim's settings is a timing, not asserted here (it depends on the
        machine's load): bench/profile_crosscheck.py measures TTFT and latency of the same streaming path against
        an independent client and the serving benchmarks.
        """
        records: list[LLMCallRecord] = []
        client = make_client(transport, records=records)
        model = "sim/echo?latency_ms=300&tokens_per_s=100&output_tokens=20"
        await client.chat("sim/echo", user("warm up"))
        result = await client.chat(model, user("time me"), stream=True)
        record = records[-1]
        assert (20, 19) == (record.usage.completion_tokens, len(record.itl_s))
        assert 0.3 <= record.ttft_s < record.latency_s
        assert record.tpot_s == pytest.approx(sum(record.itl_s) / 19)  # first to last token, over the 19 gaps
        assert 0 < sum(record.itl_s) <= record.latency_s - record.ttft_s  # first to last token, within the stream
        assert record.stream_end_s == pytest.approx(record.latency_s - record.ttft_s - sum(record.itl_s), abs=2e-6)
        assert all(gap >= 0 and gap == round(gap, 6) for gap in record.itl_s)
        assert (result.ttft_s, result.tpot_s) == (record.ttft_s, record.tpot_s)

    async def test_a_stream_cut_once_is_retried(self, sim, make_client, transport):
        """fault=cut&fail_first=1: the first stream breaks off, the retry completes; one ok record, 2 attempts."""
        records: list[LLMCallRecord] = []
        client = make_client(transport, records=records)
        result = await client.chat("sim/echo?fault=cut&fail_first=1", user("cut me"), key="k-cut", stream=True)
        assert "echo: cut me" == result.content
        assert (2, 1, 1) == (sim.stats.received["k-cut"], sim.stats.completed["k-cut"], sim.stats.faults["cut"])
        assert [("ok", 2)] == [(r.status, r.attempts) for r in records]

    async def test_a_cut_stream_is_a_bad_response(self, sim, make_client, transport):
        """Without retries, the cut is a BadResponseError saying the stream ended before [DONE]."""
        records: list[LLMCallRecord] = []
        client = make_client(transport, ModelConfig.from_dict({"defaults": {"retry": {"max_attempts": 1}}}),
                             records=records)
        with pytest.raises(BadResponseError, match=r"stream ended before \[DONE\] after 3 events \("):
            await client.chat("sim/echo?fault=cut&fail_first=1", user("cut"), key="k-cut", stream=True)
        assert [("error", "BadResponseError")] == [(r.status, r.error_class) for r in records]

    async def test_the_callers_stream_options_are_kept(self, sim, make_client, transport):
        """stream_options set by the caller are sent as given: without include_usage, no usage and no TPOT."""
        records: list[LLMCallRecord] = []
        client = make_client(transport, records=records)
        result = await client.chat("sim/echo", user("no usage"), stream=True, stream_options={"include_usage": False})
        assert ("echo: no usage", 0, None) == (result.content, result.usage.total_tokens, result.tpot_s)
        assert result.ttft_s is not None

    async def test_stream_from_the_model_config_params(self, sim, transport):
        """``"stream": true`` in a model's configured params streams every call of that model."""
        records: list[LLMCallRecord] = []
        config = ModelConfig.from_dict({"models": {"sim/echo": {"params": {"stream": True}}}})
        async with LLMClient(config, transport=transport, sim_base_url=sim.base_url,
                             call_sink=records.append) as client:
            result = await client.chat("sim/echo", user("configured"))
        assert ("echo: configured", 1) == (result.content, len(records))
        assert records[0].ttft_s is not None and records[0].itl_s is not None

    @pytest.mark.parametrize("stream", [False, True])
    async def test_rate_limit_headers_are_carried(self, sim, transport, stream):
        """Both transports put the reply's x-ratelimit-* headers (lower-cased) on the completion, streamed or not."""
        endpoint = Endpoint(model="sim/echo", api_model="sim/echo?rpm=600", base_url=sim.base_url)
        plain = Endpoint(model="sim/echo", api_model="sim/echo", base_url=sim.base_url)
        sender = create_transport(transport)
        try:
            limited = await sender.complete(endpoint, request("sim/echo?rpm=600", stream=stream))
            unlimited = await sender.complete(plain, request("sim/echo", stream=stream))
        finally:
            await sender.aclose()
        assert {"x-ratelimit-limit-requests", "x-ratelimit-remaining-requests",
                "x-ratelimit-reset-requests"} <= limited.rate_limit_headers.keys()
        assert "600" == limited.rate_limit_headers["x-ratelimit-limit-requests"]
        assert None is unlimited.rate_limit_headers
        assert (stream, stream) == (limited.stream is not None, unlimited.stream is not None)


def request(model: str, *, stream: bool) -> ChatRequest:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
    if stream:
        body |= {"stream": True, "stream_options": {"include_usage": True}}
    return ChatRequest(body=body, payload=orjson.dumps(body), key=f"k-{model}-{stream}")


class TestRecords:
    def test_tpot_spans_first_to_last_token_and_the_streams_end_is_apart(self):
        """A gateway that holds the stream 880 ms after its last token (usage chunk, [DONE], close): TPOT is the
        2 ms between tokens, (last − first) / (tokens − 1), and the 880 ms are stream_end_s, no token's time."""
        call = Call(state=None, model="m", request=ChatRequest(body={}, payload=b"", key="k"), latency_s=1.0)
        timing = StreamTiming(ttft_s=0.1, itl_s=[0.002] * 9, chunks=10)
        record = call.record(transport="native", usage=Usage(completion_tokens=10), stream=timing)
        assert (0.1, 0.002, 0.882) == (record.ttft_s, pytest.approx(record.tpot_s), record.stream_end_s)
        one = call.record(transport="native", usage=Usage(completion_tokens=1),
                          stream=StreamTiming(ttft_s=0.1, itl_s=[], chunks=1))
        assert (None, 0.9) == (one.tpot_s, one.stream_end_s)  # one token: no time per further token

    def test_a_plain_call_record_is_unchanged_and_old_records_decode(self):
        """Non-streamed records carry no timing fields on the wire; records written before them decode."""
        old = b'{"model":"m","key":"k","status":"ok","latency_s":0.5,"usage":{}}'
        record = msgspec.json.decode(old, type=LLMCallRecord)
        assert (None, None, None) == (record.ttft_s, record.tpot_s, record.itl_s)
        assert old == msgspec.json.encode(record)

    async def test_stores_keep_the_reply_not_its_measurements(self, sim, tmp_path):
        """A recorded streamed reply is stored without its timing or headers: a replay measured nothing."""
        store = CallStore(tmp_path / "store.jsonl")
        recorder = RecordTransport(create_transport("native"), store)
        endpoint = Endpoint(model="sim/echo", api_model="sim/echo?rpm=60", base_url=sim.base_url)
        try:
            completion = await recorder.complete(endpoint, request("sim/echo?rpm=60", stream=True))
        finally:
            await recorder.aclose()
        assert completion.stream is not None and completion.rate_limit_headers is not None
        line = (tmp_path / "store.jsonl").read_bytes()
        assert b"_mpcbench" not in line and b'"content":"echo: hi"' in line

