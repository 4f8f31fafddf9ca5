"""The tariff pack verification benchmark: cases, pipeline, gates, scoring, reports, compare."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._cases import Case, CaseExpected, CaseInput, CaseNotes, CaseOptions, list_cases, load_case, load_suite
    from ._dossier import Citation, Dossier, GriStep, Lever, WhatIf, build_bundle
    from ._fixtures import FixtureTransport, RecordingProposer, recorded_models
    from ._gates import CRITICAL_GATES, GateResult, GateStatus, run_gates
    from ._hscodecomp import (
        HSCODECOMP_PUBLISHED,
        HSCODECOMP_TAG,
        ImportSummary,
        PublishedFigure,
        read_hscodecomp,
        write_hscodecomp,
    )
    from ._original import original_payload, score_original
    from ._original_fixtures import ConversionSummary, convert_proposal, convert_suite, resolve_fixture
    from ._pack import EvidenceItem, Pack, digits, load_pack
    from ._pipeline import DutyStatus, Iteration, LLMProposer, Proposer, VerificationResult, verify
    from ._report import (
        CHANGE_THRESHOLD,
        BenchmarkReport,
        GroupStats,
        MixedScoringError,
        ReportDiff,
        build_report,
        compare_reports,
        load_report,
        render_diff,
        render_report,
    )
    from ._runner import Mode, TariffCaseRecord, case_key, case_keys, failed_case, run_case, run_cases
    from ._scoring import SCORING_MODES, CaseScore, ScoringMode, score_case
    from ._suite import CaseUnit, TariffSuite, tariff_outcome

__all__ = [
    "CaseUnit",
    "TariffSuite",
    "tariff_outcome",
    "CHANGE_THRESHOLD",
    "MixedScoringError",
    "CRITICAL_GATES",
    "HSCODECOMP_PUBLISHED",
    "HSCODECOMP_TAG",
    "SCORING_MODES",
    "BenchmarkReport",
    "Case",
    "CaseExpected",
    "CaseInput",
    "CaseNotes",
    "CaseOptions",
    "CaseScore",
    "Citation",
    "ConversionSummary",
    "Dossier",
    "DutyStatus",
    "EvidenceItem",
    "FixtureTransport",
    "GateResult",
    "GateStatus",
    "GroupStats",
    "GriStep",
    "ImportSummary",
    "Iteration",
    "LLMProposer",
    "Lever",
    "Mode",
    "Pack",
    "Proposer",
    "PublishedFigure",
    "RecordingProposer",
    "ScoringMode",
    "ReportDiff",
    "TariffCaseRecord",
    "VerificationResult",
    "WhatIf",
    "build_bundle",
    "build_report",
    "case_key",
    "case_keys",
    "compare_reports",
    "convert_proposal",
    "convert_suite",
    "digits",
    "failed_case",
    "list_cases",
    "load_case",
    "load_pack",
    "load_report",
    "load_suite",
    "original_payload",
    "read_hscodecomp",
    "render_diff",
    "render_report",
    "resolve_fixture",
    "run_case",
    "run_cases",
    "run_gates",
    "score_case",
    "score_original",
    "verify",
    "write_hscodecomp",
    "recorded_models",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
