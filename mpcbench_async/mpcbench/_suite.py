"""MPCBench as a staged suite: agent runs (``runs.jsonl``) feeding their judges (``judgements.jsonl``).

Every task × agent model × trial of a ``SweepPlan`` is an ``AgentUnit``; a run
that ends ``ok`` asks for one ``JudgeJob`` per judge model (the ``JudgeUnit``
with the run it judges), which the ``Runner`` starts as soon as the run is
written. A run that ends in an error is never judged. Both stages understand
their own failures: a run whose checks crash keeps its run log in the error
record, and a judge that never complies is an ``UnparsableJudgement`` error.

The suite registers as ``mpcbench`` (``runner.register_suite``) at import: its
factory builds the plan from the request's choice, limits and ``MPCBenchInputs``.
"""

from __future__ import annotations

import logging
import time
import weakref
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import msgspec
import numpy as np

from .._prompts import PromptConfig
from ..llm import BudgetExceeded, LLMClient, cache_scope
from ..runner import Outcome, SuiteRequest, register_suite
from ..runtime import Memo, UnitFailure, done_keys, log_unit_error, sorted_unique, unit_failure
from ._agent import run_agent
from ._checks import CheckResult, run_checks
from ._judge import build_judge_input, judge_messages, run_judge
from ._plan import AgentUnit, JudgeUnit, SweepPlan, build_plan
from ._provenance import SIM_JUDGE, checks_version, messages_digest, sim_judge_version
from ._records import AgentRunRecord, JudgeRecord
from .tools._threads import ToolThreads, inline_or_thread

__all__ = ["AgentStage", "JudgeJob", "JudgeStage", "MPCBenchInputs", "MPCBenchSuite", "mpcbench_suites", "plan_outcome"]

log = logging.getLogger(__name__)
CHECK_THREADS = 4
"""Threads the agent stage reads finished runs' answers in when an answer takes longer than the inline budget."""
CHECKED_ENTRIES = 1024
"""Answers whose checks the agent stage keeps for a repeat of the same answer to the same task (see ``run``)."""
CHECKED_BYTES = 8 * 1024 * 1024
"""Their bound in bytes (the answers and the checks' details, as ``_checked_size`` counts them)."""


class JudgeJob(NamedTuple):
    """One judge unit with the finished run it judges."""

    unit: JudgeUnit
    run: AgentRunRecord

    @property
    def key(self) -> str:
        return self.unit.key

    @property
    def model(self) -> str:
        return self.unit.judge_model


def _failed(record: AgentRunRecord | JudgeRecord, failure: UnitFailure) -> None:
    record.error_class, record.error_message = failure.error_class, failure.message
    record.finished_at = time.time()


class AgentStage:
    """Agent runs: the unit's record is an error until the run finishes, then what the run and its checks say."""

    name, record_type = "runs", AgentRunRecord

    clock: Callable[[], float] = time.perf_counter
    """What the checks' inline budget is measured on (tests give a clock that advances per checkpoint)."""

    def __init__(self, plan: SweepPlan, prompts: PromptConfig) -> None:
        self.plan, self.prompts = plan, prompts
        self._checks = ToolThreads(CHECK_THREADS, name="mpcbench-checks")
        self._checked: Memo[tuple[str, str], tuple[CheckResult, ...]] = Memo(max_entries=CHECKED_ENTRIES,
                                                                              max_bytes=CHECKED_BYTES)
        weakref.finalize(self, self._checks.close)  # the threads end with the stage

    async def run(self, unit: AgentUnit, client: LLMClient) -> AgentRunRecord:
        plan = self.plan
        record = self._record(unit)
        try:
            task = plan.tasks[unit.task_id]
            data = plan.data[task.scenario_id]
            record.task_type, record.scenario_id = task.task_type or "", task.scenario_id
            # A wave member until its checks are done (``--batch agent``: its model's batches wait for it), so
            # that the pool's next unit takes its place in the waves at once.
            with cache_scope(trial=unit.trial), client.wave_member(unit.model):
                run = record.run = await run_agent(client, unit.model, task, data, self.prompts,
                                                   max_turns=plan.max_turns, key=unit.key)
                # Reading a normal answer against the data takes a fraction of a millisecond, and handing it to a
                # thread cost a thread's wake-up besides: on the event loop under a 2 ms budget (the checks reach a
                # checkpoint in every loop the answer makes long), else, from its start, in a thread: heavy work
                # still leaves the loop (DESIGN.md §9; issue 31).
                checks = await self._read(unit.task_id, run.final_answer, lambda: run_checks(
                    task, run.final_answer, data)) if run.stop_reason != "error" else []
        except BudgetExceeded:
            raise  # the unit did not run: the runner stops the sweep and writes no record for it
        except Exception as exc:  # the run log made so far stays in the error record
            _failed(record, unit_failure(log, exc, kind="agent_run", key=unit.key, model=unit.model))
            return record
        record.status = "error" if run.stop_reason == "error" else "ok"
        record.retryable, record.checks = run.retryable, checks
        record.checks_version = checks_version() if run.stop_reason != "error" else ""
        record.error_class, record.error_message = run.error_class, run.error
        record.finished_at = time.time()
        if record.status == "error":
            log_unit_error(log, kind="agent_run", key=unit.key, model=unit.model, error_class=record.error_class,
                           message=record.error_message)
        return record

    async def _read(self, task_id: str, answer: str, checks: Callable[[], list[CheckResult]]) -> list[CheckResult]:
        """The checks of ``answer`` to the task: kept from an earlier run that gave the same answer (the checks are
        a pure function of the task, the plan's data and the answer: trials at temperature 0 and the sim's oracle
        repeat answers), else ``checks()`` as above."""
        key = (task_id, answer)
        kept = self._checked.get(key)
        if kept is None:
            found = await inline_or_thread(self._checks, checks, clock=self.clock)
            self._checked.put(key, tuple(found), _checked_size(answer, found))
            return found
        return list(kept)

    def failed(self, unit: AgentUnit, failure: UnitFailure) -> AgentRunRecord:
        record = self._record(unit)
        _failed(record, failure)
        return record

    @staticmethod
    def _record(unit: AgentUnit) -> AgentRunRecord:
        return AgentRunRecord(key=unit.key, status="error", task_id=unit.task_id, task_type="", scenario_id="",
                              model=unit.model, trial=unit.trial, started_at=time.time())


def _checked_size(answer: str, checks: list[CheckResult]) -> int:
    """Bytes a kept reading holds, roughly: the answer and each check's name and detail, with their objects."""
    return len(answer) + sum(len(c.name) + len(c.detail) + 120 for c in checks) + 256


class JudgeStage:
    """Judgements: the unit's record is an error until the judge gives scores (or is the ``sim`` rubric's)."""

    name, record_type = "judgements", JudgeRecord

    def __init__(self, plan: SweepPlan, prompts: PromptConfig, *, attempts: int) -> None:
        self.plan, self.prompts, self.attempts = plan, prompts, attempts

    async def run(self, job: JudgeJob, client: LLMClient) -> JudgeRecord:
        unit, run_record = job
        record = self._record(job)
        try:
            task = self.plan.tasks[run_record.task_id]
            assert run_record.run is not None, "an ok run record without its run log"
            judge_input = build_judge_input(run_record.run, task)
            messages = judge_messages(judge_input, self.prompts)  # rendered once: the digest and the judge's
            record.input_digest = messages_digest(messages)  # judge_input_digest: what verify --rejudge rebuilds
            if unit.judge_model == SIM_JUDGE:  # a pure rubric: verify --rejudge scores it again
                record.rubric_version = sim_judge_version()
            with cache_scope(trial=run_record.trial):  # a response cache keeps each trial's replies apart
                judgement = await run_judge(client, unit.judge_model, judge_input,
                                            self.prompts, agent_model=run_record.model,
                                            scenario_id=task.scenario_id, max_attempts=self.attempts, key=unit.key,
                                            messages=messages)
        except BudgetExceeded:
            raise  # the unit did not run: the runner stops the sweep and writes no record for it
        except Exception as exc:  # the unit fails alone; cancellation is not an Exception and passes
            _failed(record, unit_failure(log, exc, kind="judge", key=unit.key, model=unit.judge_model))
            return record
        record.judgement, record.finished_at = judgement, time.time()
        if judgement.error_class is not None:  # a failed call, or no parsable judgement in every try
            log_unit_error(log, kind="judge", key=unit.key, model=unit.judge_model,
                           error_class=judgement.error_class, message=judgement.error)
            record.retryable = judgement.retryable
            record.error_class, record.error_message = judgement.error_class, judgement.error
        else:
            record.status = "ok"
        return record

    def failed(self, job: JudgeJob, failure: UnitFailure) -> JudgeRecord:
        record = self._record(job)
        _failed(record, failure)
        return record

    @staticmethod
    def _record(job: JudgeJob) -> JudgeRecord:
        unit, run = job
        return JudgeRecord(key=unit.key, run_key=unit.run_key, status="error", task_id=run.task_id,
                           task_type=run.task_type, agent_model=run.model, judge_model=unit.judge_model,
                           trial=run.trial, started_at=time.time())


class MPCBenchSuite:
    """The agent runs of ``plan`` and their judgements, for ``Runner.run_suites`` (see the module docstring)."""

    remote = True  # its units run on the runner's executor (Ray workers) when it has one

    def __init__(self, plan: SweepPlan, prompts: PromptConfig, *, judge_attempts: int = 3) -> None:
        self.plan, self.judge_attempts = plan, judge_attempts
        self.models = [*plan.agent_models, *plan.judge_models]
        self.stages = (AgentStage(plan, prompts), JudgeStage(plan, prompts, attempts=judge_attempts))

    def units(self) -> Iterator[AgentUnit]:
        return self.plan.agent_units()

    def follow_up_keys(self, stage: int, key: str) -> list[str]:
        return self.plan.judge_keys(key)

    def follow_ups(self, stage: int, record: AgentRunRecord) -> list[JudgeJob]:
        return [JudgeJob(unit, record) for unit in self.plan.judge_units(record.key)]

    async def prepare(self) -> None:
        """Nothing to warm: the plan has read and checked every task and its data."""

    def finish(self, out_dir: Path) -> Outcome:
        """The plan's runs and judgements as they stand on disk (whatever earlier runs did)."""
        return plan_outcome(out_dir, self.plan)


def plan_outcome(out_dir: str | Path, plan: SweepPlan) -> Outcome:
    """The agent runs and judgements of ``plan`` as they stand in ``out_dir`` (``runner.Outcome``).

    Each file's keys are read one file at a time and kept as sorted 8-byte numbers, the plan's as numbers too:
    sets of key strings for both files (the code before) were ~460 bytes a unit, the largest step of a 100k-unit
    sweep's memory, at its very end; now one file's read (its ``runtime.Entries``) is the most held at once."""
    runs_ok, runs = _numbered_keys(Path(out_dir) / "runs.jsonl", AgentRunRecord, "run-")
    judges_ok, judges = _numbered_keys(Path(out_dir) / "judgements.jsonl", JudgeRecord, "judge-")
    agent_keys, judge_keys = array("Q"), array("Q")
    for unit in plan.agent_units():
        agent_keys.append(int(unit.key[4:], 16))
        judge_keys.extend(int(key[6:], 16) for key in plan.judge_keys(unit.key))
    outcome = Outcome()
    for keys, ok, recorded in ((agent_keys, runs_ok, runs), (judge_keys, judges_ok, judges)):
        values = np.frombuffer(keys, dtype=np.uint64)
        is_ok, has = _within(values, ok), _within(values, recorded)
        outcome.units += len(values)
        outcome.ok += int(is_ok.sum())
        outcome.failed += int((has & ~is_ok).sum())
        outcome.not_run += int((~has).sum())
    return outcome


def _within(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Which of ``values`` are in ``keys`` (sorted, unique): ``np.isin``'s answer by bisection, with a third of its
    temporaries (it sorts both arrays together: ~40 bytes a value, the peak of a 100k-unit no-op resume)."""
    if not len(keys):
        return np.zeros(len(values), dtype=bool)
    position = np.searchsorted(keys, values)
    position[position == len(keys)] = 0
    return keys[position] == values


def _numbered_keys(path: Path, record_type: type[msgspec.Struct], prefix: str) -> tuple[np.ndarray, np.ndarray]:
    """The keys of ``path`` with an ok record, and those with any, as sorted numbers (``prefix`` + 16 lowercase hex
    digits, the shape of the plan's keys; a key of another shape is no plan key and is left out). The read's columns
    hold such keys as numbers already (``runtime.Entries``)."""
    entries = done_keys(path, record_type, warn=False)
    if prefix not in entries.prefixes:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.uint64)
    rows = np.frombuffer(entries.kinds, dtype=np.uint8) == entries.prefixes.index(prefix)
    values = np.frombuffer(entries.values, dtype=np.uint64)
    ok = rows & (np.frombuffer(entries.codes, dtype=np.uint8) == ord("o"))
    return sorted_unique(values[ok]), sorted_unique(values[rows])


class MPCBenchInputs(msgspec.Struct, kw_only=True, frozen=True):
    """Where MPCBench's suite reads its tasks and data (relative paths the working directory lacks are the shipped
    copy's); ``scenario_id`` is the scenario of tasks that name none (original MPCBench files)."""

    tasks_dir: Path = Path("tasks")
    data_dir: Path = Path("data")
    scenarios_dir: Path = Path("scenarios")
    scenario_id: str | None = None


def mpcbench_suites(request: SuiteRequest) -> list[MPCBenchSuite]:
    """The MPCBench suite of a sweep: its plan of tasks × agent models × trials, and their judges."""
    run, inputs = request.run, request.settings(MPCBenchInputs)
    plan = build_plan(config=request.config, prompts=request.prompts, tasks_dir=inputs.tasks_dir,
                      data_dir=inputs.data_dir, scenarios_dir=inputs.scenarios_dir, task_glob=run.tasks,
                      agent_models=run.models, judge_models=run.judges, trials=run.trials,
                      max_turns=request.limits.max_turns, scenario_id=inputs.scenario_id)
    return [MPCBenchSuite(plan, request.prompts)]


register_suite("mpcbench", mpcbench_suites)
