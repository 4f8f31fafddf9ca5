"""The classification dossier a proposer returns, the evidence bundle it must cite, and the reading of
whether a request relies on a document it does not supply."""

from __future__ import annotations

import functools
import re
import string

from ._original_pack import section_source
from ._pack import EvidenceItem, Pack
from ._records import Citation, Dossier, GriStep, Lever, WhatIf

__all__ = ["Citation", "Dossier", "GriStep", "Lever", "WhatIf", "build_bundle", "references_missing_document"]


# What a request can rely on that the classifier must see: documents that carry facts about the goods ...
_FACT_DOC = (r"(?:(?:(?:lab(?:oratory)?|test(?:ing)?|inspection|audit)\s+)?reports?|(?:test\s+)?results|"
             r"spec(?:ification)?s?[\s-]?sheets?|data[\s-]?sheets?|tech(?:nical)?[\s-]+(?:files?|sheets?|packs?|data|"
             r"documentation)|drawings?|blueprints?|schematics?|documents?|(?:lab(?:oratory)?|fib(?:re|er)|chemical|"
             r"composition|material|test)\s+analys[ie]s|bills?\s+of\s+materials?|boms?|pdfs?|spreadsheets?|m?sds)")
# ... the same words in their looser senses, counted only with a determiner ("the specifications", not "EU specs") ...
_LOOSE_DOC = r"(?:specs|specifications?|documentation|diagrams?|sheets?|files?)"
# ... papers that listings also mention as boilerplate ("Certificate: Yes"), so only a citing phrase counts ...
_PAPER = r"(?:certificates?|certs?|invoices?|packing\s+lists?|declarations?|brochures?|catalog(?:ue)?s?)"
# ... and pictures, which listings show to illustrate ("See picture", "Color: as picture"), so only one the sender
# supplied counts ("attached photos", "the photo I sent", "my pictures") or one a classification question points to.
_IMAGE = r"(?:photos?|photographs?|pictures?|images?|pics?|screen\s?shots?)"
# Importers' abbreviations (purchase order, proforma invoice, certificate of analysis), in capitals as they write
# them and counted only beside an attachment word ("attached PO", "PI attached"): "po" and "pi" are word parts too.
_ABBREVIATED = r"(?-i:POs?|PIs?|CoAs?|COAs?)"
# A document word that is really part of a product name ("document pocket", "drawing board", "report cover").
_NOT_A_DOCUMENT = (r"(?!\s+(?:pockets?|holders?|folders?|bags?|cases?|wallets?|organi[sz]ers?|trays?|boxe?s?|clips?|"
                   r"stands?|sleeves?|cabinets?|boards?|pads?|paper|pens?|pencils?|books?|sets?|tools?|rulers?|"
                   r"covers?|binders?|frames?|albums?|cards?|sensors?|readers?|printers?|scanners?|protectors?|"
                   r"kits?|hooks?|metal)\b)")
_ATTACHED = r"(?:attached|enclosed|accompanying|appended|uploaded|linked)"
# A paper fastened to something is physical ("attached to the collar"), unless that is a message it travels with
# ("attached to my previous email", "uploaded to the portal").
_TO_A_MESSAGE = (r"\s+(?:(?:the|my|our|this|that|your)\s+)?(?:previous\s+|last\s+|earlier\s+)?"
                 r"(?:e-?mails?|messages?|portal|ticket|thread)\b")
_DETERMINER = r"(?:the|our|my|this|that|these|those|its|their|an?)\s+"
# Words between the determiner and the document; not those of app and product wording ("sleep report", "nail file").
_MODIFIERS = (r"(?:(?!(?:sleep|health|heart|fitness|activity|exercise|sports?|training|weather|daily|weekly|monthly|"
              r"size|colou?r|nail|metal|care|user)\b)[\w.'’/-]+\s+){0,3}?")
_CITING = (r"(?:see|refer(?:ring)?\s+to|consult|check|review|look\s+at|as\s+per|per|according\s+to|"
           r"in\s+accordance\s+with|based\s+on|with\s+reference\s+to|(?:is|are|detailed|described|specified|shown|"
           r"given|stated|listed|set\s+out|found|provided|documented|indicated|outlined|defined|noted|recorded|"
           r"contained|explained|reported|summari[sz]ed|information|details|figures)\s+(?:only\s+|also\s+)?"
           r"(?:in|on|from)|(?:confirmed|certified|evidenced|verified|established)\s+by)\s+")
_ANY_DOC = f"(?:{_FACT_DOC}|{_PAPER}|{_LOOSE_DOC}|{_ATTACHED}\\s+{_MODIFIERS}{_IMAGE})"
# Every phrase begins at a word's first letter; saying so up front lets a scan skip other positions cheaply.
_WORD_START = r"\b(?=[a-z])"
# Compiled on first use (``_reliance``): about 40 ms, paid otherwise by every sweep that only registers the suite.
_RELIANCE = (
    # "as per the attached lab report", "stated in the enclosed mill certificate", "see lab report", "per invoice",
    # "see my photos"
    rf"\b{_CITING}(?:{_DETERMINER}(?:{_ATTACHED}\s+)?{_MODIFIERS}{_ANY_DOC}|my\s+{_MODIFIERS}{_IMAGE}|"
    rf"(?:{_ATTACHED}\s+)?(?:{_FACT_DOC}|{_PAPER}))\b{_NOT_A_DOCUMENT}",
    # "the attached spec sheet", "enclosed UN 38.3 test report", "attached photos", "uploaded file"
    rf"\b{_ATTACHED}\s+(?:{_MODIFIERS}(?:{_FACT_DOC}|{_IMAGE})|{_LOOSE_DOC}|{_ABBREVIATED})\b{_NOT_A_DOCUMENT}",
    # "the attached mill certificate states ..."
    rf"\b{_ATTACHED}\s+{_MODIFIERS}{_PAPER}\s+(?:states?|shows?|gives?|lists?|specifies|confirms?|indicates?|"
    r"contains?|details?|says)\b",
    # "lab report attached", "photos are enclosed", "drawing (enclosed)", "a photo of the rating plate is attached"
    # — not "attached to", not "Report: attached", not "photo of a parka with attached hood"
    rf"\b(?:{_FACT_DOC}|{_IMAGE}|{_ABBREVIATED})(?:\s+of(?:\s+(?!with\b|and\b)[\w'-]+){{1,4}})?\s*"
    rf"(?:\(\s*{_ATTACHED}\s*\)|(?:(?:is|are|has\s+been|have\s+been)\s+)?{_ATTACHED}\b"
    rf"(?!\s+(?:to|on|at|onto|with|inside|in)\b(?!{_TO_A_MESSAGE})))",
    # "please find attached", "attached please find the BOM", "I have attached the drawings", "I attach the data
    # sheet", "attaching the BOM", "sending over the spec sheet" — not "we attach a test certificate to every batch"
    rf"\b(?:please\s+)?find\s+(?:attached|enclosed)\b|\b(?:attached|enclosed)\s+(?:please\s+find|is|are)\s+"
    rf"(?:{_DETERMINER})?{_MODIFIERS}{_ANY_DOC}\b|\b(?:(?:i|we)(?:'ve|\s+have)?\s+(?:also\s+|just\s+)?"
    r"(?:attach(?:ed)?|enclosed?|uploaded)|attaching|enclosing|sending(?:\s+(?:over|you))?)\s+"
    rf"(?:{_DETERMINER})?{_MODIFIERS}(?:{_ANY_DOC}|{_IMAGE})\b{_NOT_A_DOCUMENT}"
    rf"(?!\s+(?:to|on|onto)\b(?!{_TO_A_MESSAGE}))",
    # "see attached", "as per attached.", "could you classify the attached?", "refer to attachment", "in the attachment"
    r"\b(?:see|as|per|as\s+per|classify|review|check|for)\s+(?:the\s+)?(?:attached|enclosed)\b"
    r"(?=\s*(?:$|[.,;:?!)]|for\b|and\b))"
    rf"|\b(?:see|refer\s+to|per|as\s+per|in)\s+(?:the\s+)?attachments?\b{_NOT_A_DOCUMENT}",
    # A document, picture or link the sender has sent: "the photo I sent", "the drawings we e-mailed", "the link I
    # sent", "the supplier sent the test certificate" — not "the tracking link we sent you"
    rf"\b(?:{_FACT_DOC}|{_PAPER}|{_LOOSE_DOC}|{_IMAGE}|(?<!tracking\s)links?)\s+(?:that\s+|which\s+)?"
    r"(?:i|we)(?:'ve|'d|\s+have|\s+had)?\s+(?:just\s+|already\s+)?"
    r"(?:attached|enclosed|uploaded|sent|shared|e-?mailed|forwarded|posted|provided)\b",
    rf"\b(?:sent|forwarded|e-?mailed|shared)\s+(?:(?:to\s+)?(?:us|you|me)\s+)?{_DETERMINER}{_MODIFIERS}"
    rf"(?:{_FACT_DOC}|{_PAPER}|{_LOOSE_DOC}|{_IMAGE})\b{_NOT_A_DOCUMENT}",
)


@functools.cache
def _reliance() -> list[re.Pattern[str]]:
    """``_RELIANCE`` compiled, once, when a request is first read for the documents it relies on."""
    return [re.compile(f"{_WORD_START}(?:{p})", re.I) for p in _RELIANCE]


# A picture that is only pointed to ("the item in the photo", "see the pictures", "in the image below"): listings
# point to their pictures in these words too, so it counts only beside a classification question (_asked_about) or
# when it is pointed to for a fact the classification needs (_FACT_SOUGHT). Not a product name ("in the photo frame").
_PICTURE_POINTER = re.compile(
    rf"{_WORD_START}(?:{_CITING}|(?:in|on|from)\s+)(?:(?:the|this|that|these|those|my)\s+)?"
    rf"(?:(?:first|second|last|main)\s+)?{_IMAGE}(?:\s+(?:below|above))?\b{_NOT_A_DOCUMENT}", re.I)
# Asking for the classification: "HS code", "what's the duty", "classify", "which heading"; not "QR code", "duty paid".
_CLASSIFICATION_ASK = re.compile(
    r"\b(?:classif(?:y|ied|ying|ication)|hts(?:us)?|(?:hs|tariff|commodity|customs|\d+-digit)\s+(?:codes?|numbers?|"
    r"classification)|duty\s+rates?|(?:what|which|how\s+much)(?:'s|\s+is|\s+are)?\s+(?:the\s+)?(?:dut(?:y|ies)|codes?)|"
    r"(?:what|which)\s+(?:sub)?heading)\b", re.I)
# "... the images in my previous email for the material of the sole", not "see pictures for details".
_FACT_SOUGHT = re.compile(r"[^.;:!?\n]{0,40}?\bfor\s+(?:the\s+)?(?:materials?|composition|fib(?:re|er)s?|fabric|"
                          r"content|ingredients|alloy|metal|voltage|power|wattage)\b", re.I)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n")
# Every reliance phrase holds one of these word parts (an attachment word, a document noun or a picture noun); the
# patterns run only on the text around them, from _REACH characters before to _TAIL after (long listings stay cheap).
# (Matched in ASCII lower case, first letters factored out: scanning a long listing costs a few microseconds.)
_ANCHOR = re.compile(r"a(?:ttach|ccompan|ppend|nalys)|b(?:ill|lueprint|om|rochure)|c(?:ert|atalog)|"
                     r"d(?:ocument|iagram|rawing|eclaration)|enclos|file|i(?:nvoice|mage)|link|p(?:df|acking|hoto|ic)|"
                     r"r(?:eport|esult)|s(?:pec|heet|chematic|ds|creen\s?shot)|tech|upload")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_REACH, _TAIL = 120, 40
# How far before a phrase its context is read (an attribute key, "comes with"), and around it for its sentences.
_LOOKBACK, _SENTENCE_REACH = 60, 300
# A phrase naming a document (its content could follow in the text; a picture's cannot).
_DOCUMENT = re.compile(rf"\b(?:{_FACT_DOC}|{_PAPER}|{_LOOSE_DOC})\b", re.I)
# The document's content follows in the request itself ("per the spec sheet below: ...", "the following report").
_INLINE = re.compile(r"(?:\s+below\b|\s+as\s+follows\b)?\s*:|\s+(?:below|as\s+follows|reads|excerpt)\b", re.I)
_NEGATED = re.compile(r"\b(?:no|not|without|lacking|missing|never)\s+(?:[\w-]+\s+){0,2}$", re.I)
# A paper that ships with the goods, not one the request points to ("comes with attached test report").
_SHIPS_WITH = re.compile(r"\b(?:comes?|supplied|shipped|delivered|packed|sold)\s+with\s+(?:an?\s+|the\s+)?$", re.I)
# ... or one packed with them ("see declaration attached to the parcel", "invoice enclosed in the box").
_PACKED = re.compile(r"\s+(?:(?:attached|enclosed|included)\s+)?(?:to|in|inside|on)\s+(?:the|each|every)\s+"
                     r"(?:parcel|package|packaging|box|carton|shipment)\b", re.I)
# A picture (or a bare "see attached") answering a listing attribute that pictures illustrate and classification
# does not hinge on: "Color: see attached photos", "\"Main Color\":\"As The Pictures Show\"", "Size: as per picture".
# Not when the slot also asks for a fact ("Size and material: see attached pictures", "Material/colour: ...").
_ILLUSTRATIVE_SLOT = re.compile(
    r"(?<!and\s)(?<!&\s)(?<!/)\b(?:colou?rs?|sizes?|shapes?|styles?|patterns?|designs?|appearance)\b\"?\s*[:=]?\s*\"?"
    r"\s*(?:(?:please|pls|kindly|see|refer(?:\s+to)?|check|as|per|shown|showed|in|on|the|same|according\s+to)\s+)*$",
    re.I)
# What follows a picture that only illustrates: "photos attached show actual colour", "for reference only" (not
# "for your reference"), "are of the actual product", "only shows the colour", "are just examples", "may vary".
_ILLUSTRATIVE_NOTE = re.compile(
    r"[\s,]*(?:(?:are|is)\s+)?(?:(?:only|just|purely)\s+)?(?:for\s+(?:reference|illustration|display)|"
    r"(?:of\s+)?(?:the\s+)?(?:actual|real|exact)\b|(?:an?\s+)?(?:examples?|illustrations?)\b|"
    r"show(?:s|ing)?\s+(?:(?:only|just)\s+)?(?:the\s+)?(?:actual|real|true|colou?rs?|sizes?|styles?)\b|"
    r"may\s+(?:vary|differ))", re.I)


def references_missing_document(text: str, evidence: list[str]) -> str | None:
    """The phrase by which the request relies on a document or picture that was not supplied, if any.

    A request relies on a document when it points to one for facts ("fibre content as per the attached lab
    report", "see the spec sheet", "lab report attached"), and on a picture when the sender supplied it ("see my
    uploaded image", "the photo I sent") or a classification question points to it ("the HS code for the item in
    the photo") — not when listing text merely mentions papers that exist or ship with the goods ("Machinery Test
    Report: Available", "Certification: CE", "attached hang tag", "comes with user manual"), nor when its pictures
    only illustrate ("Size: see picture", "Color: see attached photos", "photos for reference only"), nor when the
    document's content follows in the request. Supplied evidence counts as the document.
    """
    if evidence:
        return None
    spans = _windows(text)
    found = [match for pattern in (*_reliance(), _PICTURE_POINTER) for start, end in spans
             for match in pattern.finditer(text, start, end)
             if _relied_on(text, match) and (pattern is not _PICTURE_POINTER or _asked_about(text, match)
                                             or _FACT_SOUGHT.match(text, match.end()))]
    if not found:
        return None
    return min(found, key=lambda m: (m.start(), -m.end())).group(0).strip()


def _relied_on(text: str, match: re.Match[str]) -> bool:
    """Whether the phrase found is reliance in its context: not negated ("no lab report attached"), not a paper that
    ships with the goods, not a document whose content follows, not a picture that only illustrates."""
    phrase, start, end = match.group(0), match.start(), match.end()
    if ("following" in phrase.lower() or _NEGATED.search(text, max(0, start - _LOOKBACK), start)
            or _SHIPS_WITH.search(text, max(0, start - _LOOKBACK), start) or _PACKED.match(text, end)):
        return False
    if _DOCUMENT.search(phrase):
        return not _INLINE.match(text, end)
    return not (_ILLUSTRATIVE_SLOT.search(text, max(0, start - _LOOKBACK), start)
                or _ILLUSTRATIVE_NOTE.match(text, end))


def _asked_about(text: str, match: re.Match[str]) -> bool:
    """Whether a classification question is asked in the sentence of the match, or in a question next to it
    ("Please see the photos. What's the HS code?")."""
    before = _SENTENCE_BREAK.split(text[max(0, match.start() - _SENTENCE_REACH):match.start()])
    after = _SENTENCE_BREAK.split(text[match.end():match.end() + _SENTENCE_REACH])
    sentence = before[-1] + match.group(0) + after[0]
    questions = [s for s in (before[-2] if len(before) > 1 else "", after[1] if len(after) > 1 else "")
                 if s.rstrip().endswith("?")]
    return any(_CLASSIFICATION_ASK.search(s) for s in (sentence, *questions))


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
