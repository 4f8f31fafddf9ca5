"""Units are isolated from each other's tool calls (issue 25), shown on real sweeps of the shipped tasks.

A chaos policy (``sim/chaos-agent``, registered here) answers every task at once except ``sc01_planning``,
where its first reply makes ten parallel free-slot searches over two thousand years of every attendee. The
tool pool's clock (``StepClock``) moves only at the tools' checkpoints, and in the chaos sweep it is held
still until every other unit's agent run has finished while two of the chaos calls are running: the chaos
unit holds its whole share through the neighbours' runs, and whether any call times out is decided by the
code, not by the machine's speed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from mpcbench_async import ToolWorkerTimeout
from mpcbench_async.llm import load_model_config
from mpcbench_async.mpcbench import MPCBenchSuite, build_plan, load_prompts
from mpcbench_async.mpcbench import _suite as mpcbench_suite
from mpcbench_async.mpcbench.tools import ToolBackend, ToolPool, ToolShare, _execution
from mpcbench_async.mpcbench.tools._calendar import attendee_emails
from mpcbench_async.runner import Runner
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import _registry
from mpcbench_async.sim._policies import Reply
from mpcbench_async.sweep import summarize
from tests.conftest import REPO
from tests.mpcbench.test_tool_execution import StepClock

ORACLE, CHAOS = "sim/oracle-agent", "sim/chaos-agent"
TASKS = "sc0[1-4]*"  # 10 shipped tasks: planning, e-mail replies and weekly reports over four scenarios
CHAOS_TASK, START = "sc01_planning", "0001-01-01"
STEP = 0.005  # the pool's 30 s limit is 6,000 checkpoints of a call's own; a normal call passes a few hundred


def chaos_search() -> dict[str, Any]:
    calendar = orjson.loads((REPO / "data" / "sc01_berth_appointments_calendar.json").read_bytes())
    emails = sorted({e for event in calendar["events"] for e in attendee_emails(event)})
    return {"email_addresses": emails, "start_date": START, "end_date": "2025-01-01", "include_weekends": True}


@pytest.fixture
def chaos_policy() -> Iterator[dict[str, Any]]:
    """``sim/chaos-agent`` while the test runs; yields the arguments of its pathological calls."""
    arguments = chaos_search()

    def chaos(request: dict[str, Any]) -> Reply:
        prompt = " ".join(str(m.get("content") or "") for m in request["messages"] if m.get("role") == "user")
        first = not any(m.get("role") == "assistant" for m in request["messages"])
        if first and "Jiwoo" in prompt and "time slots" in prompt:  # sc01_planning's prompt
            return Reply(tool_calls=[{"name": "GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
                                      "arguments": orjson.dumps(arguments).decode()} for _ in range(10)])
        return Reply(content='{"final_answer": "no idea", "rationale": "chaos"}')

    _registry.register_policy("chaos-agent")(chaos)
    yield arguments
    _registry.POLICIES.pop(CHAOS, None)
    _registry._SERVING.clear()


class ChaosGate:
    """Holds the pool's clock still until every oracle run has finished and two chaos calls are running."""

    def __init__(self, oracle_runs: int) -> None:
        self.open = threading.Event()
        self.steps = StepClock(STEP)
        self._lock = threading.Lock()
        self._runs_left = oracle_runs
        self.running = self.entered = self.exited = 0
        self.running_at_open: int | None = None

    def clock(self) -> float:
        return self.steps() if self.open.is_set() else 0.0

    def _maybe_open(self) -> None:
        if not self.open.is_set() and self._runs_left == 0 and self.running >= 2:
            self.running_at_open = self.running
            self.open.set()

    def oracle_run_done(self) -> None:
        with self._lock:
            self._runs_left -= 1
            self._maybe_open()

    def chaos_call(self, real: Any, backend: ToolBackend, args: Any) -> dict[str, Any]:
        with self._lock:
            self.entered += 1
            self.running += 1
            self._maybe_open()
        try:
            return real(backend, args)
        finally:
            with self._lock:
                self.running -= 1
                self.exited += 1


def plan_for(models: list[str]):
    config = load_model_config(REPO / "model_config.json")
    prompts = load_prompts(REPO / "prompt_config.json")
    plan = build_plan(config=config, prompts=prompts, tasks_dir=REPO / "tasks", data_dir=REPO / "data",
                      scenarios_dir=REPO / "scenarios", task_glob=TASKS, agent_models=models,
                      judge_models=["sim/judge"])
    return config, prompts, plan


async def sweep(out: Path, models: list[str]) -> None:
    """One sweep of ``models`` over TASKS, judged by sim/judge, on the embedded sim."""
    config, prompts, plan = plan_for(models)
    async with Runner(config, out_dir=out) as runner:
        await runner.run(MPCBenchSuite(plan, prompts))


def units(out: Path, model: str) -> dict[str, dict[str, Any]]:
    """Per run key of ``model``: everything about the unit that must not change (no timings, no usage)."""
    runs, _ = read_jsonl(out / "runs.jsonl")
    judgements, _ = read_jsonl(out / "judgements.jsonl")
    scores = {j["run_key"]: (j["status"], j["judgement"]["verdict"], j["judgement"]["scores"])
              for j in judgements}
    return {r["key"]: {"task": r["task_id"], "status": r["status"], "error_class": r["error_class"],
                       "retryable": r["retryable"], "checks": r["checks"],
                       "calls": [{k: c[k] for k in ("tool_name", "arguments", "result", "result_bytes", "truncated",
                                                    "timed_out")} for c in r["run"]["raw_tool_calls"]],
                       "answer": (r["run"]["final_answer"], r["run"]["stop_reason"], r["run"]["turns"]),
                       "judged": scores.get(r["key"])}
            for r in runs if r["model"] == model}


def model_row(out: Path, model: str) -> dict[str, Any]:
    """The summary row of ``model`` without its spend and latency (which depend on the machine)."""
    [row] = [m for m in summarize(out).models if m.model == model]
    data = msgspec.to_builtins(row)
    for key in ("kept", "spent", "latency_p50_s", "latency_p95_s"):
        data.pop(key)
    return data


class TestPathologicalNeighbour:
    async def test_a_unit_with_pathological_calls_changes_nothing_for_the_others(
            self, tmp_path, monkeypatch, chaos_policy):
        """With and without the chaos unit, every oracle unit has the same status, checks, tool calls and
        results, answer and judge scores, and the oracle's summary row is the same; the chaos unit held its
        two workers through all the oracle runs, its ten calls each ran past the limit and were stopped, the
        model was told so in each result (an ok run: the model's doing), and no call outlived the sweep."""
        monkeypatch.setattr(_execution, "_default_pool", ToolPool(4, per_unit=2, clock=StepClock(STEP)))
        await sweep(tmp_path / "alone", [ORACLE])

        oracle_runs = len(units(tmp_path / "alone", ORACLE))
        gate = ChaosGate(oracle_runs)
        monkeypatch.setattr(_execution, "_default_pool", ToolPool(4, per_unit=2, wait_s=30, clock=gate.clock))
        real_slots, real_run = ToolBackend.find_free_slots, mpcbench_suite.AgentStage.run

        def slots(backend, args):
            if args.start_date == START:
                return gate.chaos_call(real_slots, backend, args)
            return real_slots(backend, args)

        async def agent_run(stage, unit, client):
            record = await real_run(stage, unit, client)
            if unit.model == ORACLE:
                gate.oracle_run_done()
            return record

        monkeypatch.setattr(ToolBackend, "find_free_slots", slots)
        monkeypatch.setattr(mpcbench_suite.AgentStage, "run", agent_run)
        await sweep(tmp_path / "chaos", [ORACLE, CHAOS])

        alone, beside = units(tmp_path / "alone", ORACLE), units(tmp_path / "chaos", ORACLE)
        assert (10, alone) == (oracle_runs, beside)
        assert 0 == sum(c["timed_out"] for u in alone.values() for c in u["calls"])
        assert {"ok"} == {u["status"] for u in alone.values()}
        assert model_row(tmp_path / "alone", ORACLE) == model_row(tmp_path / "chaos", ORACLE)
        assert (2, 10, 10, 0) == (gate.running_at_open, gate.entered, gate.exited, gate.running)
        [chaos] = [u for u in units(tmp_path / "chaos", CHAOS).values() if u["task"] == CHAOS_TASK]
        stopped = {"error": "GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree took longer than 30 s and was stopped. "
                            "Narrow the query (a shorter date range, fewer people, a more specific search) and "
                            "try again"}
        assert ("ok", None, False) == (chaos["status"], chaos["error_class"], chaos["retryable"])
        assert [(chaos_policy, stopped, True)] * 10 == [(c["arguments"], c["result"], c["timed_out"])
                                                        for c in chaos["calls"]]


class StarvedShare(ToolShare):
    """A share whose calls never get a worker, as when every worker is held by other units."""

    async def run(self, fn, *, timeout_s=None, tool=""):
        raise ToolWorkerTimeout(f"{tool} waited 60 s for a tool worker and never ran", tool=tool, waited_s=60)


class StarvedPool(ToolPool):
    """Every call needs a worker (none runs inline first), and none gets one."""

    def __init__(self) -> None:
        super().__init__(inline_s=0)

    def share(self) -> ToolShare:
        return StarvedShare(self)


class TestStarvedUnits:
    async def test_no_worker_is_an_infrastructure_error_that_a_resume_runs_again(self, tmp_path, monkeypatch):
        """Runs whose tool calls found no worker are retryable ToolWorkerTimeout errors: never judged, counted as
        infrastructure errors and left out of pass^k; the same command once workers are free runs exactly them
        again, and the sweep then matches one that never starved."""
        monkeypatch.setattr(_execution, "_default_pool", ToolPool(clock=StepClock(STEP)))
        await sweep(tmp_path / "fine", [ORACLE])
        monkeypatch.setattr(_execution, "_default_pool", StarvedPool())
        await sweep(tmp_path / "starved", [ORACLE])

        starved = units(tmp_path / "starved", ORACLE)
        assert {("error", "ToolWorkerTimeout", True, None)} == {
            (u["status"], u["error_class"], u["retryable"], u["judged"]) for u in starved.values()}
        row = model_row(tmp_path / "starved", ORACLE)
        assert (10, 0, 10, 0, None) == (row["runs"], row["errors"], row["infra_errors"], row["tasks"],
                                        row["pass_at_k"])

        monkeypatch.setattr(_execution, "_default_pool", ToolPool(clock=StepClock(STEP)))
        await sweep(tmp_path / "starved", [ORACLE])
        assert units(tmp_path / "fine", ORACLE) == units(tmp_path / "starved", ORACLE)
        assert model_row(tmp_path / "fine", ORACLE) == model_row(tmp_path / "starved", ORACLE)


CHILD = """
import sys, orjson
from mpcbench_async.cli import main
from mpcbench_async.mpcbench.tools import ToolPool, _execution
from mpcbench_async.sim._policies import Reply
from mpcbench_async.sim._registry import register_policy

arguments = orjson.loads(sys.argv[2])

@register_policy("chaos-agent")
def chaos(request):
    if not any(m.get("role") == "assistant" for m in request["messages"]):
        return Reply(tool_calls=[{"name": "GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
                                  "arguments": orjson.dumps(arguments).decode()} for _ in range(10)])
    return Reply(content='{"final_answer": "no idea", "rationale": "chaos"}')

calls = {"entered": 0, "left": 0}  # tool calls in their worker thread: entered, and returned or raised
limited = _execution._limited

def counted(*args):
    calls["entered"] += 1
    try:
        return limited(*args)
    finally:
        calls["left"] += 1

_execution._limited = counted
_execution._default_pool = ToolPool(timeout_s=0.5)
code = main(["sweep", "--models", "sim/chaos-agent", "--judges", "sim/judge", "--tasks", "sc01_planning",
             "--out", sys.argv[1], "--quiet", "--config", "model_config.json", "--prompts", "prompt_config.json"])
print("SWEEP-RETURNED", code, calls["entered"] - calls["left"], flush=True)
"""


class TestExit:
    def test_no_tool_call_is_still_running_when_the_sweep_returns(self, tmp_path):
        """A one-unit sweep whose ten tool calls each run past their limit (0.5 s here; the search alone would
        take about 15 s of CPU): when ``main`` returns, its summary written, every tool call has left its worker
        thread (counted in the child: 0 still running), so no tool thread outlives its call and nothing holds up
        the exit; the process exits 0. How soon it exits after the summary (issue 25's bound: within 2 s) is a
        timing, measured by bench/tool_isolation.py and bench/chaos.py (the ``tools`` round), not asserted here."""
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "out"),
                                  orjson.dumps(chaos_search()).decode()],
                                 cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                 env=dict(os.environ, PYTHONUNBUFFERED="1"))
        assert child.stdout is not None
        returned = [line.split()[1:] for line in child.stdout if line.startswith("SWEEP-RETURNED")]
        assert 0 == child.wait()
        assert ([["0", "0"]], True) == (returned, (tmp_path / "out" / "summary.json").exists())
        [run] = read_jsonl(tmp_path / "out" / "runs.jsonl")[0]
        assert [True] * 10 == [c["timed_out"] for c in run["run"]["raw_tool_calls"]]
