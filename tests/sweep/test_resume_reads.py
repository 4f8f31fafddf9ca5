"""What a resume reads (issue 31, points 3 and 6): the records decoded and the index lines read, counted exactly.

A resume with nothing to do decodes no record: the done keys come from each results file's done-index
(``runs.keys``, ``judgements.keys``), and the summary is reused because none of its inputs changed. The counters
(``runtime._jsonl.LINES_DECODED``, ``runtime._done_index.KEYS_READ``) count per file, so a change that makes a
resume read records again fails here, with no timing in the test.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson

from mpcbench_async.runner import Outcome
from mpcbench_async.runtime._done_index import KEYS_READ
from mpcbench_async.runtime._jsonl import LINES_DECODED
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import SweepOptions, run_sweep
from tests.sweep.conftest import plan_of
from tests.sweep_options import sweep_options

TRIALS = 3


def options(root: Path, out: Path) -> SweepOptions:
    return sweep_options(config=root / "model_config.json", prompts=root / "prompt_config.json", out=out,
                        tasks_dir=root / "tasks", data_dir=root / "data", scenarios_dir=root / "scenarios",
                        trials=TRIALS, handle_signals=False)


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


async def resume(root: Path, out: Path) -> tuple[Outcome, Counter[str], Counter[str]]:
    """Run the sweep again; its outcome, and the lines it decoded and the index lines it read, by file."""
    decoded, keys = Counter(LINES_DECODED), Counter(KEYS_READ)
    result = await run_sweep(options(root, out))
    return result.outcome, LINES_DECODED - decoded, KEYS_READ - keys


def figures(out: Path) -> dict[str, object]:
    """summary.json without what differs between invocations (the wall time and their count)."""
    summary = orjson.loads((out / "summary.json").read_bytes())
    return {k: v for k, v in summary.items() if k not in ("wall_s", "last_wall_s", "invocations")}


async def test_a_resume_with_nothing_to_do_decodes_no_record(workspace, tmp_path):
    """4 tasks × 2 agent models × 3 trials = 24 runs and 24 judgements. The second sweep makes no request and
    decodes no line of any file and reads each done-index once: 24 keys of each (the plan's outcome takes the
    resume's read, the files being unchanged since). The summary's figures are those of the first run."""
    out = tmp_path / "out"
    async with SimServer(seed=31) as sim:
        root = workspace(sim.base_url)
        _, _, plan = plan_of(root, trials=TRIALS)
        first = await run_sweep(options(root, out))
        requests, summary = sim.stats.total_received, figures(out)
        outcome, decoded, keys = await resume(root, out)
        assert sim.stats.total_received == requests
    units = plan.agent_unit_count + plan.judge_unit_count
    assert (24, 24) == (plan.agent_unit_count, plan.judge_unit_count)
    assert (Outcome(units=units, ok=units), Outcome(units=units, ok=units)) == (first.outcome, outcome)
    assert Counter() == decoded
    assert Counter({"runs.jsonl": 24, "judgements.jsonl": 24}) == keys
    assert summary == figures(out)


async def test_a_changed_file_is_read_once_then_indexed_again(workspace, tmp_path):
    """A line appended to runs.jsonl by another hand (a duplicate of its first record) makes its index untrusted:
    the next resume decodes every line of runs.jsonl for the done keys and once more for the summary (which its
    change invalidates: judgements, calls and ledger are read whole too), and writes the index again, which the
    plan's outcome takes as read (judgements.keys is read once); the resume after that decodes nothing and reads
    each index once. Counts are the files' own line counts."""
    out = tmp_path / "out"
    async with SimServer(seed=31) as sim:
        root = workspace(sim.base_url)
        await run_sweep(options(root, out))
        runs = out / "runs.jsonl"
        runs.write_bytes(runs.read_bytes() + runs.read_bytes().split(b"\n", 1)[0] + b"\n")
        _, decoded, keys = await resume(root, out)
        _, decoded_again, keys_again = await resume(root, out)
    n = {name: lines(out / name) for name in ("runs.jsonl", "judgements.jsonl", "calls.jsonl", "ledger.jsonl")}
    assert 25 == n["runs.jsonl"]
    assert Counter({"runs.jsonl": 2 * 25, "judgements.jsonl": 24, "calls.jsonl": n["calls.jsonl"],
                    "ledger.jsonl": n["ledger.jsonl"]}) == decoded
    assert Counter({"judgements.jsonl": 24}) == keys  # the outcome takes the rebuilt runs index as read
    assert (Counter(), Counter({"runs.jsonl": 25, "judgements.jsonl": 24})) == (decoded_again, keys_again)
