"""The classification dossier a proposer returns, and the evidence bundle it must cite."""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from .._text import rank
from ._cases import RefusalCategory
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
    new_hts: str
    new_duty_pct: float | None = None


class Dossier(_Strict):
    """A proposal: accept with a code and its analysis, or refuse with a category (and questions)."""

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

    def citations(self) -> list[Citation]:
        return [c for step in self.gri_steps for c in step.citations]


_DOCUMENT_REFERENCE = re.compile(
    r"\b(attached|enclosed|see the (?:spec|data) ?sheet|per the (?:attached |enclosed )?(?:lab|test) report|"
    r"lab report|test report|as shown in the (?:attached )?(?:document|drawing|spec))\b", re.I)


def references_missing_document(text: str, evidence: list[str]) -> str | None:
    """The phrase by which the request relies on a document that was not supplied, if any."""
    match = _DOCUMENT_REFERENCE.search(text)
    return match.group(0) if match and not evidence else None


def build_bundle(pack: Pack, request: str, evidence: list[str], candidate_chapters: list[str],
                 *, limit: int = 14) -> list[EvidenceItem]:
    """The evidence a proposer gets: every GRI, the chapter notes that best match the request
    (or those of the named candidate chapters), their duty-rate lines, and the request's own evidence."""
    notes = pack.notes
    if candidate_chapters:
        wanted = {f"chapter_{c.zfill(2)}" for c in candidate_chapters}
        chosen = [n for n in notes if n.source in wanted]
    else:
        text = request + " " + " ".join(evidence)
        chosen = [item for _, item in rank(notes, text, lambda n: [(n.text, 1.0)], limit=limit)]
    headings = {n.heading[:4] for n in chosen if n.heading}
    request_items = [EvidenceItem(id=f"req-{i + 1}", source="request", text=t) for i, t in enumerate(evidence)]
    return [*pack.gri, *chosen, *pack.rate_items(headings), *request_items]
