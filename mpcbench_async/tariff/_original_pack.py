"""The original tariff harness's pack layout, read into the same ``Pack`` as the project's own.

The original evidence files are JSON lists of ``{source_id, source_type, title, effective_date, url,
text}``: ``gri.json``, ``chapter_NN_notes.json``, ``chapter_NN_headings.json`` and
``section_<roman>_notes.json``, beside ``axioms.json`` and ``ontology.json``. Two placements load:
the harness's own (``<root>/evidence/sources/*.json``, axioms and ontology at ``<root>``) and flat
(everything in ``<root>``, e.g. ``storage/packs/<suite>/gri.json`` as the original list).

Each item becomes an ``EvidenceItem`` with the original ``source_id`` as its id and the original
``text`` unchanged: original answers cite ``{source_id, quote}`` with the quote a verbatim part of
that text, and the citation gate checks exactly that, so neither ids nor wording may change.

- GRI texts get source ``gri``: every evidence bundle carries them.
- Chapter notes and headings get source ``chapter_NN``: a case naming candidate chapter NN gets them,
  any other case gets the notes that best match it. Headings carry their 4 digits (``HTS.8544`` →
  ``8544``), as the project's heading notes do.
- Section notes get source ``section_<roman>`` and count as notes of every chapter of their section
  (``build_bundle`` adds them for a candidate chapter through ``section_source``): GRI 1 classifies
  by the headings "and any relative section or chapter notes", and the project's own pack files its
  section notes under each chapter for the same reason. One item serves all the section's chapters,
  so the original id stays citable.
- The original pack has no duty table: the rate table is empty, so every stated duty is
  ``unverified`` (never contradicted, never penalised).

``axioms.json`` and ``ontology.json`` are checked for shape (a corrupt or misplaced file is still
reported) but not used. The axioms state the GRI order (GRI 1 before GRI 2 …, GRI 3(b) essential
character), which the ``gri_sequence`` gate already enforces and the GRI texts in every bundle
state; the ontology lists material and component axes, mutually exclusive materials and aliases
for the original harness's own feature extraction, which this pipeline does not have: the model
reads the request as written.

Every error is one line naming the file: a file of neither layout, a malformed item, a file the
loader does not read, or the project's layout mixed into an original pack.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from pathlib import Path
from typing import Any

import msgspec

from .._exceptions import InputError
from ..records import load_json_file
from ._pack import EvidenceItem, Pack, digits

__all__ = ["is_original_pack", "load_original_pack", "section_source"]

# The HS sections and the first chapter of each (section XXII: the US national chapters 98–99).
_SECTIONS = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii", "xiii", "xiv", "xv", "xvi",
             "xvii", "xviii", "xix", "xx", "xxi", "xxii")
_FIRST_CHAPTER = (1, 6, 15, 16, 25, 28, 39, 41, 44, 47, 50, 64, 68, 71, 72, 84, 86, 90, 93, 94, 97, 98)
_CHAPTER_FILE = re.compile(r"chapter_(0[1-9]|[1-9]\d)_(notes|headings)\.json")
_SECTION_FILE = re.compile(r"section_([ivx]+)_notes\.json")
_READ = ("gri.json, chapter_NN_notes.json, chapter_NN_headings.json and section_<roman>_notes.json "
         "(axioms.json and ontology.json at the top)")


class _Source(msgspec.Struct, forbid_unknown_fields=True):
    source_id: str
    source_type: str
    text: str
    title: str = ""
    effective_date: str | None = None
    url: str | None = None


class _Axiom(msgspec.Struct):
    subject: str
    predicate: str
    obj: str
    is_true: bool
    confidence: float
    type: str


class _Ontology(msgspec.Struct):
    opposites: list[list[str]]
    mutex_sets: list[list[str]]
    aliases: dict[str, str]
    material_axes: list[str]
    component_axes: list[str]


# Checked for shape, not used (see the module docstring).
_UNUSED: dict[str, Any] = {"axioms.json": list[_Axiom], "ontology.json": _Ontology}


class _File(msgspec.Struct, frozen=True):
    """What an evidence file holds: its items' source and source_type, the chapter its headings must be
    under, and its place in the pack: the GRIs, then each section's notes before its chapters' notes and
    headings, the broader text first."""

    order: tuple[int, int]
    source: str
    source_type: str
    chapter: str | None = None


def section_source(chapter: str) -> str | None:
    """The source of the section notes that apply to ``chapter`` (``"85"`` → ``"section_xvi"``), or
    ``None`` when it is not a chapter number 1–99."""
    if not chapter.isdigit() or not 1 <= int(chapter) <= 99:
        return None
    return f"section_{_SECTIONS[bisect_right(_FIRST_CHAPTER, int(chapter)) - 1]}"


def is_original_pack(root: Path) -> bool:
    """Whether ``root`` is in the original layout: it has ``evidence/sources/``, or its ``gri.json`` is a
    JSON list (the project's is an object)."""
    if (root / "evidence" / "sources").is_dir():
        return True
    try:
        return (root / "gri.json").read_bytes().lstrip()[:1] == b"["
    except OSError:
        return False


def load_original_pack(root: Path) -> Pack:
    """Read an original-layout pack (either placement) into a ``Pack`` with no duty rates."""
    nested = root / "evidence" / "sources"
    sources = nested if nested.is_dir() else root
    where = "evidence/sources/" if sources == nested else "its gri.json is the original list"
    project = ["notes", "duty_rates.json"] + (["gri.json"] if sources == nested else [])
    for name in project:
        if (root / name).exists():
            raise InputError(f"{root / name}: the project's pack layout inside an original harness pack ({where}); "
                             "a pack is in one layout: move it out, or convert the whole pack")
    if not (sources / "gri.json").is_file():
        raise InputError(f"{sources / 'gri.json'}: missing; an original harness pack needs its GRI texts")
    files: list[tuple[_File, Path]] = []
    for path in sorted(sources.glob("*.json")):
        if sources == root and path.name in _UNUSED:
            continue
        kind = _kind(path.name)
        if kind is None:
            raise InputError(f"{path}: unsupported file in an original harness pack; the loader reads {_READ}: "
                             "rename it to the one whose items it holds, or move it out")
        files.append((kind, path))
    items: list[EvidenceItem] = []
    seen: dict[str, str] = {}
    for kind, path in sorted(files, key=lambda found: found[0].order):
        for number, entry in enumerate(_entries(path), 1):
            item = _item(path, number, entry, kind)
            if item.id in seen:
                raise InputError(f"{path}: original harness evidence list, item {number}: source_id {item.id!r} is "
                                 f"also in {seen[item.id]}")
            seen[item.id] = path.name
            items.append(item)
    for name, shape in _UNUSED.items():
        if (root / name).exists():
            load_json_file(root / name, shape)
    return Pack(root, items, {})


def _kind(name: str) -> _File | None:
    """What the evidence file called ``name`` holds; ``None`` for a name the original layout does not use."""
    if name == "gri.json":
        return _File((0, 0), "gri", "gri")
    if chapter := _CHAPTER_FILE.fullmatch(name):
        number, what = chapter.groups()
        if what == "notes":
            return _File((int(number), 1), f"chapter_{number}", "chapter_note")
        return _File((int(number), 2), f"chapter_{number}", "heading", number)
    section = _SECTION_FILE.fullmatch(name)
    if section and section[1] in _SECTIONS:
        return _File((_FIRST_CHAPTER[_SECTIONS.index(section[1])], 0), f"section_{section[1]}", "section_note")
    return None


def _entries(path: Path) -> list[Any]:
    data = load_json_file(path, Any)
    if not isinstance(data, list):
        raise InputError(f"{path}: not an original harness evidence list (a JSON list of {{source_id, source_type, "
                         "title, effective_date, url, text}})")
    return data


def _item(path: Path, number: int, entry: Any, kind: _File) -> EvidenceItem:
    """Item ``number`` (from 1) of the file as evidence, or a one-line error naming the file and the item."""
    where = f"{path}: original harness evidence list, item {number}"
    try:
        source = msgspec.convert(entry, _Source)
    except msgspec.ValidationError as exc:
        raise InputError(f"{where}: {exc}") from exc
    if source.source_type != kind.source_type:
        raise InputError(f"{where}: source_type {source.source_type!r} in a file of {kind.source_type!r} items")
    heading = None
    if kind.chapter is not None:
        heading = digits(source.source_id)[:4]
        if len(heading) < 4 or not heading.startswith(kind.chapter):
            raise InputError(f"{where}: {source.source_id!r} is not a heading of chapter {kind.chapter}")
    return EvidenceItem(id=source.source_id, source=kind.source, text=source.text, heading=heading)
