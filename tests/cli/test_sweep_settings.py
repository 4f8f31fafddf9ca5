"""``sweep``'s flags land in the sweep's small settings values, each where the library keeps it."""

from __future__ import annotations

from pathlib import Path

from mpcbench_async.cli import build_parser
from mpcbench_async.cli._sweep import _options
from mpcbench_async.levels import LevelsInputs
from mpcbench_async.mpcbench import MPCBenchInputs
from mpcbench_async.runner import Limits, RunChoice
from mpcbench_async.sweep import Output, Placement
from mpcbench_async.tariff import TariffInputs


def test_every_sweep_flag_lands_in_its_value():
    args = build_parser().parse_args([
        "sweep", "--out", "o", "--suite", "mpcbench,levels", "--models", "a,b", "--judges", "j", "--tasks", "sc01_*",
        "--trials", "2", "--retry-errors", "--max-turns", "5", "--concurrency", "3", "--max-cost", "1.5",
        "--allow-changes", "--ledger-sync", "flush", "--no-certificate", "--executor", "ray", "--workers", "2",
        "--tasks-dir", "t", "--data-dir", "d", "--scenarios-dir", "s", "--scenario-id", "sc9", "--pack", "p",
        "--scoring", "original", "--levels-data", "l", "--levels", "1,3", "--levels-splits", "test"])
    options = _options(args)
    assert (RunChoice(suites=["mpcbench", "levels"], models=["a", "b"], judges=["j"], tasks="sc01_*", trials=2,
                      retry_errors=True),
            Limits(concurrency=3, max_turns=5, max_cost=1.5),
            Output(out=Path("o"), allow_changes=True, ledger_fsync=False, certificate=False),
            Placement(executor="ray", workers=2),
            [MPCBenchInputs(tasks_dir=Path("t"), data_dir=Path("d"), scenarios_dir=Path("s"), scenario_id="sc9"),
             TariffInputs(pack=Path("p"), scoring="original"),
             LevelsInputs(data=Path("l"), levels=[1, 3], splits=["test"])]) == (
        options.run, options.limits, options.output, options.placement, list(options.inputs))
