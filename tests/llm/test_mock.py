"""MockTransport: a handler answers each request, and the client's retries, limits and accounting still apply."""

from __future__ import annotations

import msgspec
import pytest

from mpcbench_async import (
    BadResponseError,
    ChatResult,
    FunctionCall,
    LLMCallRecord,
    Message,
    ModelConfig,
    PermanentLLMError,
    ServerError,
    ToolCall,
    Usage,
)
from mpcbench_async.llm import ChatRequest, Endpoint, LLMClient, MockTransport, WireCompletion


def reply(content: str, prompt_tokens: int = 10, completion_tokens: int = 4) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


@pytest.fixture(autouse=True)
def _default_base_url(monkeypatch):
    """Models without a base_url resolve to the OpenAI URL whatever the environment says."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
async def mock_client(fake_clock):
    """Build clients over a MockTransport on the fake clock; each returns (client, call records)."""
    clients: list[LLMClient] = []

    def build(handler, config: ModelConfig | None = None) -> tuple[LLMClient, list[LLMCallRecord]]:
        records: list[LLMCallRecord] = []
        client = LLMClient(config, transport=MockTransport(handler), clock=fake_clock, call_sink=records.append)
        clients.append(client)
        return client, records

    yield build
    for client in clients:
        await client.aclose()


class TestReplies:
    async def test_dict_reply_is_decoded_like_a_server_reply(self, mock_client):
        """A chat-completion dict becomes the ChatResult a server's identical body would give (gpt-x has no known
        price: its cost is None, not $0)."""
        client, _ = mock_client(lambda endpoint, request: reply("hello", 7, 3))
        result = await client.chat("gpt-x", user("hi"))
        assert ChatResult(model="gpt-x", content="hello", finish_reason="stop", attempts=1, cost_usd=None,
                          usage=Usage(prompt_tokens=7, completion_tokens=3, total_tokens=10)) == (
            msgspec.structs.replace(result, latency_s=0.0))

    async def test_tool_calls_in_a_dict_reply(self, mock_client):
        """Tool calls in the handler's dict come back as ToolCalls."""
        body = {"choices": [{"message": {"tool_calls": [{"id": "c1", "function": {"name": "Search",
                                                                                 "arguments": '{"q":"x"}'}}]},
                             "finish_reason": "tool_calls"}]}
        client, _ = mock_client(lambda endpoint, request: body)
        result = await client.chat("gpt-x", user("hi"))
        assert ([ToolCall(id="c1", function=FunctionCall(name="Search", arguments='{"q":"x"}'))], "tool_calls") == (
            result.tool_calls, result.finish_reason)

    async def test_async_handler_returning_a_wire_completion(self, mock_client):
        """An async handler may return a WireCompletion directly."""
        async def handler(endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
            return msgspec.convert(reply("async"), WireCompletion)

        client, _ = mock_client(handler)
        assert "async" == (await client.chat("gpt-x", user("hi"))).content

    async def test_handler_sees_the_endpoint_and_the_request_the_client_built(self, mock_client):
        """The handler gets the model's endpoint and the body with the API model, messages and merged params."""
        seen: list[tuple[str, str, str, dict]] = []

        def handler(endpoint: Endpoint, request: ChatRequest) -> dict:
            seen.append((endpoint.model, endpoint.url, request.key, request.body))
            return reply("ok")

        config = ModelConfig.from_dict({"models": {"gpt-x": {"model": "gpt-4o", "base_url": "http://h/v1",
                                                             "params": {"temperature": 0}}}})
        client, _ = mock_client(handler, config)
        await client.chat("gpt-x", user("hi"), key="k1", max_tokens=5)
        assert [("gpt-x", "http://h/v1/chat/completions", "k1",
                 {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "temperature": 0,
                  "max_tokens": 5})] == seen

    async def test_offline_no_key_and_no_sim_are_needed(self, mock_client, monkeypatch):
        """A mock needs no API key for a real model and starts no sim for a sim model (its URL is a placeholder)."""
        monkeypatch.delenv("MPCB_ABSENT_KEY", raising=False)
        urls: list[str] = []

        def handler(endpoint: Endpoint, request: ChatRequest) -> dict:
            urls.append(endpoint.url)
            return reply("ok")

        config = ModelConfig.from_dict({"models": {"gpt-x": {"api_key_env": "MPCB_ABSENT_KEY"}}})
        client, _ = mock_client(handler, config)
        await client.chat("gpt-x", user("a"))
        await client.chat("sim/echo", user("b"))
        assert ["https://api.openai.com/v1/chat/completions", "sim://offline/chat/completions"] == urls


class TestFailures:
    async def test_server_errors_are_retried_until_success(self, mock_client, fake_clock):
        """A handler that fails twice with ServerError then answers: 3 calls, one ok record with 3 attempts."""
        calls: list[str] = []

        def handler(endpoint: Endpoint, request: ChatRequest) -> dict:
            calls.append(request.key)
            if len(calls) <= 2:
                raise ServerError("simulated overload", model=endpoint.model, endpoint=endpoint.url, status=503)
            return reply("finally")

        client, records = mock_client(handler)
        result = await client.chat("gpt-x", user("hi"), key="k")
        assert ("finally", 3) == (result.content, result.attempts)
        assert ["k", "k", "k"] == calls
        assert 2 == len(fake_clock.slept)
        assert [("ok", 3, "mock")] == [(r.status, r.attempts, r.transport) for r in records]
        assert 2 == client.retries

    async def test_permanent_error_fails_at_once_and_is_recorded(self, mock_client, fake_clock):
        """A PermanentLLMError from the handler is raised after one call and written to the call record."""
        def handler(endpoint: Endpoint, request: ChatRequest) -> dict:
            raise PermanentLLMError("bad request", model=endpoint.model, endpoint=endpoint.url, status=400)

        client, records = mock_client(handler)
        with pytest.raises(PermanentLLMError) as caught:
            await client.chat("gpt-x", user("hi"), key="k")
        expected = "model 'gpt-x' at https://api.openai.com/v1/chat/completions: HTTP 400: bad request"
        assert expected == str(caught.value)
        assert [] == fake_clock.slept
        assert [("error", 1, "PermanentLLMError", expected, "mock")] == [
            (r.status, r.attempts, r.error_class, r.error_message, r.transport) for r in records]
        assert (1, 1) == (client.totals()["gpt-x"].calls, client.totals()["gpt-x"].errors)

    async def test_reply_without_choices_is_a_bad_response_retried_like_a_real_one(self, mock_client):
        """A dict without choices is a BadResponseError, retried, then raised when attempts run out."""
        config = ModelConfig.from_dict({"defaults": {"retry": {"max_attempts": 2}}})
        client, records = mock_client(lambda endpoint, request: {"choices": []}, config)
        with pytest.raises(BadResponseError) as caught:
            await client.chat("gpt-x", user("hi"))
        assert "model 'gpt-x' at https://api.openai.com/v1/chat/completions: reply has no choices" == str(caught.value)
        assert [("error", 2)] == [(r.status, r.attempts) for r in records]


class TestClientMachinery:
    async def test_tokens_and_cost_are_counted(self, mock_client):
        """Usage from the mock's replies is priced and summed in the model's totals and call records."""
        config = ModelConfig.from_dict({"models": {"gpt-x": {"prices": {"input_per_1m": 2.0, "output_per_1m": 8.0}}}})
        client, records = mock_client(lambda endpoint, request: reply("x", 1000, 500), config)
        for text in ("a", "b"):
            await client.chat("gpt-x", user(text))
        totals = client.totals()["gpt-x"]
        assert (2, Usage(prompt_tokens=2000, completion_tokens=1000, total_tokens=3000)) == (totals.calls, totals.usage)
        assert pytest.approx(2 * (1000 * 2.0 + 500 * 8.0) / 1e6) == totals.cost_usd
        assert [pytest.approx(0.006)] * 2 == [r.cost_usd for r in records]

    async def test_rpm_limit_paces_mock_calls(self, mock_client, fake_clock):
        """At 1 request per minute the second call waits 60 s on the limiter, recorded as queued time."""
        config = ModelConfig.from_dict({"models": {"gpt-x": {"limits": {"rpm": 1}}}})
        client, records = mock_client(lambda endpoint, request: reply("x"), config)
        await client.chat("gpt-x", user("a"))
        await client.chat("gpt-x", user("b"))
        assert [60.0] == fake_clock.slept
        assert [0.0, 60.0] == [r.queued_s for r in records]

    async def test_client_closes_the_transport_it_was_given(self, fake_clock):
        """LLMClient.aclose closes a Transport instance passed as transport=."""
        closed: list[bool] = []

        class Closing(MockTransport):
            async def aclose(self) -> None:
                closed.append(True)

        async with LLMClient(transport=Closing(lambda endpoint, request: reply("x")), clock=fake_clock) as client:
            await client.chat("gpt-x", user("a"))
        assert [True] == closed
