"""Running a tariff suite: cases concurrently through the pipeline, results appended as JSONL, resumable.

Each case is a unit keyed by (case content, mode, model and settings, proposer
prompts); ``ok`` records are skipped on the next run, infrastructure errors
are retried. Fixture mode needs no network; live and record modes call a
configured model through the ``LLMClient`` (and its per-model limits).

SIGINT/SIGTERM stop the run: no new case starts, cases in flight finish (30 s
grace; a second signal abandons them), every finished case is on disk, and
``on_interrupt`` tells the caller the run is partial. What would block the
event loop for long — reading the results file, building the pack's indexes
and nomenclature — runs in a worker thread.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import anyio
import msgspec

from .._exceptions import BenchError, LLMError
from .._prompts import PromptConfig
from ..llm import LLMClient
from ..runtime import JsonlWriter, ResumeIndex, WorkerPool, iter_jsonl
from ._cases import Case
from ._pack import Pack
from ._pipeline import FixtureProposer, LLMProposer, Proposer, RecordingProposer, VerificationResult, verify
from ._scoring import CaseScore, score_case

__all__ = ["Mode", "TariffCaseRecord", "case_key", "run_cases"]

Mode = Literal["fixture", "live", "record"]


class TariffCaseRecord(msgspec.Struct, kw_only=True):
    key: str
    status: Literal["ok", "error"]
    case_id: str
    mode: str
    model: str
    retryable: bool = False
    result: VerificationResult | None = None
    score: CaseScore | None = None
    error_class: str | None = None
    error_message: str | None = None
    elapsed_s: float = 0.0
    kind: Literal["tariff_case"] = "tariff_case"


def case_key(case: Case, mode: str, model: str, fingerprint: str, prompts_digest: str) -> str:
    """The unit key: fixture and record modes share the case; live keys include the model settings."""
    encoded = msgspec.json.encode(case, order="sorted")
    parts = [encoded, mode.encode(), model.encode(), fingerprint.encode(), prompts_digest.encode()]
    return "case-" + hashlib.sha256(b"\x00".join(parts)).hexdigest()[:16]


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
    retry_errors: bool = False,
    on_record: Callable[[TariffCaseRecord], None] | None = None,
    on_interrupt: Callable[[], None] | None = None,
) -> list[TariffCaseRecord]:
    """Run ``cases`` (skipping finished ones); return every case's latest record, in case order.

    ``on_interrupt`` is called when a signal stopped the run: cases without a record were not run.
    """
    proposer: Proposer
    fingerprint = "fixture"
    if mode == "fixture":
        proposer = FixtureProposer(fixtures_dir)
    else:
        if client is None:
            raise BenchError(f"--mode {mode} needs a model (pass --model)")
        live = LLMProposer(client, model)
        fingerprint = client.config.settings_for(model).fingerprint()
        proposer = RecordingProposer(live, fixtures_dir) if mode == "record" else live
    digest = prompts.digest("tariff_proposer", "tariff_critique")
    keyed = {case_key(c, mode, model, fingerprint, digest): c for c in cases}
    done = await anyio.to_thread.run_sync(lambda: ResumeIndex.from_file(results_path, retry_errors=retry_errors))
    await anyio.to_thread.run_sync(pack.warm)

    async def one(item: tuple[str, Case]) -> TariffCaseRecord:
        key, case = item
        started = time.perf_counter()
        try:
            result = await verify(case, proposer, pack, prompts)
        except LLMError as exc:
            return TariffCaseRecord(key=key, status="error", case_id=case.id, mode=mode, model=model,
                                    retryable=exc.retryable, error_class=type(exc).__name__,
                                    error_message=str(exc), elapsed_s=time.perf_counter() - started)
        except BenchError as exc:
            return TariffCaseRecord(key=key, status="error", case_id=case.id, mode=mode, model=model,
                                    error_class=type(exc).__name__, error_message=str(exc),
                                    elapsed_s=time.perf_counter() - started)
        return TariffCaseRecord(key=key, status="ok", case_id=case.id, mode=mode, model=model, result=result,
                                score=score_case(case, result), elapsed_s=time.perf_counter() - started)

    pending = [(k, c) for k, c in keyed.items() if k not in done]
    with JsonlWriter(results_path) as writer:
        pool = WorkerPool(one, concurrency=max(1, concurrency), handle_signals=True, grace_period=30.0)
        async with pool.stream(pending) as results:
            async for record in results:
                writer.write(record)
                if on_record is not None:
                    on_record(record)
    if pool.interrupted and on_interrupt is not None:
        on_interrupt()
    return await anyio.to_thread.run_sync(_latest_records, results_path, keyed, cases)


def _latest_records(results_path: str | Path, keyed: dict[str, Case], cases: Sequence[Case]) -> list[TariffCaseRecord]:
    """Each case's first ``ok`` record in the results file, else its last record; in case order."""
    latest: dict[str, TariffCaseRecord] = {}
    for record in iter_jsonl(results_path, type_=TariffCaseRecord):
        if record.key in keyed and (record.key not in latest or latest[record.key].status != "ok"):
            latest[record.key] = record
    order = {c.id: i for i, c in enumerate(cases)}
    return sorted(latest.values(), key=lambda r: order.get(r.case_id, 0))


