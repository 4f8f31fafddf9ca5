"""Ctrl-C during ``tariff run``: exit 130, a report marked partial with the cases not run, a rerun that resumes.

The run is a real ``mpcbench-async tariff run`` child process against an in-process sim. The sim answers
the first cases and holds every later request open, so the signal arrives at an exact point: the first
cases finished, one case in flight per worker, the rest not started.
"""

from __future__ import annotations

import re
import signal
import sys
from pathlib import Path

import anyio
import orjson

from mpcbench_async.sim import SimServer
from tests.conftest import REPO, stderr_lines

RUN = "import sys; from mpcbench_async.cli import main; raise SystemExit(main(sys.argv[1:]))"
SUITE = REPO / "storage" / "benchmarks" / "tariff"
PROGRESS = re.compile(r"^\[\s*\d+/\d+\] ")
CONCURRENCY = 4
ANSWERED = 5  # cases the sim answers before the signal


def case_of(key: str) -> str:
    """The case id in an LLM call key (``tariff/<case_id>/iter<n>``)."""
    return key.split("/")[1]


def run_command(tmp_path: Path, base_url: str) -> list[str]:
    config = tmp_path / "model_config.json"
    config.write_bytes(orjson.dumps({"defaults": {"base_url": base_url}}))
    return [sys.executable, "-c", RUN, "tariff", "run", "--suite", "tariff", "--path", str(SUITE),
            "--pack", str(REPO / "storage" / "packs" / "tariff"), "--mode", "live", "--model", "sim/tariff",
            "--config", str(config), "--prompts", str(REPO / "prompt_config.json"), "--out", str(tmp_path / "out"),
            "--concurrency", str(CONCURRENCY)]


def reports(out: Path) -> list[tuple[dict, str]]:
    """Every report written so far (JSON and Markdown), oldest first."""
    return [(orjson.loads(path.read_bytes()), path.with_suffix(".md").read_text())
            for path in sorted(out.glob("tariff_benchmark_*.json"))]


class TestInterrupt:
    async def test_sigint_writes_a_partial_report_and_the_rerun_runs_only_the_rest(self, tmp_path):
        """SIGINT with 5 cases done and 4 in flight: the 4 finish, exit 130, the report says 63 of 72 cases were
        not run; the rerun asks the model only about those 63 and ends with a complete report."""
        answered: list[str] = []
        held: set[str] = set()
        all_held, release = anyio.Event(), anyio.Event()

        async def gate(key: str) -> None:
            case = case_of(key)
            if case not in answered and len(answered) < ANSWERED:
                answered.append(case)
            if case in answered:
                return
            held.add(case)
            if len(held) == CONCURRENCY:
                all_held.set()
            await release.wait()

        with anyio.fail_after(120):
            async with SimServer(seed=3, gate=gate) as sim:
                command = run_command(tmp_path, sim.base_url)
                async with await anyio.open_process(command) as proc:
                    lines = stderr_lines(proc)
                    finished = 0
                    async for line in lines:
                        finished += bool(PROGRESS.match(line))
                        if finished == ANSWERED:
                            break
                    await all_held.wait()
                    proc.send_signal(signal.SIGINT)
                    async for line in lines:
                        if "pool.stopping" in line:  # the run took the signal: release the cases in flight
                            break
                    release.set()
                    rest = [line async for line in lines]
                    first_code = await proc.wait()
                first_run = {case_of(key) for key in sim.stats.completed}
                [(partial, partial_md)] = reports(tmp_path / "out")
                sim.gate = None
                before = dict(sim.stats.completed)
                async with await anyio.open_process(command) as proc:
                    second_code = await proc.wait()
                rerun = {case_of(key) for key, n in sim.stats.completed.items() if n > before.get(key, 0)}
        stopped = [line for line in rest if line.startswith("interrupted:")]
        assert (130, ANSWERED + CONCURRENCY) == (first_code, len(first_run))
        assert ["interrupted: tariff run stopped with 63 of 72 case(s) not run; finished cases are saved in "
                f"{tmp_path / 'out' / 'runs' / 'tariff_live_sim_tariff.jsonl'} — rerun the same command to resume"
                ] == stopped
        assert (63, 9, sorted(first_run)) == (partial["not_run"], partial["totals"]["cases"],
                                              sorted(c["case_id"] for c in partial["cases"]))
        assert any(line.startswith("**Partial run**: 63 of 72 cases were not run")
                   for line in partial_md.splitlines()[:6])
        complete = reports(tmp_path / "out")[-1][0]
        assert (0, 63, set()) == (second_code, len(rerun), rerun & first_run)
        assert (0, 72, 0) == (complete["not_run"], complete["totals"]["cases"], complete["errors"])
