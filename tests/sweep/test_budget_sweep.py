"""Budgets in a sweep (issue 15 point 1): ``--max-cost`` for the sweep, ``budget_usd`` per model.

Every sweep runs against the seeded sim, which counts the requests it receives. Each call's worst case is
reserved before it is sent; once a call is refused no new unit starts, units in flight finish and are written,
the refused unit leaves no record (it did not run), and the result carries the line the CLI prints with exit 3.
A rerun with a higher limit does the rest, and no unit runs twice.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mpcbench_async._exceptions import InputError
from mpcbench_async.runner import Outcome
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import SweepOptions, run_sweep
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import FAST_RETRY, plan_of
from tests.sweep_options import sweep_options

# Dear prices, so a few calls reach a small limit; max_tokens bounds each call's output.
PRICED = {**FAST_RETRY, "prices": {"input_per_1m": 1000.0, "output_per_1m": 4000.0}, "params": {"max_tokens": 64}}


def budget_line(limit: float, who: str, how: str) -> str:
    """The pattern of the line a budget stop ends with (the spend and the count of units vary)."""
    return (rf"^budget reached: \$\d+\.\d{{4}} of {re.escape(f'${limit:.4f}')} for {re.escape(who)}; "
            rf"(\d+) units not run; rerun with {re.escape(how)} to continue$")


def options(root: Path, out: Path, **changes: Any) -> SweepOptions:
    return sweep_options(config=root / "model_config.json", prompts=root / "prompt_config.json", out=out,
                        tasks_dir=root / "tasks", data_dir=root / "data", scenarios_dir=root / "scenarios",
                        handle_signals=False, **changes)


def spent(out: Path) -> float:
    calls, _ = read_jsonl(out / "calls.jsonl")
    return sum(call["cost_usd"] for call in calls)


def keys(out: Path, name: str) -> Counter[str]:
    records, _ = read_jsonl(out / name)
    assert {record["status"] for record in records} <= {"ok"}  # a refused unit is never written as an error
    return Counter(record["key"] for record in records)


def requests(sim: SimServer) -> int:
    return sum(sim.stats.received.values())


class TestSweepBudget:
    @pytest.mark.parametrize("concurrency", [1, 8])
    async def test_stops_at_the_limit_and_a_rerun_with_a_higher_limit_finishes_the_rest(self, tmp_path,
                                                                                         concurrency):
        """$5 of a ~$23.5 sweep: the sweep stops with some units not run, having spent at most the limit
        (every call's reservation bounds its cost here); every request the sim saw is in calls.jsonl; the units
        not run have no record. The rerun with --max-cost 100 (which counts the $ already spent) runs exactly
        the missing units: every key once in runs.jsonl and judgements.jsonl, the plan complete."""
        out = tmp_path / "out"
        async with SimServer(seed=41) as sim:
            root = write_workspace(tmp_path, base_url=sim.base_url, defaults=PRICED)
            _, _, plan = plan_of(root)
            first = await run_sweep(options(root, out, max_cost=5.0, concurrency=concurrency))
            first_requests, first_spent = requests(sim), spent(out)
            first_calls = len(read_jsonl(out / "calls.jsonl")[0])
            runs, judgements = keys(out, "runs.jsonl"), keys(out, "judgements.jsonl")
            second = await run_sweep(options(root, out, max_cost=100.0, concurrency=concurrency))
            total_requests = requests(sim)
        units = plan.agent_unit_count + plan.judge_unit_count
        assert first.budget_reached is not None
        match = re.match(
            budget_line(5.0, who="the sweep", how="a higher ``max_cost``"), first.budget_reached)
        assert match is not None, first.budget_reached
        not_run = int(match.group(1))
        assert (0 < not_run < units, first.outcome) == (True, Outcome(units=units, ok=units - not_run,
                                                                    not_run=not_run))
        assert 0 < first_spent <= 5.0
        assert first_requests == first_calls
        assert sum(runs.values()) + sum(judgements.values()) == units - not_run
        assert (second.budget_reached, second.outcome) == (None, Outcome(units=units, ok=units))
        assert (set(keys(out, "runs.jsonl").values()), set(keys(out, "judgements.jsonl").values())) == ({1}, {1})
        assert total_requests == len(read_jsonl(out / "calls.jsonl")[0]) == units  # one call per unit at this sim
        assert spent(out) <= 100.0

    async def test_a_rerun_with_the_same_limit_runs_nothing_more(self, tmp_path):
        """The limit covers the sweep, earlier runs into --out included: the same command again is refused at its
        first call, sends nothing and reports the same budget line."""
        out = tmp_path / "out"
        async with SimServer(seed=41) as sim:
            root = write_workspace(tmp_path, base_url=sim.base_url, defaults=PRICED)
            first = await run_sweep(options(root, out, max_cost=5.0, concurrency=1))
            before = requests(sim)
            again = await run_sweep(options(root, out, max_cost=5.0, concurrency=1))
            assert requests(sim) == before
        assert (again.outcome, again.budget_reached is not None) == (first.outcome, True)

    async def test_a_model_budget_stops_the_sweep_naming_the_model(self, tmp_path):
        """budget_usd of one judge model: the sweep stops once that judge's next call would pass $3 (no --max-cost);
        the line names the model and says which setting to raise; the judge spent at most its $3."""
        out = tmp_path / "out"
        async with SimServer(seed=41) as sim:
            root = write_workspace(tmp_path, base_url=sim.base_url, defaults=PRICED)
            config = root / "model_config.json"
            config.write_bytes(config.read_bytes().replace(
                b'"defaults"', b'"models": {"sim/judge": {"budget_usd": 3.0}}, "defaults"'))
            result = await run_sweep(options(root, out, concurrency=1))
        assert result.budget_reached is not None
        assert re.match(
            budget_line(3.0, who="sim/judge", how=f"a higher models.sim/judge.budget_usd in {config}"),
            result.budget_reached), result.budget_reached
        judged, _ = read_jsonl(out / "judgements.jsonl")
        assert 0 < len(judged) and spent(out) > 3.0  # the agents' calls count toward no limit
        calls, _ = read_jsonl(out / "calls.jsonl")
        assert sum(call["cost_usd"] for call in calls if call["model"] == "sim/judge") <= 3.0

    async def test_a_model_without_a_price_is_refused_before_any_call(self, tmp_path):
        """--max-cost with a model whose price is unknown: an InputError naming the model and the setting; nothing
        is sent and --out is not created. So is a model without an output cap, and a limit that is not positive."""
        out = tmp_path / "out"
        async with SimServer(seed=41) as sim:
            root = write_workspace(tmp_path, base_url=sim.base_url, defaults=FAST_RETRY,
                                   agent_models=("acme/mystery-model",))
            config = root / "model_config.json"
            with pytest.raises(InputError) as refused:
                await run_sweep(options(root, out, max_cost=5.0))
            assert str(refused.value) == (
                "--max-cost: model 'acme/mystery-model' has no known price, so a budget cannot bound its calls: "
                f"set models.acme/mystery-model.prices (input_per_1m, output_per_1m) in {config}")
            config.write_bytes(config.read_bytes().replace(
                b'"defaults"', b'"models": {"acme/mystery-model": {"prices": {"input_per_1m": 1.0, '
                b'"output_per_1m": 2.0}}}, "defaults"'))
            with pytest.raises(InputError) as uncapped:
                await run_sweep(options(root, out, max_cost=5.0))
            assert str(uncapped.value) == (
                "--max-cost: model 'acme/mystery-model' has no output cap, so a budget cannot bound its calls: "
                f"set models.acme/mystery-model.params.max_tokens in {config}")
            with pytest.raises(InputError, match=r"^max_cost must be a positive amount of USD, got 0.0$"):
                await run_sweep(options(root, out, max_cost=0.0))
            assert requests(sim) == 0
        assert not out.exists()
