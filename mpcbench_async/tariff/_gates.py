"""Deterministic gates over a dossier: each checks what the pack and the request let it verify.

Critical gates (a failure blocks acceptance): ``schema``, ``code_validity``,
``citations``, ``missing_evidence``, ``duty``, ``savings``. The
``gri_sequence`` gate rejects while iterations remain; on the last iteration a
violation is recorded (and scored −0.1) instead of blocking.

Each result has a status: ``pass``, ``fail``, ``n/a`` (nothing to check, e.g.
the duty of a refusal) or ``unverified`` — the pack has no duty line for the
code, so the stated duty can be neither confirmed nor refuted. An unverified
duty never blocks, costs nothing and is not sent back as critique (what the
pack lacks must not push a model to another code); a stated duty or saving that
contradicts a line the pack does have fails, and so do savings that contradict
the dossier's own baseline. A dossier that states no duty has no duty claim to
check (n/a). A pack line covers a code when its digits begin the code's.

Duties are checked against the importing country's table (the case's, else the
pack's default country) at the rate of the trade programme the goods enter
under: the case's programme when it names one (it says what is claimed at
entry; "MFN" there means the general rate), else the programme the answer
claims (``Dossier.trade_programme``), else the general rate. Where the pack has
no table for that country or no line stating that programme's rate, the duty is
unverified, never contradicted.

A code is valid when it is well formed — digits, optionally grouped by dots or
spaces, 6 (HS subheading), 8 (US rate line) or 10 (US statistical suffix)
digits in all — and its first 6 digits are an HS 2022 subheading (chapters
01–97; national chapters 98 and 99 are not HS).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

import msgspec

from ._dossier import Dossier, references_missing_document
from ._pack import EvidenceItem, Pack, digits
from ._records import GateResult, GateStatus
from ._trade import programme_key, programme_name

__all__ = ["CODE_LENGTHS", "CRITICAL_GATES", "GATES_VERSION", "GateResult", "GateStatus", "MissingEvidenceRule",
           "run_gates"]

CRITICAL_GATES = ("schema", "code_validity", "citations", "missing_evidence", "duty", "savings")
CODE_LENGTHS = (6, 8, 10)
LAST_HS_CHAPTER = "97"  # the nomenclature also lists 9999.99, "commodities not specified according to kind"
GRI_ORDER = {"GRI1": 1, "GRI2A": 2, "GRI2B": 2, "GRI2": 2, "GRI3A": 3, "GRI3B": 3.1, "GRI3C": 3.2, "GRI3": 3,
             "GRI4": 4, "GRI5A": 5, "GRI5B": 5, "GRI5": 5, "GRI6": 6}
RATE_TOLERANCE = 0.01
_WELL_FORMED = re.compile(r"\d+(?:[. ]\d+)*")

MissingEvidenceRule = Literal["request", "bundle"]
# Bumped whenever a gate's verdicts change: it is part of each case's resume key, so a rerun re-verifies.
GATES_VERSION = 2


class _Verdict(msgspec.Struct):
    """What one gate found: its status, the reasons it failed, and what it could not verify."""

    status: GateStatus
    reasons: list[str] = []
    notes: list[str] = []


def _verdict(reasons: list[str], *, applies: bool = True, notes: Sequence[str] = ()) -> _Verdict:
    """Fail on any reason; else unverified when something could not be checked; n/a when nothing applied."""
    if reasons:
        return _Verdict("fail", reasons, list(notes))
    if notes:
        return _Verdict("unverified", [], list(notes))
    return _Verdict("pass" if applies else "n/a")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _gri_key(rule: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", rule.upper()).replace("RULE", "GRI")


def _code_problems(pack: Pack, code: str | None, label: str) -> list[str]:
    """Why a code is not a valid classification: missing, malformed, or not an HS 2022 subheading."""
    if not code:
        return [f"{label} is missing"]
    d = digits(code)
    if not _WELL_FORMED.fullmatch(code.strip()) or len(d) not in CODE_LENGTHS:
        return [f"{label} {code!r} is not a well-formed code: write 6, 8 or 10 digits, optionally grouped by dots "
                "(6404.11, 6404.11.90, 6404.11.9020)"]
    if d[:2] > LAST_HS_CHAPTER or pack.hs_description(d[:6]) is None:
        return [f"{label} {code!r}: subheading {d[:4]}.{d[4:6]} does not exist in HS 2022"]
    return []


def _code_validity(pack: Pack, dossier: Dossier) -> _Verdict:
    if dossier.decision == "accept":
        return _verdict(_code_problems(pack, dossier.hts_code, "hts_code"))
    return _verdict([] if dossier.refusal_category else ["a refusal must name its refusal_category"])


def _citations(dossier: Dossier, bundle: dict[str, EvidenceItem]) -> _Verdict:
    reasons = []
    citations = dossier.citations()
    if dossier.decision == "accept" and not citations:
        reasons.append("an accepted classification must cite evidence for its GRI steps")
    for citation in citations:
        item = bundle.get(citation.evidence_id)
        if item is None:
            reasons.append(f"citation of {citation.evidence_id!r}: no such evidence in the bundle")
        elif _norm(citation.quote) not in _norm(item.text):
            reasons.append(f"citation of {citation.evidence_id!r}: the quote {citation.quote[:80]!r} does not appear "
                           "verbatim in that evidence")
    return _verdict(reasons, applies=dossier.decision == "accept" or bool(citations))


def _missing_evidence(dossier: Dossier, request: str, evidence: list[str]) -> _Verdict:
    """Only a request that relies on an unsupplied document is checked: it must not be accepted."""
    missing = references_missing_document(request, evidence)
    if missing is None:
        return _verdict([], applies=False)
    return _verdict([f"the request relies on '{missing}', which was not supplied; refuse with missing_evidence or "
                     "ask for it"] if dossier.decision == "accept" else [])


def _missing_chapter_evidence(dossier: Dossier, pack: Pack, bundle: Sequence[EvidenceItem]) -> _Verdict:
    """The original harness's reading (``--scoring original``): an accepted code whose chapter's notes were kept
    out of the evidence bundle (the case named other candidate chapters) lacks its evidence, whatever the request
    says. Where the pack has no notes of that chapter at all, the evidence is unverified: what our pack lacks
    never blocks an answer."""
    if dossier.decision != "accept" or not dossier.hts_code:
        return _verdict([], applies=False)
    chapter = digits(dossier.hts_code)[:2]
    source = f"chapter_{chapter}"
    if any(item.source == source for item in bundle):
        return _verdict([])
    if not any(note.source == source for note in pack.notes):
        return _verdict([], notes=[f"the pack has no notes of chapter {chapter}; its evidence is unverified"])
    return _verdict([f"missing chapter evidence: the evidence bundle has no notes of chapter {chapter}, the chapter "
                     f"of {dossier.hts_code}; attach missing chapter notes or refuse with missing_evidence"])


def _gri_sequence(dossier: Dossier) -> _Verdict:
    if dossier.decision != "accept":
        return _verdict([], applies=False)
    keys = [_gri_key(step.rule) for step in dossier.gri_steps]
    unknown = [k for k in keys if k not in GRI_ORDER]
    if unknown:
        return _verdict([f"unknown GRI rule(s) {', '.join(unknown)}; use GRI1, GRI2a, GRI2b, GRI3a, GRI3b, GRI3c, "
                         "GRI4, GRI5a, GRI5b, GRI6"])
    if not keys or keys[0] != "GRI1":
        return _verdict(["the GRI steps must start with GRI 1 (headings and section/chapter notes)"])
    order = [GRI_ORDER[k] for k in keys]
    for before, after, rule in zip(order, order[1:], keys[1:], strict=False):
        if after < before:
            return _verdict([f"GRI steps out of order: {rule} comes after a later rule; apply the GRIs in sequence"])
    return _verdict([])


class _Terms(msgspec.Struct, frozen=True):
    """Where the goods are imported (a two-letter code) and the programme they enter under (``None``: general)."""

    country: str
    programme: str | None

    def table(self) -> str:
        """The table and column a rate comes from: "US rate table's", "CA rate table's CUSMA"."""
        column = f" {programme_name(self.programme, self.country)}" if self.programme else ""
        return f"{self.country} rate table's{column}"

    def line(self, pack: Pack) -> str:
        """What the pack would need to verify a rate: "US duty line", "US duty line giving the USMCA rate"."""
        if self.country not in pack.countries:
            return f"{self.country} duty table"
        column = f" giving the {programme_name(self.programme, self.country)} rate" if self.programme else ""
        return f"{self.country} duty line{column}"


def _check_rate(pack: Pack, code: str, stated: float | None, terms: _Terms) -> tuple[str | None, str | None]:
    """(contradiction, gap) for a rate stated for ``code``: how it contradicts the pack's line ("does not match the
    US rate table's 20% for 6404.11.90"), or what the pack lacks to verify it ("the pack has no US duty line for …")."""
    found = pack.rate(code, country=terms.country, programme=terms.programme)
    if found is None:
        return None, f"the pack has no {terms.line(pack)} for {code}"
    line, rate = found
    if stated is None or abs(stated - rate) <= RATE_TOLERANCE:
        return None, None
    return f"does not match the {terms.table()} {rate:g}% for {line}", None


def _duty(pack: Pack, dossier: Dossier, terms: _Terms) -> _Verdict:
    """The stated baseline duty against the pack's line for the code: n/a for a refusal, an invalid code or no
    stated duty; unverified where the pack has no line for the code under the terms."""
    code, stated = dossier.hts_code, dossier.baseline_duty_pct
    if dossier.decision != "accept" or not code or _code_problems(pack, code, "hts_code"):
        return _verdict([], applies=False)
    contradiction, gap = _check_rate(pack, code, stated, terms)
    if gap:
        said = "no baseline duty stated" if stated is None else f"the stated {stated:g}% is unverified"
        return _verdict([], notes=[f"{gap}; {said}"])
    if stated is None:
        return _verdict([], applies=False)
    return _verdict([f"baseline duty {stated:g}% {contradiction}"] if contradiction else [])


def _lever_problems(pack: Pack, dossier: Dossier, terms: _Terms) -> tuple[list[str], list[str]]:
    """(reasons, notes) for the levers: a lever's duty is checked where the pack has a line for its code."""
    reasons: list[str] = []
    notes: list[str] = []
    base = dossier.baseline_duty_pct
    for lever in dossier.levers:
        invalid = _code_problems(pack, lever.new_hts, f"lever {lever.id} new_hts")
        reasons += invalid
        contradiction, gap = (None, None) if invalid else _check_rate(pack, lever.new_hts, lever.new_duty_pct, terms)
        if gap:
            notes.append(f"lever {lever.id}: {gap}; the stated {lever.new_duty_pct:g}% is unverified")
        elif contradiction:
            reasons.append(f"lever {lever.id}: new duty {lever.new_duty_pct:g}% {contradiction}")
        if base is not None and lever.new_duty_pct >= base:
            reasons.append(f"lever {lever.id} saves nothing ({lever.new_duty_pct:g}% ≥ baseline {base:g}%)")
        if not lever.steps:
            reasons.append(f"lever {lever.id} lists no steps")
    return reasons, notes


def _savings(pack: Pack, dossier: Dossier, terms: _Terms) -> _Verdict:
    """Levers and the optimized duty: consistent with each other, the baseline and the pack's lines."""
    optimized, base = dossier.optimized_duty_pct, dossier.baseline_duty_pct
    if dossier.decision != "accept" or not (dossier.levers or optimized is not None):
        return _verdict([], applies=False)
    reasons, notes = _lever_problems(pack, dossier, terms)
    if optimized is not None and base is not None:
        if optimized > base + RATE_TOLERANCE:
            reasons.append(f"optimized duty {optimized:g}% is above the baseline {base:g}%")
        elif optimized < base - RATE_TOLERANCE and not any(
                abs(lv.new_duty_pct - optimized) <= RATE_TOLERANCE for lv in dossier.levers):
            reasons.append(f"unsupported savings claim: optimized duty {optimized:g}% is not the result of any lever")
    return _verdict(reasons, notes=notes)


def run_gates(
    dossier: Dossier | None, schema_problems: Sequence[str], pack: Pack, bundle: Sequence[EvidenceItem],
    request: str, evidence: list[str], *, country: str | None = None, programme: str | None = None,
    missing_evidence: MissingEvidenceRule = "request",
) -> list[GateResult]:
    """All gates over one proposal (a proposal that failed the schema gets only that result). ``country`` and
    ``programme`` are the case's importing country and trade programme, ``None`` where it names none.

    ``missing_evidence`` picks what missing evidence means: ``request`` (the project's: the request relies on a
    document it does not supply) or ``bundle`` (the original harness's: the chosen code's chapter has notes in the
    pack that the bundle left out)."""
    if dossier is None:
        return [GateResult(gate="schema", passed=False, critical=True, reasons=list(schema_problems))]
    claimed = programme if programme is not None else dossier.trade_programme
    terms = _Terms(pack.country(country), programme_key(claimed))
    verdicts = {
        "schema": _verdict([]),
        "code_validity": _code_validity(pack, dossier),
        "citations": _citations(dossier, {item.id: item for item in bundle}),
        "missing_evidence": (_missing_evidence(dossier, request, evidence) if missing_evidence == "request"
                             else _missing_chapter_evidence(dossier, pack, bundle)),
        "duty": _duty(pack, dossier, terms),
        "savings": _savings(pack, dossier, terms),
        "gri_sequence": _gri_sequence(dossier),
    }
    return [GateResult(gate=name, passed=v.status != "fail", critical=name in CRITICAL_GATES, reasons=v.reasons,
                       status=v.status, notes=v.notes) for name, v in verdicts.items()]
