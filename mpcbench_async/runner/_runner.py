"""The runner: drives suites through one client, one pipelined loop, resumably and signal-safe.

Every suite (``runner.Suite``, one stage: tariff, data generation, a toy in a
test; ``runner.StagedSuite``, several: MPCBench's agent runs feeding judges)
goes through the same loop, ``runtime.Pipeline``: one pool per stage, each
stage's records appended to ``<stage name>.jsonl`` in the output directory as
units finish, and each finished ``ok`` record's follow-ups (a run's judges)
queued at once, so judging overlaps the remaining runs (no phase barrier).
Every pool shares one ``LLMClient``, so each model's limiter caps its
concurrency, RPM and TPM across stages and suites.

Resume: units whose key already has an ``ok`` record (or a non-retryable
``error`` unless ``retry_errors``) are skipped; a run made now is judged by
every judge, a stored run only by the judges it lacks; a run that ended in an
error is never judged. A record is appended only when its unit has fully
finished, so SIGKILL at any moment loses at most the units in flight and
duplicates nothing. The output directory is locked (``DIR/.lock``, see
``runtime.DirLock``) while the runner is open, so a second sweep on it fails at
once instead of running and paying for every unit again.

A unit fails alone: whatever a unit raises (a crash in the checks, a data shape
nothing foresaw) becomes an error record for that unit, logged with its key and
model, and the sweep goes on. Failed units are logged at info with their error.

It knows no benchmark (the import-graph test holds it to that): the suites
are handed to it. Library use::

    async with Runner(config, out_dir="reports/sweeps/x") as runner:
        async with runner.stream(suite) as records:
            async for record in records:
                print(record.kind, record.key, record.status)

``runner.stream(suite)`` streams the records of a ``StagedSuite`` (an MPCBench
plan: ``mpcbench.MPCBenchSuite(plan, prompts)``); ``runner.run(suite)`` runs one
suite to the end and returns the counters, ``runner.run_suites([...])`` runs any
suites at once and returns how each stands. Leaving the ``async with runner.stream(suite)`` block early (``break``,
an exception) stops that sweep: no unit starts any more, units in flight are
cancelled (they have no record, so the next run of the same plan does them),
units that had already finished are written, and the block returns once the
files are closed. ``async for record in runner.stream(suite)`` without the inner
block works too; a stream still running when the ``Runner`` block ends is
stopped the same way.

With ``executor=`` (a ``distributed.RayExecutor``), the units of suites that say
``remote = True`` (MPCBench's and levels') run on Ray worker actors: only
``stage.run`` moves, through the executor; the records and the calls they made
come back, and this runner writes them as it writes local ones (same files,
resume, lock, signals, counters). Other suites (tariff, HSCodeComp) run on this
runner's own client. Every worker dying stops
the sweep (``WorkersLost``, raised by ``run_suites`` and ``run``; finished units
are kept).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from anyio.abc import ObjectSendStream
from anyio.streams.memory import MemoryObjectReceiveStream

from .._exceptions import BenchError
from ..distributed import WorkersLost
from ..llm import BATCHES, LEDGER, Budget, BudgetExceeded, CallLedger, LLMClient, ModelConfig, ResponseCache, Transport
from ..records import LLMCallRecord, UnitRecord
from ..runtime import DirLock, JsonlWriter, Pipeline, PipelineEvents, Stage, latest_records, unit_failure
from ._cost import cost_text
from ._outcome import Outcome
from ._suite import StagedSuite, Suite, SuiteStage

if TYPE_CHECKING:
    from ..distributed import RayExecutor
    from ..llm import Provider

__all__ = ["AnySuite", "Runner", "SweepStats", "SweepStream"]

log = logging.getLogger(__name__)

AnySuite = Suite[Any, Any] | StagedSuite


class SweepStats(msgspec.Struct, kw_only=True):
    """Live counters for progress display (read from another task; plain ints, no locks needed).

    ``cost_text()`` is the cost so far for people: ``X``, ``X + unknown`` or ``unknown`` (unpriced calls).

    Units count by their record's kind: agent runs in ``runs_*``, judgements in ``judges_*``, others in ``cases_*``.
    """

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
    cost_usd: float = 0.0  # of the priced calls
    unpriced_calls: int = 0  # calls of models with no known price: cost unknown
    cached_calls: int = 0  # answered by the response cache
    started: float = 0.0
    retries: int = 0
    interrupted: bool = False

    def cost_text(self) -> str:
        return cost_text(self.cost_usd, calls=self.calls, unpriced=self.unpriced_calls)


_COUNTERS = {"agent_run": "runs", "judge": "judges"}  # record kind -> SweepStats counters; any other: cases


class _Counting(PipelineEvents):
    """A suite's pipeline events as ``SweepStats`` counters, one counter group per stage."""

    def __init__(self, stats: SweepStats, stages: Sequence[SuiteStage[Any, Any]]) -> None:
        self.stats = stats
        self.counters = [_COUNTERS.get(_kind(stage.record_type), "cases") for stage in stages]

    def _add(self, stage: int, name: str, n: int) -> None:
        field = f"{self.counters[stage]}_{name}"
        setattr(self.stats, field, getattr(self.stats, field) + n)

    def planned(self, stage: int, total: int, skipped: int) -> None:
        self._add(stage, "total", total)
        self._add(stage, "skipped", skipped)

    def skipped(self, stage: int, count: int) -> None:
        self._add(stage, "skipped", count)

    async def record(self, stage: int, record: UnitRecord) -> None:
        self._add(stage, "done", 1)
        self.stats.errors += record.status == "error"
        self.stats.unscored += record.unscored

    def interrupted(self) -> None:
        self.stats.interrupted = True


class _Streaming(_Counting):
    """Counting, and every record sent to a ``SweepStream``'s reader; a reader gone abandons the sweep."""

    def __init__(self, stats: SweepStats, stages: Sequence[SuiteStage[Any, Any]], out: ObjectSendStream[UnitRecord],
                 stream: SweepStream) -> None:
        super().__init__(stats, stages)
        self.out, self.stream = out, stream

    async def record(self, stage: int, record: UnitRecord) -> None:
        await super().record(stage, record)
        try:
            await self.out.send(record)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.stream.stop(abandon=True)  # the caller stopped reading: stop, keeping what finished


class SweepStream:
    """The records of one running sweep, as its units finish (see the module docstring).

    ``async with`` it to stop the sweep when the block ends; iterate it for the records.
    """

    def __init__(self, receive: MemoryObjectReceiveStream[UnitRecord]) -> None:
        self._receive = receive
        self._pipeline: Pipeline | None = None
        self._done = anyio.Event()
        self._error: Exception | None = None  # why the sweep could not start: raised where the records end

    @property
    def stopping(self) -> bool:
        return self._pipeline is not None and self._pipeline.stopping

    async def __aenter__(self) -> SweepStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __aiter__(self) -> SweepStream:
        return self

    async def __anext__(self) -> UnitRecord:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            if self._error is not None:
                raise self._error from None
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
        if self._pipeline is not None:
            if abandon:
                self._pipeline.abandon()
            else:
                self._pipeline.stop()


class Runner:
    """Runs suites into one output directory.

    Each stage of a suite writes ``<name>.jsonl`` (MPCBench's ``runs.jsonl`` and ``judgements.jsonl``); every call
    goes to ``calls.jsonl`` unless ``log_calls=False`` (``tariff run``), and then each request's intent is made
    durable in ``ledger.jsonl`` before it is sent (``llm.CallLedger``; the call's record settles it), so calls in
    flight when the process is killed are still accounted for (``ledger_fsync=False``: written to the OS, not
    flushed to the disk — it survives a kill, not a crash).
    ``budget`` and ``cache`` go to the client (``LLMClient(budget=..., cache=...)``). A call the budget refuses
    stops every suite of the runner (no new unit starts; units in flight finish and are written) and its unit
    leaves no record, so a rerun with a higher budget does it; ``budget_stop`` is that first refusal. A call
    record that cannot be written to ``calls.jsonl`` (a full disk) stops the run as a unit record that cannot be
    written does: the ``OSError`` naming the file is raised, and the units it hit leave no record.
    """

    def __init__(
        self,
        config: ModelConfig,
        *,
        out_dir: str | Path,
        concurrency: int = 32,
        retry_errors: bool = False,
        handle_signals: bool = False,
        grace_period: float = 30.0,
        fsync: bool = False,
        ledger_fsync: bool = True,
        transport: str | Transport | None = None,
        log_calls: bool = True,
        budget: Budget | None = None,
        cache: ResponseCache | None = None,
        executor: RayExecutor | None = None,
        providers: Mapping[str, Provider] | None = None,
    ) -> None:
        self.config = config
        self.budget = budget  # shared by every call (``LLMClient(budget=...)``); a refusal stops the runner
        self.budget_stop: BudgetExceeded | None = None  # the first refusal, once a budget has stopped the run
        self.calls_error: OSError | None = None  # calls.jsonl could not be written (disk full): the run stops
        self.cache = cache  # ``LLMClient(cache=...)``, which closes it
        self.transport = transport  # overrides every model's transport (``LLMClient(transport=...)``)
        self.log_calls = log_calls
        self.providers = providers  # ``LLMClient(providers=...)``: made (perhaps launched) before, the client's now
        self.executor = executor  # runs the ``remote`` suites' units (on Ray workers); None: this runner's client
        self.executor_error: WorkersLost | None = None  # set once every worker of the executor has died
        self.out_dir = Path(out_dir)
        self.concurrency = max(1, concurrency)
        self.retry_errors = retry_errors
        self.handle_signals = handle_signals
        self.grace_period = grace_period
        self.fsync = fsync
        self.ledger_fsync = ledger_fsync  # False: intents written to the OS only (survive a kill, not a crash)
        self.stats = SweepStats()
        self.client: LLMClient | None = None
        self._calls: JsonlWriter | None = None
        self.ledger: CallLedger | None = None  # this directory's call ledger (``log_calls``)
        self._pipelines: set[Pipeline] = set()  # every suite running now
        self._sweeps: set[SweepStream] = set()  # sweeps still running
        self._tg: anyio.abc.TaskGroup | None = None
        self._lock = DirLock(self.out_dir)

    # -- lifecycle -----------------------------------------------------------
    async def __aenter__(self) -> Runner:
        self._lock.acquire()  # one sweep per directory: a second one would run and pay for every unit again
        try:
            if self.log_calls:
                self._calls = JsonlWriter(self.out_dir / "calls.jsonl", fsync=self.fsync)
                self.ledger = CallLedger(self.out_dir / LEDGER, fsync=self.ledger_fsync)
            self.client = LLMClient(self.config, transport=self.transport, call_sink=self._on_call,
                                    budget=self.budget, cache=self.cache, ledger=self.ledger,
                                    batch_journal=self.out_dir / BATCHES, providers=self.providers)
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
            if self.ledger is not None:
                self.ledger.close()
            self._lock.release()

    def _on_call(self, record: LLMCallRecord) -> None:
        if self._calls is not None:
            try:
                self._calls.write(record)
            except OSError as exc:  # a full disk is not the unit's failure: ``run`` stops the sweep with it
                self.calls_error = self.calls_error or exc
                raise
        self.stats.calls += 1
        self.stats.tokens += record.usage.total_tokens
        self.stats.cost_usd += record.cost_usd or 0.0
        self.stats.unpriced_calls += record.cost_usd is None
        self.stats.cached_calls += record.cached

    # -- public --------------------------------------------------------------
    @property
    def retries(self) -> int:
        """Retries of every call so far: this runner's client's and the executor's workers'."""
        return (self.client.retries if self.client else 0) + (self.executor.retries if self.executor else 0)

    def batches(self) -> list[tuple[str, int, int]]:
        """Provider batches running now: (batch id, requests done, requests in it), for the progress line."""
        return [(view.id, view.done, view.total) for view in self.client.batches()] if self.client else []

    @property
    def in_flight(self) -> int:
        """Units running now, over every sweep and suite of this runner."""
        return sum(pipeline.in_flight for pipeline in self._pipelines)

    def stream(self, suite: StagedSuite) -> SweepStream:
        """Start ``suite``; return the stream of its records as units finish (it ends when the suite does)."""
        if self._tg is None or self.client is None:
            raise BenchError("Runner.stream() needs `async with Runner(...) as runner:` first")
        self.client.check_models(suite.models)
        send, receive = anyio.create_memory_object_stream[UnitRecord](max(64, self.concurrency))
        stream = SweepStream(receive)
        pipeline = stream._pipeline = self._pipeline(suite, _Streaming(self.stats, suite.stages, send, stream))
        self._sweeps.add(stream)
        self._tg.start_soon(self._stream, suite, pipeline, stream, send)
        return stream

    async def run(self, suite: AnySuite) -> SweepStats:
        """Run ``suite`` to the end (or to an interrupt), as ``run_suites([suite])``; return the counters."""
        await self.run_suites([suite])
        return self.stats

    async def run_suites(self, suites: Sequence[AnySuite]) -> list[Outcome]:
        """Run every unit of ``suites`` (at once, each stage in its own pool) not finished on disk; then each reports.

        Each suite resumes from its stages' ``<name>.jsonl`` in the output directory and, once its units have
        ended, says how it stands (``finish``; a one-stage suite writes its report from each unit's latest
        record); the outcomes come back in the order of ``suites``. An interrupt sets ``stats.interrupted``
        (unfinished units have no record).
        """
        if self.client is None:
            raise BenchError("Runner.run_suites() needs `async with Runner(...) as runner:` first")
        self.client.check_models([model for suite in suites for model in suite.models])
        if self.executor is not None:
            await self.executor.check_models([model for suite in suites if self._remote(suite)
                                              for model in suite.models])
        outcomes: list[Outcome] = [Outcome() for _ in suites]

        async def one(index: int, suite: AnySuite) -> None:
            outcomes[index] = await self._run_suite(suite)

        async with anyio.create_task_group() as tg:
            for index, suite in enumerate(suites):
                tg.start_soon(one, index, suite)
        if self.executor_error is not None:
            raise self.executor_error
        return outcomes

    # -- the one path every suite takes ----------------------------------------
    def _remote(self, suite: AnySuite) -> bool:
        """Whether ``suite``'s units run on the executor: those of a suite with ``remote = True``, when there is one."""
        return self.executor is not None and bool(getattr(suite, "remote", False))

    def _pipeline(self, suite: AnySuite, events: PipelineEvents) -> Pipeline:
        """The pipeline of ``suite``'s stages on this runner's client, reporting to ``events``."""
        client = self.client
        assert client is not None
        staged: StagedSuite | None = None
        stages: Sequence[SuiteStage[Any, Any]]
        if isinstance(suite, StagedSuite):
            staged, stages = suite, suite.stages
        else:
            stages = [suite]
        remote = self._remote(suite)

        def stage_of(index: int, stage: SuiteStage[Any, Any]) -> Stage:
            kind = _kind(stage.record_type)

            def failed(key: str, unit: Any, exc: Exception) -> UnitRecord:
                if exc is self.calls_error:
                    raise exc  # the sweep stops as when a record cannot be written: exit 2 naming the file
                return stage.failed(unit, unit_failure(log, exc, kind=kind, key=key, model=unit.model))

            follow_ups: dict[str, Any] = {}
            if staged is not None and index + 1 < len(stages):
                follow_ups = {
                    "follow_up_keys": lambda key: staged.follow_up_keys(index, key),
                    "follow_ups": lambda record: [(u.key, u) for u in staged.follow_ups(index, record)]}
            async def run(key: str, unit: Any) -> UnitRecord | None:
                try:
                    record = await (self._run_remote(stage, key, unit) if remote else stage.run(unit, client))
                    if self.calls_error is not None and (record is None or record.status != "ok"):
                        # Its call's record could not be written, and the suite made an error record of that:
                        # no record (a plain rerun does the unit) and the sweep stops, naming calls.jsonl.
                        raise self.calls_error
                    return record
                except BudgetExceeded as exc:
                    self._budget_reached(exc)
                    return None  # the unit did not run: no record, so a rerun with a higher budget does it
                except WorkersLost as exc:
                    self._workers_lost(exc)
                    return None  # the unit did not run: no record, so a rerun does it

            return Stage(self.out_dir / f"{stage.name}.jsonl", stage.record_type, run, failed, **follow_ups)

        return Pipeline([stage_of(i, stage) for i, stage in enumerate(stages)], concurrency=self.concurrency,
                        retry_errors=self.retry_errors, fsync=self.fsync, handle_signals=self.handle_signals,
                        grace_period=self.grace_period, events=events)

    async def _run_remote(self, stage: SuiteStage[Any, Any], key: str, unit: Any) -> UnitRecord | None:
        """``stage.run(unit, ...)`` on the executor: its calls are written here, its exception raised here."""
        assert self.executor is not None
        reply = await self.executor.run(stage, key, unit)
        for call in reply.calls:
            self._on_call(call)
        if reply.error is not None:
            raise reply.error
        return reply.record

    def _workers_lost(self, exc: WorkersLost) -> None:
        """Every worker died: start no new unit anywhere (the ones in flight end the same way); say so at the end."""
        if self.executor_error is None:
            self.executor_error = exc
            log.error("sweep.workers_lost", extra={"error": str(exc)})
        for pipeline in self._pipelines:
            pipeline.stop()

    def _budget_reached(self, exc: BudgetExceeded) -> None:
        """A call was refused by the budget: start no new unit anywhere; units in flight finish and are written."""
        if self.budget_stop is None:
            self.budget_stop = exc
            log.warning("sweep.budget_reached", extra={"model": exc.model, "scope": exc.scope,
                                                       "limit_usd": exc.limit_usd, "in_flight": self.in_flight})
        for pipeline in self._pipelines:
            pipeline.stop()

    async def _drive(self, suite: AnySuite, pipeline: Pipeline, units: Sequence[Any] | None = None) -> None:
        """Run ``pipeline`` over ``suite``'s units (``units``: already listed), counted in ``in_flight``."""
        self._pipelines.add(pipeline)
        if self.budget_stop is not None:
            pipeline.stop()  # a budget already stopped this runner: no new unit starts
        self.stats.started = self.stats.started or time.monotonic()
        try:
            await pipeline.run(lambda: ((unit.key, unit) for unit in (suite.units() if units is None else units)),
                               prepare=suite.prepare)
        finally:
            self._pipelines.discard(pipeline)
            self.stats.retries = self.retries

    async def _run_suite(self, suite: AnySuite) -> Outcome:
        if isinstance(suite, StagedSuite):
            await self._drive(suite, self._pipeline(suite, _Counting(self.stats, suite.stages)))
            return suite.finish(self.out_dir)
        units = list(suite.units())
        await self._drive(suite, self._pipeline(suite, _Counting(self.stats, [suite])), units)
        latest = await latest_records(self.out_dir / f"{suite.name}.jsonl", suite.record_type,
                                      [unit.key for unit in units])
        return suite.finish(latest, self.out_dir)

    async def _stream(self, suite: StagedSuite, pipeline: Pipeline, stream: SweepStream,
                      out: ObjectSendStream[UnitRecord]) -> None:
        try:
            async with out:
                if self.executor is not None:  # a model the workers cannot resolve: no unit starts, the stream says why
                    try:
                        await self.executor.check_models(suite.models)
                    except Exception as exc:
                        stream._error = exc
                        return
                await self._drive(suite, pipeline)
        finally:
            self._sweeps.discard(stream)
            stream._done.set()


def _kind(record_type: type[UnitRecord]) -> str:
    """The ``kind`` tag a record type writes (its default): it names the unit in logs and picks its counters."""
    return next(str(f.default) for f in msgspec.structs.fields(record_type) if f.name == "kind")
