"""`profile endpoint` says why requests failed: each level's error classes with the provider's message, masked.

A sim that checks credentials (``FaultSpec(api_key=...)``) plays a provider: a wrong key gets its 401, an unknown
model its 404, through both transports (the native client and the OpenAI SDK).
"""

from __future__ import annotations

import os
import sys

import anyio
import orjson
import pytest

from mpcbench_async.llm import ModelConfig
from mpcbench_async.perf import profile_endpoint, render_endpoint_profile
from mpcbench_async.perf._endpoint_stats import ErrorClass
from mpcbench_async.sim import FaultSpec, SimServer

RIGHT, WRONG = "sk-right-key-0123456789abcdef", "sk-wrong-key-abcdefghij012345"
CHECKS_KEYS = FaultSpec(api_key=RIGHT)
CLI = "import sys; from mpcbench_async.cli import main; raise SystemExit(main(sys.argv[1:]))"


def config(base_url: str, transport: str) -> dict[str, object]:
    return {"models": {"gpt-x": {"base_url": base_url, "api_key_env": "MPCB_H24_KEY", "transport": transport}}}


def unknown_model(base_url: str) -> str:
    from mpcbench_async.sim import policy_names

    return (f"model 'gpt-x' at {base_url}/chat/completions: HTTP 404: The model 'gpt-x' does not exist; sim models: "
            f"{', '.join(policy_names())}")


@pytest.mark.parametrize("transport", ["native", "openai"])
@pytest.mark.parametrize(("key", "why"), [
    (WRONG, lambda url: f"model 'gpt-x' at {url}/chat/completions: HTTP 401: Incorrect API key provided: ***."),
    (RIGHT, unknown_model)])
async def test_each_level_keeps_the_provider_message(transport, key, why, monkeypatch):
    """Every request refused: the level's one error class counts them all and quotes the provider (the wrong key
    masked); the profile is all_failed; the Markdown report has the row."""
    monkeypatch.setenv("MPCB_H24_KEY", key)
    async with SimServer(seed=3, defaults=CHECKS_KEYS) as sim:
        profile = await profile_endpoint(ModelConfig.from_dict(config(sim.base_url, transport)), "gpt-x",
                                         concurrencies=[1, 2], duration=0.1)
    assert profile.all_failed
    for level in profile.levels:
        assert level.requests == level.errors > 0
        assert [ErrorClass(error_class="PermanentLLMError", count=level.errors, message=why(sim.base_url))] == (
            level.error_classes)
    markdown, _ = render_endpoint_profile(profile)
    assert f"| c=2 | PermanentLLMError | {profile.levels[1].errors} | {why(sim.base_url)} |" in markdown
    assert WRONG not in markdown


async def test_a_healthy_endpoint_has_no_error_classes(sim):
    profile = await profile_endpoint(ModelConfig(), "sim/echo", concurrencies=[1], duration=0.1,
                                     sim_base_url=sim.base_url)
    assert ([], False) == (profile.levels[0].error_classes, profile.all_failed)
    assert "Why requests failed" not in render_endpoint_profile(profile)[0]


async def test_some_errors_rank_by_count_and_keep_the_run_going(sim):
    """Half the keys refused with 503 (retries are off while profiling): one class, the profile not all failed."""
    profile = await profile_endpoint(ModelConfig(), "sim/echo?p503=0.5", concurrencies=[2], duration=0.2,
                                     sim_base_url=sim.base_url)
    (level,) = profile.levels
    assert not profile.all_failed and level.ok > 0 and level.errors > 0
    assert [("ServerError", level.errors)] == [(e.error_class, e.count) for e in level.error_classes]
    assert level.error_classes[0].message.endswith("HTTP 503: simulated: service unavailable")


@pytest.mark.parametrize(("transport", "key", "expected"), [
    ("native", WRONG, "HTTP 401: Incorrect API key provided: ***."),
    ("openai", RIGHT, "HTTP 404: The model 'gpt-x' does not exist")])
async def test_the_cli_exits_1_and_prints_why(transport, key, expected, tmp_path):
    """Every request failed: exit 1; stderr shows each level's error class with the provider's message and says
    nothing was measured; the report files have the class; the key is in no output."""
    async with SimServer(seed=3, defaults=CHECKS_KEYS) as sim:
        path = tmp_path / "model_config.json"
        path.write_bytes(orjson.dumps(config(sim.base_url, transport)))
        proc = await anyio.run_process(
            [sys.executable, "-c", CLI, "profile", "endpoint", "--model", "gpt-x", "--concurrency", "1,2",
             "--duration", "0.1", "--config", str(path), "--out", str(tmp_path / "out")],
            check=False, env={**os.environ, "MPCB_H24_KEY": key})
    stdout, stderr = proc.stdout.decode(), proc.stderr.decode()
    assert 1 == proc.returncode, stderr
    lines = stderr.splitlines()
    assert 2 == sum(line.lstrip().startswith("PermanentLLMError ×") and expected in line for line in lines), stderr
    assert "error: every request to gpt-x failed; nothing was measured (why: the error classes above)" == lines[-1]
    report = orjson.loads((tmp_path / "out" / "endpoint_gpt-x.json").read_bytes())
    assert [True] * 2 == [expected in lv["error_classes"][0]["message"] for lv in report["levels"]]
    assert expected in (tmp_path / "out" / "endpoint_gpt-x.md").read_text()
    assert key not in stdout + stderr
