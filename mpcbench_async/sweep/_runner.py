"""The sweep runner: agent runs and their judgements, pipelined, resumable, signal-safe.

Every agent run that finishes is written to ``runs.jsonl`` and immediately
yields one judge unit per judge model to the judge pool, so judging overlaps
the remaining runs (no phase barrier). Both pools share one ``LLMClient``, so
each model's limiter caps its concurrency, RPM and TPM across runs and judges.

Resume: units whose key already has an ``ok`` record (or a non-retryable
``error`` unless ``retry_errors``) are skipped; runs that are done but lack a
judge's verdict get judged from the stored run. A record is appended only
when its unit has fully finished, so SIGKILL at any moment loses at most the
units in flight and duplicates nothing. The output directory is locked
(``DIR/.lock``, see ``runtime.DirLock``) while the runner is open, so a second
sweep on it fails at once instead of running and paying for every unit again.

Library use::

    async with Runner(config, out_dir="reports/sweeps/x") as runner:
        async for record in runner.sweep(plan):
            print(record.kind, record.key, record.status)
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from .._exceptions import BenchError
from ..llm import LLMClient, ModelConfig
from ..mpcbench import PromptConfig, build_judge_input, run_agent, run_checks, run_judge
from ..records import LLMCallRecord
from ..runtime import DirLock, JsonlWriter, ResumeIndex, WorkerPool, iter_jsonl, stop_on_signals
from ._plan import AgentUnit, JudgeUnit, SweepPlan
from ._records import AgentRunRecord, JudgeRecord

__all__ = ["Runner", "SweepStats"]

Record = AgentRunRecord | JudgeRecord


class SweepStats(msgspec.Struct, kw_only=True):
    """Live counters for progress display (read from another task; plain ints, no locks needed)."""

    runs_total: int = 0
    runs_done: int = 0
    runs_skipped: int = 0
    judges_total: int = 0
    judges_done: int = 0
    judges_skipped: int = 0
    errors: int = 0
    unscored: int = 0
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    started: float = 0.0
    in_flight: int = 0
    retries: int = 0
    interrupted: bool = False


class Runner:
    """Runs sweep plans into one output directory (``runs.jsonl``, ``judgements.jsonl``, ``calls.jsonl``)."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        prompts: PromptConfig,
        out_dir: str | Path,
        concurrency: int = 32,
        retry_errors: bool = False,
        judge_attempts: int = 3,
        handle_signals: bool = False,
        grace_period: float = 30.0,
        fsync: bool = False,
    ) -> None:
        self.config = config
        self.prompts = prompts
        self.out_dir = Path(out_dir)
        self.concurrency = max(1, concurrency)
        self.retry_errors = retry_errors
        self.judge_attempts = judge_attempts
        self.handle_signals = handle_signals
        self.grace_period = grace_period
        self.fsync = fsync
        self.stats = SweepStats()
        self.client: LLMClient | None = None
        self._calls: JsonlWriter | None = None
        self._pools: list[WorkerPool[Any, Any]] = []
        self._tg: anyio.abc.TaskGroup | None = None
        self._lock = DirLock(self.out_dir)

    # -- lifecycle -----------------------------------------------------------
    async def __aenter__(self) -> Runner:
        self._lock.acquire()  # one sweep per directory: a second one would run and pay for every unit again
        try:
            self._calls = JsonlWriter(self.out_dir / "calls.jsonl", fsync=self.fsync)
            self.client = LLMClient(self.config, call_sink=self._on_call)
        except BaseException:
            self._lock.release()
            raise
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        assert self._tg is not None
        try:
            return await self._tg.__aexit__(*exc)
        finally:
            with anyio.CancelScope(shield=True):
                if self.client is not None:
                    await self.client.aclose()
            if self._calls is not None:
                self._calls.close()
            self._lock.release()

    def _on_call(self, record: LLMCallRecord) -> None:
        assert self._calls is not None
        self._calls.write(record)
        self.stats.calls += 1
        self.stats.tokens += record.usage.total_tokens
        self.stats.cost_usd += record.cost_usd

    # -- public --------------------------------------------------------------
    def sweep(self, plan: SweepPlan) -> ObjectReceiveStream[Record]:
        """Start ``plan``; return a stream of records as units finish (closes when the sweep ends)."""
        if self._tg is None or self.client is None:
            raise BenchError("Runner.sweep() needs `async with Runner(...) as runner:` first")
        self.client.check_models([*plan.agent_models, *plan.judge_models])
        send, receive = anyio.create_memory_object_stream[Record](max(64, self.concurrency))
        self._tg.start_soon(self._run, plan, send)
        return receive

    async def run(self, plan: SweepPlan) -> SweepStats:
        """Run ``plan`` to the end (or to an interrupt) and return the counters."""
        async with self.sweep(plan) as records:
            async for _ in records:
                pass
        return self.stats

    # -- units ---------------------------------------------------------------
    async def _agent_unit(self, plan: SweepPlan, unit: AgentUnit) -> AgentRunRecord:
        assert self.client is not None
        task = plan.tasks[unit.task_id]
        data = plan.data[task.scenario_id]
        base = dict(key=unit.key, task_id=task.task_id, task_type=task.task_type or "", scenario_id=task.scenario_id,
                    model=unit.model, trial=unit.trial, started_at=time.time())
        try:
            run = await run_agent(self.client, unit.model, task, data, self.prompts, max_turns=plan.max_turns,
                                  key=unit.key)
        except BenchError as exc:
            return AgentRunRecord(**base, status="error", error_class=type(exc).__name__, error_message=str(exc),
                                  finished_at=time.time())
        # Reading an answer against the data costs milliseconds of CPU: off the event loop (DESIGN.md §9).
        checks = (await anyio.to_thread.run_sync(run_checks, task, run.final_answer, data)
                  if run.stop_reason != "error" else [])
        return AgentRunRecord(**base, status="error" if run.stop_reason == "error" else "ok", retryable=run.retryable,
                              run=run, checks=checks, error_class=run.error_class, error_message=run.error,
                              finished_at=time.time())

    async def _judge_unit(self, plan: SweepPlan, item: tuple[JudgeUnit, AgentRunRecord]) -> JudgeRecord:
        assert self.client is not None
        unit, run_record = item
        assert run_record.run is not None
        task = plan.tasks[run_record.task_id]
        base = dict(key=unit.key, run_key=unit.run_key, task_id=task.task_id, task_type=task.task_type or "",
                    agent_model=run_record.model, judge_model=unit.judge_model, trial=run_record.trial,
                    started_at=time.time())
        judgement = await run_judge(self.client, unit.judge_model, build_judge_input(run_record.run, task),
                                    self.prompts, agent_model=run_record.model, scenario_id=task.scenario_id,
                                    max_attempts=self.judge_attempts, key=unit.key)
        if judgement.verdict == "error":
            return JudgeRecord(**base, status="error", retryable=judgement.retryable, judgement=judgement,
                               error_class=judgement.error_class, error_message=judgement.error,
                               finished_at=time.time())
        return JudgeRecord(**base, status="ok", judgement=judgement, finished_at=time.time())

    # -- the sweep -------------------------------------------------------------
    def _stored_runs(self, wanted: set[str]) -> list[AgentRunRecord]:
        """Full records of finished runs that still need judging (streamed; only the wanted ones kept)."""
        found: dict[str, AgentRunRecord] = {}
        for record in iter_jsonl(self.out_dir / "runs.jsonl", type_=AgentRunRecord):
            if record.key in wanted and record.status == "ok":
                found[record.key] = record
        return list(found.values())

    async def _watch_signals(self) -> None:
        def interrupted() -> None:
            self.stats.interrupted = True

        await stop_on_signals(self._pools, grace_period=self.grace_period, on_interrupt=interrupted)

    async def _run(self, plan: SweepPlan, out: ObjectSendStream[Record]) -> None:
        runs_path, judges_path = self.out_dir / "runs.jsonl", self.out_dir / "judgements.jsonl"
        done_runs = ResumeIndex.from_file(runs_path, retry_errors=self.retry_errors)
        done_judges = ResumeIndex.from_file(judges_path, retry_errors=self.retry_errors)
        stats = self.stats
        stats.started = time.monotonic()
        stats.runs_total, stats.judges_total = plan.agent_unit_count, plan.judge_unit_count
        to_judge: set[str] = set()
        for unit in plan.agent_units():
            if unit.key in done_runs:
                stats.runs_skipped += 1
                missing = [j for j in plan.judge_units(unit.key) if j.key not in done_judges]
                stats.judges_skipped += len(plan.judge_models) - len(missing)
                if missing:
                    to_judge.add(unit.key)
        stored = self._stored_runs(to_judge) if to_judge else []
        # Runs done with an error record (not retried) are never judged.
        stats.judges_skipped += (len(to_judge) - len(stored)) * len(plan.judge_models)

        agent_pool = WorkerPool(lambda u: self._agent_unit(plan, u), concurrency=self.concurrency)
        judge_pool = WorkerPool(lambda item: self._judge_unit(plan, item), concurrency=self.concurrency)
        self._pools = [agent_pool, judge_pool]
        judge_send, judge_receive = anyio.create_memory_object_stream[tuple[JudgeUnit, AgentRunRecord]](
            self.concurrency * 2)
        watch_signals = self.handle_signals and threading.current_thread() is threading.main_thread()
        runs_writer = JsonlWriter(runs_path, fsync=self.fsync)
        judges_writer = JsonlWriter(judges_path, fsync=self.fsync)

        watcher = anyio.CancelScope()

        async def judge_stage() -> None:
            async with judge_pool.stream(judge_receive) as results:
                async for record in results:
                    judges_writer.write(record)
                    stats.judges_done += 1
                    stats.errors += record.status == "error"
                    stats.unscored += bool(record.judgement and record.judgement.verdict == "unscored")
                    await out.send(record)
            watcher.cancel()  # the last stage is over: stop watching for signals

        async def watch() -> None:
            with watcher:
                await self._watch_signals()

        def pending_runs():
            for unit in plan.agent_units():
                if unit.key not in done_runs:
                    yield unit

        try:
            async with out, anyio.create_task_group() as tg:
                if watch_signals:
                    tg.start_soon(watch)
                tg.start_soon(judge_stage)
                async with judge_send:
                    for record in stored:
                        for unit in plan.judge_units(record.key):
                            if unit.key not in done_judges:
                                await judge_send.send((unit, record))
                    async with agent_pool.stream(pending_runs()) as runs:
                        async for record in runs:
                            runs_writer.write(record)
                            stats.runs_done += 1
                            stats.errors += record.status == "error"
                            await out.send(record)
                            if record.status == "ok":
                                for unit in plan.judge_units(record.key):
                                    if unit.key not in done_judges:
                                        await judge_send.send((unit, record))
                            else:
                                stats.judges_skipped += len(plan.judge_models)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the caller stopped reading; finished records are on disk
        finally:
            runs_writer.close()
            judges_writer.close()
            stats.retries = self.client.retries if self.client else 0

