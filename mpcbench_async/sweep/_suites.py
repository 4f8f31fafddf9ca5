"""Suites a sweep runs beside MPCBench through ``Runner.run_suites``: the tariff pipeline (and HSCodeComp).

``TariffSuite`` is one tariff-pipeline suite × one model, run live: its units
are the cases keyed as ``tariff.case_keys`` keys them (so a sweep resumes what
``tariff run --mode live`` would), its records are ``TariffCaseRecord`` in
``<suite>_<model>.jsonl``, and it reports ``<suite>_<model>.json`` and ``.md``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import anyio
import msgspec

from .._exceptions import BenchError, LLMError
from .._prompts import PromptConfig
from ..llm import LLMClient, ModelConfig
from ..mpcbench import safe_name
from ..runtime import UnitFailure, atomic_write_bytes, log_unit_error
from ..tariff import (
    Case,
    LLMProposer,
    Pack,
    TariffCaseRecord,
    build_report,
    case_keys,
    render_report,
    score_case,
    verify,
)
from ._outcome import Outcome, tariff_outcome

__all__ = ["CaseUnit", "TariffSuite"]

log = logging.getLogger(__name__)


class CaseUnit(NamedTuple):
    """One tariff case run by one model."""

    key: str
    case: Case
    model: str


class TariffSuite:
    """One tariff-pipeline suite (``tariff``, ``hscodecomp``) × one model, live through the client."""

    record_type = TariffCaseRecord

    def __init__(self, suite: str, cases: Sequence[Case], *, pack: Pack, prompts: PromptConfig, model: str,
                 config: ModelConfig) -> None:
        self.suite, self.cases, self.pack, self.prompts, self.model = suite, list(cases), pack, prompts, model
        self.name = f"{suite}_{safe_name(model)}"  # model names may hold dots: append suffixes, never replace them
        self.models = [model]
        self._keyed = case_keys(self.cases, mode="live", model=model, config=config, prompts=prompts)

    def units(self) -> list[CaseUnit]:
        return [CaseUnit(key, case, self.model) for key, case in self._keyed.items()]

    async def prepare(self) -> None:
        await anyio.to_thread.run_sync(self.pack.warm)  # the pack's indexes and nomenclature: seconds of CPU

    async def run(self, unit: CaseUnit, client: LLMClient) -> TariffCaseRecord:
        """The case's record: an error until the pipeline's verdict is scored."""
        clock = time.perf_counter()
        record = TariffCaseRecord(key=unit.key, status="error", case_id=unit.case.id, mode="live", model=self.model,
                                  started_at=time.time())
        try:
            result = await verify(unit.case, LLMProposer(client, self.model), self.pack, self.prompts)
            record.result, record.score, record.status = result, score_case(unit.case, result), "ok"
        except BenchError as exc:  # a model call that failed for good, an unusable reply
            log_unit_error(log, kind="tariff_case", key=unit.key, model=self.model, error_class=type(exc).__name__,
                           message=str(exc))
            record.error_class, record.error_message = type(exc).__name__, str(exc)
            record.retryable = isinstance(exc, LLMError) and exc.retryable
        record.finished_at, record.elapsed_s = time.time(), time.perf_counter() - clock
        return record

    def failed(self, unit: CaseUnit, failure: UnitFailure) -> TariffCaseRecord:
        now = time.time()
        return TariffCaseRecord(key=unit.key, status="error", case_id=unit.case.id, mode="live", model=self.model,
                                error_class=failure.error_class, error_message=failure.message,
                                started_at=now, finished_at=now)

    def finish(self, records: list[TariffCaseRecord], out_dir: Path) -> Outcome:
        report = build_report(records, suite=self.suite, mode="live", model=self.model,
                              created_at=datetime.now(UTC).isoformat(), cases=self.cases)
        atomic_write_bytes(out_dir / f"{self.name}.json", msgspec.json.format(msgspec.json.encode(report)) + b"\n",
                           fsync=False)
        atomic_write_bytes(out_dir / f"{self.name}.md", render_report(report).encode(), fsync=False)
        return tariff_outcome(len(self.cases), records)
