"""A small real sweep made once with the seeded sim, for the viewer and report tests (copied where changed).

Two agent models (``sim/oracle-agent`` calls tools, ``sim/echo`` repeats the prompt back)
× two judges × four tasks × two trials. Task t0's prompt holds a ``<script>`` tag and a
link, so the echoed answer puts both in model output, where they must arrive escaped.
Three lines are then appended to runs.jsonl as a resumed sweep would: a newer ok record
of echo's t0 trial 0 (the kept one from then on), a task-level error and an
infrastructure error (echo, task t1, trials 2 and 3).
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import orjson
import pytest

from mpcbench_async.mpcbench import MPCBenchSuite
from mpcbench_async.runner import Runner
from mpcbench_async.sim import SimServer
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import FAST_RETRY, plan_of

AGENTS = ("sim/echo", "sim/oracle-agent")
JUDGES = ("sim/judge", "sim/judge?latency_ms=1")
NEWER_ANSWER = "the newer record's answer"
ERROR_KEY, INFRA_KEY = "run-e000000000000001", "run-e000000000000002"
HOSTILE = '<script>alert("pwned")</script> see https://example.com/x'


async def _sweep(root: Path) -> Path:
    async with SimServer(seed=5) as sim:
        write_workspace(root, base_url=sim.base_url, defaults=FAST_RETRY, agent_models=AGENTS, judge_models=JUDGES)
        task = root / "tasks" / "planning" / "t0.json"
        doc = orjson.loads(task.read_bytes())
        doc["user_prompt"] = f"Task number 0: find the release review details. {HOSTILE}"
        task.write_bytes(orjson.dumps(doc))
        config, prompts, plan = plan_of(root, trials=2)
        async with Runner(config, out_dir=root / "out", concurrency=8) as runner:
            await runner.run(MPCBenchSuite(plan, prompts))
    runs = root / "out" / "runs.jsonl"
    lines = [orjson.loads(line) for line in runs.read_bytes().splitlines()]
    first = next(r for r in lines if (r["model"], r["task_id"], r["trial"]) == ("sim/echo", "t0", 0))
    newer = {**first, "run": {**first["run"], "final_answer": NEWER_ANSWER}}
    error = {**first, "key": ERROR_KEY, "task_id": "t1", "task_type": "email_reply", "trial": 2, "status": "error",
             "error_class": "ContentFilterError", "error_message": "the reply was filtered", "run": None, "checks": []}
    infra = {**error, "key": INFRA_KEY, "trial": 3, "retryable": True, "error_class": "RateLimitError",
             "error_message": "429 after 10 attempts"}
    with runs.open("ab") as fh:
        fh.write(b"".join(orjson.dumps(r) + b"\n" for r in (newer, error, infra)))
    return root / "out"


@pytest.fixture(scope="session")
def made_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sweep directory, made once per session: treat it as read-only."""
    return asyncio.run(_sweep(tmp_path_factory.mktemp("view-sweep")))


@pytest.fixture
def sweep_dir(made_sweep: Path, tmp_path: Path) -> Path:
    """A private copy of the sweep (without any index) that a test may change."""
    out = tmp_path / "sweep"
    shutil.copytree(made_sweep, out, ignore=shutil.ignore_patterns(".view", ".lock", "report.html"))
    return out
