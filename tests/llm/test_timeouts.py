"""Timeouts that bound a call: connect/read settings, the per-call deadline, and 501/505/HTML not retried."""

from __future__ import annotations

import pytest

from mpcbench_async import (
    CallDeadlineError,
    ConfigError,
    HTMLReplyError,
    LLMCallRecord,
    LLMTimeoutError,
    Message,
    ModelConfig,
    PermanentLLMError,
)
from mpcbench_async.llm import Endpoint

TRANSPORTS = ["native", "openai"]


HUNG = "sim/echo?fault=timeout&fail_first=9&hang_s=60"


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


async def call_hung_endpoint(client, key: str) -> LLMTimeoutError:
    """Call a sim model that holds every request open for a minute; return the timeout error raised."""
    with pytest.raises(LLMTimeoutError) as caught:
        await client.chat(HUNG, user("x"), key=key)
    return caught.value


class TestSettings:
    def test_defaults_are_connect_10_read_120_deadline_600(self):
        """A model with no timeouts configured gets connect 10 s, read 120 s and a 600 s call deadline."""
        timeouts = ModelConfig().settings_for("gpt-x").timeouts
        assert (10.0, 120.0, 600.0) == (timeouts.connect_s, timeouts.read_s, timeouts.call_deadline_s)

    def test_per_model_timeouts_merge_over_defaults_field_by_field(self):
        """A model's timeouts override the defaults' field by field; unset fields keep the default."""
        config = ModelConfig.from_dict({"defaults": {"timeouts": {"connect_s": 3}},
                                        "models": {"slow": {"timeouts": {"read_s": 900, "call_deadline_s": 3600}}}})
        timeouts = config.settings_for("slow").timeouts
        assert (3.0, 900.0, 3600.0) == (timeouts.connect_s, timeouts.read_s, timeouts.call_deadline_s)

    def test_legacy_timeout_s_is_still_accepted(self):
        """Configs written for earlier versions keep loading: timeout_s caps each attempt."""
        assert 30.0 == ModelConfig.from_dict({"defaults": {"timeout_s": 30}}).settings_for("m").timeout_s

    @pytest.mark.parametrize(
        ("timeouts", "expected"),
        [
            ({"read_s": 0}, "<model config>: models.m: Expected `float` > 0.0 - at `$.timeouts.read_s`"),
            ({"connect_s": -1}, "<model config>: models.m: Expected `float` > 0.0 - at `$.timeouts.connect_s`"),
            ({"deadline": 5}, "<model config>: models.m: Object contains unknown field `deadline` - at `$.timeouts`"),
        ],
    )
    def test_bad_timeouts_are_rejected_naming_the_field(self, timeouts, expected):
        """A zero, negative or misspelt timeout is a ConfigError naming the model and field."""
        with pytest.raises(ConfigError) as caught:
            ModelConfig.from_dict({"models": {"m": {"timeouts": timeouts}}})
        assert expected == str(caught.value)

    def test_timeout_errors_name_the_setting(self):
        """The connect and read timeout errors name model, endpoint, the limit and the setting to change."""
        endpoint = Endpoint(model="m", api_model="m", base_url="http://h/v1", connect_s=2.5, read_s=30)
        assert ("model 'm' at http://h/v1/chat/completions: could not connect within the connect timeout of "
                "2.5 s (timeouts.connect_s)") == str(endpoint.connect_timeout())
        assert ("model 'm' at http://h/v1/chat/completions: no reply within the read timeout of 30 s "
                "(timeouts.read_s)") == str(endpoint.read_timeout())


@pytest.mark.parametrize("transport", TRANSPORTS)
class TestHungEndpoint:
    async def test_read_timeout_cuts_a_hung_endpoint(self, sim, make_client, transport):
        """An endpoint that never answers is cut by timeouts.read_s on every attempt, not held for hang_s."""
        settings = {"timeouts": {"read_s": 0.5}, "retry": {"max_attempts": 2}}
        error = await call_hung_endpoint(make_client(transport, ModelConfig.from_dict({"defaults": settings})),
                                         "hung")
        assert (f"model {HUNG!r} at {sim.base_url}/chat/completions: no reply within the read timeout of "
                "0.5 s (timeouts.read_s)") == str(error)
        assert (2, 0) == (sim.stats.received["hung"], sim.stats.completed.get("hung", 0))

    async def test_legacy_timeout_s_caps_each_attempt(self, sim, make_client, transport):
        """timeout_s still bounds one attempt as a whole, with an error naming it."""
        settings = {"timeout_s": 0.2, "retry": {"max_attempts": 1}}
        error = await call_hung_endpoint(make_client(transport, ModelConfig.from_dict({"defaults": settings})),
                                         "capped")
        expected = f"model {HUNG!r} at {sim.base_url}/chat/completions: no complete reply within timeout_s=0.2 s"
        assert expected == str(error)


class TestReadTimeoutOfTheNativeTransport:
    """``read_s`` is timed per connection, lazily (``_read_timer``): the same cuts as aiohttp's timer per chunk."""

    async def test_a_keep_alive_connection_times_the_next_read_out_too(self, sim, make_client):
        """The connection's read timer, left armed by a quick reply, cuts a later hung read at ``read_s``."""
        client = make_client("native", ModelConfig.from_dict({"defaults": {"timeouts": {"read_s": 0.3},
                                                                          "retry": {"max_attempts": 1}}}))
        await client.chat("sim/echo", user("quick"), key="quick")
        with pytest.raises(Exception) as caught:
            await client.chat(HUNG, user("x"), key="hung")
        assert str(caught.value).endswith("no reply within the read timeout of 0.3 s (timeouts.read_s)")

    async def test_a_reply_that_keeps_coming_is_not_cut_by_the_read_timeout(self, sim, make_client):
        """``read_s`` bounds the gaps between chunks, not the whole reply: 30 tokens 1/20 s apart, read_s 0.5."""
        client = make_client("native", ModelConfig.from_dict({"defaults": {"timeouts": {"read_s": 0.5}}}))
        result = await client.chat("sim/echo?tokens_per_s=20&output_tokens=30", user("x"), key="slow", stream=True)
        assert 30 == result.usage.completion_tokens


@pytest.mark.parametrize("transport", TRANSPORTS)
class TestCallDeadline:
    async def test_deadline_counts_backoff_and_stops_retrying(self, sim, make_client, fake_clock, transport):
        """With a 5 s deadline and 3 s server waits, the third attempt is never made and the error says why."""
        records: list[LLMCallRecord] = []
        config = ModelConfig.from_dict({"defaults": {"timeouts": {"call_deadline_s": 5}}})
        client = make_client(transport, config, records)
        model = "sim/echo?fault=503&fail_first=99&retry_after=3"
        with pytest.raises(CallDeadlineError) as caught:
            await client.chat(model, user("x"), key="late")
        expected = (f"model {model!r} at {sim.base_url}/chat/completions: call deadline of 5 s passed after "
                    "2 attempt(s), retries and backoff included (timeouts.call_deadline_s); last error: "
                    "HTTP 503: simulated: service unavailable")
        assert expected == str(caught.value)
        assert 2 == sim.stats.received["late"]
        assert 1 == len(fake_clock.slept)
        assert [("error", 2, "CallDeadlineError", expected)] == [
            (r.status, r.attempts, r.error_class, r.error_message) for r in records]

    async def test_deadline_cuts_an_attempt_in_flight(self, sim, make_client, transport):
        """An attempt still waiting when the deadline passes is cut there, whatever the read timeout."""
        config = ModelConfig.from_dict({"defaults": {"timeouts": {"read_s": 60, "call_deadline_s": 0.5}}})
        client = make_client(transport, config)
        with pytest.raises(CallDeadlineError) as caught:
            await client.chat(HUNG, user("x"), key="cut")
        assert (f"model {HUNG!r} at {sim.base_url}/chat/completions: call deadline of 0.5 s passed after "
                "1 attempt(s), retries and backoff included (timeouts.call_deadline_s); the last attempt was "
                "still waiting for its reply") == str(caught.value)


@pytest.mark.parametrize("transport", TRANSPORTS)
class TestNotRetried:
    @pytest.mark.parametrize(
        ("fault", "text"),
        [
            ("501", "HTTP 501: Error response Error response Error code: 501 Message: Unsupported method ('POST')."),
            ("505", "HTTP 505: simulated: HTTP version not supported"),
        ],
    )
    async def test_501_and_505_fail_at_once(self, sim, make_client, fake_clock, transport, fault, text):
        """501 and 505 are answered once, never retried, with model, endpoint and the server's text."""
        client = make_client(transport)
        model = f"sim/echo?fault={fault}&fail_first=9"
        with pytest.raises(PermanentLLMError) as caught:
            await client.chat(model, user("x"), key=f"k{fault}")
        assert f"model {model!r} at {sim.base_url}/chat/completions: {text}" == str(caught.value)
        assert (1, []) == (sim.stats.received[f"k{fault}"], fake_clock.slept)

    async def test_html_page_answering_the_api_fails_at_once(self, sim, make_client, fake_clock, transport):
        """A 200 HTML page where the JSON API should be is an HTMLReplyError after one attempt, hinting at base_url."""
        client = make_client(transport)
        model = "sim/echo?fault=html&fail_first=9"
        with pytest.raises(HTMLReplyError) as caught:
            await client.chat(model, user("x"), key="page")
        assert (f"model {model!r} at {sim.base_url}/chat/completions: HTTP 200: the endpoint answered an HTML "
                "page, not the JSON chat API (is base_url the API root, e.g. ending in /v1?): 'Chat UI'"
                ) == str(caught.value)
        assert (1, []) == (sim.stats.received["page"], fake_clock.slept)
