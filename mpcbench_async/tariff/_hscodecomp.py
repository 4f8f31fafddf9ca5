"""HSCodeComp as a tariff suite: the JSONL importer and the published figures its report sits beside.

HSCodeComp (AIDC-AI, Apache-2.0, arXiv 2510.19631) is 632 real e-commerce
listings, each labelled by customs experts with a 10-digit US code. Each line
becomes one acceptance case for the ``tariff`` pack: the request is the title,
the attributes, the price and currency and the English category path (never
the dataset's own ``question`` prompt), and the preferred code is the expert's
10-digit code as a string (``hs_code`` is an integer in the file, so a chapter
01–09 code has lost its leading zero: it is restored). Case ids come from
``task_id`` (``hscodecomp_0042``), so they are stable across imports. The
cases directory is written beside the old one and swapped in, so a failed
import leaves the previous suite intact.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import msgspec

from .._exceptions import InputError
from .._validate import id_problem
from ..runtime import atomic_write_bytes
from ._cases import Case, CaseExpected, CaseInput, CaseNotes

__all__ = ["HSCODECOMP_PUBLISHED", "HSCODECOMP_TAG", "ImportSummary", "PublishedFigure", "read_hscodecomp",
           "write_hscodecomp"]

HSCODECOMP_TAG = "hscodecomp"
_PAPER = "HSCodeComp, arXiv 2510.19631"
_HSCODECOMP_TEST = "HSCodeComp test set (632 listings)"


class PublishedFigure(msgspec.Struct, kw_only=True, frozen=True):
    """A published result: exact-match accuracy on the first N digits (by N) and/or average digits correct."""

    system: str
    source: str
    dataset: str = _HSCODECOMP_TEST
    accuracy: dict[str, float] = {}
    average_digits_correct: float | None = None


HSCODECOMP_PUBLISHED = (
    PublishedFigure(system="GPT-5", source=_PAPER, accuracy={"6": 0.5633, "10": 0.2896}),
    PublishedFigure(system="GPT-4o", source=_PAPER, accuracy={"6": 0.4573, "10": 0.1835}),
    PublishedFigure(system="Best agent (SmolAgent, GPT-5 with vision)", source=_PAPER, accuracy={"10": 0.468}),
    PublishedFigure(system="Human experts", source=_PAPER, accuracy={"10": 0.95}),
    PublishedFigure(system="GPT-5-Thinking", source="ATLAS, arXiv 2509.18400", dataset="ATLAS test set",
                    average_digits_correct=5.61),
    PublishedFigure(system="ATLAS fine-tuned model", source="ATLAS, arXiv 2509.18400", dataset="ATLAS test set",
                    average_digits_correct=6.30),
)

_REQUEST = "Classify this e-commerce listing to its 10-digit US HTS code."
_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]+")


class _Row(msgspec.Struct, kw_only=True):
    """The fields of one HSCodeComp line that a case uses (others, such as ``question``, are ignored)."""

    task_id: int | str
    product_name: str
    hs_code: int | str
    product_attributes: str | dict[str, Any] | None = None
    price: float | None = None
    currency_code: str | None = None
    cate_lv1_desc: str | None = None
    cate_lv2_desc: str | None = None
    cate_lv3_desc: str | None = None
    cate_lv4_desc: str | None = None
    cate_lv5_desc: str | None = None


class ImportSummary(msgspec.Struct, kw_only=True):
    """What an import wrote: the number of cases, the license files copied and those not found."""

    cases: int
    cases_dir: str
    copied: list[str] = []
    missing: list[str] = []


def _code(value: int | str) -> str:
    """The 10-digit code as a string; 9 digits means the leading zero of chapter 01–09 was lost."""
    text = str(value).strip()
    if not re.fullmatch(r"[\d. ]+", text):
        raise ValueError(f"hs_code {value!r} is not a code - at `$.hs_code`")
    found = re.sub(r"\D", "", text)
    if len(found) not in (9, 10) or found.zfill(10).startswith("00"):
        raise ValueError(f"hs_code {value!r} has {len(found)} digits; HSCodeComp codes have 10 - at `$.hs_code`")
    return found.zfill(10)


def _case_id(task_id: int | str) -> str:
    if isinstance(task_id, int):
        if task_id < 0:
            raise ValueError(f"task_id {task_id} is negative - at `$.task_id`")
        return f"{HSCODECOMP_TAG}_{task_id:04d}"
    cleaned = _SAFE_ID.sub("_", task_id.strip()).strip("_")
    if not cleaned:
        raise ValueError(f"task_id {task_id!r} has no usable characters - at `$.task_id`")
    if (problem := id_problem(case_id := f"{HSCODECOMP_TAG}_{cleaned}")) is not None:
        raise ValueError(f"task_id {task_id[:80]!r} gives a case id that {problem} - at `$.task_id`")
    return case_id


def _one_line(value: Any) -> str:
    text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
    return " ".join(text.split())


def _attributes(raw: str | dict[str, Any] | None) -> list[tuple[str, str]]:
    """The listing's attributes as (name, value) pairs in their order; empty values dropped."""
    if raw is None or raw == "":
        return []
    if isinstance(raw, str):
        try:
            raw = msgspec.json.decode(raw)
        except msgspec.DecodeError as exc:
            raise ValueError(f"product_attributes is not a JSON object ({exc}) - at `$.product_attributes`") from exc
        if not isinstance(raw, dict):
            raise ValueError("product_attributes is not a JSON object - at `$.product_attributes`")
    pairs = [(_one_line(k), _one_line(v)) for k, v in raw.items() if v is not None]
    return [(k, v) for k, v in pairs if k and v]


def _request(row: _Row) -> str:
    """The request text: title, attributes, price and currency, English category path."""
    lines = [_REQUEST, f"Title: {_one_line(row.product_name)}"]
    attributes = _attributes(row.product_attributes)
    if attributes:
        lines += ["Attributes:"] + [f"- {k}: {v}" for k, v in attributes]
    if row.price is not None:
        lines.append(f"Price: {row.price}" + (f" {row.currency_code.strip()}" if row.currency_code else ""))
    path: list[str] = []
    for level in (row.cate_lv1_desc, row.cate_lv2_desc, row.cate_lv3_desc, row.cate_lv4_desc, row.cate_lv5_desc):
        name = _one_line(level or "")
        if name and (not path or path[-1] != name):
            path.append(name)
    if path:
        lines.append(f"Category: {' > '.join(path)}")
    return "\n".join(lines)


def _to_case(row: _Row, source: str) -> Case:
    code = _code(row.hs_code)
    return Case(id=_case_id(row.task_id), pack_id="tariff", case_type="positive", difficulty="hard",
                input=CaseInput(input=_request(row)),
                expected=CaseExpected(preferred_hts=[code], expected_accept=True),
                notes=CaseNotes(source=f"{source}, task_id {row.task_id} (HSCodeComp by AIDC-AI, Apache-2.0)",
                                tags=[HSCODECOMP_TAG, f"chapter_{code[:2]}"]))


def read_hscodecomp(path: str | Path) -> list[Case]:
    """Convert an HSCodeComp JSONL file into cases; every bad line is reported (line and field) at once."""
    path = Path(path)
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    decoder = msgspec.json.Decoder(_Row)
    cases: list[Case] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            case = _to_case(decoder.decode(line), path.name)
        except ValueError as exc:  # msgspec's decode and validation errors are ValueErrors too
            syntax = isinstance(exc, msgspec.DecodeError) and not isinstance(exc, msgspec.ValidationError)
            problems.append(f"{path}:{number}: " + (f"not valid JSON ({exc})" if syntax else str(exc)))
            continue
        except RecursionError:  # msgspec gives up on ~1,000 levels of nesting
            problems.append(f"{path}:{number}: nested too deeply to read")
            continue
        if case.id in first_line:
            problems.append(f"{path}:{number}: task_id gives case id {case.id!r}, already used on line "
                            f"{first_line[case.id]} - at `$.task_id`")
            continue
        first_line[case.id] = number
        cases.append(case)
    if problems:
        raise InputError(f"{path}: {len(problems)} line(s) cannot be imported:\n"
                         + "\n".join(f"  {p}" for p in problems))
    if not cases:
        raise InputError(f"{path}: no listings found")
    return cases


def _check_target(cases_dir: Path) -> None:
    """Refuse to replace a cases directory that holds anything but a previous HSCodeComp import."""
    if not cases_dir.exists():
        return
    foreign = [p for p in cases_dir.rglob("*") if p.is_file() and not p.name.startswith(f"{HSCODECOMP_TAG}_")]
    if foreign:
        raise InputError(f"{cases_dir}: holds other cases ({foreign[0].relative_to(cases_dir)}"
                         f"{f' and {len(foreign) - 1} more' if len(foreign) > 1 else ''}); import into a new "
                         "directory or one holding a previous HSCodeComp import")


def write_hscodecomp(cases: list[Case], out_dir: str | Path, *,
                     license_dir: str | Path | None = None) -> ImportSummary:
    """Write ``out_dir/cases/<case_type>/<id>.json`` (swapped in whole) and copy LICENSE and NOTICE beside it."""
    out_dir = Path(out_dir)
    target = out_dir / "cases"
    _check_target(target)
    staging = out_dir / f".cases.tmp-{os.getpid()}"
    retired = out_dir / f".cases.old-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for case in cases:
            file = staging / case.case_type / f"{case.id}.json"
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(msgspec.json.format(msgspec.json.encode(case)) + b"\n")
        if target.exists():
            os.replace(target, retired)
        try:
            os.replace(staging, target)
        except OSError:
            if retired.exists():
                os.replace(retired, target)
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(retired, ignore_errors=True)
    summary = ImportSummary(cases=len(cases), cases_dir=str(target))
    for name in ("LICENSE", "NOTICE"):
        source = Path(license_dir) / name if license_dir is not None else None
        if source is not None and source.is_file():
            atomic_write_bytes(out_dir / name, source.read_bytes(), fsync=False)
            summary.copied.append(name)
        else:
            summary.missing.append(name)
    return summary
