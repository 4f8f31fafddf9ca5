"""The tariff pack verification benchmark: cases, pipeline, gates, scoring, reports, compare."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._cases import Case, load_case, load_suite
    from ._fixtures import FixtureTransport, recorded_models
    from ._hscodecomp import read_hscodecomp, write_hscodecomp
    from ._inputs import SCORING_MODES, ScoringMode, TariffInputs
    from ._original_fixtures import convert_suite
    from ._pack import Pack, digits, load_pack
    from ._pipeline import LLMProposer, Proposer, verify
    from ._records import CaseScore, Dossier, TariffCaseRecord, VerificationResult
    from ._report import (
        CHANGE_THRESHOLD,
        BenchmarkReport,
        MixedScoringError,
        ReportDiff,
        build_report,
        compare_reports,
        load_report,
        render_diff,
        render_report,
    )
    from ._runner import Mode, run_cases
    from ._scoring import score_case
    from ._suite import TariffSuite

__all__ = ["SCORING_MODES", "BenchmarkReport", "Case", "CaseScore", "Dossier", "FixtureTransport", "LLMProposer",
           "Pack", "Proposer", "ScoringMode", "TariffCaseRecord", "TariffInputs", "TariffSuite", "VerificationResult",
           "build_report", "compare_reports", "load_case", "load_pack", "load_report", "load_suite", "read_hscodecomp",
           "render_diff", "render_report", "run_cases", "score_case", "verify", "write_hscodecomp"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["CHANGE_THRESHOLD", "MixedScoringError", "Mode", "ReportDiff", "convert_suite", "digits",
             "recorded_models"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
