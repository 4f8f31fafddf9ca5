"""The call ledger in a sweep (issue 25 point 1): intents paired with records; unsettled calls in spent and budgets.

A sweep against the seeded sim writes one intent per request to ``ledger.jsonl`` and a record with the same
``call_id`` to ``calls.jsonl``. Intents no record settles (a kill's calls in flight; written here by hand, so the
figures are exact — the chaos test makes real ones) count at their worst case in the summary's spent columns, in a
line of their own, and in ``--max-cost`` on the next run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from mpcbench_async.records import CallIntent
from mpcbench_async.report import render_markdown, render_table
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import SweepOptions, run_sweep, summarize
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import FAST_RETRY
from tests.sweep_options import sweep_options

PRICED = {**FAST_RETRY, "prices": {"input_per_1m": 1000.0, "output_per_1m": 4000.0}, "params": {"max_tokens": 64}}
UNSETTLED_LINE = ("unsettled: 3 calls, ≤ $1.7500 — sent, but their replies were never recorded (the sweep was "
                  "killed, or the call cancelled, while they were in flight; their intents are in ledger.jsonl); the "
                  "provider may have billed them, so spent and budgets count each at its worst case")


def options(root: Path, out: Path, **changes: Any) -> SweepOptions:
    return sweep_options(config=root / "model_config.json", prompts=root / "prompt_config.json", out=out,
                        tasks_dir=root / "tasks", data_dir=root / "data", scenarios_dir=root / "scenarios",
                        handle_signals=False, **changes)


def unsettled(call_id: str, key: str, model: str, worst: float) -> bytes:
    return msgspec.json.encode(CallIntent(call_id=call_id, key=key, attempt=1, model=model, worst_usd=worst,
                                          at=1.0)) + b"\n"


class TestLedgerInASweep:
    async def test_every_record_settles_its_intent_and_unsettled_calls_count_at_their_worst_case(self, tmp_path):
        """A finished sweep: one intent per call record, paired by call_id, each record with the sim's request id
        and completion id. Three intents added without records (an agent call, a judge call, a call of no unit of
        this experiment) add exactly their worst case to the agent row's and the judge row's spent (shown as
        ≤X), all three to the directory's, and one line under the table and in summary.md. The next run, extended
        by a trial, counts them against --max-cost: a limit they push past refuses its first call, and the budget
        line says how much of the spend is unsettled."""
        out = tmp_path / "out"
        async with SimServer(seed=41) as sim:
            root = write_workspace(tmp_path, base_url=sim.base_url, defaults=PRICED)
            await run_sweep(options(root, out, max_cost=100.0, concurrency=4))
            calls, _ = read_jsonl(out / "calls.jsonl")
            intents, _ = read_jsonl(out / "ledger.jsonl")
            assert sorted(c["call_id"] for c in calls) == sorted(i["call_id"] for i in intents)
            assert {(c["key"], c["model"]) for c in calls} == {(i["key"], i["model"]) for i in intents}
            assert all(c["request_id"].startswith("req_") and c["response_id"].startswith("chatcmpl-") for c in calls)
            assert {1} == {i["attempt"] for i in intents}

            before = summarize(out)
            agent_key = next(c for c in calls if c["key"].startswith("run-"))
            judge_key = next(c for c in calls if c["key"].startswith("judge-"))
            with (out / "ledger.jsonl").open("ab") as fh:
                fh.write(unsettled("dead0000beef-1", agent_key["key"], agent_key["model"], 0.25))
                fh.write(unsettled("dead0000beef-2", judge_key["key"], judge_key["model"], 0.5))
                fh.write(unsettled("dead0000beef-3", "run-0123456789abcdef/turn0", "sim/oracle-agent", 1.0))
            after = summarize(out)
            recorded = sum(c["cost_usd"] for c in calls)

            limit = round(recorded + 1.5, 4)  # below recorded + 1.75: the unsettled bound alone passes it
            refused = await run_sweep(options(root, out, max_cost=limit, concurrency=4, trials=2))
            assert len(read_jsonl(out / "calls.jsonl")[0]) == len(calls)  # nothing was sent

        agent = {m.model: m for m in after.models}[agent_key["model"]]
        agent_before = {m.model: m for m in before.models}[agent_key["model"]]
        judge = {j.model: j for j in after.judge_calls}[judge_key["model"]]
        judge_before = {j.model: j for j in before.judge_calls}[judge_key["model"]]
        assert (1, pytest.approx(agent_before.spent.cost_usd + 0.25), agent_before.spent.calls) == (
            agent.spent.unsettled_calls, agent.spent.cost_usd, agent.spent.calls)
        assert (1, pytest.approx(judge_before.spent.cost_usd + 0.5)) == (judge.spent.unsettled_calls,
                                                                         judge.spent.cost_usd)
        assert agent.kept == agent_before.kept  # an unsettled call is in no kept record
        assert (3, 1.75, 0, pytest.approx(recorded + 1.75)) == (
            after.directory_calls.unsettled_calls, after.directory_calls.unsettled_usd,
            after.directory_calls.unsettled_unbounded, after.directory_calls.cost_usd)
        assert f"≤{agent.spent.cost_usd:.4f}" == agent.spent.cost_text()
        table, markdown = render_table(after), render_markdown(after)
        assert f"  {UNSETTLED_LINE}" in table.splitlines()
        paragraphs = [" ".join(block.split()) for block in markdown.split("\n\n")]  # summary.md wraps prose
        assert " ".join(("U" + UNSETTLED_LINE[1:] + ".").split()) in paragraphs
        assert "unsettled:" not in render_table(before) and "Unsettled:" not in render_markdown(before)
        assert f"/≤{agent.spent.cost_usd:.4f}" in table
        summary_json = orjson.loads((out / "summary.json").read_bytes())
        assert (3, 1.75) == (summary_json["directory_calls"]["unsettled_calls"],
                             summary_json["directory_calls"]["unsettled_usd"])

        assert refused.budget_reached is not None
        spent = recorded + 1.75
        assert refused.budget_reached.startswith(
            f"budget reached: ${spent:.4f} of ${limit:.4f} for the sweep (unsettled: 3 calls, ≤ $1.7500, counted at "
            "their worst case); "), refused.budget_reached


class TestSpendText:
    def test_unsettled_calls_show_as_a_bound_and_unbounded_ones_as_unknown(self):
        from mpcbench_async.sweep._summary import Spend

        def add(spend: Spend, worst: float | None) -> Spend:
            spend.add_unsettled(CallIntent(call_id="p-1", key="run-a/turn0", attempt=1, model="m", worst_usd=worst,
                                           at=1.0))
            return spend

        recorded = Spend(calls=2, tokens=10, cost_usd=0.5)
        assert ("0.5000", "") == (recorded.cost_text(), recorded.unsettled_text())
        add(recorded, 0.25)
        assert ("≤0.7500", "unsettled: 1 call, ≤ $0.2500") == (recorded.cost_text(), recorded.unsettled_text())
        add(recorded, None)
        assert ("≤0.7500 + unknown", "unsettled: 2 calls, ≤ $0.2500 + unknown") == (
            recorded.cost_text(), recorded.unsettled_text())
        alone = add(Spend(), None)
        assert ("unknown", "unsettled: 1 call, cost unknown") == (alone.cost_text(), alone.unsettled_text())
