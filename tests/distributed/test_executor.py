"""``Runner(executor=RayExecutor(...))`` against a seeded sim: the same results as a local sweep, and a worker killed
mid-sweep loses, duplicates and repeats nothing (counted at the sim)."""

from __future__ import annotations

import os
import signal
from collections import Counter
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from mpcbench_async import BenchError
from mpcbench_async.distributed import RayExecutor, WorkersLost
from mpcbench_async.mpcbench import JudgeRecord, MPCBenchSuite
from mpcbench_async.records import Message
from mpcbench_async.runner import Runner
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import FaultSpec, SimServer
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import FAST_RETRY, plan_of
from tests.sweep_options import sweep_options

pytestmark = pytest.mark.usefixtures("ray_instance")

TIMINGS = {"started_at", "finished_at", "timings", "latency_s", "queued_s", "retry_wait_s", "elapsed_s"}


@pytest.fixture
def workspace(tmp_path: Path):
    return lambda base_url: write_workspace(tmp_path / "ws", base_url=base_url, defaults=FAST_RETRY)


def records(path: Path) -> list[dict[str, Any]]:
    found, report = read_jsonl(path)
    assert not report.torn_tail and not report.bad_lines
    return found


def without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def results(out: Path) -> dict[str, dict[str, Any]]:
    """Every run and judgement of a sweep directory by key, timings left out."""
    return {r["key"]: without_timings(r) for name in ("runs.jsonl", "judgements.jsonl")
            for r in records(out / name)}


async def sweep(root: Path, out: Path, executor: RayExecutor | None = None, *, concurrency: int = 4):
    """The sweep's counters, and the calls the driver's own client made."""
    config, prompts, plan = plan_of(root, trials=2)
    async with Runner(config, out_dir=out, concurrency=concurrency, executor=executor) as runner:
        stats = await runner.run(MPCBenchSuite(plan, prompts))
        assert runner.client is not None
        return stats, sum(totals.calls for totals in runner.client.totals().values())


class TestSameResults:
    async def test_a_ray_sweep_writes_what_a_local_sweep_writes(self, workspace, tmp_path):
        """Two workers and a local runner, same seeded sim and plan: the same keys and the same records (scores,
        checks, answers, judgements) but timings, and the same calls, all made on the workers; the driver wrote every
        call and counted it."""
        faults = FaultSpec(p503=0.1, latency_ms=1)
        async with SimServer(seed=21, defaults=faults) as sim:
            root = workspace(sim.base_url)
            local, _ = await sweep(root, tmp_path / "local")
            local_calls = dict(sim.stats.completed)
            sim.reset()
            config, _, _ = plan_of(root)
            async with RayExecutor(config, workers=2) as executor:
                remote, driver_calls = await sweep(root, tmp_path / "ray", executor)
                in_flight = [worker.units for worker in executor.workers]
            ray_calls = dict(sim.stats.completed)
        assert 32 == len(results(tmp_path / "local"))
        assert results(tmp_path / "local") == results(tmp_path / "ray")
        assert local_calls == ray_calls
        calls = Counter(c["key"] for c in records(tmp_path / "ray" / "calls.jsonl") if c["status"] == "ok")
        assert ray_calls == dict(calls)
        assert (local.calls, local.runs_done, local.judges_done, local.retries) == (
            remote.calls, remote.runs_done, remote.judges_done, remote.retries)
        assert 0 < remote.retries
        assert 0 == driver_calls  # every call was made on the workers
        assert [set(), set()] == in_flight

    async def test_a_resumed_unit_runs_on_a_worker_as_its_later_try(self, tmp_path):
        """The embedded sim (a new server in every invocation, on the driver and on each worker) fails half the agent
        requests with 500 and a call has 2 attempts, so the first (local) invocation leaves errors. The resumed units
        draw the faults of their later try on Ray workers exactly as locally: the same records either way, and some
        unit that failed then ends ok."""
        retry = {**FAST_RETRY, "retry": {**FAST_RETRY["retry"], "max_attempts": 2}}
        root = write_workspace(tmp_path / "ws", agent_models=("sim/echo?p500=0.5",), judge_models=("sim/judge",),
                               defaults=retry)
        config, _, _ = plan_of(root)
        seen = []
        for name in ("local", "ray"):
            out = tmp_path / name
            await sweep(root, out)
            if name == "local":
                await sweep(root, out)
            else:
                async with RayExecutor(config, workers=2) as executor:
                    await sweep(root, out, executor)
            seen.append(sorted(Counter((r["key"], r["status"]) for r in records(out / "runs.jsonl")).items()))
        assert seen[0] == seen[1]
        assert any(status == "ok" and ((key, "error"), 1) in seen[0] for (key, status), _ in seen[0]), seen

@asynccontextmanager
async def two_workers(workspace, seed: int, on_complete):
    """A seeded sim (2 ms replies, ``on_complete`` on each completed call) and 2 Ray workers: the workspace's root,
    config and the executor."""
    async with SimServer(seed=seed, on_complete=on_complete, defaults=FaultSpec(latency_ms=2)) as sim:
        root = workspace(sim.base_url)
        config, _, _ = plan_of(root)
        async with RayExecutor(config, workers=2) as executor:
            yield root, config, executor


def at_call(n: int, act) -> tuple[Any, list[RayExecutor]]:
    """A sim ``on_complete`` that calls ``act(executor)`` when the ``n``th call completes, and the list to put that
    executor in once it is started."""
    completed: list[str] = []
    executors: list[RayExecutor] = []

    def on_complete(key: str) -> None:
        completed.append(key)
        if len(completed) == n:
            act(executors[0])

    return on_complete, executors


def unit_of(call_key: str) -> str:
    """The unit a call belongs to: its key's first part (``<unit>/turn2``, ``<unit>/try1``)."""
    return call_key.split("/")[0]


class TestWorkerKilled:
    async def test_a_killed_workers_units_run_again_once_on_the_others(self, workspace, tmp_path):
        """SIGKILL the worker running the unit of the 10th completed call (before that reply reaches it): the sweep
        finishes with one ok record per unit; the units it had not finished ran again, once each (that one among
        them; one whose reply had already left the worker did not); every other unit's calls were made once; no
        call of a unit recorded before the kill was made again."""
        out = tmp_path / "out"
        completed: Counter[str] = Counter()
        executors: list[RayExecutor] = []
        kill: dict[str, Any] = {}

        def on_complete(key: str) -> None:
            completed[key] += 1
            if kill or sum(completed.values()) < 10:
                return
            victim = next(worker for worker in executors[0].workers if unit_of(key) in worker.units)
            kill.update(key=key, worker=victim, completed=Counter(completed),
                        on_disk={r["key"] for name in ("runs.jsonl", "judgements.jsonl") for r in records(out / name)})
            os.kill(victim.pid, signal.SIGKILL)

        async with two_workers(workspace, 22, on_complete) as (root, _, executor):
            executors.append(executor)
            await sweep(root, out, executor)
            alive = [worker.alive for worker in executor.workers]
        runs, judgements = records(out / "runs.jsonl"), records(out / "judgements.jsonl")
        assert (16, {"ok"}) == (len(runs), {r["status"] for r in runs})
        assert (16, {"ok"}) == (len(judgements), {r["status"] for r in judgements})
        assert 32 == len({r["key"] for r in runs + judgements})
        assert [kill["worker"].index != i for i in range(2)] == alive
        # Rerun: units it had not finished (and any sent to it before its death was noticed), each exactly once.
        assert unit_of(kill["key"]) in executor.rerun and {1} == set(executor.rerun.values())
        assert 2 == completed[kill["key"]]  # made by the dead worker, whose reply never came, then once in the rerun
        assert 1 == max(completed[k] for k in completed if unit_of(k) not in executor.rerun)
        assert [] == [k for k in completed if completed[k] > kill["completed"][k] and unit_of(k) in kill["on_disk"]]

    async def test_every_worker_killed_stops_the_sweep_saying_so(self, workspace, tmp_path):
        """With no worker left the sweep stops with WorkersLost; what finished is on disk, nothing else is."""
        out = tmp_path / "out"
        on_complete, executors = at_call(6, lambda executor: [os.kill(worker.pid, signal.SIGKILL)
                                                              for worker in executor.workers])
        async with two_workers(workspace, 23, on_complete) as (root, _, executor):
            executors.append(executor)
            with pytest.raises(WorkersLost) as raised:
                await sweep(root, out, executor)
        assert str(raised.value) == ("every Ray worker died (2 started); the finished units are saved: rerun the same "
                                     "command to resume")
        runs = records(out / "runs.jsonl")
        assert {"ok"} == {r["status"] for r in runs + records(out / "judgements.jsonl")}
        assert len(runs) < 16

    async def test_the_limiter_actor_killed_stops_the_sweep_with_nothing_lost(self, tmp_path, ray_instance):
        """The limiter actor killed after the 6th completed call: the sweep stops with WorkersLost, saying why; only
        ok records are on disk (no unit is left recorded as a failure a resume would skip), and a rerun with a new
        executor finishes every unit, each ok once."""
        out = tmp_path / "out"
        on_complete, executors = at_call(6, lambda executor: ray_instance.kill(executor.limiter, no_restart=True))
        # An rpm far above what runs makes every call take its credit from the actor (without one, a worker runs on
        # the slots it leased until their TTL, and a fast sweep could end before it asks again).
        paced = {**FAST_RETRY, "limits": {"rpm": 1_000_000}}
        ws = lambda base_url: write_workspace(tmp_path / "ws", base_url=base_url, defaults=paced)  # noqa: E731
        async with two_workers(ws, 22, on_complete) as (root, config, executor):
            executors.append(executor)
            with pytest.raises(WorkersLost) as raised:
                await sweep(root, out, executor)
            await executor.aclose()
            assert {"ok"} == {r["status"] for r in records(out / "runs.jsonl") + records(out / "judgements.jsonl")}
            assert len(records(out / "runs.jsonl")) < 16
            async with RayExecutor(config, workers=2) as executor:
                await sweep(root, out, executor)
        assert "no lease for model" in str(raised.value) and "ActorDiedError" in str(raised.value)
        assert str(raised.value).endswith("the finished units are saved: rerun the same command to resume")
        runs, judgements = records(out / "runs.jsonl"), records(out / "judgements.jsonl")
        assert (16, 16, {"ok"}) == (len({r["key"] for r in runs}), len(runs), {r["status"] for r in runs})
        assert (16, {"ok"}) == (len(judgements), {r["status"] for r in judgements})


class TestCancel:
    async def test_an_abandoned_sweep_cancels_its_units_on_the_workers(self, workspace, tmp_path):
        """Leaving the sweep's block with every run held at the sim cancels those units on their workers (their
        requests are dropped: the sim's held handlers are cancelled), which stay alive; nothing is written."""
        held, dropped = [], []
        all_held, all_dropped = anyio.Event(), anyio.Event()
        release = anyio.Event()  # never set: only a cancelled unit ends its request

        async def gate(key: str) -> None:
            held.append(key)
            if len(held) == 4:
                all_held.set()
            try:
                await release.wait()
            except anyio.get_cancelled_exc_class():
                dropped.append(key)
                if len(dropped) == 4:
                    all_dropped.set()
                raise

        async with SimServer(seed=25, gate=gate) as sim:
            root = workspace(sim.base_url)
            config, prompts, plan = plan_of(root, trials=2)
            async with RayExecutor(config, workers=2) as executor:
                async with Runner(config, out_dir=tmp_path / "out", concurrency=4,
                                  executor=executor) as runner:
                    async with runner.stream(MPCBenchSuite(plan, prompts)):
                        await all_held.wait()
                    with anyio.fail_after(30):
                        await all_dropped.wait()
                    alive = [worker.alive for worker in executor.workers]
        assert sorted(held) == sorted(dropped) and 4 == len(held)
        assert {} == sim.stats.completed
        assert [True, True] == alive
        assert [] == records(tmp_path / "out" / "runs.jsonl")


class TestModels:
    async def test_a_key_missing_on_the_workers_fails_before_any_unit(self, tmp_path, monkeypatch):
        """The workers resolve the models themselves: a key only the driver has is the usual one-line error."""
        from mpcbench_async import MissingAPIKeyError
        from mpcbench_async.llm import load_model_config

        path = tmp_path / "model_config.json"
        path.write_text('{"models": {"gpt-x": {"api_key_env": "MPCB_RAY_TEST_KEY"}}}')
        config = load_model_config(path)
        monkeypatch.setenv("MPCB_RAY_TEST_KEY", "sk-driver-only")  # set after the workers' node started
        async with RayExecutor(config, workers=1) as executor:
            with pytest.raises(MissingAPIKeyError) as raised:
                await executor.check_models(["gpt-x"])
        assert str(raised.value).startswith("model 'gpt-x' needs an API key: set the environment variable "
                                            "MPCB_RAY_TEST_KEY")

    async def test_a_key_missing_on_the_workers_stops_runner_run_before_any_unit(self, workspace, tmp_path,
                                                                                monkeypatch):
        """``Runner.run(suite)`` (the library's path, not the CLI's) checks the models on the workers too: the
        error is raised, no unit ran, nothing is recorded as a failure a resume would skip."""
        import json

        from mpcbench_async import MissingAPIKeyError

        async with SimServer(seed=27) as sim:
            root = workspace(sim.base_url)
            path = root / "model_config.json"
            models = {"gpt-agent": {"model": "sim/lazy-agent", "base_url": sim.base_url,
                                    "api_key_env": "MPCB_RAY_TEST_KEY"},
                      "gpt-judge": {"model": "sim/judge", "base_url": sim.base_url,
                                    "api_key_env": "MPCB_RAY_TEST_KEY"}}
            path.write_text(json.dumps({**json.loads(path.read_text()), "models": models,
                                        "agent_models": ["gpt-agent"], "judge_models": ["gpt-judge"]}))
            monkeypatch.setenv("MPCB_RAY_TEST_KEY", "sk-driver-only")  # set after the workers' node started
            config, _, _ = plan_of(root)
            async with RayExecutor(config, workers=1) as executor:
                with pytest.raises(MissingAPIKeyError, match="^model 'gpt-agent' needs an API key"):
                    await sweep(root, tmp_path / "out", executor)
            assert {} == sim.stats.received
        assert [] == records(tmp_path / "out" / "runs.jsonl")


class Unportable(Exception):
    """An exception whose arguments do not survive pickling (its one stored argument is not its two)."""

    def __init__(self, first: str, second: str) -> None:
        super().__init__(first + second)


class FailingStage:
    """A stage whose units make one call, then raise (``Unportable`` when ``portable`` is false)."""

    name, record_type = "failing", JudgeRecord

    def __init__(self, *, portable: bool) -> None:
        self.portable = portable

    async def run(self, unit: str, client: Any) -> JudgeRecord:
        await client.chat("sim/echo", [Message(role="user", content="hi")], key=f"{unit}/c0")
        raise ValueError("no such field") if self.portable else Unportable("a", "b")


class TestUnitErrors:
    async def test_a_unit_that_raises_sends_back_its_exception_and_its_calls(self, workspace):
        """The exception a unit raised on its worker reaches the driver as itself (or, if it cannot travel, as a
        BenchError naming it), with the calls the unit made before it."""
        async with SimServer(seed=26) as sim:
            config, _, _ = plan_of(workspace(sim.base_url))
            async with RayExecutor(config, workers=1) as executor:
                raised = await executor.run(FailingStage(portable=True), "u1", "u1")
                unportable = await executor.run(FailingStage(portable=False), "u2", "u2")
        assert (None, ValueError, "no such field") == (raised.record, type(raised.error), str(raised.error))
        assert ["u1/c0"] == [call.key for call in raised.calls]
        assert (BenchError, "Unportable: ab") == (type(unportable.error), str(unportable.error))
        assert ["u2/c0"] == [call.key for call in unportable.calls]


class TestLevelsSuite:
    async def test_a_ray_levels_sweep_writes_what_a_local_one_writes(self, workspace, tmp_path):
        """The three-level MPCBench suite on two Ray workers: the same keys and records (traces, preds, metrics) as
        on the driver alone, every instance solved by the oracle agent, the same calls made (counted at the sim)."""
        from mpcbench_async._prompts import load_prompts
        from mpcbench_async.levels import LevelsSuite, generate_level, load_level_set, write_generated
        from tests.conftest import REPO

        generated = generate_level(3, 6, seed=5)
        write_generated(generated, tmp_path / "levels")
        sets = [load_level_set(tmp_path / "levels", 3, generated.split)]
        prompts = load_prompts(REPO / "prompt_config.json")
        async with SimServer(seed=23, defaults=FaultSpec(p503=0.1)) as sim:
            root = workspace(sim.base_url)
            config, _, _ = plan_of(root)
            calls = []
            for name, executor in (("local", None), ("ray", RayExecutor(config, workers=2))):
                suite = LevelsSuite(sets, ["sim/oracle-agent"], prompts=prompts, config=config, trials=2)
                async with executor or _nothing(), Runner(config, out_dir=tmp_path / name,
                                                          concurrency=4, executor=executor) as runner:
                    await runner.run_suites([suite])
                calls.append(dict(sim.stats.completed))
                sim.reset()
        local, remote = ({r["key"]: without_timings(r) for r in records(tmp_path / name / "levels.jsonl")}
                         for name in ("local", "ray"))
        assert 12 == len(local)
        assert local == remote
        assert all(r["metrics"]["exact_match"] for r in local.values())
        assert calls[0] == calls[1]


class TestWallTime:
    async def test_a_ray_sweeps_wall_time_counts_the_workers_start(self, workspace, tmp_path, monkeypatch):
        """``run_sweep(executor="ray")``: the invocation's span in the manifest starts before the executor starts
        its workers and ends after the last unit, and the summary's wall time is that span (a 27 s Ray sweep said
        "wall time 3.1 s": its start was stamped once Ray was up)."""
        import orjson

        from mpcbench_async.sweep import run_sweep

        starts: list[datetime] = []
        start = RayExecutor.__aenter__

        async def stamped(executor: RayExecutor) -> RayExecutor:
            starts.append(datetime.now(UTC))
            return await start(executor)

        monkeypatch.setattr(RayExecutor, "__aenter__", stamped)
        out = tmp_path / "out"
        async with SimServer(seed=22) as sim:
            root = workspace(sim.base_url)
            await run_sweep(sweep_options(config=root / "model_config.json", prompts=root / "prompt_config.json",
                                         out=out, tasks_dir=root / "tasks", data_dir=root / "data",
                                         scenarios_dir=root / "scenarios", handle_signals=False, certificate=False,
                                         executor="ray", workers=1))
        [span] = orjson.loads((out / "manifest.json").read_bytes())["history"]
        began, ended = (datetime.fromisoformat(span[k]) for k in ("started_at", "finished_at"))
        last_unit = max(datetime.fromtimestamp(r["finished_at"], UTC) for name in ("runs.jsonl", "judgements.jsonl")
                        for r in records(out / name))
        wall_s = orjson.loads((out / "summary.json").read_bytes())["wall_s"]
        assert (1, True, True) == (len(starts), began <= starts[0], last_unit <= ended)
        assert round((ended - began).total_seconds(), 3) == wall_s


@asynccontextmanager
async def _nothing():
    yield None
