"""No API key reaches a file, a stream or a report in any shape, even when a provider echoes it or a reply quotes it.

A sim server in its own process plays two careless providers for every kind of model (agent, judge, tariff,
generator). The "leaky" ones answer every call with HTTP 400 or 500 whose body quotes the ``Authorization``/
``api-key`` headers, the bare key and the key in eleven shapes (``echo_auth=true&echo_shapes=true``): full,
without its prefix, an 8-character part, split by spaces, by punctuation and by newlines, percent-encoded,
base64 at its three alignments and base64url. The "quoting" ones answer 200 with content that quotes the key
in those eleven shapes (``quote_key=true``): the twelfth variant, which the runner stores as model content.
Every command that talks to a model runs in a subprocess through both transports (the lean native one and the
openai SDK); then every file it wrote, and its stdout and stderr, are searched for key material in any of
those shapes (``mpcbench_async.testing.Scanner``), for three keys: an ``sk-``-shaped one, one with no recognisable
shape (only the registry of configured keys can catch it) and a hex one written literally into a configured
``api-key`` header. Records must also hold exactly the masked texts: the key's characters gone, the rest kept.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mpcbench_async.perf import sim_subprocess
from mpcbench_async.testing import Scanner
from tests.conftest import REPO
from tests.secret_shapes import HEADER_KEY, PLAIN_KEY, SECRETS, SK_KEY, masked_quote, masked_shapes

LEAK = "fail_first=1000000&echo_auth=true&echo_shapes=true"
QUOTE = "quote_key=true"
TRANSPORTS = ("native", "openai")
TASK = "tasks/document_generation/sc01_weekly_report.json"
SCANNER = Scanner(SECRETS)


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    """A sim server (own process) whose error bodies echo the request's credentials."""
    with sim_subprocess() as base_url:
        yield base_url


@pytest.fixture(scope="module")
def levels_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two generated level-1 instances of the three-level MPCBench (no model involved)."""
    out = tmp_path_factory.mktemp("levels") / "data"
    proc = subprocess.run([sys.executable, "-m", "mpcbench_async", "levels", "generate", "--level", "1",
                           "--count", "2", "--seed", "3", "--out", str(out)], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert 0 == proc.returncode, proc.stderr
    return out


def write_config(path: Path, base_url: str, transport: str) -> Path:
    """A model config whose models all call the echoing sim with real-looking keys (outside every scanned folder:
    it holds the header key itself)."""
    def model(api_model: str, **extra: object) -> dict[str, object]:
        return {"model": api_model, "base_url": base_url, **extra}

    sk, plain, header = {"api_key_env": "MPCB_TEST_SK_KEY"}, {"api_key_env": "MPCB_TEST_PLAIN_KEY"}, {
        "api_key_env": None, "headers": {"api-key": HEADER_KEY}}
    config = {
        "agent_models": ["leaky-agent", "quoting-agent"],
        "judge_models": ["leaky-judge", "quoting-judge"],
        "tariff_models": ["leaky-tariff", "quoting-tariff"],
        "defaults": {"transport": transport,
                     "retry": {"max_attempts": 2, "initial_backoff": 0.001, "max_backoff": 0.001}},
        "models": {
            "leaky-agent": model(f"sim/oracle-agent?fault=500&{LEAK}", **sk),
            "quoting-agent": model(f"sim/oracle-agent?{QUOTE}", **sk),
            "leaky-judge": model(f"sim/judge?fault=400&{LEAK}", **plain),
            "quoting-judge": model(f"sim/judge?{QUOTE}", **plain),
            "leaky-tariff": model(f"sim/tariff?fault=400&{LEAK}", **header),
            "quoting-tariff": model(f"sim/tariff?{QUOTE}", **header),
            "leaky-generator": model(f"sim/generator?fault=400&{LEAK}", **header),
            "quoting-generator": model(f"sim/generator?{QUOTE}", **header),
        },
    }
    path.write_text(json.dumps(config))
    return path


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``mpcbench-async --log-level debug ARGS`` with the keys in its environment only."""
    env = {**os.environ, "MPCB_TEST_SK_KEY": SK_KEY, "MPCB_TEST_PLAIN_KEY": PLAIN_KEY}
    proc = subprocess.run([sys.executable, "-m", "mpcbench_async", "--log-level", "debug", *args],
                          capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc


def leaks(procs: list[subprocess.CompletedProcess[str]], *dirs: Path) -> dict[str, list[str]]:
    """What leaked where: per written file (its path under ``dirs``' parent) and stream; empty when nothing did.

    Every file is read, text or not (the response cache is SQLite); at least one must have been written.
    """
    texts = {f"<{name} of {' '.join(proc.args[5:7])}>": getattr(proc, name)
             for proc in procs for name in ("stdout", "stderr")}
    files = [path for directory in dirs for path in directory.rglob("*") if path.is_file()]
    assert files, f"nothing written under {dirs}"
    for path in files:
        texts[str(path.relative_to(dirs[0].parent))] = path.read_bytes().decode("utf-8", "replace")
    found = {where: SCANNER.find(text) for where, text in texts.items()}
    return {where: what for where, what in found.items() if what}


def jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def strings(value: object) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


def echoed(base_url: str, model: str, status: int, text: str, headers: str, key: str) -> str:
    """The stored error message for one echoing call, with every credential masked in every shape."""
    return (f"model {model!r} at {base_url}/chat/completions: HTTP {status}: {text} "
            f"(request headers: {headers}; key ***){masked_shapes(key)}")


BEARER = '{"Authorization":"Bearer ***"}'
AGENT_ERROR = ("leaky-agent", 500, "simulated: internal server error", BEARER, SK_KEY)
JUDGE_ERROR = ("leaky-judge", 400, "simulated bad request", BEARER, PLAIN_KEY)


def header_error(model: str, transport: str) -> tuple[str, int, str, str, str]:
    """A header-keyed model's echo (the SDK sends a placeholder bearer token when no key variable is configured)."""
    headers = '{"api-key":"***"}' if transport == "native" else '{"Authorization":"Bearer ***","api-key":"***"}'
    return (model, 400, "simulated bad request", headers, HEADER_KEY)


@pytest.mark.parametrize("transport", TRANSPORTS)
class TestNoKeyLeaves:
    def test_sweep(self, transport, echo_url, levels_data, tmp_path):
        """`sweep` over the mpcbench, tariff and levels suites with a response cache: masked errors and masked
        quotes in every record file, the cache and the logs, no key material anywhere."""
        out = tmp_path / "sweep"
        config = write_config(tmp_path / "model_config.json", echo_url, transport)
        proc = run_cli("sweep", "--config", str(config), "--out", str(out), "--tasks", "sc01_weekly_report",
                       "--suite", "mpcbench,tariff,levels", "--levels-data", str(levels_data), "--cache",
                       str(out / "cache"), "--quiet")
        assert {} == leaks([proc], out)
        runs = {r["model"]: r for r in jsonl(out / "runs.jsonl")}
        assert echoed(echo_url, *AGENT_ERROR) == runs["leaky-agent"]["error_message"]
        assert str(runs["quoting-agent"]["run"]["final_answer"]).endswith("\n\n" + masked_quote(SK_KEY))
        judgements = {j["judge_model"]: j for j in jsonl(out / "judgements.jsonl")}
        assert echoed(echo_url, *JUDGE_ERROR) == judgements["leaky-judge"]["error_message"]
        assert "ok" == judgements["quoting-judge"]["status"]
        calls = {c["error_message"] for c in jsonl(out / "calls.jsonl") if c["status"] == "error"}
        assert {echoed(echo_url, *error) for error in (AGENT_ERROR, JUDGE_ERROR,
                                                       header_error("leaky-tariff", transport))} == calls
        tariff = jsonl(out / "tariff_quoting-tariff.jsonl")
        assert masked_quote(HEADER_KEY) in tariff[0]["result"]["iterations"][0]["reply"]
        levels = {r["model"]: r for r in jsonl(out / "levels.jsonl")}
        assert any(masked_quote(SK_KEY) in text for text in strings(levels["quoting-agent"]))
        cache = (out / "cache" / "responses.sqlite3").read_bytes()
        assert masked_quote(PLAIN_KEY).encode() in cache.replace(b"\\n", b"\n")

    def test_run_task(self, transport, echo_url, tmp_path):
        """`run-task` writes the masked error into its run log and no key anywhere."""
        logs = tmp_path / "logs"
        config = write_config(tmp_path / "model_config.json", echo_url, transport)
        proc = run_cli("run-task", "--task", TASK, "--agent-model", "leaky-agent", "--config", str(config),
                       "--logs-dir", str(logs))
        assert {} == leaks([proc], logs)
        log = json.loads((logs / "sc01_weekly_report__agent-leaky-agent_run.json").read_text())
        assert echoed(echo_url, *AGENT_ERROR) == log["error"]

    def test_run_and_judge(self, transport, echo_url, tmp_path):
        """`run-and-judge` (every agent × every judge): masked errors and quotes in run logs, judge results
        and its printed table, no key anywhere."""
        logs = tmp_path / "logs"
        config = write_config(tmp_path / "model_config.json", echo_url, transport)
        proc = run_cli("run-and-judge", "--task", TASK, "--config", str(config), "--logs-dir", str(logs))
        assert {} == leaks([proc], logs)
        run = json.loads((logs / "sc01_weekly_report__agent-quoting-agent_run.json").read_text())
        assert run["final_answer"].endswith("\n\n" + masked_quote(SK_KEY))
        judged = json.loads((logs / "sc01_weekly_report__agent-quoting-agent__judge-leaky-judge_judge_result.json")
                            .read_text())
        assert echoed(echo_url, *JUDGE_ERROR) == judged["error"]
        assert f"run failed: leaky-agent: ServerError: {echoed(echo_url, *AGENT_ERROR)}" in proc.stderr

    def test_judge(self, transport, echo_url, tmp_path):
        """`judge` on the input built from a quoting agent's run, by a leaky and a quoting judge: the quote
        arrives masked in the judge input, the echo in the judge result, no key anywhere."""
        logs = tmp_path / "logs"
        config = write_config(tmp_path / "model_config.json", echo_url, transport)
        procs = [run_cli("run-task", "--task", TASK, "--agent-model", "quoting-agent", "--config", str(config),
                         "--logs-dir", str(logs)),
                 run_cli("judge-input", "--log", str(logs / "sc01_weekly_report__agent-quoting-agent_run.json"))]
        judge_input = logs / "sc01_weekly_report__agent-quoting-agent_judge_input.json"
        for judge in ("leaky-judge", "quoting-judge"):
            procs.append(run_cli("judge", "--input", str(judge_input), "--model", judge, "--config", str(config),
                                 "--logs-dir", str(logs)))
        assert {} == leaks(procs, logs)
        assert masked_quote(SK_KEY) in json.loads(judge_input.read_text())["final_answer"]
        result = json.loads((logs / "sc01_weekly_report__agent-quoting-agent__judge-leaky-judge_judge_result.json")
                            .read_text())
        assert echoed(echo_url, *JUDGE_ERROR) == result["error"]

    def test_tariff_run_live_and_record(self, transport, echo_url, tmp_path):
        """`tariff run --mode live`, leaky and quoting, and `--mode record` (replies written as fixtures): masked
        errors and quotes in results, reports and fixtures, no key anywhere."""
        out, suite = tmp_path / "tariff", tmp_path / "suite"
        shutil.copytree(REPO / "storage" / "benchmarks" / "tariff" / "cases", suite / "cases")
        config = write_config(tmp_path / "model_config.json", echo_url, transport)
        procs = [run_cli("tariff", "run", "--mode", "live", "--model", model, "--config", str(config),
                         "--out", str(out / model)) for model in ("leaky-tariff", "quoting-tariff")]
        procs.append(run_cli("tariff", "run", "--mode", "record", "--model", "quoting-tariff", "--path", str(suite),
                             "--config", str(config), "--out", str(out / "recorded")))
        assert {} == leaks(procs, out, suite / "fixtures")
        fixtures = sorted((suite / "fixtures").glob("*.json"))
        assert 72 == len(fixtures)
        assert masked_quote(HEADER_KEY) in fixtures[0].read_text().replace("\\n", "\n")
        expected = echoed(echo_url, *header_error("leaky-tariff", transport))
        (results,) = (out / "leaky-tariff" / "runs").glob("*.jsonl")
        assert {expected} == {r["error_message"] for r in jsonl(results)}
        (report,) = (out / "leaky-tariff").glob("*.md")
        assert expected in report.read_text()
        (results,) = (out / "quoting-tariff" / "runs").glob("*.jsonl")
        assert masked_quote(HEADER_KEY) in jsonl(results)[0]["result"]["iterations"][0]["reply"]

    def test_generate(self, transport, echo_url, tmp_path):
        """`generate world-state`, leaky and quoting: the masked error in generation.jsonl, the masked quote in
        the generated file, no key anywhere."""
        out = tmp_path / "generate"
        config = write_config(tmp_path / "model_config.json", echo_url, transport)
        procs = [run_cli("generate", "world-state", "--scenario-id", "sc01_berth_appointments", "--model", model,
                         "--config", str(config), "--data-dir", str(out / model / "data"),
                         "--logs-dir", str(out / model / "logs"))
                 for model in ("leaky-generator", "quoting-generator")]
        assert {} == leaks(procs, out)
        (failed,) = jsonl(out / "leaky-generator" / "logs" / "generation.jsonl")
        assert echoed(echo_url, *header_error("leaky-generator", transport)) in str(failed["error_message"])
        world = (out / "quoting-generator" / "data" / "sc01_berth_appointments_world_state.json").read_text()
        assert masked_quote(HEADER_KEY) in world.replace("\\n", "\n")

    def test_profile_endpoint(self, transport, echo_url, tmp_path):
        """`profile endpoint` against an echoing endpoint writes no key anywhere."""
        out = tmp_path / "profile"
        config = write_config(tmp_path / "model_config.json", echo_url, transport)
        proc = run_cli("profile", "endpoint", "--model", "leaky-judge", "--concurrency", "2", "--duration", "0.2",
                       "--config", str(config), "--out", str(out))
        assert {} == leaks([proc], out)
        (profile,) = out.glob("*.json")
        assert 1.0 == json.loads(profile.read_text())["levels"][0]["error_rate"]


class TestScannerSeesEveryShape:
    def test_every_shape_raw_and_json_escaped_is_found(self):
        """The scan is not blind: each of the 11 shapes of each key, raw or inside a JSON string, is reported by
        name; the masked shapes and the masked quote are clean."""
        from mpcbench_async.sim._leaks import key_shapes

        for key in SECRETS:
            for name, value in key_shapes(key).items():
                for text in (f"x {value} y", json.dumps({"m": f"x {value} y"})):
                    assert f"{key[:6]}…:{name}" in SCANNER.find(text), (key, name, text)
            assert [] == SCANNER.find(masked_shapes(key) + json.dumps(masked_quote(key)))


class TestEchoShapes:
    def test_shapes_are_the_key(self):
        """What the sim sends is what it says: each shape decodes back to the key (or a piece of it), the three
        base64 shapes hold it at the three alignments, the base64url one uses the URL-safe alphabet."""
        from urllib.parse import unquote

        from mpcbench_async.sim._leaks import key_shapes

        for key in SECRETS:
            shapes = key_shapes(key)
            assert key == shapes["full"] == unquote(shapes["percent"])
            assert key.endswith(shapes["bare"]) and len(shapes["bare"]) < len(key)
            assert 8 == len(shapes["part"]) and shapes["part"] in key
            assert key == shapes["spaced"].replace(" ", "") == shapes["lines"].replace("\n", "")
            punct = shapes["punct"]
            assert key == "".join(char for i, char in enumerate(punct[:-1]) if i % 4 != 3)
            assert {"."} <= set(punct[3::4]) <= set("._:/-")
            offsets = set()
            for name in ("base64_0", "base64_1", "base64_2"):
                data = base64.b64decode(shapes[name])
                offsets.add(data.index(key.encode()) % 3)
            assert {0, 1, 2} == offsets
            url = shapes["base64url"]
            assert ("-" in url or "_" in url) and key.encode() in base64.urlsafe_b64decode(url)

    def test_quote_keeps_json_replies_readable(self):
        """``quote_key`` appends to a JSON reply's free-text fields at any depth (or adds ``note``), so the reply
        still parses; plain text gets the quote appended; a request without a key is left alone."""
        from mpcbench_async.sim._leaks import quoted_key

        headers = {"Authorization": f"Bearer {SK_KEY}"}
        quoted = json.loads(quoted_key('{"a": [{"reason": "r"}], "final_answer": "x", "n": 1}', headers) or "")
        assert quoted["a"][0]["reason"].startswith("r\n\nYour key, quoted back: shapes: full=sk-proj-")
        assert quoted["final_answer"].startswith("x\n\n") and 1 == quoted["n"]
        assert "note" in json.loads(quoted_key('{"hts_code": "6110.90.90"}', headers) or "")
        assert (quoted_key("hello", headers) or "").startswith("hello\n\nYour key, quoted back:")
        assert "hello" == quoted_key("hello", {})
