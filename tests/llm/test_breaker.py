"""The per-model circuit breaker: a dead endpoint fails fast, with one message, and other models keep working."""

from __future__ import annotations

import logging

import pytest

from mpcbench_async import (
    CallDeadlineError,
    CircuitOpenError,
    HTMLReplyError,
    LLMCallRecord,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    Message,
    ModelConfig,
    PermanentLLMError,
    RateLimitError,
    ServerError,
)
from mpcbench_async.llm._breaker import is_endpoint_failure

TRANSPORTS = ["native", "openai"]
FAST = {"retry": {"max_attempts": 2}}


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


def opened_message(model: str, url: str, last: str, affected: int) -> str:
    """The breaker's message as the tests expect it, for one model."""
    return (f"model {model!r} at {url}/chat/completions: circuit breaker open after 5 consecutive failed calls "
            f"(last: {last}); {affected} calls affected so far; no further calls are sent to this model in this "
            f"run (fix the endpoint or the model's entry in model_config.json, then rerun)")


async def failing_calls(client, model: str, count: int, prefix: str = "k") -> list[LLMError]:
    """Make ``count`` calls that are expected to fail, returning their errors in order."""
    errors: list[LLMError] = []
    for i in range(count):
        with pytest.raises(LLMError) as caught:
            await client.chat(model, user(f"call {i}"), key=f"{prefix}{i}")
        errors.append(caught.value)
    return errors


@pytest.mark.parametrize("transport", TRANSPORTS)
class TestBreakerOpens:
    @pytest.mark.parametrize(
        ("fault", "last", "first_class"),
        [
            ("404", "HTTP 404: simulated: model not found", PermanentLLMError),
            ("501", "HTTP 501: Error response Error response Error code: 501 Message: Unsupported method ('POST').",
             PermanentLLMError),
            ("html", "HTTP 200: the endpoint answered an HTML page, not the JSON chat API (is base_url the API "
                     "root, e.g. ending in /v1?): 'Chat UI'", HTMLReplyError),
            ("drop", "connection failed", LLMConnectionError),
        ],
    )
    async def test_no_call_reaches_the_endpoint_after_five_failures(self, sim, make_client, transport, fault, last,
                                                                    first_class):
        """Five failed calls open the breaker; the next three raise CircuitOpenError without a request to the sim."""
        records: list[LLMCallRecord] = []
        client = make_client(transport, ModelConfig.from_dict({"defaults": FAST}), records)
        model = f"sim/echo?fault={fault}&fail_first=99"
        errors = await failing_calls(client, model, 8)
        attempts_per_call = 2 if fault == "drop" else 1
        assert 5 * attempts_per_call == sim.stats.total_received
        assert [first_class] * 5 + [CircuitOpenError] * 3 == [type(e) for e in errors]
        if fault == "drop":  # the transport's wording of a dropped connection differs; the rest is fixed
            last = errors[4].detail
        assert opened_message(model, sim.base_url, last, 8) == str(errors[7])
        assert {model: opened_message(model, sim.base_url, last, 8)} == client.open_circuits()
        assert [0, 0, 0] == [r.attempts for r in records[5:]]

    async def test_other_models_keep_working(self, sim, make_client, transport):
        """With one model's breaker open, another model on the same endpoint still answers."""
        client = make_client(transport, ModelConfig.from_dict({"defaults": FAST}))
        await failing_calls(client, "sim/echo?fault=404&fail_first=99", 6)
        result = await client.chat("sim/echo", user("still here"), key="other")
        assert "echo: still here" == result.content
        assert ["sim/echo?fault=404&fail_first=99"] == list(client.open_circuits())


class TestBreakerStaysClosed:
    async def test_a_success_resets_the_count(self, sim, make_client):
        """Four failures, a success, four failures: never five in a row, so every call reaches the sim."""
        client = make_client()
        await failing_calls(client, "sim/echo?fault=404&fail_first=1", 4, prefix="a")
        await client.chat("sim/echo?fault=404&fail_first=1", user("ok"), key="a0")  # its second request succeeds
        await failing_calls(client, "sim/echo?fault=404&fail_first=1", 4, prefix="b")
        assert ({}, 9) == (client.open_circuits(), sim.stats.total_received)

    async def test_request_errors_do_not_open_it(self, sim, make_client):
        """400s are about the request, not the endpoint: eight of them leave the breaker closed."""
        client = make_client()
        errors = await failing_calls(client, "sim/echo?fault=400&fail_first=99", 8)
        assert [PermanentLLMError] * 8 == [type(e) for e in errors]
        assert ({}, 8) == (client.open_circuits(), sim.stats.total_received)

    async def test_random_half_drops_do_not_open_it(self, sim, make_client):
        """Under 50% dropped connections every call still succeeds after retries, and the breaker stays closed."""
        client = make_client()
        for i in range(20):
            result = await client.chat("sim/echo?pdrop=0.5", user(f"m{i}"), key=f"d{i}")
            assert f"echo: m{i}" == result.content
        assert {} == client.open_circuits()

    async def test_zero_failures_disables_it(self, sim, make_client):
        """breaker.failures = 0 turns the breaker off: every call is sent."""
        client = make_client(config=ModelConfig.from_dict({"defaults": {"breaker": {"failures": 0}}}))
        await failing_calls(client, "sim/echo?fault=404&fail_first=99", 7)
        assert ({}, 7) == (client.open_circuits(), sim.stats.total_received)


async def test_opening_logs_one_warning(sim, make_client, caplog):
    """The breaker's opening is logged once, however many calls it refuses afterwards."""
    client = make_client()
    model = "sim/echo?fault=404&fail_first=99"
    with caplog.at_level(logging.WARNING, logger="mpcbench_async.llm._breaker"):
        await failing_calls(client, model, 9)
    assert [opened_message(model, sim.base_url, "HTTP 404: simulated: model not found", 5)] == [
        r.getMessage() for r in caplog.records if r.name == "mpcbench_async.llm._breaker"]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (LLMConnectionError("refused"), True),
        (LLMTimeoutError("stalled"), True),
        (HTMLReplyError("page", status=200), True),
        (PermanentLLMError("not found", status=404), True),
        (PermanentLLMError("not implemented", status=501), True),
        (PermanentLLMError("version", status=505), True),
        (PermanentLLMError("bad request", status=400), False),
        (PermanentLLMError("bad key", status=401), False),
        (RateLimitError("slow down", status=429), False),
        (ServerError("busy", status=503), False),
        (CallDeadlineError("late", last_error=LLMConnectionError("refused")), True),
        (CallDeadlineError("late", last_error=RateLimitError("slow down", status=429)), False),
        (CallDeadlineError("late"), False),
    ],
)
def test_which_failures_count_against_the_endpoint(error, expected):
    """Only failures that say the endpoint cannot serve the model at all count towards opening."""
    assert expected == is_endpoint_failure(error)
