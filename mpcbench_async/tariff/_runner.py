"""Running tariff cases: one case (``run_case``), or a suite's cases concurrently into a JSONL file (``run_cases``).

``run_case`` is the one copy of "run a tariff case" (verify, score, the case's
record); ``tariff run`` and a sweep's tariff suites call it through
``sweep.TariffSuite`` on the ``Runner``, and ``run_cases`` here (the library
entry point that needs no ``sweep``: tariff sits below it) through
``runtime.run_keyed_units``, the resume/pool/record loop a sweep's suites share.

Each case is a unit keyed by (case content, mode, model and settings, proposer
prompts, scoring mode with the gate and scoring-rule versions, and in fixture
mode the fixture's content): an edited fixture or a scoring change reruns
(rescores) the case instead of reusing its old record; ``ok`` records are skipped on the next run, infrastructure errors
are retried. Every mode calls the model through an ``LLMClient`` (its limits,
retries, breaker, call records and accounting): live and record modes a
configured model, fixture mode the recorded replies (``FixtureTransport``,
offline; a client of its own unless the caller passes one).

A case fails alone: an LLM or input error, or anything the pipeline raises on
a case nobody foresaw, becomes that case's error record (logged with the case
key and model) and the other cases go on.

SIGINT/SIGTERM (unless ``handle_signals=False``; through the process's one
signal watcher, shared with any sweep running beside it) stop the run: no new
case starts, cases in flight finish (30 s grace; a second signal abandons
them), every finished case is on disk, and ``on_interrupt`` tells the caller
the run is partial. What would block the
event loop for long — reading the results file, building the pack's indexes
and nomenclature — runs in a worker thread.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from pathlib import Path
from typing import Any, Literal

import anyio
import msgspec

from .._exceptions import BenchError, InputError, LLMError
from .._prompts import PromptConfig
from ..llm import BudgetExceeded, LLMClient, ModelConfig
from ..records import unit_key
from ..runtime import WorkerPool, log_unit_error, run_keyed_units, unit_failure
from ._cases import Case
from ._fixtures import FixtureTransport, RecordingProposer, fixture_path
from ._gates import GATES_VERSION
from ._pack import Pack
from ._pipeline import LLMProposer, Proposer, verify
from ._records import TariffCaseRecord
from ._scoring import SCORING_VERSION, ScoringMode, score_case

__all__ = ["Mode", "TariffCaseRecord", "case_key", "case_keys", "failed_case", "run_case", "run_cases"]

Mode = Literal["fixture", "live", "record"]

log = logging.getLogger(__name__)


def case_key(case: Case, mode: str, model: str, fingerprint: str, prompts_digest: str,
             scoring: ScoringMode = "project", fixture_digest: str = "") -> str:
    """The unit key: the case, mode, model (and, live, its settings), the proposer prompts, the scoring mode with
    the versions of the gates and the scoring rules, and in fixture mode the content of the case's fixture."""
    return unit_key(msgspec.json.encode(case, order="sorted"), mode, model, fingerprint, prompts_digest,
                    f"{scoring}/gates{GATES_VERSION}/scoring{SCORING_VERSION}", fixture_digest,
                    prefix="case-", nul_after_last=False)


def fixture_digest(fixtures_dir: Path | None, case_id: str) -> str:
    """The SHA-256 of the case's fixture file (``absent`` when there is none): an edited fixture reruns its case."""
    if fixtures_dir is None:
        return "absent"
    try:
        return hashlib.sha256(fixture_path(fixtures_dir, case_id).read_bytes()).hexdigest()
    except (OSError, InputError):
        return "absent"  # the run reports the missing or unsafe fixture on the case itself


def case_keys(cases: Sequence[Case], *, mode: str, model: str, config: ModelConfig | None,
              prompts: PromptConfig, scoring: ScoringMode = "project",
              fixtures_dir: Path | None = None) -> dict[str, Case]:
    """The unit key of each case of a run (what ``run_cases`` resumes by; a sweep lists them as its plan).

    In fixture mode each key holds the digest of the case's fixture in ``fixtures_dir`` (read here, once per run).
    """
    fingerprint = "fixture" if mode == "fixture" or config is None else config.settings_for(model).fingerprint()
    digest = prompts.digest("tariff_proposer", "tariff_critique")
    return {case_key(c, mode, model, fingerprint, digest, scoring,
                     fixture_digest(fixtures_dir, c.id) if mode == "fixture" else ""): c for c in cases}


async def run_case(case: Case, proposer: Proposer, pack: Pack, prompts: PromptConfig, *, key: str, model: str,
                   mode: str, scoring: ScoringMode = "project") -> TariffCaseRecord:
    """Run one case through the pipeline and score it: the one copy of "run a tariff case".

    ``run_cases`` and a sweep's ``TariffSuite`` both call it. Failures it understands (a model call that
    failed for good, an unusable reply or fixture) are logged and become the case's error record; anything
    else propagates for the caller's catch-all (``runtime.unit_failure``).
    """
    clock, started_at = time.perf_counter(), time.time()
    try:
        result = await verify(case, proposer, pack, prompts, scoring=scoring)
        score = score_case(case, result, scoring=scoring)
    except BudgetExceeded:
        raise  # the case did not run: a sweep's runner stops and writes no record for it
    except BenchError as exc:
        log_unit_error(log, kind="tariff_case", key=key, model=model, error_class=type(exc).__name__,
                       message=str(exc))
        return failed_case(case, key=key, model=model, mode=mode, error_class=type(exc).__name__, message=str(exc),
                           retryable=isinstance(exc, LLMError) and exc.retryable, started_at=started_at,
                           elapsed_s=time.perf_counter() - clock, scoring=scoring)
    return TariffCaseRecord(key=key, status="ok", case_id=case.id, mode=mode, model=model, result=result,
                            score=score, scoring=scoring, started_at=started_at, finished_at=time.time(),
                            elapsed_s=time.perf_counter() - clock)


def failed_case(case: Case, *, key: str, model: str, mode: str, error_class: str, message: str,
                retryable: bool = False, started_at: float | None = None, elapsed_s: float = 0.0,
                scoring: ScoringMode = "project") -> TariffCaseRecord:
    """The error record of ``case`` (``started_at`` defaults to now, for a case whose run raised)."""
    now = time.time()
    return TariffCaseRecord(key=key, status="error", case_id=case.id, mode=mode, model=model, retryable=retryable,
                            scoring=scoring,
                            error_class=error_class, error_message=message,
                            started_at=now if started_at is None else started_at, finished_at=now,
                            elapsed_s=elapsed_s)


async def run_cases(
    cases: Sequence[Case],
    *,
    pack: Pack,
    prompts: PromptConfig,
    mode: Mode,
    results_path: str | Path,
    fixtures_dir: str | Path,
    client: LLMClient | None = None,
    model: str = "fixture",
    concurrency: int = 8,
    scoring: ScoringMode = "project",
    retry_errors: bool = False,
    handle_signals: bool = True,
    on_start: Callable[[WorkerPool[Any, Any], int], None] | None = None,
    on_record: Callable[[TariffCaseRecord], None] | None = None,
    on_interrupt: Callable[[], None] | None = None,
) -> list[TariffCaseRecord]:
    """Run ``cases`` (skipping finished ones); return every case's latest record, in case order.

    ``on_start`` gets the run's pool (its ``in_flight`` is live) and the number of cases to run, before
    the first starts. ``on_interrupt`` is called when a signal stopped the run: cases without a record
    were not run. Fixture mode replays ``fixtures_dir`` through ``client`` (pass one built with
    ``transport=FixtureTransport(fixtures_dir)`` to see its call records and totals), else through a
    client of its own.
    """
    async with _client_for(mode, client, fixtures_dir) as client:
        live = LLMProposer(client, model)
        proposer: Proposer = RecordingProposer(live, fixtures_dir) if mode == "record" else live
        keyed = case_keys(cases, mode=mode, model=model, config=client.config, prompts=prompts, scoring=scoring,
                          fixtures_dir=Path(fixtures_dir))
        async def warm() -> None:
            await anyio.to_thread.run_sync(pack.warm)

        async def one(key: str, case: Case) -> TariffCaseRecord:
            return await run_case(case, proposer, pack, prompts, key=key, model=model, mode=mode, scoring=scoring)

        def crashed(key: str, case: Case, exc: Exception) -> TariffCaseRecord:
            error_class, message = unit_failure(log, exc, kind="tariff_case", key=key, model=model)
            return failed_case(case, key=key, model=model, mode=mode, error_class=error_class, message=message,
                               scoring=scoring)

        return await run_keyed_units(keyed, run=one, failed=crashed, results_path=results_path,
                                     record_type=TariffCaseRecord, concurrency=max(1, concurrency),
                                     retry_errors=retry_errors, handle_signals=handle_signals, prepare=warm,
                                     on_start=on_start, on_record=on_record, on_interrupt=on_interrupt)


def _client_for(mode: Mode, client: LLMClient | None,
                fixtures_dir: str | Path) -> AbstractAsyncContextManager[LLMClient]:
    """The caller's client (left open), or fixture mode's own client over ``fixtures_dir`` (closed after the run)."""
    if client is not None:
        return nullcontext(client)
    if mode != "fixture":
        raise BenchError(f"``mode={mode}`` needs a model (pass ``model``)")
    return LLMClient(transport=FixtureTransport(fixtures_dir))
