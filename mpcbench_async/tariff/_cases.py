"""Tariff benchmark cases: ``storage/benchmarks/<suite>/cases/<case_type>/<id>.json`` (DESIGN.md §8).

Loading is strict but reads other suites as they are written. Unknown keys and
wrong types are errors naming the file and the JSON path (``…/pos_01.json:
Object contains unknown field `colour` - at `$.expected```). Enum values are
read case-insensitively with ``-`` or a space for ``_``, and the words other
harnesses use are mapped to the canonical ones (``flat``, ``unchanged`` →
``none``; ``down`` → ``decrease``; ``multi_step`` → ``savings_possible``…);
any other value is an error listing the allowed values. An ``expected`` block
that contradicts itself is rejected: HTS codes that are not 6–10 digits (dots
allowed), a refusal expected without a category, a reversed
``duty_delta_range``. Ids must be safe file names (fixtures are written as
``<id>.json``): no path separator, ``..``, control character or more than 200
bytes (``_validate.id_problem``). ``load_suite`` reports every bad file at once.

A case's duty terms are its options' ``import_country`` (a two-letter code, or
"Canada", "USA"…, read as the code) and ``trade_programme`` ("USMCA", "GSP";
"MFN" for the general rate). Other harnesses' names for them are read as these
(``importing_country``, ``destination_country``; ``trade_program``,
``tariff_treatment``…, listed in ``_OPTION_ALIASES``); two names of one field
with different values are an error, and any other key stays one. Where the
options say nothing, ``Case.import_country`` and ``Case.trade_programme`` read
the tags (``_trade``); where those say nothing either, the pack's default
country and the general rate apply.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from .._exceptions import InputError, RecordDecodeError
from .._validate import id_problem
from ._records import RefusalCategory
from ._trade import country_code, country_from_tags, country_from_text, programme_from_tags, programme_from_text

__all__ = ["Case", "CaseExpected", "CaseInput", "CaseNotes", "CaseOptions", "list_cases", "load_case", "load_suite"]

CaseType = Literal["positive", "negative", "adversarial", "no_savings", "savings_possible"]
Difficulty = Literal["easy", "medium", "hard", "expert"]
DeltaDirection = Literal["decrease", "none", "increase"]


class _Strict(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    pass


class CaseOptions(_Strict):
    max_iters: Annotated[int, msgspec.Meta(ge=1, le=10)] = 3
    candidate_chapters: list[str] = []
    origin_country: str | None = None
    declared_value_usd: float | None = None
    import_country: str | None = None
    trade_programme: str | None = None


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
    expected_duty_delta_direction: DeltaDirection | None = None
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

    @property
    def import_country(self) -> str | None:
        """The importing country: the options', else the first a tag names, else the one the request says the goods
        are imported into (``None``: the pack's default)."""
        options = self.input.options
        return (options.import_country or country_from_tags(self.notes.tags, origin=options.origin_country)
                or country_from_text(self.input.input))

    @property
    def trade_programme(self) -> str | None:
        """The programme the goods enter under: the options' (even "MFN"), else the first a tag names, else the
        first the request claims, else ``None``."""
        options = self.input.options
        if options.trade_programme is not None:
            return options.trade_programme
        return programme_from_tags(self.notes.tags) or programme_from_text(self.input.input)


class _Enum(msgspec.Struct, frozen=True):
    """One enum field: its canonical values, the other words read as them, whether null is allowed."""

    allowed: tuple[str, ...]
    aliases: dict[str, str | None]
    optional: bool


_ENUMS: dict[tuple[str, ...], _Enum] = {
    ("case_type",): _Enum(typing.get_args(CaseType), {"multi_step": "savings_possible", "savings": "savings_possible"},
                          optional=False),
    ("difficulty",): _Enum(typing.get_args(Difficulty),
                           {"moderate": "medium", "intermediate": "medium", "difficult": "hard"}, optional=False),
    ("expected", "expected_refusal_category"): _Enum(
        typing.get_args(RefusalCategory),
        {"insufficient_information": "insufficient_info", "ambiguity": "ambiguous", "out_of_domain": "out_of_scope",
         "none": None, "null": None, "": None}, optional=True),
    ("expected", "expected_duty_delta_direction"): _Enum(
        typing.get_args(DeltaDirection),
        {"flat": "none", "unchanged": "none", "no_change": "none", "same": "none", "zero": "none", "neutral": "none",
         "down": "decrease", "decreased": "decrease", "lower": "decrease", "reduce": "decrease",
         "reduction": "decrease", "up": "increase", "increased": "increase", "higher": "increase"}, optional=True),
}

_HTS_SHAPE = re.compile(r"\d+(?:\.\d+)*")
_CODE_FIELDS = ("preferred_hts", "allowed_hts", "must_not_hts")


def _normalise_enums(data: Any) -> list[str]:
    """Map enum values to their canonical spelling in place; return a problem for each value that has none."""
    problems = []
    for path, enum in _ENUMS.items():
        node = data
        for step in path[:-1]:
            node = node.get(step) if isinstance(node, dict) else None
        if not isinstance(node, dict) or path[-1] not in node:
            continue
        value = node[path[-1]]
        if value is None and enum.optional:
            continue
        key = value.strip().lower().replace("-", "_").replace(" ", "_") if isinstance(value, str) else None
        if key in enum.allowed:
            node[path[-1]] = key
        elif key in enum.aliases and (enum.aliases[key] is not None or enum.optional):
            node[path[-1]] = enum.aliases[key]
        else:
            shown = repr(value) if isinstance(value, str) else msgspec.json.encode(value).decode()
            problems.append(f"Invalid enum value {shown} - at `$.{'.'.join(path)}` "
                            f"(allowed: {', '.join(enum.allowed)}{', or null' if enum.optional else ''})")
    return problems


# Other harnesses' names for the options' duty terms.
_OPTION_ALIASES = {
    # ``country`` and ``jurisdiction`` beside ``origin_country`` name the tariff that applies: the importer's.
    "import_country": ("importing_country", "destination_country", "country_of_import", "country_of_importation",
                       "country", "jurisdiction"),
    "trade_programme": ("trade_program", "programme", "program", "trade_agreement", "preference_programme",
                        "preference_program", "preferential_programme", "preferential_program", "special_programme",
                        "special_program", "tariff_treatment"),
}


def _normalise_options(data: Any) -> list[str]:
    """Read the duty terms' other names as the canonical fields and a country name as its code, in place; return a
    problem for two names of one field that disagree and for a country that is not one."""
    node = data.get("input") if isinstance(data, dict) else None
    options = node.get("options") if isinstance(node, dict) else None
    if not isinstance(options, dict):
        return []
    problems = []
    for field, aliases in _OPTION_ALIASES.items():
        for alias in aliases:
            if alias not in options:
                continue
            value = options.pop(alias)
            if field in options and options[field] != value:
                problems.append(f"`{alias}` {value!r} contradicts `{field}` {options[field]!r} (two names of one "
                                f"option) - at `$.input.options.{alias}`")
            options[field] = value
    country = options.get("import_country")
    if isinstance(country, str):
        options["import_country"] = country_code(country)
        if options["import_country"] is None:
            problems.append(f"import_country {country!r} is not a country: give its two-letter code (US, CA) - at "
                            "`$.input.options.import_country`")
    return problems


def _inconsistencies(case: Case) -> list[str]:
    """An id that cannot name a fixture file, and expectations that contradict themselves or cannot be scored."""
    expected = case.expected
    problems = []
    if (problem := id_problem(case.id)) is not None:
        problems.append(f"id {case.id[:80]!r} {problem} (it names the case's fixture file) - at `$.id`")
    for field in _CODE_FIELDS:
        for i, code in enumerate(getattr(expected, field)):
            count = sum(ch.isdigit() for ch in code)
            if not _HTS_SHAPE.fullmatch(code) or not 6 <= count <= 10:
                problems.append(f"{code!r} is not an HTS code (6 to 10 digits, dots allowed) - at "
                                f"`$.expected.{field}[{i}]`")
    if not expected.expected_accept and expected.expected_refusal_category is None:
        problems.append("a refusal is expected (expected_accept is false) but no refusal category is given (one of: "
                        f"{', '.join(typing.get_args(RefusalCategory))}) - at `$.expected.expected_refusal_category`")
    if expected.duty_delta_range is not None and expected.duty_delta_range[0] > expected.duty_delta_range[1]:
        low, high = expected.duty_delta_range
        problems.append(f"duty_delta_range [{low:g}, {high:g}] is reversed (low bound first) - at "
                        "`$.expected.duty_delta_range`")
    return problems


def _read_case(path: Path) -> tuple[Case | None, list[str]]:
    """The case in ``path`` and every problem found in it (each a message ending in its JSON path)."""
    try:
        data = msgspec.json.decode(path.read_bytes())
    except OSError as exc:
        return None, [f"cannot read ({exc.strerror})"]
    except msgspec.DecodeError as exc:
        return None, [f"not valid JSON ({exc})"]
    except RecursionError:  # msgspec gives up on ~1,000 levels of nesting
        return None, ["nested too deeply to read"]
    problems = _normalise_enums(data) + _normalise_options(data)
    if problems:
        return None, problems
    try:
        case = msgspec.convert(data, Case)
    except msgspec.ValidationError as exc:
        return None, [str(exc)]
    problems = _inconsistencies(case)
    return (None if problems else case), problems


def load_case(path: str | Path) -> Case:
    """Load one case; every problem found is named with the file and its JSON path."""
    path = Path(path)
    case, problems = _read_case(path)
    if case is None:
        raise RecordDecodeError("\n".join(f"{path}: {p}" for p in problems))
    return case


def list_cases(cases_dir: str | Path) -> list[Path]:
    """Case files under ``cases_dir``: ``<case_type>/<id>.json`` or directly in it, hidden files skipped."""
    cases_dir = Path(cases_dir)
    if not cases_dir.is_dir():
        raise InputError(f"{cases_dir}: cases directory not found")
    return sorted(p for p in cases_dir.rglob("*.json")
                  if not any(part.startswith(".") for part in p.relative_to(cases_dir).parts))


def load_suite(cases_dir: str | Path) -> list[Case]:
    """Every case under ``cases_dir``, ids unique; all bad files are reported together, not just the first."""
    paths = list_cases(cases_dir)
    cases: list[Case] = []
    seen: dict[str, Path] = {}
    problems: list[str] = []
    bad: set[Path] = set()
    for path in paths:
        case, found = _read_case(path)
        if case is not None and case.id in seen:
            found = [f"id {case.id!r} is also used by {seen[case.id]} - at `$.id`"]
        if found:
            problems += [f"{path}: {p}" for p in found]
            bad.add(path)
            continue
        assert case is not None, "_read_case gives a case or its problems"
        seen[case.id] = path
        cases.append(case)
    if problems:
        raise InputError(f"{cases_dir}: {len(bad)} of {len(paths)} case file(s) are invalid:\n"
                         + "\n".join(f"  {p}" for p in problems))
    return cases
