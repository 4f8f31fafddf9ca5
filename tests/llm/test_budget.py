"""Budgets: reserve a call's worst case before sending, settle on the reply, refuse past a limit."""

from __future__ import annotations

import anyio
import pytest

from mpcbench_async import ConfigError, LLMCallRecord, Message, ModelConfig
from mpcbench_async.llm import Budget, BudgetExceeded, Prices, ResponseCache

PRICES = Prices(input_per_1m=1000.0, output_per_1m=4000.0)  # dear, so a few calls reach a small limit
CONFIG = ModelConfig.from_dict({"models": {"sim/echo": {
    "prices": {"input_per_1m": 1000.0, "output_per_1m": 4000.0}, "params": {"max_tokens": 20}, "budget_usd": 2.0}}})


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


class TestBudgetAlone:
    def test_reserve_settle_release_keep_the_books(self):
        """A reservation holds the worst case; settling replaces it with the cost; releasing drops it."""
        budget = Budget(1.0)
        first = budget.reserve("m", PRICES, 100, 50)  # 0.1 + 0.2
        second = budget.reserve("m", PRICES, 100, 50)
        assert (pytest.approx(0.6), 0.0) == (budget.reserved_usd, budget.spent_usd)
        budget.settle(first, 0.25)
        budget.release(second)
        budget.release(first)  # closed already: no effect
        assert (0.0, pytest.approx(0.25), {"m": pytest.approx(0.25)}) == (
            budget.reserved_usd, budget.spent_usd, budget.spent_by_model())

    def test_a_reservation_past_the_limit_is_refused_naming_model_spent_and_limit(self):
        budget = Budget(0.5)
        budget.settle(budget.reserve("m", PRICES, 100, 50), 0.3)
        budget.reserve("m", PRICES, 30, 5)  # 0.05 in flight
        with pytest.raises(BudgetExceeded) as caught:
            budget.reserve("m", PRICES, 100, 50)
        assert ("budget reached: $0.3000 of $0.5000 spent for the run ($0.0500 more reserved by calls in flight); "
                "a call to model 'm' may cost up to $0.3000") == str(caught.value)
        assert ("m", 0.3, 0.5, "the run", 1) == (caught.value.model, caught.value.spent_usd, caught.value.limit_usd,
                                                 caught.value.scope, budget.refused())

    def test_per_model_limits_hold_beside_the_run_limit(self):
        """Model a is capped at $0.35; model b still has the run's room."""
        budget = Budget(10.0, model_limits={"a": 0.35})
        budget.reserve("a", PRICES, 100, 50)
        with pytest.raises(BudgetExceeded, match=r"for model 'a' .* a call to model 'a' may cost up to \$0.3000"):
            budget.reserve("a", PRICES, 100, 50)
        budget.reserve("b", PRICES, 100, 50)
        assert pytest.approx(0.6) == budget.reserved_usd

    def test_config_budgets_apply_per_model(self):
        """budget_usd in model_config.json: per model, defaults included."""
        config = ModelConfig.from_dict({"defaults": {"budget_usd": 0.4}, "models": {"big": {"budget_usd": 2.0}}})
        budget = Budget.from_config(config)
        for _ in range(6):
            budget.reserve("big", PRICES, 100, 50)
        budget.reserve("other", PRICES, 100, 50)
        with pytest.raises(BudgetExceeded, match="for model 'other'"):
            budget.reserve("other", PRICES, 100, 50)

    def test_an_unbounded_model_is_a_config_error(self):
        """No known price, or no output cap at a non-zero output price: the budget cannot bound the call."""
        budget = Budget(1.0)
        with pytest.raises(ConfigError) as caught:
            budget.reserve("my-model", None, 100, 50, where="cfg.json")
        assert ("model 'my-model' has no known price, so a budget cannot bound its calls: set "
                "models.my-model.prices (input_per_1m, output_per_1m) in cfg.json") == str(caught.value)
        with pytest.raises(ConfigError) as caught:
            budget.reserve("gpt-4o", PRICES, 100, 0, where="cfg.json")
        assert ("model 'gpt-4o' has no output cap, so a budget cannot bound its calls: set "
                "models.gpt-4o.params.max_tokens in cfg.json") == str(caught.value)
        assert 0.0 == budget.reserve("sim/echo", Prices(), 100, 0).amount_usd  # free: nothing to bound

    def test_a_non_positive_limit_is_refused(self):
        with pytest.raises(ValueError, match="a budget limit must be positive, got 0"):
            Budget(0)


class TestAtTheSim:
    async def test_calls_stop_at_the_limit_and_nothing_refused_is_sent(self, sim, make_client):
        """Sequential calls: each settles below its reservation; the sim counts exactly the calls let through."""
        records: list[LLMCallRecord] = []
        client = make_client("native", CONFIG, records)
        client.budget = Budget(1.0)
        sent = 0
        with pytest.raises(BudgetExceeded) as caught:
            for i in range(100):
                await client.chat("sim/echo", user(f"question {i:03d}"))
                sent += 1
        assert sent == sim.stats.total_received == len(records)
        spent = sum(r.cost_usd or 0.0 for r in records)
        assert pytest.approx(spent) == client.budget.spent_usd
        assert spent <= 1.0
        worst = PRICES.worst_case(records[-1].estimated_prompt_tokens, 20)
        assert spent + worst > 1.0  # refused only when the next worst case no longer fit
        assert caught.value.scope == "the run"

    async def test_concurrent_calls_never_pass_the_limit(self, sim, make_client):
        """60 calls at once: as many as their worst cases fit in the limit are sent, the rest refused unsent."""
        records: list[LLMCallRecord] = []
        client = make_client("native", CONFIG, records)
        client.budget = Budget(1.0)
        outcomes: list[str] = []

        async def call(i: int) -> None:
            try:
                await client.chat("sim/echo", user(f"question {i:03d}"))
                outcomes.append("ok")
            except BudgetExceeded:
                outcomes.append("refused")

        async with anyio.create_task_group() as tg:
            for i in range(60):
                tg.start_soon(call, i)
        sent = outcomes.count("ok")
        assert (sent, 60 - sent) == (sim.stats.total_received, outcomes.count("refused"))
        worst = PRICES.worst_case(records[0].estimated_prompt_tokens, 20)  # every prompt has the same size
        assert int(1.0 / worst) == sent  # all reserved before any settled
        assert client.budget.spent_usd <= 1.0
        assert 0.0 == client.budget.reserved_usd

    async def test_per_model_budget_from_the_config_and_cache_hits_cost_nothing(self, sim, make_client, tmp_path):
        """budget_usd of sim/echo stops its calls; replies already cached are still served, free, when it has."""
        client = make_client("native", CONFIG)
        client.budget = Budget.from_config(CONFIG)
        client.cache = ResponseCache(tmp_path / "c.sqlite3")
        sent = 0
        with pytest.raises(BudgetExceeded) as caught:
            for i in range(100):
                await client.chat("sim/echo", user(f"question {i:03d}"))
                sent += 1
        assert "model 'sim/echo'" == caught.value.scope
        spent = client.budget.spent_usd
        assert spent <= 2.0
        for i in range(sent):
            await client.chat("sim/echo", user(f"question {i:03d}"))
        assert (sent, spent) == (sim.stats.total_received, client.budget.spent_usd)


class TestUnsettled:
    def test_unsettled_calls_count_as_spent_at_their_worst_case(self):
        """An earlier run's unsettled call adds its worst case to the run's and its model's spend; a call cancelled
        after it was sent keeps its reservation as spent; both are reported as unsettled."""
        budget = Budget(1.0, model_limits={"a": 0.5})
        budget.add_unsettled("a", 0.3)
        kept = budget.reserve("b", PRICES, 100, 50)  # 0.3
        budget.keep(kept)
        budget.release(kept)  # closed already: no effect
        assert (pytest.approx(0.6), 0.0, 2, pytest.approx(0.6)) == (
            budget.spent_usd, budget.reserved_usd, budget.unsettled_calls, budget.unsettled_usd)
        assert {"a": (1, 0.3), "b": (1, pytest.approx(0.3))} == budget.unsettled_by_model()
        with pytest.raises(BudgetExceeded, match="for model 'a'"):
            budget.reserve("a", PRICES, 100, 50)  # 0.3 unsettled + 0.3 > 0.5
