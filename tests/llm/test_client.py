"""LLMClient against the sim over real loopback HTTP, with both transports."""

from __future__ import annotations

import msgspec
import orjson
import pytest

from mpcbench_async import (
    ChatResult,
    ConfigError,
    FunctionCall,
    FunctionSchema,
    LLMCallRecord,
    Message,
    MissingAPIKeyError,
    ModelConfig,
    PermanentLLMError,
    RateLimitError,
    ToolCall,
    ToolSchema,
    Usage,
)
from mpcbench_async.llm import load_model_config

TRANSPORTS = ["native", "openai"]
RETRYABLE_FAULTS = ["429", "500", "502", "503", "drop", "truncate", "malformed"]


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


def scripted_messages(steps: list[dict]) -> list[Message]:
    return [Message(role="system", content="SIM_SCRIPT:" + orjson.dumps(steps).decode()),
            Message(role="user", content="go")]


@pytest.mark.parametrize("transport", TRANSPORTS)
class TestRetriedFaults:
    @pytest.mark.parametrize("fault", RETRYABLE_FAULTS)
    async def test_fault_is_retried_until_success(self, sim, make_client, transport, fault):
        """Each transient fault is retried, the call succeeds, and the sim completed it exactly once."""
        records: list[LLMCallRecord] = []
        client = make_client(transport, records=records)
        model = f"sim/echo?fault={fault}&fail_first=2"
        result = await client.chat(model, user("ping"), key=f"k-{fault}")
        assert "echo: ping" == result.content
        assert 3 == result.attempts
        assert 3 == sim.stats.received[f"k-{fault}"]
        assert 1 == sim.stats.completed[f"k-{fault}"]
        assert [("ok", 3)] == [(r.status, r.attempts) for r in records]

    @pytest.mark.parametrize(("fault", "error"), [("truncate", "BadResponseError"),
                                                  ("drop", "LLMConnectionError")])
    async def test_both_transports_classify_a_failure_alike(self, sim, make_client, transport, fault, error):
        """The same failure is the same error class whichever HTTP library the transport wraps."""
        records: list[LLMCallRecord] = []
        client = make_client(transport, ModelConfig.from_dict({"defaults": {"retry": {"max_attempts": 1}}}),
                             records=records)
        with pytest.raises(Exception) as failed:
            await client.chat(f"sim/echo?fault={fault}&fail_first=1", user("ping"), key=f"k-{fault}")
        assert error == type(failed.value).__name__
        assert [("error", error)] == [(r.status, r.error_class) for r in records]

    async def test_read_timeout_is_retried(self, sim, make_client, transport):
        """A reply that never comes times out on the client and the retry succeeds."""
        config = ModelConfig.from_dict({"defaults": {"timeout_s": 0.3}})
        client = make_client(transport, config)
        result = await client.chat("sim/echo?fault=timeout&fail_first=1", user("slow"), key="k-timeout")
        assert ("echo: slow", 2) == (result.content, result.attempts)
        assert (2, 1) == (sim.stats.received["k-timeout"], sim.stats.completed["k-timeout"])


@pytest.mark.parametrize("transport", TRANSPORTS)
class TestServerWaitHints:
    async def test_retry_after_seconds_is_honoured(self, make_client, fake_clock, transport):
        """Retry-After: 3 makes the client wait 3 s (plus at most 10% jitter) before retrying."""
        client = make_client(transport)
        await client.chat("sim/echo?fault=429&fail_first=1&retry_after=3", user("a"))
        assert 1 == len(fake_clock.slept)
        assert 3.0 <= fake_clock.slept[0] <= 3.3

    async def test_retry_after_ms_is_honoured(self, make_client, fake_clock, transport):
        """retry-after-ms: 1500 makes the client wait 1.5 s (plus at most 10% jitter)."""
        client = make_client(transport)
        await client.chat("sim/echo?fault=503&fail_first=1&retry_after_ms=1500", user("b"))
        assert 1 == len(fake_clock.slept)
        assert 1.5 <= fake_clock.slept[0] <= 1.65

    async def test_enforced_rpm_answers_429_with_the_wait_until_refill(self, sim, make_client, fake_clock,
                                                                       transport):
        """Past the sim's RPM the client gets 429 and waits as long as the sim's headers say (~60 s at 1 RPM).

        Pacing is off, so the limiter does not hold the second call for the refill itself (with it on, the first
        reply's x-ratelimit headers pace it: tests/llm/test_rate_limit_modes.py)."""
        config = ModelConfig.from_dict({"defaults": {"retry": {"max_attempts": 2},
                                                     "limits": {"adaptive": False, "pacing": False}}})
        client = make_client(transport, config)
        assert 1 == (await client.chat("sim/echo?rpm=1", user("one"))).attempts
        with pytest.raises(RateLimitError) as caught:
            await client.chat("sim/echo?rpm=1", user("two"), key="rpm-2")
        assert 59.0 <= caught.value.retry_after <= 60.0
        assert 1 == len(fake_clock.slept)
        assert 59.0 <= fake_clock.slept[0] <= 66.0
        assert (2, 0) == (sim.stats.received["rpm-2"], sim.stats.completed.get("rpm-2", 0))


@pytest.mark.parametrize("transport", TRANSPORTS)
class TestPermanentErrors:
    @pytest.mark.parametrize(
        ("status", "text"),
        [
            ("400", "simulated bad request"),
            ("401", "simulated: invalid API key provided"),
            ("403", "simulated: permission denied"),
            ("404", "simulated: model not found"),
            ("422", "simulated: unprocessable request"),
        ],
    )
    async def test_fails_at_once_naming_model_endpoint_and_server_text(
        self, sim, make_client, fake_clock, transport, status, text
    ):
        """A permanent error is raised after one attempt with model, endpoint and the server's text."""
        records: list[LLMCallRecord] = []
        client = make_client(transport, records=records)
        model = f"sim/echo?fault={status}&fail_first=1"
        with pytest.raises(PermanentLLMError) as caught:
            await client.chat(model, user("x"), key=f"perm-{status}")
        expected = f"model {model!r} at {sim.base_url}/chat/completions: HTTP {status}: {text}"
        assert expected == str(caught.value)
        assert 1 == sim.stats.received[f"perm-{status}"]
        assert [] == fake_clock.slept
        assert [("error", 1, "PermanentLLMError", expected)] == [
            (r.status, r.attempts, r.error_class, r.error_message) for r in records
        ]

    async def test_unknown_sim_model_is_a_404_listing_sim_models(self, sim, make_client, transport):
        """Asking the sim for a policy it lacks fails at once and says which models exist."""
        client = make_client(transport)
        with pytest.raises(PermanentLLMError) as caught:
            await client.chat("sim/nope", user("x"))
        from mpcbench_async.sim._registry import POLICIES

        assert (f"HTTP 404: The model 'sim/nope' does not exist; sim models: {', '.join(sorted(POLICIES))}"
                in str(caught.value))


class TestTransportsAgree:
    async def test_native_and_sdk_results_are_identical_including_tool_calls(self, make_client):
        """The same sim reply decodes to the same ChatResult through both transports."""
        steps = [{"tool_calls": [{"name": "Jira_SearchIssuesWithJql", "arguments": {"jql": "project = ALPHA"}},
                                 {"name": "Slack_search_messages", "arguments": {"query": "launch"}}]},
                 {"content": "done"}]
        tools = [ToolSchema(function=FunctionSchema(name="Jira_SearchIssuesWithJql")),
                 ToolSchema(function=FunctionSchema(name="Slack_search_messages"))]
        results = {}
        for transport in ("native", "openai"):
            client = make_client(transport)
            result = await client.chat("sim/scripted", scripted_messages(steps), tools, key="same")
            results[transport] = msgspec.structs.replace(result, latency_s=0.0)
        assert results["native"] == results["openai"]
        import hashlib

        base = hashlib.sha256(b"same").hexdigest()[:12]
        assert [
            ToolCall(id=f"call_{base}_0", function=FunctionCall(name="Jira_SearchIssuesWithJql",
                                                               arguments='{"jql":"project = ALPHA"}')),
            ToolCall(id=f"call_{base}_1", function=FunctionCall(name="Slack_search_messages",
                                                               arguments='{"query":"launch"}')),
        ] == results["native"].tool_calls
        assert ("tool_calls", None) == (results["native"].finish_reason, results["native"].content)

    async def test_plain_text_reply_is_identical(self, make_client):
        """A text reply gives equal ChatResults (latency aside) through both transports."""
        out = []
        for transport in ("native", "openai"):
            result = await make_client(transport).chat("sim/echo", user("hello there"), key="txt")
            out.append(msgspec.structs.replace(result, latency_s=0.0))
        assert out[0] == out[1]
        assert ChatResult(model="sim/echo", content="echo: hello there", finish_reason="stop",
                          usage=out[0].usage, attempts=1) == out[0]


class TestAccounting:
    async def test_usage_and_cost_come_from_the_reply_and_prices(self, make_client):
        """Cost = prompt × input price + completion × output price, per million tokens; totals add up."""
        config = ModelConfig.from_dict({"models": {"sim/echo": {"prices": {"input_per_1m": 2.0,
                                                                           "output_per_1m": 8.0}}}})
        client = make_client("native", config)
        result = await client.chat("sim/echo", user("count me"))
        usage = result.usage
        assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
        assert pytest.approx((usage.prompt_tokens * 2.0 + usage.completion_tokens * 8.0) / 1e6) == result.cost_usd
        totals = client.totals()["sim/echo"]
        assert (1, 0, 1, usage) == (totals.calls, totals.errors, totals.attempts, totals.usage)

    async def test_params_are_merged_and_reasoning_models_get_max_completion_tokens(self, sim, make_client):
        """Configured params reach the server; reasoning models send max_completion_tokens, no temperature."""
        config = ModelConfig.from_dict({"models": {"sim/echo": {"reasoning": True,
                                                                "params": {"temperature": 0.5, "max_tokens": 2}}}})
        client = make_client("native", config)
        result = await client.chat("sim/echo", user("abcdefghijklmnop"))
        assert "echo: ab" == result.content  # the sim caps replies at max tokens × 4 characters


class TestConfig:
    def test_missing_api_key_fails_before_any_call(self, make_client, monkeypatch):
        """A non-sim model without its key variable is a clear error from check_models."""
        monkeypatch.delenv("MPCB_TEST_KEY", raising=False)
        config = ModelConfig.from_dict({"models": {"gpt-x": {"api_key_env": "MPCB_TEST_KEY"}}},
                                       source="model_config.json")
        client = make_client("native", config)
        with pytest.raises(MissingAPIKeyError) as caught:
            client.check_models(["sim/echo", "gpt-x"])
        assert ("model 'gpt-x' needs an API key: set the environment variable MPCB_TEST_KEY "
                "(or set models.gpt-x.api_key_env in model_config.json; null means the endpoint "
                "needs no key)") == str(caught.value)

    def test_unknown_setting_names_the_model_and_field(self):
        """A typo in a model's settings is rejected naming the file, model and field."""
        with pytest.raises(ConfigError) as caught:
            ModelConfig.from_dict({"models": {"gpt-x": {"limits": {"rpmm": 5}}}}, source="mc.json")
        assert "mc.json: models.gpt-x: Object contains unknown field `rpmm` - at `$.limits`" == str(caught.value)

    def test_wrong_type_in_file_names_file_and_path(self, tmp_path):
        """A wrong-typed field in model_config.json is reported with the file and JSON path."""
        path = tmp_path / "model_config.json"
        path.write_text('{"agent_models": ["a", 3]}')
        with pytest.raises(ConfigError) as caught:
            load_model_config(path)
        assert f"{path}: Expected `str`, got `int` - at `$.agent_models[1]`" == str(caught.value)

    def test_missing_file_is_a_config_error(self, tmp_path):
        """A missing config file says so and how to point at another."""
        with pytest.raises(ConfigError) as caught:
            load_model_config(tmp_path / "nope.json")
        assert f"{tmp_path / 'nope.json'}: model config not found (pass ``config=PATH``)" == str(caught.value)

    def test_usage_addition(self):
        """Usage values add field by field."""
        assert Usage(prompt_tokens=3, completion_tokens=5, total_tokens=8) == (
            Usage(prompt_tokens=1, completion_tokens=2, total_tokens=3)
            + Usage(prompt_tokens=2, completion_tokens=3, total_tokens=5))
