"""The tariff pack verification benchmark: cases, pipeline, gates, scoring, reports, compare."""

from ._cases import Case, CaseExpected, CaseInput, CaseNotes, CaseOptions, list_cases, load_case, load_suite
from ._dossier import Citation, Dossier, GriStep, Lever, WhatIf, build_bundle
from ._gates import CRITICAL_GATES, GateResult, run_gates
from ._pack import EvidenceItem, Pack, digits, load_pack
from ._pipeline import (
    FixtureProposer,
    Iteration,
    LLMProposer,
    Proposer,
    RecordingProposer,
    VerificationResult,
    verify,
)
from ._report import BenchmarkReport, build_report, compare_reports, load_report, render_diff, render_report
from ._runner import Mode, TariffCaseRecord, case_key, run_cases
from ._scoring import CaseScore, score_case

__all__ = [
    "CRITICAL_GATES",
    "BenchmarkReport",
    "Case",
    "CaseExpected",
    "CaseInput",
    "CaseNotes",
    "CaseOptions",
    "CaseScore",
    "Citation",
    "Dossier",
    "EvidenceItem",
    "FixtureProposer",
    "GateResult",
    "GriStep",
    "Iteration",
    "LLMProposer",
    "Lever",
    "Mode",
    "Pack",
    "Proposer",
    "RecordingProposer",
    "TariffCaseRecord",
    "VerificationResult",
    "WhatIf",
    "build_bundle",
    "build_report",
    "case_key",
    "compare_reports",
    "digits",
    "list_cases",
    "load_case",
    "load_pack",
    "load_report",
    "load_suite",
    "render_diff",
    "render_report",
    "run_cases",
    "run_gates",
    "score_case",
    "verify",
]
