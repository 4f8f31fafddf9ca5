"""Judges in provider batches (issue 29 point 3): same judgements as online at half the price, and a SIGKILL during a
batch resumed by polling the batches kept in ``batches.jsonl`` (a real child process), nothing sent or billed twice."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import FaultSpec, SimServer
from mpcbench_async.sweep import SweepOptions, run_sweep
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import FAST_RETRY
from tests.sweep_options import sweep_options

FAST_BATCH = {"max_wait_s": 0.05, "poll_s": 0, "poll_max_s": 0}
PRICED = {**FAST_RETRY, "prices": {"input_per_1m": 2.0, "output_per_1m": 8.0}}


def options(root: Path, out: Path, **changes: Any) -> SweepOptions:
    return sweep_options(config=root / "model_config.json", prompts=root / "prompt_config.json", out=out,
                        tasks_dir=root / "tasks", data_dir=root / "data", scenarios_dir=root / "scenarios",
                        handle_signals=False, certificate=False, **changes)


def judge_batch(root: Path, batch: dict[str, Any]) -> None:
    """Give the workspace's judge model its own batch settings in the config."""
    path = root / "model_config.json"
    config = orjson.loads(path.read_bytes())
    config["models"] = {"sim/judge": {"batch": batch}}
    path.write_bytes(orjson.dumps(config))


def verdicts(out: Path) -> dict[str, Any]:
    records, _ = read_jsonl(out / "judgements.jsonl")
    return {r["key"]: (r["status"], r["judgement"]["verdict"], r["judgement"]["scores"]) for r in records}


def judge_calls(out: Path) -> list[dict[str, Any]]:
    return [c for c in read_jsonl(out / "calls.jsonl")[0] if c["model"] == "sim/judge"]


async def test_batch_judgements_equal_online_ones_at_half_the_price(tmp_path: Path):
    """One workspace swept online and with the judge batched: the same verdicts and scores for the same keys; each
    judge request billed once by the sim's Batch API, none sent online; every judge call record at half the price."""
    async with SimServer(seed=5) as sim:
        root = write_workspace(tmp_path / "ws", base_url=sim.base_url, defaults=PRICED)
        await run_sweep(options(root, tmp_path / "online"))
        online_cost = sum(c["cost_usd"] for c in judge_calls(tmp_path / "online"))
        sim.reset()
        judge_batch(root, FAST_BATCH)
        await run_sweep(options(root, tmp_path / "batch"))
        stats = sim.stats
    online, batch = verdicts(tmp_path / "online"), verdicts(tmp_path / "batch")
    calls = judge_calls(tmp_path / "batch")
    assert (online, len(online)) == (batch, 8)
    assert ({c["key"]: 1 for c in calls}, {"batch"}) == (stats.batch_billed, {c["transport"] for c in calls})
    assert not any(key.startswith("judge-") for key in stats.received)
    assert sum(c["cost_usd"] for c in calls) == pytest.approx(online_cost / 2)
    journal = [orjson.loads(line) for line in (tmp_path / "batch" / "batches.jsonl").read_bytes().splitlines()]
    assert {"completed"} == {line["state"] for line in journal if line["state"] not in ("uploaded", "submitted")}


async def test_batch_judge_flag_batches_the_config_judges(tmp_path: Path):
    """``--batch judge`` (SweepOptions.batch) batches a judge model whose config says nothing about batches."""
    async with SimServer(seed=5) as sim:
        root = write_workspace(tmp_path / "ws", base_url=sim.base_url, defaults=PRICED, tasks=1,
                               agent_models=("sim/lazy-agent",))
        await run_sweep(options(root, tmp_path / "out", batch=("judge",)))
        billed = sim.stats.batch_billed
    calls = judge_calls(tmp_path / "out")
    assert ({c["key"]: 1 for c in calls}, ["ok"], 1) == (billed, [c["status"] for c in calls], len(billed))


@pytest.mark.parametrize("kind", ["judge", "agent"])
async def test_a_sigkill_during_a_batch_resumes_by_polling_it(tmp_path: Path, kind: str):
    """A sweep child SIGKILLed while its batches run (the sim holds them: latency 1000 s), then run again once the
    sim's clock has moved past them: it polls the journalled batches instead of sending them again. Every batched
    request is billed once, every batch created once, the second run uploads only what no batch held. The kill comes
    as the sim creates a batch, before the sweep journals its id: the rerun finds it by its input file. ``judge``:
    the judge's batches; ``agent`` (``--batch agent``): the agents' first wave, each run replayed on resume from
    the batches that hold its turns."""
    out = tmp_path / "out"
    async with SimServer(seed=5, defaults=FaultSpec(batch_latency_s=1000)) as sim:
        agents = ("sim/oracle-agent", "sim/lazy-agent") if kind == "agent" else ("sim/lazy-agent", "sim/echo")
        root = write_workspace(tmp_path / "ws", base_url=sim.base_url, defaults=PRICED, agent_models=agents)
        if kind == "judge":
            judge_batch(root, {**FAST_BATCH, "max_wait_s": 0.2})
        argv = [sys.executable, "-m", "mpcbench_async", "sweep", "--config", str(root / "model_config.json"),
                "--prompts", str(root / "prompt_config.json"), "--tasks-dir", str(root / "tasks"), "--data-dir",
                str(root / "data"), "--scenarios-dir", str(root / "scenarios"), "--out", str(out), "--quiet",
                "--no-certificate", *(["--batch", "agent"] if kind == "agent" else [])]
        created = anyio.Event()
        count = sim.batches.count

        def counting(table: str, key: str) -> None:
            count(table, key)
            if table == "batch_creates":
                created.set()

        sim.batches.count = counting
        async with await anyio.open_process(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as child:
            with anyio.fail_after(120):  # a guard, not a wait: the event comes within seconds
                await created.wait()  # a batch is running: kill the sweep
            os.kill(child.pid, signal.SIGKILL)
            await child.wait()
        journal = [orjson.loads(line) for line in (out / "batches.jsonl").read_bytes().splitlines()]
        held = {key for line in journal for key in line.get("keys", ())}
        # files the killed run journalled as uploaded of which the sim made no batch: the rerun creates them
        uncreated = {line["file_id"] for line in journal} - {b.input_file_id for b in sim.batches.batches.values()}
        before = dict(sim.stats.batch_uploads), dict(sim.stats.batch_creates)
        sim.batches.clock.advance(2000)  # the killed sweep's batches have finished
        sim.defaults = FaultSpec()  # and new ones finish at once
        rerun = await anyio.run_process(argv, check=False)
        stats = sim.stats
    assert 0 == rerun.returncode, rerun.stderr.decode()
    waves = re.findall(r"^agent waves: \d+ batches \(\d+ requests\), wall .* ratio [\d.]+$", rerun.stdout.decode(),
                       re.MULTILINE)
    assert len(waves) == (kind == "agent")  # the rerun prints its agents' wave line after the summary
    judged = verdicts(out)
    assert 8 == len(judged) and {"ok"} == {v[0] for v in judged.values()}
    billed = stats.batch_billed
    batched = [c for c in read_jsonl(out / "calls.jsonl")[0] if c.get("transport") == "batch"]
    assert {1} == set(billed.values()) and set(billed) == {c["key"] for c in batched}
    assert ({"sim/judge"} if kind == "judge" else set(agents)) == {c["model"] for c in batched}
    assert held <= set(billed) and held
    new_batches = sum(stats.batch_creates.values()) - sum(before[1].values())
    # each new batch is of a new upload, or of a file the killed run uploaded but had not made a batch of yet (a
    # file uploaded but never journalled holds no key and is not used: uploads are not billed)
    assert new_batches == sum(stats.batch_uploads.values()) - sum(before[0].values()) + len(uncreated)
    assert len(sim.batches.batches) == sum(stats.batch_creates.values())


def test_dry_run_shows_batch_and_online_cost_and_the_batch_wall_time(tmp_path: Path):
    """``--dry-run --batch judge``: the judge row at batch prices, the online cost beside it (twice), and the judge's
    time as batches (one per attempt, 1 h each assumed) rather than calls over concurrency."""
    from mpcbench_async.sweep import dry_run_sweep, render_dry_run

    root = write_workspace(tmp_path / "ws", base_url="http://127.0.0.1:9/v1", defaults=PRICED)
    dry = dry_run_sweep(options(root, tmp_path / "out", batch=("judge",)))
    judge = next(r for r in dry.rows if r.role == "judge")
    assert judge.online_cost_usd is not None and judge.cost_usd.low is not None
    assert judge.online_cost_usd.low == pytest.approx(2 * judge.cost_usd.low)
    text = render_dry_run(dry)
    assert "  sim/judge: 60.0 min-3.0 h (provider batches of 60.0 min each, assumed, one per judge attempt)" in text
    assert (f"  sim/judge (judge): batch ${judge.cost_usd.low:.4f}-unbounded, online "
            f"${judge.online_cost_usd.low:.4f}-unbounded") in text


def test_the_progress_line_shows_running_batches():
    """The sweep's progress line names each running batch with its requests done and in it (two, then a count)."""
    import io

    from mpcbench_async.cli._progress import ProgressLine
    from mpcbench_async.runner import SweepStats

    running = [("batch-a", 3, 8), ("batch-b", 0, 5), ("batch-c", 0, 2)]
    line = ProgressLine(SweepStats(), stream=io.StringIO(), batches=lambda: running).line()
    assert line.startswith("starting (skipped 0) | batch batch-a 3/8 | batch batch-b 0/5 (+1 batches) | ")
