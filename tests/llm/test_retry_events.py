"""Retries say so as they happen: the retry layer tells listeners (model, attempt, why, the wait), the sweep's
progress line shows the retry in progress and ``run-task`` prints each one (issue 28: a gateway's 500s were retried
silently for a minute). The sim answers 500 deterministically (``fault=500&fail_first=N``); waits are on a fake
clock or a few milliseconds."""

from __future__ import annotations

import io

import anyio

from mpcbench_async.cli import main
from mpcbench_async.cli._progress import ProgressLine
from mpcbench_async.llm import ModelConfig, RetryEvent
from mpcbench_async.records import LLMCallRecord, Message
from mpcbench_async.runner import SweepStats
from mpcbench_async.sim import SimServer
from mpcbench_async.testing import write_workspace

RETRY = {"retry": {"max_attempts": 4, "initial_backoff": 0.002, "max_backoff": 0.004}}
FAILING = "sim/echo?fault=500&fail_first=2"


async def test_the_client_tells_each_retry_before_its_wait(make_client):
    """Two 500s then a reply: two events, attempts 1 and 2 of 4, the sim's message; their waits are the call's."""
    events: list[RetryEvent] = []
    records: list[LLMCallRecord] = []
    client = make_client(config=ModelConfig.from_dict({"defaults": RETRY}), records=records)
    client.add_retry_listener(events.append)
    await client.chat(FAILING, [Message(role="user", content="hi")], key="k1")
    url = f"{client.config.settings_for(FAILING).base_url or ''}"
    reason = "HTTP 500: simulated: internal server error"
    assert [(FAILING, "k1", 1, 4, "ServerError"), (FAILING, "k1", 2, 4, "ServerError")] == [
        (e.model, e.key, e.attempt, e.max_attempts, e.error_class) for e in events]
    assert all(e.reason.endswith(reason) and e.reason.startswith(f"model '{FAILING}' at {url}") for e in events)
    (record,) = records
    assert (3, round(sum(e.wait_s for e in events), 6)) == (record.attempts, round(record.retry_wait_s, 6))
    assert events[0].describe().startswith(f"retrying {FAILING}: attempt 1/4 failed (ServerError: model ")
    assert events[0].describe().endswith(f"{reason}); next try in {events[0].wait_s:.1f} s")


def test_the_progress_line_shows_a_retry_until_its_wait_is_over():
    """A retry is drawn at once (a plain line off a terminal) with the model, attempt, why and the next try."""
    stream = io.StringIO()
    line = ProgressLine(SweepStats(), stream)
    line.retried(RetryEvent("m", "k", 1, 8, "ServerError", "HTTP 500: down", 60.0))
    (shown,) = stream.getvalue().splitlines()
    assert shown.endswith(" | retrying m: attempt 1/8 failed (ServerError: HTTP 500: down); next try in 60.0 s")
    line.retried(RetryEvent("m", "k", 1, 8, "ServerError", "HTTP 500: down", -1.0))  # its wait already over
    assert "retrying" not in line.line()


async def test_run_task_prints_each_retry(tmp_path, capsys):
    """run-task against a model answering 500 twice: two `retrying …` lines on stderr, then the run succeeds."""
    async with SimServer(seed=3) as sim:
        root = write_workspace(tmp_path / "ws", base_url=sim.base_url, defaults=RETRY)
        code = await anyio.to_thread.run_sync(main, [
            "run-task", "--task", str(root / "tasks" / "planning" / "t0.json"), "--agent-model", FAILING,
            "--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json"),
            "--logs-dir", str(tmp_path / "logs"), "--data-dir", str(root / "data"),
            "--scenarios-dir", str(root / "scenarios")])
    err = capsys.readouterr().err.splitlines()
    retries = [line for line in err if line.startswith("retrying ")]
    assert 0 == code
    assert [f"retrying {FAILING}: attempt {n}/4 failed (ServerError: model '{FAILING}' at {sim.base_url}"
            f"/chat/completions: HTTP 500: simulated: internal server error); next try in"
            for n in (1, 2)] == [line.rsplit(" ", 2)[0] for line in retries]
