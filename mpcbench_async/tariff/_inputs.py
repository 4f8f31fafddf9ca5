"""The tariff suites' settings in a sweep, apart from the suites: a sweep reads them whether or not it runs a tariff
suite, and importing the suites (pipeline, report, fixtures) costs a sweep that does not run one ~40 ms of
start-up (issue 31)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

__all__ = ["SCORING_MODES", "ScoringMode", "TariffInputs"]

ScoringMode = Literal["project", "original"]
SCORING_MODES: tuple[ScoringMode, ...] = ("project", "original")


class TariffInputs(msgspec.Struct, kw_only=True, frozen=True):
    """Where a sweep's tariff suites read their cases (``tariff_path``, ``hscodecomp_path``: directories with
    ``cases/``) and pack, and which scoring rules they apply (``scoring``: the project's or the original harness's)."""

    tariff_path: Path = Path("storage/benchmarks/tariff")
    hscodecomp_path: Path = Path("storage/benchmarks/hscodecomp")
    pack: Path = Path("storage/packs/tariff")
    scoring: ScoringMode = "project"
