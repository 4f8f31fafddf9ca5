"""``sweep --max-cost``: exit 3 with one line saying which budget stopped it; exit 2 for a model with no price.

Real ``mpcbench-async`` child processes against the seeded in-process sim, which counts the requests it receives.
"""

from __future__ import annotations

import re

from mpcbench_async.cli import main
from mpcbench_async.sim import SimServer
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import FAST_RETRY
from tests.sweep.test_exit_codes import cli, sweep_args

PRICED = {**FAST_RETRY, "prices": {"input_per_1m": 1000.0, "output_per_1m": 4000.0}, "params": {"max_tokens": 64}}


class TestSweepMaxCost:
    async def test_budget_reached_exits_3_and_a_higher_limit_finishes_with_exit_0(self, tmp_path):
        """--max-cost 5 of a ~$23.5 sweep: exit 3, the summary is printed and stderr ends with the budget line;
        the same command with --max-cost 100 finishes the plan: exit 0."""
        out = tmp_path / "out"
        async with SimServer(seed=41) as sim:
            root = write_workspace(tmp_path, base_url=sim.base_url, defaults=PRICED)
            stopped = await cli(*sweep_args(root, out, "--max-cost", "5", "--concurrency", "1"))
            finished = await cli(*sweep_args(root, out, "--max-cost", "100", "--concurrency", "1"))
        assert (3, 0) == (stopped[0], finished[0]), stopped[2]
        assert f"written to {out}/" in stopped[1]
        assert re.fullmatch(r"budget reached: \$\d\.\d{4} of \$5\.0000 for the sweep; \d+ units not run; "
                            r"rerun with a higher --max-cost to continue", stopped[2].splitlines()[-1]), stopped[2]
        assert "budget reached" not in finished[2]

    async def test_a_model_without_a_price_exits_2_before_any_call(self, tmp_path):
        """An agent model the price table does not know: one 'error:' line naming it and the setting; no request."""
        out = tmp_path / "out"
        async with SimServer(seed=41) as sim:
            root = write_workspace(tmp_path, base_url=sim.base_url, defaults=FAST_RETRY,
                                   agent_models=("acme/mystery-model",))
            code, _, err = await cli(*sweep_args(root, out, "--max-cost", "5"))
            assert sum(sim.stats.received.values()) == 0
        config = root / "model_config.json"
        assert (2, [f"error: --max-cost: model 'acme/mystery-model' has no known price, so a budget cannot bound its "
                    f"calls: set models.acme/mystery-model.prices (input_per_1m, output_per_1m) in {config}"]) == (
            code, err.splitlines()), err
        assert not out.exists()

    def test_help_documents_exit_3_and_the_flags(self, capsys):
        """`sweep --help` lists --max-cost, --cache and --cache-mode and the exit code 3."""
        try:
            main(["sweep", "--help"])
        except SystemExit:
            pass
        text = capsys.readouterr().out
        assert "\n  3    a budget was reached (--max-cost, budget_usd): units in flight finished" in text
        assert all(flag in text for flag in ("--max-cost USD", "--cache [DIR]", "--cache-mode"))



class TestLedgerSync:
    def test_ledger_sync_chooses_whether_intents_are_flushed_to_the_disk(self):
        """`--ledger-sync flush` reaches the sweep as Output(ledger_fsync=False); the default is fsync."""
        from mpcbench_async.cli import build_parser
        from mpcbench_async.cli._sweep import _options

        parser = build_parser()
        default = _options(parser.parse_args(["sweep"]))
        flush = _options(parser.parse_args(["sweep", "--ledger-sync", "flush"]))
        assert (True, False) == (default.output.ledger_fsync, flush.output.ledger_fsync)

    async def test_a_flush_only_ledger_still_pairs_every_call_with_its_intent(self, tmp_path):
        """A sweep with --ledger-sync flush: one intent per call, each settled by the call's record (same call_id)."""
        from mpcbench_async.runtime import read_jsonl

        out = tmp_path / "out"
        async with SimServer(seed=41) as sim:
            root = write_workspace(tmp_path, base_url=sim.base_url, defaults=PRICED)
            code, _, err = await cli(*sweep_args(root, out, "--ledger-sync", "flush"))
        calls, _ = read_jsonl(out / "calls.jsonl")
        intents, _ = read_jsonl(out / "ledger.jsonl")
        assert 0 == code, err
        assert sorted(c["call_id"] for c in calls) == sorted(i["call_id"] for i in intents) and calls
