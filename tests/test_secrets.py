"""No API key reaches a file, a stream or a report, even when the provider echoes the request's credentials.

A sim server in its own process answers every call of the "leaky" models with
HTTP 400 or 500 whose body quotes the ``Authorization``/``api-key`` headers and
the bare key (``echo_auth=true``), as some proxies do. Each command runs in a
subprocess through both transports; then every file it wrote and its stdout and
stderr are searched for the three keys: an ``sk-``-shaped one, one with no
recognisable shape (only the registry of configured keys can catch it) and one
written literally into a configured ``api-key`` header.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mpcbench_async.perf import sim_subprocess
from tests.conftest import REPO

SK_KEY = "sk-test-SECRET1234567890abcdef"
PLAIN_KEY = "PLAIN0SECRET0123456789abcdef"
HEADER_KEY = "HDR0SECRET0987654321fedcba"
SECRETS = (SK_KEY, PLAIN_KEY, HEADER_KEY)
ALWAYS = "fail_first=1000000&echo_auth=true"
TRANSPORTS = ("native", "openai")


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    """A sim server (own process) whose error bodies echo the request's credentials."""
    with sim_subprocess() as base_url:
        yield base_url


def write_config(path: Path, base_url: str, transport: str) -> Path:
    """A model config whose models all call the echoing sim with real-looking keys."""
    def model(api_model: str, **extra: object) -> dict[str, object]:
        return {"model": api_model, "base_url": base_url, **extra}

    config = {
        "agent_models": ["leaky-agent", "ok-agent"],
        "judge_models": ["leaky-judge"],
        "tariff_models": ["leaky-tariff"],
        "defaults": {"transport": transport,
                     "retry": {"max_attempts": 2, "initial_backoff": 0.001, "max_backoff": 0.001}},
        "models": {
            "leaky-agent": model(f"sim/oracle-agent?fault=500&{ALWAYS}", api_key_env="MPCB_TEST_SK_KEY"),
            "ok-agent": model("sim/oracle-agent", api_key_env="MPCB_TEST_SK_KEY"),
            "leaky-judge": model(f"sim/judge?fault=400&{ALWAYS}", api_key_env="MPCB_TEST_PLAIN_KEY"),
            "leaky-tariff": model(f"sim/tariff?fault=400&{ALWAYS}", api_key_env=None,
                                  headers={"api-key": HEADER_KEY}),
        },
    }
    path.write_text(json.dumps(config))
    return path


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``mpcbench-async --log-level debug ARGS`` with the keys in its environment only."""
    env = {**os.environ, "MPCB_TEST_SK_KEY": SK_KEY, "MPCB_TEST_PLAIN_KEY": PLAIN_KEY}
    return subprocess.run([sys.executable, "-m", "mpcbench_async", "--log-level", "debug", *args],
                          capture_output=True, text=True, timeout=300, cwd=REPO, env=env)


def leaks(proc: subprocess.CompletedProcess[str], out_dir: Path) -> dict[str, int]:
    """Occurrences of any key per written file (relative path) and per stream; empty when nothing leaked."""
    texts = {"<stdout>": proc.stdout, "<stderr>": proc.stderr}
    for path in out_dir.rglob("*"):
        if path.is_file():
            texts[str(path.relative_to(out_dir))] = path.read_text(errors="replace")
    counts = {where: sum(text.count(secret) for secret in SECRETS) for where, text in texts.items()}
    return {where: count for where, count in counts.items() if count}


def jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def echoed(base_url: str, model: str, status: int, text: str, headers: str) -> str:
    """The stored error message for one echoing call, with every credential masked."""
    return (f"model {model!r} at {base_url}/chat/completions: HTTP {status}: {text} "
            f"(request headers: {headers}; key ***)")


AGENT_ERROR = ("leaky-agent", 500, "simulated: internal server error", '{"Authorization":"Bearer ***"}')
JUDGE_ERROR = ("leaky-judge", 400, "simulated bad request", '{"Authorization":"Bearer ***"}')


def tariff_error(transport: str) -> tuple[str, int, str, str]:
    """The tariff model's echo (the SDK sends a placeholder bearer token when no key variable is configured)."""
    headers = '{"api-key":"***"}' if transport == "native" else '{"Authorization":"Bearer ***","api-key":"***"}'
    return ("leaky-tariff", 400, "simulated bad request", headers)


@pytest.mark.parametrize("transport", TRANSPORTS)
class TestNoKeyLeaves:
    def test_sweep(self, transport, echo_url, tmp_path):
        """`sweep` (MPCBench and tariff suites) writes masked errors into every record file and no key anywhere."""
        out = tmp_path / "sweep"
        config = write_config(tmp_path / "model_config.json", echo_url, transport)
        proc = run_cli("sweep", "--config", str(config), "--out", str(out), "--tasks", "sc01_weekly_report",
                       "--suite", "mpcbench,tariff", "--quiet")
        assert "Traceback" not in proc.stderr, proc.stderr
        assert {} == leaks(proc, out)
        runs = {r["model"]: r for r in jsonl(out / "runs.jsonl")}
        assert echoed(echo_url, *AGENT_ERROR) == runs["leaky-agent"]["error_message"]
        judgements = jsonl(out / "judgements.jsonl")
        assert [echoed(echo_url, *JUDGE_ERROR)] == sorted({j["error_message"] for j in judgements})
        calls = {c["error_message"] for c in jsonl(out / "calls.jsonl") if c["status"] == "error"}
        assert {echoed(echo_url, *error) for error in (AGENT_ERROR, JUDGE_ERROR, tariff_error(transport))} == calls

    def test_run_task(self, transport, echo_url, tmp_path):
        """`run-task` writes the masked error into its run log and no key anywhere."""
        logs = tmp_path / "logs"
        config = write_config(tmp_path / "model_config.json", echo_url, transport)
        proc = run_cli("run-task", "--task", "tasks/document_generation/sc01_weekly_report.json",
                       "--agent-model", "leaky-agent", "--config", str(config), "--logs-dir", str(logs))
        assert "Traceback" not in proc.stderr, proc.stderr
        assert {} == leaks(proc, logs)
        log = json.loads((logs / "sc01_weekly_report__agent-leaky-agent_run.json").read_text())
        assert echoed(echo_url, *AGENT_ERROR) == log["error"]

    def test_tariff_run_live(self, transport, echo_url, tmp_path):
        """`tariff run --mode live` writes masked errors into its results and report and no key anywhere."""
        out = tmp_path / "tariff"
        config = write_config(tmp_path / "model_config.json", echo_url, transport)
        proc = run_cli("tariff", "run", "--mode", "live", "--model", "leaky-tariff", "--config", str(config),
                       "--out", str(out))
        assert "Traceback" not in proc.stderr, proc.stderr
        assert {} == leaks(proc, out)
        (results,) = (out / "runs").glob("*.jsonl")
        assert {echoed(echo_url, *tariff_error(transport))} == {r["error_message"] for r in jsonl(results)}
        (report,) = out.glob("*.md")
        assert echoed(echo_url, *tariff_error(transport)) in report.read_text()

    def test_profile_endpoint(self, transport, echo_url, tmp_path):
        """`profile endpoint` against an echoing endpoint writes no key anywhere."""
        out = tmp_path / "profile"
        config = write_config(tmp_path / "model_config.json", echo_url, transport)
        proc = run_cli("profile", "endpoint", "--model", "leaky-judge", "--concurrency", "2", "--duration", "0.2",
                       "--config", str(config), "--out", str(out))
        assert "Traceback" not in proc.stderr, proc.stderr
        assert {} == leaks(proc, out)
        (profile,) = out.glob("*.json")
        assert 1.0 == json.loads(profile.read_text())["levels"][0]["error_rate"]
