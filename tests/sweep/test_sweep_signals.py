"""Ctrl-C during `sweep --suite mpcbench,tariff`: one watcher stops both suites; exit 130; a rerun finishes.

The sweep is a real child process against an in-process sim. The sim answers the first units and holds every
later request open, so the signal arrives with units of both suites in flight; it releases them once the child
has logged that it is stopping.
"""

from __future__ import annotations

import shutil
import signal
import sys
from collections import Counter
from pathlib import Path

import anyio
import orjson

from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from tests.conftest import REPO, stderr_lines

CLI = "import sys; from mpcbench_async.cli import main; raise SystemExit(main(sys.argv[1:]))"
CASES = ["positive/tariff_pos_01_cotton_crew_tshirt.json", "positive/tariff_pos_02_denim_jeans.json",
         "positive/tariff_pos_03_mesh_running_shoe.json", "negative/tariff_neg_02_shoes_no_materials.json"]
CONCURRENCY = 2
POOLS = 3  # agent runs, judgements, tariff cases: each holds at most CONCURRENCY units in flight


def unit_of(call_key: str) -> str:
    """The unit of an LLM call key: ``run-…``/``judge-…`` or ``tariff/<case_id>``."""
    parts = call_key.split("/")
    return "/".join(parts[:2]) if parts[0] == "tariff" else parts[0]


class HoldAfter:
    """A sim gate: the first two agent runs and the first tariff case are answered, every other unit waits."""

    def __init__(self) -> None:
        self.answered: set[str] = set()
        self.held: set[str] = set()
        self.release = anyio.Event()
        self.both_held = anyio.Event()

    async def __call__(self, key: str) -> None:
        unit = unit_of(key)
        runs = sum(u.startswith("run-") for u in self.answered)
        cases = sum(u.startswith("tariff/") for u in self.answered)
        if (unit in self.answered or (unit.startswith("run-") and runs < 2)
                or (unit.startswith("tariff/") and not cases)):
            self.answered.add(unit)
            return
        self.held.add(unit)
        if any(u.startswith("run-") for u in self.held) and any(u.startswith("tariff/") for u in self.held):
            self.both_held.set()
        await self.release.wait()


def workspace_with_tariff(root: Path, tmp_path: Path) -> list[str]:
    suite = tmp_path / "suite"
    for name in CASES:
        (suite / "cases" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "storage" / "benchmarks" / "tariff" / "cases" / name, suite / "cases" / name)
    config = orjson.loads((root / "model_config.json").read_bytes())
    (root / "model_config.json").write_bytes(orjson.dumps({**config, "tariff_models": ["sim/tariff"]}))
    return [sys.executable, "-c", CLI, "sweep", "--suite", "mpcbench,tariff",
            "--config", str(root / "model_config.json"),
            "--prompts", str(root / "prompt_config.json"), "--tasks-dir", str(root / "tasks"),
            "--data-dir", str(root / "data"), "--scenarios-dir", str(root / "scenarios"), "--trials", "2",
            "--tariff-path", str(suite), "--pack", str(REPO / "storage" / "packs" / "tariff"),
            "--concurrency", str(CONCURRENCY), "--out", str(tmp_path / "out"), "--quiet"]


def on_disk(out: Path) -> set[str]:
    """The units with a record: agent-run and judge keys, and ``tariff/<case_id>``; every line must decode."""
    found: set[str] = set()
    for name, unit in (("runs.jsonl", "key"), ("judgements.jsonl", "key"), ("tariff_sim_tariff.jsonl", "case_id")):
        records, report = read_jsonl(out / name)
        assert (False, []) == (report.torn_tail, report.bad_lines)
        found |= {("tariff/" if unit == "case_id" else "") + r[unit] for r in records}
    return found


class TestSigint:
    async def test_one_sigint_stops_both_suites_and_the_rerun_completes(self, workspace, tmp_path):
        """One SIGINT with agent runs and tariff cases held in flight: the child logs one `pool.stopping` (one
        watcher for every pool), starts no further unit, writes what finished and exits 130 with the manifest
        marked interrupted; the rerun exits 0, repeats no call of a unit on disk and completes every unit."""
        gate = HoldAfter()
        out = tmp_path / "out"
        with anyio.fail_after(120):
            async with SimServer(seed=51, gate=gate) as sim:
                command = workspace_with_tariff(workspace(sim.base_url), tmp_path)
                async with await anyio.open_process(command) as proc:
                    await gate.both_held.wait()
                    proc.send_signal(signal.SIGINT)
                    lines = stderr_lines(proc)
                    before = []
                    async for line in lines:
                        before.append(line)
                        if "pool.stopping" in line:
                            break
                    gate.release.set()
                    after = [line async for line in lines]
                    first_code = await proc.wait()
                first_run = Counter(sim.stats.completed)
                touched = {unit_of(k) for k in sim.stats.received}
                kept = on_disk(out)
                sim.gate = None
                async with await anyio.open_process(command) as proc:
                    second_code = await proc.wait()
        stderr = before + after
        assert (130, 1) == (first_code, sum("pool.stopping" in line for line in stderr)), stderr
        assert "interrupted: sweep stopped; finished units are saved — rerun the same command to resume" in stderr
        assert len(touched) <= len(gate.answered) + POOLS * CONCURRENCY
        assert gate.answered <= kept and any(u.startswith("tariff/") for u in kept)
        history = orjson.loads((out / "manifest.json").read_bytes())["history"]
        assert [True, False] == [invocation["interrupted"] for invocation in history]
        repeated = {unit_of(k) for k, n in sim.stats.completed.items() if n > first_run[k]}
        assert (0, set()) == (second_code, repeated & kept)
        assert 16 + 16 + len(CASES) == len(on_disk(out))
