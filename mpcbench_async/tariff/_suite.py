"""Tariff-pipeline suites (tariff, HSCodeComp) for ``Runner.run_suites``: a sweep's ``--suite`` and ``tariff run``.

``TariffSuite`` is one tariff-pipeline suite × one model in one mode: ``live``
(the model through the client), ``record`` (live, and each case's replies
written as its fixture by ``tariff.RecordingProposer``) or ``fixture`` (the
recorded replies served through the client: give the ``Runner``
``transport=tariff.FixtureTransport(fixtures_dir)``). Its units are the cases
keyed as ``tariff.case_keys`` keys them (so a sweep resumes what ``tariff run``
would), each run by ``tariff.run_case`` (the one copy of the per-case work);
its records are ``TariffCaseRecord`` in ``<name>.jsonl`` and its report is
``<name>.json`` and ``.md`` beside them unless ``report_base`` says where.

Both suites register at import (``runner.register_suite``): ``tariff`` and
``hscodecomp``, each one ``TariffSuite`` per model, all checked before any call;
their inputs are a sweep's ``TariffInputs``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import anyio
import msgspec

from .._exceptions import InputError
from .._prompts import PromptConfig
from ..llm import LLMClient, ModelConfig
from ..runner import Outcome, SuiteFactory, SuiteRequest, register_suite
from ..runtime import UnitFailure, atomic_write_bytes, safe_name
from ._cases import Case, load_suite
from ._fixtures import RecordingProposer
from ._inputs import ScoringMode, TariffInputs
from ._pack import Pack, load_pack
from ._pipeline import LLMProposer, Proposer
from ._report import BenchmarkReport, build_report, render_report
from ._runner import Mode, TariffCaseRecord, case_keys, failed_case, run_case

__all__ = ["CaseUnit", "TariffSuite", "tariff_outcome"]


class CaseUnit(NamedTuple):
    """One tariff case run by one model."""

    key: str
    case: Case
    model: str


class TariffSuite:
    """One tariff-pipeline suite (``tariff``, ``hscodecomp``) × one model in one mode (see the module docstring).

    ``name`` defaults to ``<suite>_<model>`` (a sweep's files); ``on_record`` sees each record as its case
    ends (``tariff run``'s progress lines). After ``finish``, ``report`` holds the report it wrote and ``records``
    each case's latest record (in case order). ``answered_by`` is the model the report names (default ``model``): a
    fixture run's client model is ``fixture``, its replies were recorded from a real one.
    """

    record_type = TariffCaseRecord

    def __init__(self, suite: str, cases: Sequence[Case], *, pack: Pack, prompts: PromptConfig, model: str,
                 config: ModelConfig | None, mode: Mode = "live", fixtures_dir: Path | None = None,
                 name: str | None = None, report_base: Path | None = None, scoring: ScoringMode = "project",
                 on_record: Callable[[TariffCaseRecord], None] | None = None, answered_by: str | None = None) -> None:
        if mode == "record" and fixtures_dir is None:
            raise ValueError("TariffSuite(mode='record') needs fixtures_dir, where the fixtures are written")
        self.suite, self.cases, self.pack, self.prompts, self.model = suite, list(cases), pack, prompts, model
        self.mode, self.fixtures_dir, self.report_base, self.on_record = mode, fixtures_dir, report_base, on_record
        # model names may hold dots: append suffixes, never replace them
        self.name = name or f"{suite}_{safe_name(model)}"
        self.models = [model]
        self.report: BenchmarkReport | None = None
        self.records: list[TariffCaseRecord] = []
        self.scoring = scoring
        self.answered_by = answered_by or model  # the report's model: a fixture run names whose replies it replayed
        self._keyed = case_keys(self.cases, mode=mode, model=model, config=config, prompts=prompts, scoring=scoring,
                                fixtures_dir=fixtures_dir)

    def units(self) -> list[CaseUnit]:
        return [CaseUnit(key, case, self.model) for key, case in self._keyed.items()]

    async def prepare(self) -> None:
        await anyio.to_thread.run_sync(self.pack.warm)  # the pack's indexes and nomenclature: seconds of CPU

    async def run(self, unit: CaseUnit, client: LLMClient) -> TariffCaseRecord:
        """The case's record (``tariff.run_case``): ok with its score, or an error it understands."""
        proposer: Proposer = LLMProposer(client, self.model)
        if self.mode == "record":
            assert self.fixtures_dir is not None  # checked in __init__
            proposer = RecordingProposer(LLMProposer(client, self.model), self.fixtures_dir)
        return self._seen(await run_case(unit.case, proposer, self.pack, self.prompts, key=unit.key,
                                         model=self.model, mode=self.mode, scoring=self.scoring))

    def failed(self, unit: CaseUnit, failure: UnitFailure) -> TariffCaseRecord:
        return self._seen(failed_case(unit.case, key=unit.key, model=self.model, mode=self.mode,
                                      error_class=failure.error_class, message=failure.message,
                                      scoring=self.scoring))

    def _seen(self, record: TariffCaseRecord) -> TariffCaseRecord:
        if self.on_record is not None:
            self.on_record(record)
        return record

    def finish(self, records: list[TariffCaseRecord], out_dir: Path) -> Outcome:
        report = build_report(records, suite=self.suite, mode=self.mode, model=self.answered_by,
                              created_at=datetime.now(UTC).isoformat(), cases=self.cases, scoring=self.scoring)
        base = self.report_base or out_dir / self.name
        atomic_write_bytes(base.parent / f"{base.name}.json", msgspec.json.format(msgspec.json.encode(report)) + b"\n",
                           fsync=False)
        atomic_write_bytes(base.parent / f"{base.name}.md", render_report(report).encode(), fsync=False)
        self.report, self.records = report, records
        return tariff_outcome(len(self.cases), records)


def tariff_outcome(cases: int, records: Sequence[TariffCaseRecord]) -> Outcome:
    """``cases`` tariff cases, of which ``records`` are the latest records (``tariff.run_cases``)."""
    ok = sum(r.status == "ok" for r in records)
    return Outcome(units=cases, ok=ok, failed=len(records) - ok, not_run=cases - len(records))


def tariff_suites(suite: str) -> SuiteFactory:
    """The factory of one tariff-pipeline suite of a sweep (``tariff``, ``hscodecomp``): one ``TariffSuite`` per
    model, all validated before any call."""
    return lambda request: _tariff_suites(request, suite)


def _tariff_suites(request: SuiteRequest, suite: str) -> list[TariffSuite]:
    inputs, config, prompts = request.settings(TariffInputs), request.config, request.prompts
    prompts.require("tariff_proposer", "tariff_critique")
    cases_dir = (inputs.hscodecomp_path if suite == "hscodecomp" else inputs.tariff_path) / "cases"
    cases = load_suite(cases_dir)
    if not cases:
        raise InputError(f"{cases_dir}: no {suite} cases")
    pack = load_pack(inputs.pack)
    models = None if "mpcbench" in request.run.suites else request.run.models  # with mpcbench, models are its agents
    return [TariffSuite(suite, cases, pack=pack, prompts=prompts, model=model, config=config,
                        scoring=inputs.scoring)
            for model in models or config.tariff_models or ["sim/tariff"]]


register_suite("tariff", tariff_suites("tariff"))
register_suite("hscodecomp", tariff_suites("hscodecomp"))
