"""``mpcbench-async sweep --executor ray``: what it refuses (exit 2, one line), and a driver SIGKILLed mid-sweep
resuming like a local sweep (its own local Ray instance per invocation)."""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest

from mpcbench_async.cli import main
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import FaultSpec, SimServer
from mpcbench_async.testing import write_workspace
from tests.conftest import REPO
from tests.sweep.conftest import FAST_RETRY


def sweep_args(root: Path, out: Path, *extra: str) -> list[str]:
    return ["sweep", "--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json"),
            "--tasks-dir", str(root / "tasks"), "--data-dir", str(root / "data"), "--scenarios-dir",
            str(root / "scenarios"), "--out", str(out), "--quiet", *extra]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "ws", base_url="http://127.0.0.1:9/v1", defaults=FAST_RETRY)


class TestRefused:
    def test_without_ray_installed_says_how_to_install_it(self, root, tmp_path, capsys, monkeypatch):
        """Ray not importable: exit 2, the install command, nothing written."""
        monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
        assert 2 == main(sweep_args(root, tmp_path / "out", "--executor", "ray"))
        assert "error: the Ray executor needs Ray: pip install -e '.[ray]'\n" == capsys.readouterr().err
        assert not (tmp_path / "out").exists()

    def test_dry_run_ignores_the_executor(self, root, tmp_path, capsys, monkeypatch):
        """--dry-run estimates the plan whatever the executor: Ray is not even imported."""
        monkeypatch.setitem(sys.modules, "ray", None)
        assert 0 == main(sweep_args(root, tmp_path / "out", "--executor", "ray", "--workers", "3", "--dry-run"))
        assert "" == capsys.readouterr().err

    @pytest.mark.parametrize(("extra", "message"), [
        (["--max-cost", "1"], "--executor ray: budgets (--max-cost, models.<name>.budget_usd) are not supported yet; "
                              "drop them or use --executor local"),
        (["--cache"], "--executor ray: --cache is not supported yet; drop it or use --executor local"),
        (["--suite", "tariff"], "--executor ray runs the mpcbench and levels suites' units on Ray (tariff and "
                                "hscodecomp run on the driver): add mpcbench or levels to --suite, or drop --executor "
                                "ray"),
        (["--workers", "0"], "--workers must be at least 1, got 0"),
    ], ids=["max-cost", "cache", "no-mpcbench", "no-workers"])
    def test_what_it_does_not_support_is_one_clear_error(self, root, tmp_path, capsys, monkeypatch, extra, message):
        """Refused with the inputs, before Ray starts or anything is written."""
        monkeypatch.chdir(REPO)  # the tariff suite's cases and pack (--cache is refused before its directory is made)
        assert 2 == main(sweep_args(root, tmp_path / "out", "--executor", "ray", *extra))
        assert f"error: {message}\n" == capsys.readouterr().err
        assert not (tmp_path / "out").exists()

    def test_an_address_where_nothing_listens_fails_in_seconds(self, root, tmp_path, capsys):
        """--ray-address of a port nobody listens on: exit 2 at once, saying so (ray.init would retry for minutes)."""
        with socket.socket() as probe:  # a free port, closed again: nothing listens there
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        assert 2 == main(sweep_args(root, tmp_path / "out", "--executor", "ray", "--ray-address", f"127.0.0.1:{port}"))
        assert (f"error: --ray-address 127.0.0.1:{port}: nothing answers there (Connection refused); start the head "
                "with `ray start --head --port=PORT` and give HEAD:PORT\n") == capsys.readouterr().err


def records(path: Path, *, strict: bool = True) -> list[dict]:
    found, report = read_jsonl(path)
    if strict:
        assert not report.torn_tail and not report.bad_lines
    return found


class TestDriverKilled:
    async def test_a_killed_driver_resumes_like_a_local_sweep(self, tmp_path):
        """The driver SIGKILLed after the 12th completed call (its Ray instance goes with it), then the same command
        again: one ok record per unit, and no call of a unit on disk at the kill is ever made again."""
        out = tmp_path / "out"
        child: list[anyio.abc.Process] = []
        completed: Counter[str] = Counter()

        def on_complete(key: str) -> None:
            completed[key] += 1
            if sum(completed.values()) == 12:
                os.kill(child[0].pid, signal.SIGKILL)

        async with SimServer(seed=24, on_complete=on_complete, defaults=FaultSpec(latency_ms=2)) as sim:
            root = write_workspace(tmp_path / "ws", base_url=sim.base_url, defaults=FAST_RETRY)
            cmd = [sys.executable, "-m", "mpcbench_async",
                   *sweep_args(root, out, "--trials", "2", "--concurrency", "2", "--executor", "ray", "--workers", "2")]
            codes, repeated = [], []
            for _ in range(2):
                on_disk = {r["key"] for name in ("runs.jsonl", "judgements.jsonl")
                           for r in records(out / name, strict=False)} if out.exists() else set()
                before = Counter(completed)
                async with await anyio.open_process(cmd, stdout=None, stderr=None) as proc:
                    child[:] = [proc]
                    codes.append(await proc.wait())
                repeated += [k for k in completed if completed[k] > before[k] and k.split("/")[0] in on_disk]
        assert [-signal.SIGKILL, 0] == codes
        assert [] == repeated
        assert 0 < len(on_disk) < 32  # the kill came mid-sweep
        runs, judgements = records(out / "runs.jsonl"), records(out / "judgements.jsonl")
        ok_runs = Counter(r["key"] for r in runs if r["status"] == "ok")
        ok_judges = Counter(r["key"] for r in judgements if r["status"] == "ok")
        assert (16, {1}) == (len(ok_runs), set(ok_runs.values()))
        assert (16, {1}) == (len(ok_judges), set(ok_judges.values()))


def processes() -> dict[int, tuple[str, int, int, str]]:
    """Every live process: pid → (state, parent pid, session id, command line)."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] != "Z":
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found[int(entry.name)] = (fields[0], int(fields[1]), int(fields[3]), cmd)
        except (OSError, ValueError):  # not a pid, or gone meanwhile
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the Ray processes through /proc (Linux)")
class TestRayGoesWithTheDriver:
    async def test_a_killed_drivers_ray_processes_are_gone_within_seconds(self, tmp_path):
        """The driver (in a session of its own) SIGKILLed mid-sweep: every other process of its session — raylet,
        GCS, agents, worker actors — is gone within seconds (Ray alone left its agents ~60 s), and so is the
        watchdog that killed them."""
        child: list[anyio.abc.Process] = []
        seen: dict[int, str] = {}  # the driver's Ray processes and its watchdog, as the kill found them
        killed_at: list[float] = []

        def on_complete(key: str) -> None:
            if not killed_at:
                driver = child[0].pid
                seen.update({pid: cmd for pid, (_, parent, sid, cmd) in processes().items()
                             if pid != driver and (sid == driver or (parent == driver and "_watchdog" in cmd))})
                killed_at.append(time.monotonic())
                os.kill(driver, signal.SIGKILL)

        async with SimServer(seed=25, on_complete=on_complete, defaults=FaultSpec(latency_ms=2)) as sim:
            root = write_workspace(tmp_path / "ws", base_url=sim.base_url, defaults=FAST_RETRY)
            cmd = [sys.executable, "-m", "mpcbench_async",
                   *sweep_args(root, tmp_path / "out", "--executor", "ray", "--workers", "2")]
            async with await anyio.open_process(cmd, stdout=None, stderr=None, start_new_session=True) as proc:
                child[:] = [proc]
                assert -signal.SIGKILL == await proc.wait()
        while left := {pid: seen[pid] for pid in processes().keys() & seen.keys()}:
            assert time.monotonic() - killed_at[0] < 15, left
            await anyio.sleep(0.05)
        took = time.monotonic() - killed_at[0]
        commands = " | ".join(seen.values())
        for expected in ("_watchdog.py", "raylet", "gcs_server", "ray::DashboardAgent", "ray::RuntimeEnvAgent",
                         "ray::UnitWorker", "ray::LimiterActor"):
            assert expected in commands
        print(f"\nthe killed driver's {len(seen) - 1} Ray processes were gone after {took:.2f} s")


class TestLogLines:
    def test_ray_stamps_no_field_on_our_log_lines(self):
        """Importing Ray makes every log record carry ``_ray_timestamp_ns``; the rendered line leaves it out."""
        import io
        import logging

        import ray  # noqa: F401  (its record factory is installed on import)

        from mpcbench_async.runtime import configure_logging

        stream = io.StringIO()
        root = logging.getLogger()
        handlers, level = root.handlers[:], root.level
        try:
            configure_logging(level="info", stream=stream)
            logging.getLogger("mpcbench_async.test").warning("ray.worker_died", extra={"worker": "worker-1"})
        finally:
            root.handlers[:], root.level = handlers, level
        line = stream.getvalue()
        assert "ray.worker_died" in line and "worker=worker-1" in line and "_ray" not in line
