"""``mpcbench-async generate`` through the Runner, as a user runs it: console lines, exit codes, files, Ctrl-C.

Each command is a child process against an in-process sim, so calls are counted where they arrive.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import orjson

from mpcbench_async.sim import SimServer
from tests.conftest import REPO, stderr_lines

RUN = "import sys; from mpcbench_async.cli import main; raise SystemExit(main(sys.argv[1:]))"
CONSOLE = re.compile(r"^(\[\s*\d+/\d+\] |generation: |interrupted: |sc\d\d_\w+: ERROR)")
NAMES = ("world_state", "slack", "gmail", "calendar", "contacts", "jira", "drive")
SC01, SC02 = "sc01_berth_appointments", "sc02_clinic_intake"


def command(tmp_path: Path, base_url: str, *args: str) -> list[str]:
    config = tmp_path / "model_config.json"
    config.write_bytes(orjson.dumps({"data_generation_model": "sim/generator", "defaults": {"base_url": base_url}}))
    return [sys.executable, "-c", RUN, "generate", *args, "--config", str(config),
            "--prompts", str(REPO / "prompt_config.json"), "--scenarios-dir", str(REPO / "scenarios"),
            "--schemas-dir", str(REPO / "schemas"), "--data-dir", str(tmp_path / "data"),
            "--logs-dir", str(tmp_path / "logs")]


async def run(cmd: list[str]) -> tuple[int, list[str]]:
    """The exit code and the console lines of the command (progress, totals; log lines left out)."""
    done = await anyio.run_process(cmd, check=False)
    return done.returncode, [line for line in done.stderr.decode().splitlines() if CONSOLE.match(line)]


def lines(tmp_path: Path, scenario: str, detail: str) -> list[str]:
    return [f"[{i + 1:>3}/7] {scenario} {name}: {detail} -> {tmp_path / 'data' / f'{scenario}_{name}.json'}"
            for i, name in enumerate(NAMES)]


class TestConsole:
    async def test_first_run_writes_reruns_keep_and_a_skipped_run_prints_the_same(self, tmp_path):
        """Run 1 prints seven "written" lines; run 2 (0 calls) and run 3 (skipped by its record) seven "kept"."""
        async with SimServer(seed=1) as sim:
            cmd = command(tmp_path, sim.base_url, "sources", "--scenario-id", SC01)
            first = await run(cmd)
            calls = [sim.stats.total_completed]
            again = [await run(cmd) for _ in range(2)]
            calls.append(sim.stats.total_completed)
        code, out = first
        assert (0, "generation: 7 written, 0 kept, 0 failed", 7) == (code, out[-1], len(out) - 1)
        assert sorted(re.sub(r"^\[\s*\d+/7\] ", "", line) for line in out[:-1]) == sorted(
            re.sub(r"^\[\s*\d+/7\] ", "", line) for line in lines(tmp_path, SC01, "written (1 call)"))
        kept = lines(tmp_path, SC01, "exists, kept") + ["generation: 0 written, 7 kept, 0 failed"]
        assert [(0, kept), (0, kept), [7, 7]] == [*again, calls]
        assert sorted(f"{SC01}_{name}.json" for name in NAMES) == sorted(p.name for p in (tmp_path / "data").iterdir())
        assert [".lock", "calls.jsonl", "generation.jsonl", "generation.keys", "ledger.jsonl"] == sorted(
            p.name for p in (tmp_path / "logs").iterdir())
        assert 2 == len((tmp_path / "logs" / "generation.jsonl").read_bytes().splitlines())  # run 3 wrote none

    async def test_force_regenerates_and_a_crashing_scenario_fails_alone(self, tmp_path):
        """--force makes every call again; a scenario whose unit raises gets one ERROR line and exit 1."""
        (tmp_path / "data" / f"{SC02}_world_state.json").mkdir(parents=True)
        async with SimServer(seed=1) as sim:
            cmd = command(tmp_path, sim.base_url, "all", "--scenarios", "sc0[12]_*", "--force")
            code, out = await run(cmd)
            first = sim.stats.total_completed
            again, _ = await run(cmd)
        assert (1, 1, 8, 16) == (code, again, first, sim.stats.total_completed)  # sc02's one call, then it raised
        assert "generation: 7 written, 0 kept, 1 failed" == out[-1]
        crashed = [line for line in out if line.startswith(SC02)]
        assert [True] == [line.startswith(f"{SC02}: ERROR: IsADirectoryError: [Errno 21] Is a directory") for line
                          in crashed]
        assert 7 == sum(": written (1 call) -> " in line for line in out)


class TestInterrupt:
    async def test_ctrl_c_keeps_the_scenario_in_flight_and_the_rerun_does_only_the_rest(self, tmp_path):
        """SIGINT while sc01's sources are held: sc01 finishes, sc02 never starts, exit 130; the rerun does sc02."""
        release = anyio.Event()

        async def gate(key: str) -> None:
            if "/world_state/" not in key:
                await release.wait()

        async with SimServer(seed=1, gate=gate) as sim:
            cmd = command(tmp_path, sim.base_url, "all", "--scenarios", "sc0[12]_*", "--concurrency", "1")
            async with await anyio.open_process(cmd) as proc:
                out = []
                async for line in stderr_lines(proc):
                    out += [line] if CONSOLE.match(line) else []
                    if line.endswith(f"{SC01}_world_state.json"):
                        proc.send_signal(signal.SIGINT)
                    if "pool.stopping" in line:  # the child has stopped taking scenarios: let sc01 finish
                        release.set()
                assert 130 == await proc.wait()
            assert "interrupted: generation stopped; 7 files written are kept; rerun the same command to resume" \
                   == out[-1]
            assert sorted(f"{SC01}_{name}.json" for name in NAMES) == sorted(
                p.name for p in (tmp_path / "data").iterdir())
            before = dict(sim.stats.completed)
            code, out = await run(cmd)
        new_calls = sorted(k.split("/")[1:3] for k, n in sim.stats.completed.items() if n > before.get(k, 0))
        assert (0, sorted([SC02, name] for name in NAMES)) == (code, new_calls)
        assert "generation: 7 written, 7 kept, 0 failed" == out[-1]


def test_a_second_generate_on_the_same_logs_dir_is_refused(tmp_path, capsys):
    """The Runner's lock on --logs-dir: a second process gets one error line naming the flag, exit 2."""
    from mpcbench_async.cli import main

    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from mpcbench_async.runtime import DirLock; "
                               f"DirLock({str(tmp_path / 'logs')!r}).acquire(); print('held', flush=True); "
                               "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert "held\n" == holder.stdout.readline()
        code = main(["generate", "world-state", "--scenario-id", SC01, "--scenarios-dir", str(REPO / "scenarios"),
                     "--config", str(REPO / "model_config.json"), "--prompts", str(REPO / "prompt_config.json"),
                     "--schemas-dir", str(REPO / "schemas"), "--data-dir", str(tmp_path / "data"),
                     "--logs-dir", str(tmp_path / "logs")])
    finally:
        holder.communicate("")
    assert 2 == code
    logs = tmp_path / "logs"
    assert (f"error: {logs}: another sweep (pid {holder.pid}) is writing to this directory (lock {logs / '.lock'}); "
            "wait for it to end or pass another --logs-dir\n") == capsys.readouterr().err
    assert not (tmp_path / "data").exists()


def test_a_crashed_scenario_skipped_on_resume_is_reported_as_before(tmp_path, capsys, monkeypatch, restored_logging):
    """A unit that raised with every file present is not rerun (same files, same key), yet says so again: exit 1."""
    from mpcbench_async.cli import main
    from mpcbench_async.mpcbench import DataGenerator

    async def crash(self, scenario):
        raise RuntimeError("the checker broke")

    (tmp_path / "data").mkdir()
    for name in NAMES:
        (tmp_path / "data" / f"{SC01}_{name}.json").write_bytes((REPO / "data" / f"{SC01}_{name}.json").read_bytes())
    monkeypatch.setattr(DataGenerator, "world_state", crash)
    cmd = command(tmp_path, "http://127.0.0.1:9/v1", "sources", "--scenario-id", SC01)[3:]
    seen = []
    for _ in range(2):
        seen.append(main(cmd))
        seen.append([line for line in capsys.readouterr().err.splitlines() if CONSOLE.match(line)])
    expected = [f"{SC01}: ERROR: RuntimeError: the checker broke", "generation: 0 written, 0 kept, 1 failed"]
    assert [1, expected, 1, expected] == seen
    assert 1 == len((tmp_path / "logs" / "generation.jsonl").read_bytes().splitlines())
