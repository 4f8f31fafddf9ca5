"""The command line: help, sim serve as a real server for the openai SDK, bench client, errors."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import openai
import pytest

from mpcbench_async.cli import main
from mpcbench_async.perf import sim_subprocess


class TestHelp:
    def test_help_lists_the_commands(self, capsys):
        """`mpcbench-async --help` lists every command group."""
        try:
            main(["--help"])
        except SystemExit as exc:
            assert 0 == exc.code
        out = capsys.readouterr().out
        for command in ("sim", "bench"):
            assert f"    {command} " in out


    def test_version_is_the_package_version(self, capsys):
        """`--version` prints the one version string the package and its metadata share, and exits 0."""
        import mpcbench_async

        with pytest.raises(SystemExit) as exc:
            main(["--version"])
        assert (0, f"mpcbench-async {mpcbench_async.__version__}\n") == (exc.value.code, capsys.readouterr().out)


class TestSimServe:
    def test_serves_the_openai_sdk_on_loopback(self):
        """`sim serve` in its own process answers a real openai SDK client, tool calls included."""
        with sim_subprocess(["--seed", "3"]) as base_url:
            assert base_url.startswith("http://127.0.0.1:")
            client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)
            models = [m.id for m in client.models.list()]
            reply = client.chat.completions.create(model="sim/echo", messages=[{"role": "user", "content": "yo"}])
        assert "sim/echo" in models
        assert "echo: yo" == reply.choices[0].message.content

    @pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
    def test_ctrl_c_or_sigterm_stops_it_with_130(self, stop):
        """A server runs until stopped; stopping it is an interrupt, exit 130 as every command (README)."""
        proc = subprocess.Popen([sys.executable, "-m", "mpcbench_async", "sim", "serve", "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None and proc.stdout.readline().startswith("sim listening on ")
            proc.send_signal(stop)
            _, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
        assert (130, "sim stopped\n") == (proc.returncode, err)

    def test_busy_port_is_one_clear_error(self):
        """Binding a port that is taken fails with one line and exit code 2, no traceback."""
        with sim_subprocess() as base_url:
            port = base_url.split(":")[-1].split("/")[0]
            proc = subprocess.run([sys.executable, "-m", "mpcbench_async", "sim", "serve", "--port", port],
                                  capture_output=True, text=True, timeout=30)
        assert 2 == proc.returncode
        assert proc.stderr.startswith(f"error: sim serve: cannot listen on 127.0.0.1:{port} (")
        assert "Traceback" not in proc.stderr


class TestCtrlC:
    @pytest.mark.parametrize("command", [
        ["run-task", "--task", "tasks/planning/t0.json", "--agent-model", "sim/lazy-agent"],
        ["run-and-judge", "--task", "tasks/planning/t0.json"],
        ["profile", "endpoint", "--model", "sim/echo", "--concurrency", "1", "--duration", "60", "--out", "prof"],
    ], ids=["run-task", "run-and-judge", "profile endpoint"])
    async def test_a_command_waiting_for_a_reply_exits_130(self, tmp_path, command):
        """Ctrl-C while the command waits for the model (its request held at the sim): exit 130 and one
        "interrupted" line, as the README says of every command (sweep, tariff run, generate, view and sim serve have
        their own tests)."""
        import anyio

        from mpcbench_async.sim import SimServer
        from mpcbench_async.testing import write_workspace

        arrived, release = anyio.Event(), anyio.Event()

        async def gate(key: str) -> None:
            arrived.set()
            await release.wait()

        async with SimServer(seed=1, gate=gate) as sim:
            root = write_workspace(tmp_path, base_url=sim.base_url)
            async with await anyio.open_process([sys.executable, "-m", "mpcbench_async", *command], cwd=root) as proc:
                with anyio.fail_after(60):
                    await arrived.wait()
                proc.send_signal(signal.SIGINT)
                code = await proc.wait()
                assert proc.stderr is not None
                err = b"".join([chunk async for chunk in proc.stderr]).decode()
            release.set()
        assert (130, "interrupted") == (code, err.splitlines()[-1]), err


class TestBenchClient:
    def test_prints_a_table_for_each_transport(self, tmp_path):
        """A tiny `bench client` run prints medians for both transports and their ratio."""
        out = tmp_path / "RESULTS.md"
        proc = subprocess.run(
            [sys.executable, "-m", "mpcbench_async", "bench", "client", "--requests", "20", "--repeats", "1",
             "--concurrency", "4", "--out", str(out)],
            capture_output=True, text=True, timeout=120,
        )
        assert 0 == proc.returncode, proc.stderr
        assert "| 4 | native | 20 |" in proc.stdout
        assert "| 4 | openai | 20 |" in proc.stdout
        assert "| concurrency | CPU native/SDK | SDK CPU ÷ native CPU | req/s native/SDK |" in proc.stdout
        assert proc.stdout.strip() in out.read_text()

    def test_bad_transport_is_a_user_error(self, capsys):
        """An unknown transport name is one message and exit code 2."""
        assert 2 == main(["bench", "client", "--transports", "native,carrier-pigeon"])
        assert "error: --transports: unknown transport(s) carrier-pigeon; choose native, openai\n" == (
            capsys.readouterr().err)


class TestGenerateCommands:
    def test_seed_compatible_world_state_module(self, tmp_path):
        """`python -m mpcbench_async.generator.world_state_generator` writes the world state offline."""
        from tests.conftest import REPO

        proc = subprocess.run(
            [sys.executable, "-m", "mpcbench_async.generator.world_state_generator", "--scenario-id",
             "sc01_berth_appointments", "--data-dir", str(tmp_path), "--logs-dir", str(tmp_path / "logs")],
            capture_output=True, text=True, timeout=60, cwd=REPO)
        assert 0 == proc.returncode, proc.stderr
        assert (REPO / "data" / "sc01_berth_appointments_world_state.json").read_bytes() == (
            tmp_path / "sc01_berth_appointments_world_state.json").read_bytes()

    def test_unknown_scenario_is_one_clear_error(self, capsys, tmp_path, monkeypatch):
        """A scenario id with no file is reported with the path tried, exit code 2."""
        from tests.conftest import REPO

        monkeypatch.chdir(REPO)
        assert 2 == main(["generate", "sources", "--scenario-id", "nope", "--data-dir", str(tmp_path)])
        assert "error: scenarios/nope.json: no such scenario (--scenario-id 'nope')\n" == capsys.readouterr().err

    def test_bad_scenario_field_names_file_and_path(self, capsys, tmp_path):
        """A wrong-typed scenario field stops `generate all` before any call, naming file and field."""
        from tests.conftest import REPO

        scenarios = tmp_path / "scenarios"
        scenarios.mkdir()
        doc = json.loads((REPO / "scenarios" / "sc01_berth_appointments.json").read_text())
        doc["noise_level"] = "high"
        (scenarios / "sc01_berth_appointments.json").write_text(json.dumps(doc))
        code = main(["generate", "all", "--scenarios-dir", str(scenarios), "--data-dir", str(tmp_path / "d"),
                     "--config", str(REPO / "model_config.json"), "--prompts", str(REPO / "prompt_config.json"),
                     "--schemas-dir", str(REPO / "schemas")])
        assert 2 == code
        assert (f"error: {scenarios / 'sc01_berth_appointments.json'}: Expected `float`, got `str` - at "
                "`$.noise_level`\n") == capsys.readouterr().err
        assert not (tmp_path / "d").exists()


class TestSweepCommand:
    def test_sweep_prints_the_summary_and_writes_every_file(self, tmp_path):
        """`mpcbench-async sweep` runs offline and leaves the six output files, its key list and its lock file, and
        what a resume reads instead of them: the done-index of each results file, the key list's plan note and the
        summary's inputs note."""
        from tests.conftest import REPO

        out = tmp_path / "sweep"
        proc = subprocess.run([sys.executable, "-m", "mpcbench_async", "sweep", "--out", str(out), "--tasks",
                               "sc01_*", "--quiet"], capture_output=True, text=True, timeout=120, cwd=REPO)
        assert 0 == proc.returncode, proc.stderr
        assert "sim/oracle-agent" in proc.stdout and "sim/lazy-agent" in proc.stdout
        assert sorted(["manifest.json", "runs.jsonl", "judgements.jsonl", "calls.jsonl", "ledger.jsonl",
                       "summary.json", "summary.md", "experiment_keys.txt", ".lock", "runs.keys", "judgements.keys",
                       "experiment_keys.plan", "summary.inputs.json", "certificate_baselines.json"]) == sorted(
            p.name for p in out.iterdir())


class TestErrorsInsideTaskGroups:
    """User errors raised inside a task group reach the terminal as one ``error:`` line and exit 2."""

    def _raise(self, monkeypatch, exc: BaseException) -> None:
        from mpcbench_async.cli import _sweep

        def handler(args):
            raise exc

        monkeypatch.setattr(_sweep, "cmd_sweep", handler)

    def test_user_errors_in_a_group_are_one_line(self, monkeypatch, capsys):
        """Two input errors inside nested groups print the first and how many more, exit 2, no traceback."""
        from mpcbench_async._exceptions import InputError

        self._raise(monkeypatch, ExceptionGroup("tg", [InputError("a.json: $.x is bad"),
                                                        ExceptionGroup("inner", [InputError("b.json: $.y is bad")])]))
        assert (2, "error: a.json: $.x is bad (and 1 more error(s) like it)\n") == (main(["sweep"]),
                                                                                 capsys.readouterr().err)

    def test_a_full_disk_is_a_user_error(self, monkeypatch, capsys):
        """ENOSPC inside a task group names the file and the OS reason."""
        import errno

        self._raise(monkeypatch, ExceptionGroup("tg", [OSError(errno.ENOSPC, "No space left on device",
                                                               "out/runs.jsonl")]))
        assert (2, "error: out/runs.jsonl: No space left on device\n") == (main(["sweep"]), capsys.readouterr().err)

    def test_an_interrupt_in_a_group_exits_130(self, monkeypatch, capsys):
        """An Interrupted among the group's errors is an interrupt, not a user error."""
        from mpcbench_async._exceptions import Interrupted

        self._raise(monkeypatch, ExceptionGroup("tg", [Interrupted("stopped")]))
        assert 130 == main(["sweep"])

    def test_a_bug_in_a_group_is_not_hidden(self, monkeypatch):
        """A programming error inside a group still raises (it is not a user error)."""
        self._raise(monkeypatch, ExceptionGroup("tg", [RuntimeError("bug")]))
        with pytest.raises(ExceptionGroup):
            main(["sweep"])
