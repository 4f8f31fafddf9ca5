"""The tariff records' types, apart from the code that makes them: the summary of any sweep reads tariff cases'
records (``sweep/_reading``), and importing them with the runner, pipeline, gates and dossier rules (their regular
expressions, the pack and the trade programmes) cost every sweep ~75 M instructions (15-20 ms) of start-up (issue 31).

Each type is re-exported by the module that makes it (``_dossier``, ``_gates``, ``_pipeline``, ``_scoring``,
``_runner``, ``_cases``), its home for readers of the code.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from ..records import UnitRecord
from ._inputs import ScoringMode

__all__ = ["Candidate", "CaseScore", "Citation", "Dossier", "DutyStatus", "GateResult", "GateStatus", "GriStep",
           "Iteration", "Lever", "RefusalCategory", "TariffCaseRecord", "VerificationResult", "WhatIf"]

RefusalCategory = Literal["insufficient_info", "ambiguous", "out_of_scope", "missing_evidence"]
GateStatus = Literal["pass", "fail", "unverified", "n/a"]
DutyStatus = Literal["verified", "unverified", "not_stated"]


class _Strict(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    pass


class Citation(_Strict):
    evidence_id: str
    quote: str


class GriStep(_Strict):
    rule: str
    conclusion: str
    citations: list[Citation] = []


class Candidate(_Strict):
    heading: str
    reason: str = ""


class Lever(_Strict):
    id: str
    description: str
    steps: list[str]
    new_hts: str
    new_duty_pct: float
    compliance_ok: bool = True


class WhatIf(_Strict):
    change: str
    new_hts: str | None = None
    new_duty_pct: float | None = None


class Dossier(_Strict):
    """A proposal: accept with a code and its analysis, or refuse with a category (and questions).

    ``savings_note`` says why the optimized duty is what it is ("no savings: the rate cannot be reduced lawfully");
    the original harness's scoring (``--scoring original``) requires it to say so on a no-savings case.
    """

    decision: Literal["accept", "refuse"]
    refusal_category: RefusalCategory | None = None
    refusal_reason: str = ""
    questions: list[str] = []
    candidate_headings: list[Candidate] = []
    gri_steps: list[GriStep] = []
    hts_code: str | None = None
    baseline_duty_pct: float | None = None
    optimized_duty_pct: float | None = None
    levers: list[Lever] = []
    what_if: list[WhatIf] = []
    trade_programme: str | None = None  # the programme the stated duties are claimed under ("USMCA", "GSP"), if any
    savings_note: str = ""

    def citations(self) -> list[Citation]:
        return [c for step in self.gri_steps for c in step.citations]


class GateResult(msgspec.Struct, kw_only=True):
    """One gate's verdict on one proposal: ``passed`` is false only when it fails (``status == "fail"``);
    ``reasons`` say why it failed, ``notes`` what it could not verify."""

    gate: str
    passed: bool
    critical: bool
    reasons: list[str] = []
    status: GateStatus = "pass"
    notes: list[str] = []

    def __post_init__(self) -> None:
        if not self.passed:  # records written before statuses existed carry only ``passed``
            self.status = "fail"


class Iteration(msgspec.Struct, kw_only=True):
    number: int
    reply: str
    dossier: Dossier | None
    gates: list[GateResult]
    rejection_reasons: list[str]


class VerificationResult(msgspec.Struct, kw_only=True):
    case_id: str
    status: Literal["accepted", "refused"]
    refusal_category: str | None = None
    iterations: list[Iteration] = []
    final_dossier: Dossier | None = None
    citations: list[Citation] = []
    levers: list[Lever] = []
    critical_gates_passed: bool = False
    gri_violation: bool = False
    duty_status: DutyStatus | None = None


class CaseScore(msgspec.Struct, kw_only=True):
    case_id: str
    case_type: str
    difficulty: str
    score: float
    passed: bool
    threshold: float
    status: str
    refusal_category: str | None = None
    predicted_hts: str | None = None
    match: str = "none"
    penalties: list[str] = []
    prefix_correct: dict[str, bool] = {}
    digits_correct: int | None = None
    iterations: int = 0
    duty_status: DutyStatus | None = None
    scoring: ScoringMode = "project"


class TariffCaseRecord(UnitRecord, kw_only=True):  # key, status, retryable, error, times: records.UnitRecord
    case_id: str
    mode: str
    model: str
    result: VerificationResult | None = None
    score: CaseScore | None = None
    scoring: ScoringMode = "project"
    elapsed_s: float = 0.0
    kind: Literal["tariff_case"] = "tariff_case"
