"""The classification dossier a proposer returns, the evidence bundle it must cite, and the reading of
whether a request relies on a document it does not supply."""

from __future__ import annotations

import re
import string
from typing import Literal

import msgspec

from ._cases import RefusalCategory
from ._original_pack import section_source
from ._pack import EvidenceItem, Pack

__all__ = ["Citation", "Dossier", "GriStep", "Lever", "WhatIf", "build_bundle", "references_missing_document"]


class _Strict(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    pass


class Citation(_Strict):
    evidence_id: str
    quote: str


class GriStep(_Strict):
    rule: str
    conclusion: str
    citations: list[Citation] = []


class Candidate(_Strict):
    heading: str
    reason: str = ""


class Lever(_Strict):
    id: str
    description: str
    steps: list[str]
    new_hts: str
    new_duty_pct: float
    compliance_ok: bool = True


class WhatIf(_Strict):
    change: str
    new_hts: str | None = None
    new_duty_pct: float | None = None


class Dossier(_Strict):
    """A proposal: accept with a code and its analysis, or refuse with a category (and questions).

    ``savings_note`` says why the optimized duty is what it is ("no savings: the rate cannot be reduced lawfully");
    the original harness's scoring (``--scoring original``) requires it to say so on a no-savings case.
    """

    decision: Literal["accept", "refuse"]
    refusal_category: RefusalCategory | None = None
    refusal_reason: str = ""
    questions: list[str] = []
    candidate_headings: list[Candidate] = []
    gri_steps: list[GriStep] = []
    hts_code: str | None = None
    baseline_duty_pct: float | None = None
    optimized_duty_pct: float | None = None
    levers: list[Lever] = []
    what_if: list[WhatIf] = []
    trade_programme: str | None = None  # the programme the stated duties are claimed under ("USMCA", "GSP"), if any
    savings_note: str = ""

    def citations(self) -> list[Citation]:
        return [c for step in self.gri_steps for c in step.citations]


# What a request can rely on that the classifier must see: documents that carry facts about the goods ...
_FACT_DOC = (r"(?:(?:(?:lab(?:oratory)?|test(?:ing)?|inspection|audit)\s+)?reports?|(?:test\s+)?results|"
             r"spec(?:ification)?s?[\s-]?sheets?|data[\s-]?sheets?|tech(?:nical)?[\s-]+(?:files?|sheets?|packs?|data|"
             r"documentation)|drawings?|blueprints?|schematics?|documents?|(?:lab(?:oratory)?|fib(?:re|er)|chemical|"
             r"composition|material|test)\s+analys[ie]s|bills?\s+of\s+materials?|boms?|pdfs?|spreadsheets?|m?sds)")
# ... the same words in their looser senses, counted only with a determiner ("the specifications", not "EU specs") ...
_LOOSE_DOC = r"(?:specs|specifications|documentation|diagrams?|sheets?|files?)"
# ... papers that listings also mention as boilerplate ("Certificate: Yes"), so only a citing phrase counts ...
_PAPER = r"(?:certificates?|certs?|invoices?|packing\s+lists?|declarations?|brochures?|catalog(?:ue)?s?)"
# ... and images, which listings point to for size and colour ("See picture"), so only an attached one counts.
_IMAGE = r"(?:photos?|photographs?|pictures?|images?|pics)"
# A document word that is really part of a product name ("document pocket", "drawing board", "report cover").
_NOT_A_DOCUMENT = (r"(?!\s+(?:pockets?|holders?|folders?|bags?|cases?|wallets?|organi[sz]ers?|trays?|boxe?s?|clips?|"
                   r"stands?|sleeves?|cabinets?|boards?|pads?|paper|pens?|pencils?|books?|sets?|tools?|rulers?|"
                   r"covers?|binders?|frames?|albums?|cards?|sensors?|readers?|printers?|scanners?|protectors?|"
                   r"kits?|hooks?|metal)\b)")
_ATTACHED = r"(?:attached|enclosed|accompanying|appended|uploaded|linked)"
_DETERMINER = r"(?:the|our|my|this|that|these|those|its|their|an?)\s+"
# Words between the determiner and the document; not those of app and product wording ("sleep report", "nail file").
_MODIFIERS = (r"(?:(?!(?:sleep|health|heart|fitness|activity|exercise|sports?|training|weather|daily|weekly|monthly|"
              r"size|colou?r|nail|metal|care|user)\b)[\w.'’/-]+\s+){0,3}?")
_CITING = (r"(?:see|refer(?:ring)?\s+to|consult|check|review|as\s+per|per|according\s+to|in\s+accordance\s+with|"
           r"based\s+on|with\s+reference\s+to|(?:is|are|detailed|described|specified|shown|given|stated|listed|"
           r"set\s+out|found|provided|documented|indicated|outlined|defined|noted|recorded|contained|explained|"
           r"reported|summari[sz]ed|information|details|figures)\s+(?:in|on|from)|"
           r"(?:confirmed|certified|evidenced|verified|established)\s+by)\s+")
_ANY_DOC = f"(?:{_FACT_DOC}|{_PAPER}|{_LOOSE_DOC}|{_ATTACHED}\\s+{_MODIFIERS}{_IMAGE})"
_RELIANCE = [re.compile(p, re.I) for p in (
    # "as per the attached lab report", "stated in the enclosed mill certificate", "see lab report", "per invoice"
    rf"\b{_CITING}(?:{_DETERMINER}(?:{_ATTACHED}\s+)?{_MODIFIERS}{_ANY_DOC}|"
    rf"(?:{_ATTACHED}\s+)?(?:{_FACT_DOC}|{_PAPER}))\b{_NOT_A_DOCUMENT}",
    # "the attached spec sheet", "enclosed UN 38.3 test report", "attached photos", "uploaded file"
    rf"\b{_ATTACHED}\s+(?:{_MODIFIERS}(?:{_FACT_DOC}|{_IMAGE})|{_LOOSE_DOC})\b{_NOT_A_DOCUMENT}",
    # "the attached mill certificate states ..."
    rf"\b{_ATTACHED}\s+{_MODIFIERS}{_PAPER}\s+(?:states?|shows?|gives?|lists?|specifies|confirms?|indicates?|"
    r"contains?|details?|says)\b",
    # "lab report attached", "photos are enclosed", "drawing (enclosed)" — not "attached to", not "Report: attached"
    rf"\b(?:{_FACT_DOC}|{_IMAGE})\s*(?:\(\s*{_ATTACHED}\s*\)|(?:(?:is|are|has\s+been|have\s+been)\s+)?{_ATTACHED}\b"
    r"(?!\s+(?:to|on|at|onto|with|inside|in)\b))",
    # "please find attached", "attached please find the BOM", "I have attached the drawings"
    rf"\b(?:please\s+)?find\s+(?:attached|enclosed)\b|\b(?:attached|enclosed)\s+(?:please\s+find|is|are)\s+"
    rf"(?:{_DETERMINER})?{_MODIFIERS}{_ANY_DOC}\b|\b(?:i|we)(?:'ve|\s+have)?\s+(?:attached|enclosed|uploaded)\s+"
    rf"(?:{_DETERMINER})?{_MODIFIERS}(?:{_ANY_DOC}|{_IMAGE})\b",
    # "see attached", "as per attached.", "refer to attachment", "in the attachment"
    r"\b(?:see|as|per|as\s+per)\s+(?:the\s+)?(?:attached|enclosed)\b(?=\s*(?:$|[.,;:)]|for\b|and\b))"
    rf"|\b(?:see|refer\s+to|per|as\s+per|in)\s+(?:the\s+)?attachments?\b{_NOT_A_DOCUMENT}",
)]
# Every reliance phrase holds one of these word parts (an attachment word or a document noun); the patterns run
# only on the text around them, from _REACH characters before to _TAIL after (long listings stay cheap).
# (Matched in ASCII lower case, first letters factored out: scanning a long listing costs a few microseconds.)
_ANCHOR = re.compile(r"a(?:ttach|ccompan|ppend|nalys)|b(?:ill|lueprint|om|rochure)|c(?:ert|atalog)|"
                     r"d(?:ocument|iagram|rawing|eclaration)|enclos|file|i(?:nvoice|mage)|linked|p(?:df|acking|hoto|ic)|"
                     r"r(?:eport|esult)|s(?:pec|heet|chematic|ds)|tech|upload")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_REACH, _TAIL = 120, 40
# The document's content follows in the request itself ("per the spec sheet below: ...", "the following report").
_INLINE = re.compile(r"(?:\s+below\b|\s+as\s+follows\b)?\s*:|\s+(?:below|as\s+follows|reads|excerpt)\b", re.I)
_NEGATED = re.compile(r"\b(?:no|not|without|lacking|missing|never)\s+(?:[\w-]+\s+){0,2}$", re.I)


def references_missing_document(text: str, evidence: list[str]) -> str | None:
    """The phrase by which the request relies on a document that was not supplied, if any.

    A request relies on a document when it points to one for facts ("fibre content as per the attached lab
    report", "see the spec sheet", "lab report attached") — not when listing text merely mentions papers that
    exist or ship with the goods ("Machinery Test Report: Available", "Certification: CE", "attached hang tag",
    "comes with user manual", "Size: see picture"), nor when the document's content follows in the request.
    Supplied evidence counts as the document.
    """
    if evidence:
        return None
    found = [match for start, end in _windows(text) for pattern in _RELIANCE
             for match in pattern.finditer(text, start, end)
             if not ("following" in match.group(0).lower() or _INLINE.match(text, match.end())
                     or _NEGATED.search(text, 0, match.start()))]
    if not found:
        return None
    return min(found, key=lambda m: (m.start(), -m.end())).group(0).strip()


def _windows(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` around anchor words, merged where they overlap."""
    spans: list[tuple[int, int]] = []
    for anchor in _ANCHOR.finditer(text.translate(_ASCII_LOWER)):
        start, end = max(0, anchor.start() - _REACH), min(len(text), anchor.end() + _TAIL)
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def build_bundle(pack: Pack, request: str, evidence: list[str], candidate_chapters: list[str],
                 *, limit: int | None = 14) -> list[EvidenceItem]:
    """The evidence a proposer gets: every GRI, the chapter notes that best match the request (all of them when
    ``limit`` is None, as the original harness gives them), or those of the named candidate chapters and of their
    sections, their duty-rate lines, and the request's own evidence."""
    notes = pack.notes
    if candidate_chapters:
        wanted = {f"chapter_{c.zfill(2)}" for c in candidate_chapters}
        wanted |= {section for c in candidate_chapters if (section := section_source(c))}
        chosen = [n for n in notes if n.source in wanted]
    elif limit is None:
        chosen = list(notes)
    else:
        text = request + " " + " ".join(evidence)
        chosen = pack.best_notes(text, limit=limit)
    headings = {n.heading[:4] for n in chosen if n.heading}
    request_items = [EvidenceItem(id=f"req-{i + 1}", source="request", text=t) for i, t in enumerate(evidence)]
    return [*pack.gri, *chosen, *pack.rate_items(headings), *request_items]
