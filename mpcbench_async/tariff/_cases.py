"""Tariff benchmark cases: ``storage/benchmarks/<suite>/cases/<case_type>/<id>.json`` (DESIGN.md §8).

Loading is strict: unknown keys and wrong types are errors naming the file and
the JSON path (``…/pos_01.json: Object contains unknown field `colour` - at `$.expected```).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import msgspec

from .._exceptions import InputError
from ..records import load_json_file

__all__ = ["Case", "CaseExpected", "CaseInput", "CaseNotes", "CaseOptions", "list_cases", "load_case", "load_suite"]

CaseType = Literal["positive", "negative", "adversarial", "no_savings", "savings_possible"]
Difficulty = Literal["easy", "medium", "hard", "expert"]
RefusalCategory = Literal["insufficient_info", "ambiguous", "out_of_scope", "missing_evidence"]


class _Strict(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    pass


class CaseOptions(_Strict):
    max_iters: Annotated[int, msgspec.Meta(ge=1, le=10)] = 3
    candidate_chapters: list[str] = []
    origin_country: str | None = None
    declared_value_usd: float | None = None


class CaseInput(_Strict):
    input: str
    options: CaseOptions = msgspec.field(default_factory=CaseOptions)
    evidence: list[str] = []


class CaseExpected(_Strict):
    preferred_hts: list[str] = []
    allowed_hts: list[str] = []
    must_not_hts: list[str] = []
    expected_accept: bool = True
    expected_refusal_category: RefusalCategory | None = None
    no_savings_expected: bool = False
    duty_delta_range: tuple[float, float] | None = None
    expected_duty_total_rate_pct: float | None = None
    expected_duty_delta_direction: Literal["decrease", "none", "increase"] | None = None
    lever_found_expected: bool | None = None
    lever_count_min: int | None = None
    lever_compliance_ok: bool | None = None
    expected_best_is_multi_step: bool | None = None
    min_lever_steps: int | None = None


class CaseNotes(_Strict):
    source: str = ""
    tags: list[str] = []
    rationale: str = ""


class Case(_Strict):
    id: str
    pack_id: str
    case_type: CaseType
    difficulty: Difficulty
    input: CaseInput
    expected: CaseExpected
    notes: CaseNotes = msgspec.field(default_factory=CaseNotes)


def load_case(path: str | Path) -> Case:
    """Load one case; unknown keys and wrong types are errors naming the file and JSON path."""
    return load_json_file(path, Case)


def list_cases(cases_dir: str | Path) -> list[Path]:
    cases_dir = Path(cases_dir)
    if not cases_dir.is_dir():
        raise InputError(f"{cases_dir}: cases directory not found")
    return sorted(cases_dir.glob("*/*.json"))


def load_suite(cases_dir: str | Path) -> list[Case]:
    """Every case under ``cases_dir``; ids must be unique."""
    cases, seen = [], {}
    for path in list_cases(cases_dir):
        case = load_case(path)
        if case.id in seen:
            raise InputError(f"{path}: $.id {case.id!r} is also used by {seen[case.id]}")
        seen[case.id] = path
        cases.append(case)
    return cases


