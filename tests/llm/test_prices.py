"""Prices: the shipped table, config overrides, cached and reasoning tokens, and unknown prices kept unknown."""

from __future__ import annotations

import msgspec
import pytest

from mpcbench_async import ConfigError, LLMCallRecord, Message, ModelConfig
from mpcbench_async.llm import LLMClient, MockTransport, ModelSettings, Prices, model_prices
from mpcbench_async.llm._prices import PRICE_TABLE, table_prices


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


def reply(prompt: int, completion: int, cached: int | None = None, reasoning: int | None = None) -> dict:
    usage: dict = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return {"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}], "usage": usage}


@pytest.fixture
async def priced_client(fake_clock, monkeypatch):
    """Clients over a MockTransport answering with a given usage block; each returns (client, call records)."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    clients: list[LLMClient] = []

    def build(body: dict, config: ModelConfig | None = None) -> tuple[LLMClient, list[LLMCallRecord]]:
        records: list[LLMCallRecord] = []
        client = LLMClient(config, transport=MockTransport(lambda endpoint, request: body), clock=fake_clock,
                           call_sink=records.append)
        clients.append(client)
        return client, records

    yield build
    for client in clients:
        await client.aclose()


class TestTable:
    @pytest.mark.parametrize(("name", "row"), [
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # a dated snapshot
        ("openai/gpt-4.1", "gpt-4.1"),  # a gateway's spelling
        ("GPT-4.1-2025-04-14", "gpt-4.1"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),  # dots as dashes
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("google/gemini-2.5-flash", "gemini-2.5-flash"),
        ("gpt-4o-2024-05-13", "gpt-4o-2024-05-13"),  # a dated name with its own row keeps it
    ])
    def test_names_are_matched_after_normalising(self, name, row):
        """Gateway prefixes, case, dots and snapshot dates do not hide a model's row."""
        assert PRICE_TABLE[row] == table_prices(name)

    @pytest.mark.parametrize("name", ["gemini-2.5-pro", "my-finetune", "gpt-4o-mini-custom", "llama3:8b"])
    def test_unlisted_models_have_no_price(self, name):
        """Not in the table (tiered prices included): unknown, never free."""
        assert table_prices(name) is None

    def test_rows_hold_published_rates(self):
        """Spot checks of rows against their cited sources (per 1M tokens: input, output, cached input)."""
        rows = {name: (p.input_per_1m, p.output_per_1m, p.cached_input_per_1m) for name, p in PRICE_TABLE.items()}
        assert ((0.15, 0.60, 0.075), (1.25, 10.00, 0.125), (3.00, 15.00, 0.30), (0.30, 2.50, None)) == (
            rows["gpt-4o-mini"], rows["gpt-5"], rows["claude-sonnet-4-5"], rows["gemini-2.5-flash"])

    def test_sim_models_are_free_and_config_prices_override_the_table(self):
        """sim/ costs $0; a configured price wins over the table; the API model name picks the row."""
        config = ModelConfig.from_dict({"models": {
            "cheap-4o": {"model": "gpt-4o"},
            "gpt-4o-mini": {"prices": {"input_per_1m": 0.1, "output_per_1m": 0.2}},
        }})
        assert Prices() == model_prices("sim/oracle-agent?p429=0.1", config.settings_for("sim/oracle-agent?p429=0.1"))
        assert PRICE_TABLE["gpt-4o"] == model_prices("cheap-4o", config.settings_for("cheap-4o"))
        assert Prices(input_per_1m=0.1, output_per_1m=0.2) == model_prices("gpt-4o-mini",
                                                                            config.settings_for("gpt-4o-mini"))
        assert model_prices("local-llm", ModelSettings()) is None


class TestCost:
    def test_cached_and_reasoning_tokens_are_priced_at_their_rates(self):
        """Cached prompt tokens and reasoning tokens are parts of prompt and completion, each at its own rate."""
        prices = Prices(input_per_1m=2.0, output_per_1m=8.0, cached_input_per_1m=0.5, reasoning_per_1m=10.0)
        assert pytest.approx((600 * 2.0 + 400 * 0.5 + 100 * 8.0 + 200 * 10.0) / 1e6) == prices.cost(
            1000, 300, cached_tokens=400, reasoning_tokens=200)
        unset = Prices(input_per_1m=2.0, output_per_1m=8.0)  # no special rates: input and output rates
        assert pytest.approx((1000 * 2.0 + 300 * 8.0) / 1e6) == unset.cost(1000, 300, cached_tokens=400,
                                                                          reasoning_tokens=200)

    async def test_client_prices_the_usage_details_a_reply_reports(self, priced_client):
        """gpt-4.1 from the table: 1,000 prompt tokens with 800 cached, 200 completion with 150 reasoning."""
        client, records = priced_client(reply(1000, 200, cached=800, reasoning=150))
        result = await client.chat("gpt-4.1", user("hi"))
        expected = (200 * 2.00 + 800 * 0.50 + 200 * 8.00) / 1e6
        assert pytest.approx(expected) == result.cost_usd
        assert [(pytest.approx(expected), 800, 150)] == [(r.cost_usd, r.cached_tokens, r.reasoning_tokens)
                                                          for r in records]

    async def test_a_model_without_a_price_costs_unknown_never_zero(self, priced_client):
        """The call record says null, the totals say None; a configured price makes it known."""
        client, records = priced_client(reply(1000, 200))
        await client.chat("my-finetune", user("hi"))
        assert [None] == [r.cost_usd for r in records]
        assert b'"cost_usd":null' in msgspec.json.encode(records[0])
        assert client.totals()["my-finetune"].cost_usd is None
        assert client.prices("my-finetune") is None
        config = ModelConfig.from_dict({"models": {"my-finetune": {"prices": {"input_per_1m": 1.0,
                                                                              "output_per_1m": 2.0}}}})
        priced, priced_records = priced_client(reply(1000, 200), config)
        await priced.chat("my-finetune", user("hi"))
        assert [pytest.approx(0.0014)] == [r.cost_usd for r in priced_records]

    def test_old_call_records_read_as_before(self):
        """A record written before these fields existed decodes with cost 0 and nothing cached."""
        record = msgspec.json.decode(b'{"model":"m","key":"k","status":"ok","cost_usd":0.5}', type=LLMCallRecord)
        assert (0.5, False, None, 0, 0) == (record.cost_usd, record.cached, record.value_usd, record.cached_tokens,
                                            record.reasoning_tokens)


class TestConfig:
    @pytest.mark.parametrize(("entry", "message"), [
        ({"prices": {"cached_input_per_1m": -1}}, "must be at least 0, got -1 - at `$.prices.cached_input_per_1m`"),
        ({"prices": {"reasoning_per_1m": -2}}, "must be at least 0, got -2 - at `$.prices.reasoning_per_1m`"),
        ({"budget_usd": 0}, "Expected `float` > 0.0 - at `$.budget_usd`"),
    ])
    def test_bad_price_fields_name_where_they_are(self, entry, message):
        """Negative rates and a non-positive budget are refused with the field's path."""
        with pytest.raises(ConfigError) as caught:
            ModelConfig.from_dict({"models": {"m": entry}}, source="cfg.json")
        assert f"cfg.json: models.m: {message}" == str(caught.value)
