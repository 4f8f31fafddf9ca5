"""The command line: help, sim serve as a real server for the openai SDK, bench client, errors."""

from __future__ import annotations

import subprocess
import sys

import openai

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

    def test_busy_port_is_one_clear_error(self):
        """Binding a port that is taken fails with one line and exit code 2, no traceback."""
        with sim_subprocess() as base_url:
            port = base_url.split(":")[-1].split("/")[0]
            proc = subprocess.run([sys.executable, "-m", "mpcbench_async", "sim", "serve", "--port", port],
                                  capture_output=True, text=True, timeout=30)
        assert 2 == proc.returncode
        assert proc.stderr.startswith(f"error: sim serve: cannot listen on 127.0.0.1:{port} (")
        assert "Traceback" not in proc.stderr


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
