"""The sweep runner: agent runs and their judgements, pipelined, resumable, signal-safe.

Every agent run that finishes is written to ``runs.jsonl`` and immediately
yields one judge unit per judge model to the judge pool, so judging overlaps
the remaining runs (no phase barrier). Both pools share one ``LLMClient``, so
each model's limiter caps its concurrency, RPM and TPM across runs and judges;
other suites (``sweep.Suite``: the tariff pipeline, a toy in a test) run through
the same client, lock, signals and counters (``run_suites``).

Resume: units whose key already has an ``ok`` record (or a non-retryable
``error`` unless ``retry_errors``) are skipped; runs that are done but lack a
judge's verdict get judged from the stored run. A record is appended only
when its unit has fully finished, so SIGKILL at any moment loses at most the
units in flight and duplicates nothing. The output directory is locked
(``DIR/.lock``, see ``runtime.DirLock``) while the runner is open, so a second
sweep on it fails at once instead of running and paying for every unit again.

A unit fails alone: whatever a unit raises (a crash in the checks, a data shape
nothing foresaw) becomes an error record for that unit, logged with its key and
model, and the sweep goes on. Failed units are logged at info with their error.

Library use::

    async with Runner(config, prompts=prompts, out_dir="reports/sweeps/x") as runner:
        async with runner.sweep(plan) as records:
            async for record in records:
                print(record.kind, record.key, record.status)

Leaving the ``async with runner.sweep(plan)`` block early (``break``, an
exception) stops that sweep: no unit starts any more, units in flight are
cancelled (they have no record, so the next run of the same plan does them),
units that had already finished are written, and the block returns once the
files are closed. ``async for record in runner.sweep(plan)`` without the inner
block works too; a sweep still running when the ``Runner`` block ends is
stopped the same way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import ObjectSendStream
from anyio.streams.memory import MemoryObjectReceiveStream

from .._exceptions import BenchError
from ..llm import LLMClient, ModelConfig, Transport
from ..mpcbench import PromptConfig, build_judge_input, run_agent, run_checks, run_judge
from ..records import LLMCallRecord, UnitRecord
from ..runtime import (
    DirLock,
    JsonlWriter,
    ResumeIndex,
    WorkerPool,
    iter_jsonl,
    log_unit_error,
    run_keyed_units,
    unit_failure,
    watch_signals,
)
from ._outcome import Outcome
from ._plan import AgentUnit, JudgeUnit, SweepPlan
from ._records import AgentRunRecord, JudgeRecord
from ._suite import Suite

__all__ = ["Runner", "SweepStats", "SweepStream"]

log = logging.getLogger(__name__)

Record = AgentRunRecord | JudgeRecord


class SweepStats(msgspec.Struct, kw_only=True):
    """Live counters for progress display (read from another task; plain ints, no locks needed)."""

    runs_total: int = 0
    runs_done: int = 0
    runs_skipped: int = 0
    judges_total: int = 0
    judges_done: int = 0
    judges_skipped: int = 0
    cases_total: int = 0
    cases_done: int = 0
    cases_skipped: int = 0
    errors: int = 0
    unscored: int = 0
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    started: float = 0.0
    retries: int = 0
    interrupted: bool = False


class SweepStream:
    """The records of one running sweep, as its units finish (see the module docstring).

    ``async with`` it to stop the sweep when the block ends; iterate it for the records.
    """

    def __init__(self, receive: MemoryObjectReceiveStream[Record]) -> None:
        self._receive = receive
        self._pools: list[WorkerPool[Any, Any]] = []
        self._forward: anyio.CancelScope | None = None
        self._done = anyio.Event()
        self.stopping = False

    async def __aenter__(self) -> SweepStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __aiter__(self) -> SweepStream:
        return self

    async def __anext__(self) -> Record:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Stop the sweep (in-flight units are cancelled) and wait until its files are closed."""
        self._leave()
        await self._done.wait()

    def _leave(self) -> None:
        """The caller reads no more: stop, cancelling the units in flight, and never wait for a reader."""
        self._receive.close()
        self.stop(abandon=True)

    def stop(self, *, abandon: bool = False) -> None:
        """Start no more units; the ones in flight finish and are written, or with ``abandon`` are cancelled.

        The stream ends once the sweep has wound down.
        """
        self.stopping = True
        if self._forward is not None:
            self._forward.cancel()
        for pool in self._pools:
            if abandon:
                pool.abandon()
            else:
                pool.stop()


class Runner:
    """Runs sweep plans and suites into one output directory.

    Sweeps write ``runs.jsonl`` and ``judgements.jsonl`` (and need ``prompts``, the agent and judge templates),
    suites ``<name>.jsonl``; every call goes to ``calls.jsonl`` unless ``log_calls=False`` (``tariff run``).
    """

    def __init__(
        self,
        config: ModelConfig,
        *,
        prompts: PromptConfig | None = None,
        out_dir: str | Path,
        concurrency: int = 32,
        retry_errors: bool = False,
        judge_attempts: int = 3,
        handle_signals: bool = False,
        grace_period: float = 30.0,
        fsync: bool = False,
        transport: str | Transport | None = None,
        log_calls: bool = True,
    ) -> None:
        self.config = config
        self.transport = transport  # overrides every model's transport (``LLMClient(transport=...)``)
        self.log_calls = log_calls
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
        self._pools: list[WorkerPool[Any, Any]] = []  # every pool running now (sweeps and suites)
        self._sweeps: set[SweepStream] = set()  # sweeps still running
        self._tg: anyio.abc.TaskGroup | None = None
        self._lock = DirLock(self.out_dir)

    # -- lifecycle -----------------------------------------------------------
    async def __aenter__(self) -> Runner:
        self._lock.acquire()  # one sweep per directory: a second one would run and pay for every unit again
        try:
            if self.log_calls:
                self._calls = JsonlWriter(self.out_dir / "calls.jsonl", fsync=self.fsync)
            self.client = LLMClient(self.config, transport=self.transport, call_sink=self._on_call)
        except BaseException:
            self._lock.release()
            raise
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: Any) -> bool | None:
        assert self._tg is not None
        for sweep in list(self._sweeps):
            sweep._leave()  # leaving the block ends every sweep still running
        try:
            return await self._tg.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            if exc is not None and list(group.exceptions) == [exc]:
                return False  # the block's own exception, not wrapped: the sweeps stopped cleanly
            raise
        finally:
            with anyio.CancelScope(shield=True):
                if self.client is not None:
                    await self.client.aclose()
            if self._calls is not None:
                self._calls.close()
            self._lock.release()

    def _on_call(self, record: LLMCallRecord) -> None:
        if self._calls is not None:
            self._calls.write(record)
        self.stats.calls += 1
        self.stats.tokens += record.usage.total_tokens
        self.stats.cost_usd += record.cost_usd or 0.0  # None: price unknown

    # -- public --------------------------------------------------------------
    @property
    def in_flight(self) -> int:
        """Units running now, over every sweep and suite of this runner."""
        return sum(pool.in_flight for pool in self._pools)

    def sweep(self, plan: SweepPlan) -> SweepStream:
        """Start ``plan``; return the stream of its records as units finish (it ends when the sweep does)."""
        if self._tg is None or self.client is None:
            raise BenchError("Runner.sweep() needs `async with Runner(...) as runner:` first")
        if self.prompts is None:
            raise BenchError("Runner.sweep() needs the agent and judge prompts: Runner(config, prompts=...)")
        self.client.check_models([*plan.agent_models, *plan.judge_models])
        send, receive = anyio.create_memory_object_stream[Record](max(64, self.concurrency))
        stream = SweepStream(receive)
        self._sweeps.add(stream)
        self._tg.start_soon(self._run, plan, stream, send)
        return stream

    async def run(self, plan: SweepPlan) -> SweepStats:
        """Run ``plan`` to the end (or to an interrupt) and return the counters."""
        async with self.sweep(plan) as records:
            async for _ in records:
                pass
        return self.stats

    async def run_suites(self, suites: Sequence[Suite[Any, Any]]) -> list[Outcome]:
        """Run every unit of ``suites`` (at once, each in its own pool) not finished on disk; then each reports.

        Each suite resumes from ``<name>.jsonl`` in the output directory and, once its pool has ended,
        writes its report (``Suite.finish``); the outcomes come back in the order of ``suites``. Units count
        in ``stats.cases_*``; an interrupt sets ``stats.interrupted`` (unfinished units have no record).
        """
        if self.client is None:
            raise BenchError("Runner.run_suites() needs `async with Runner(...) as runner:` first")
        self.client.check_models([model for suite in suites for model in suite.models])
        outcomes: list[Outcome] = [Outcome() for _ in suites]

        async def one(index: int, suite: Suite[Any, Any]) -> None:
            outcomes[index] = await self._run_suite(suite)

        async with anyio.create_task_group() as tg:
            for index, suite in enumerate(suites):
                tg.start_soon(one, index, suite)
        return outcomes

    async def _run_suite(self, suite: Suite[Any, Any]) -> Outcome:
        client, stats = self.client, self.stats
        assert client is not None
        units = {unit.key: unit for unit in suite.units()}
        kind = _kind(suite.record_type)
        started: list[WorkerPool[Any, Any]] = []

        def start(pool: WorkerPool[Any, Any], pending: int) -> None:
            self._pools.append(pool)
            started.append(pool)
            stats.cases_total += len(units)
            stats.cases_skipped += len(units) - pending

        def count(record: UnitRecord) -> None:
            stats.cases_done += 1
            stats.errors += record.status == "error"

        def interrupted() -> None:
            stats.interrupted = True

        try:
            latest = await run_keyed_units(
                units, run=lambda _key, unit: suite.run(unit, client),
                failed=lambda key, unit, exc: suite.failed(unit, unit_failure(log, exc, kind=kind, key=key,
                                                                              model=unit.model)),
                results_path=self.out_dir / f"{suite.name}.jsonl", record_type=suite.record_type,
                concurrency=self.concurrency, retry_errors=self.retry_errors, handle_signals=self.handle_signals,
                grace_period=self.grace_period, fsync=self.fsync, prepare=suite.prepare, on_start=start,
                on_record=count, on_interrupt=interrupted)
        finally:
            for pool in started:
                self._pools.remove(pool)
        return suite.finish(latest, self.out_dir)

    # -- units ---------------------------------------------------------------
    async def _agent_unit(self, plan: SweepPlan, unit: AgentUnit) -> AgentRunRecord:
        """The unit's record: an error until the run finishes, then what the run and its checks say."""
        assert self.client is not None and self.prompts is not None
        record = AgentRunRecord(key=unit.key, status="error", task_id=unit.task_id, task_type="", scenario_id="",
                                model=unit.model, trial=unit.trial, started_at=time.time())
        try:
            task = plan.tasks[unit.task_id]
            data = plan.data[task.scenario_id]
            record.task_type, record.scenario_id = task.task_type or "", task.scenario_id
            run = record.run = await run_agent(self.client, unit.model, task, data, self.prompts,
                                               max_turns=plan.max_turns, key=unit.key)
            # Reading an answer against the data costs milliseconds of CPU: off the event loop (DESIGN.md §9).
            checks = (await anyio.to_thread.run_sync(run_checks, task, run.final_answer, data)
                      if run.stop_reason != "error" else [])
        except Exception as exc:  # the unit fails alone; cancellation is not an Exception and passes
            failure = unit_failure(log, exc, kind="agent_run", key=unit.key, model=unit.model)
            record.error_class, record.error_message = failure.error_class, failure.message
            record.finished_at = time.time()
            return record
        record.status = "error" if run.stop_reason == "error" else "ok"
        record.retryable, record.checks = run.retryable, checks
        record.error_class, record.error_message = run.error_class, run.error
        record.finished_at = time.time()
        if record.status == "error":
            log_unit_error(log, kind="agent_run", key=unit.key, model=unit.model, error_class=record.error_class,
                           message=record.error_message)
        return record

    async def _judge_unit(self, plan: SweepPlan, item: tuple[JudgeUnit, AgentRunRecord]) -> JudgeRecord:
        """The unit's record: an error until the judge gives a verdict (``unscored`` is ok)."""
        assert self.client is not None and self.prompts is not None
        unit, run_record = item
        record = JudgeRecord(key=unit.key, run_key=unit.run_key, status="error", task_id=run_record.task_id,
                             task_type=run_record.task_type, agent_model=run_record.model,
                             judge_model=unit.judge_model, trial=run_record.trial, started_at=time.time())
        try:
            task = plan.tasks[run_record.task_id]
            assert run_record.run is not None, "an ok run record without its run log"
            judgement = await run_judge(self.client, unit.judge_model, build_judge_input(run_record.run, task),
                                        self.prompts, agent_model=run_record.model, scenario_id=task.scenario_id,
                                        max_attempts=self.judge_attempts, key=unit.key)
        except Exception as exc:  # the unit fails alone; cancellation is not an Exception and passes
            failure = unit_failure(log, exc, kind="judge", key=unit.key, model=unit.judge_model)
            record.error_class, record.error_message = failure.error_class, failure.message
            record.finished_at = time.time()
            return record
        record.judgement, record.finished_at = judgement, time.time()
        if judgement.verdict == "error":
            log_unit_error(log, kind="judge", key=unit.key, model=unit.judge_model,
                           error_class=judgement.error_class, message=judgement.error)
            record.retryable = judgement.retryable
            record.error_class, record.error_message = judgement.error_class, judgement.error
        else:
            record.status = "ok"
        return record

    # -- the sweep -------------------------------------------------------------
    def _stored_runs(self, wanted: set[str]) -> list[AgentRunRecord]:
        """Full records of finished runs that still need judging (streamed; only the wanted ones kept)."""
        found: dict[str, AgentRunRecord] = {}
        for record in iter_jsonl(self.out_dir / "runs.jsonl", type_=AgentRunRecord, warn=False):
            if record.key in wanted and record.status == "ok":
                found[record.key] = record
        return list(found.values())

    async def _run(self, plan: SweepPlan, stream: SweepStream, out: ObjectSendStream[Record]) -> None:
        try:
            async with out:
                await self._sweep(plan, stream, out)
        finally:
            self._sweeps.discard(stream)
            stream._done.set()
            self.stats.retries = self.client.retries if self.client else 0

    async def _sweep(self, plan: SweepPlan, stream: SweepStream, out: ObjectSendStream[Record]) -> None:
        runs_path, judges_path = self.out_dir / "runs.jsonl", self.out_dir / "judgements.jsonl"
        done_runs = ResumeIndex.from_file(runs_path, retry_errors=self.retry_errors, type_=AgentRunRecord)
        done_judges = ResumeIndex.from_file(judges_path, retry_errors=self.retry_errors, type_=JudgeRecord)
        stats = self.stats
        stats.started = time.monotonic()
        stats.runs_total += plan.agent_unit_count
        stats.judges_total += plan.judge_unit_count
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

        agent_pool: WorkerPool[AgentUnit, AgentRunRecord] = WorkerPool(
            lambda u: self._agent_unit(plan, u), concurrency=self.concurrency)
        judge_pool: WorkerPool[tuple[JudgeUnit, AgentRunRecord], JudgeRecord] = WorkerPool(
            lambda item: self._judge_unit(plan, item), concurrency=self.concurrency)
        pools: list[WorkerPool[Any, Any]] = [agent_pool, judge_pool]
        stream._pools = pools
        self._pools += pools
        judge_send, judge_receive = anyio.create_memory_object_stream[tuple[JudgeUnit, AgentRunRecord]](
            self.concurrency * 2)

        def interrupted() -> None:
            stats.interrupted = True
            stream.stop(abandon=False)  # in-flight units finish; runs that finish now are judged on resume

        async def emit(record: Record, writer: JsonlWriter) -> None:
            writer.write(record)
            try:
                await out.send(record)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                stream.stop(abandon=True)  # the caller stopped reading: stop, keeping what finished

        async def forward(record: AgentRunRecord, *, fresh: bool) -> None:
            """Queue the judges a finished run still needs (none once stopping: they run on resume).

            A run made in this invocation (``fresh``) is judged by every judge: a verdict already on disk
            for its key judged an earlier run of that unit (one whose record was lost or undecodable).
            """
            with anyio.CancelScope() as scope:
                stream._forward = scope
                for unit in plan.judge_units(record.key):
                    if stream.stopping:
                        break
                    if fresh or unit.key not in done_judges:
                        await judge_send.send((unit, record))
            stream._forward = None

        def pending_runs() -> Iterator[AgentUnit]:
            for unit in plan.agent_units():
                if stream.stopping:
                    return
                if unit.key not in done_runs:
                    yield unit

        async def judge_stage(writer: JsonlWriter) -> None:
            async with judge_pool.stream(judge_receive) as results:
                async for record in results:
                    stats.judges_done += 1
                    stats.errors += record.status == "error"
                    stats.unscored += bool(record.judgement and record.judgement.verdict == "unscored")
                    await emit(record, writer)

        signals = (watch_signals(pools, grace_period=self.grace_period, on_interrupt=interrupted)
                   if self.handle_signals else nullcontext())
        try:
            with signals, JsonlWriter(runs_path, fsync=self.fsync) as runs_writer, \
                    JsonlWriter(judges_path, fsync=self.fsync) as judges_writer:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(judge_stage, judges_writer)
                    async with judge_send:
                        for record in stored:
                            await forward(record, fresh=False)
                        async with agent_pool.stream(pending_runs()) as runs:
                            async for record in runs:
                                stats.runs_done += 1
                                stats.errors += record.status == "error"
                                await emit(record, runs_writer)
                                if record.status == "ok":
                                    await forward(record, fresh=True)
                                else:
                                    stats.judges_skipped += len(plan.judge_models)
        finally:
            for pool in pools:
                self._pools.remove(pool)


def _kind(record_type: type[UnitRecord]) -> str:
    """The ``kind`` tag a record type writes (its default), for logs."""
    return next(str(f.default) for f in msgspec.structs.fields(record_type) if f.name == "kind")
