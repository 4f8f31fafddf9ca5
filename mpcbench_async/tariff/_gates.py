"""Deterministic gates over a dossier: each returns pass/fail with reasons the proposer can act on.

Critical gates (a failure blocks acceptance): ``schema``, ``code_validity``,
``citations``, ``missing_evidence``, ``duty``, ``savings``. The
``gri_sequence`` gate rejects while iterations remain; on the last iteration a
violation is recorded (and scored −0.1) instead of blocking.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from ._dossier import Dossier, references_missing_document
from ._pack import EvidenceItem, Pack, digits

__all__ = ["CRITICAL_GATES", "GateResult", "run_gates"]

CRITICAL_GATES = ("schema", "code_validity", "citations", "missing_evidence", "duty", "savings")
GRI_ORDER = {"GRI1": 1, "GRI2A": 2, "GRI2B": 2, "GRI2": 2, "GRI3A": 3, "GRI3B": 3.1, "GRI3C": 3.2, "GRI3": 3,
             "GRI4": 4, "GRI5A": 5, "GRI5B": 5, "GRI5": 5, "GRI6": 6}
RATE_TOLERANCE = 0.01


class GateResult(msgspec.Struct, kw_only=True):
    gate: str
    passed: bool
    critical: bool
    reasons: list[str] = []


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _gri_key(rule: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", rule.upper()).replace("RULE", "GRI")


def _code_problems(pack: Pack, code: str | None, label: str) -> list[str]:
    if not code:
        return [f"{label} is missing"]
    d = digits(code)
    if not 6 <= len(d) <= 10:
        return [f"{label} {code!r} must have 6 to 10 digits"]
    if pack.hs_description(d[:6]) is None:
        return [f"{label} {code!r}: subheading {d[:4]}.{d[4:6]} does not exist in HS 2022"]
    return []


def _citations(dossier: Dossier, bundle: dict[str, EvidenceItem]) -> list[str]:
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
    return reasons


def _gri_sequence(dossier: Dossier) -> list[str]:
    if dossier.decision != "accept":
        return []
    keys = [_gri_key(step.rule) for step in dossier.gri_steps]
    unknown = [k for k in keys if k not in GRI_ORDER]
    if unknown:
        return [f"unknown GRI rule(s) {', '.join(unknown)}; use GRI1, GRI2a, GRI2b, GRI3a, GRI3b, GRI3c, GRI4, "
                "GRI5a, GRI5b, GRI6"]
    if not keys or keys[0] != "GRI1":
        return ["the GRI steps must start with GRI 1 (headings and section/chapter notes)"]
    order = [GRI_ORDER[k] for k in keys]
    for before, after, rule in zip(order, order[1:], keys[1:]):
        if after < before:
            return [f"GRI steps out of order: {rule} comes after a later rule; apply the GRIs in sequence"]
    return []


def _duty(pack: Pack, dossier: Dossier) -> list[str]:
    if dossier.decision != "accept" or not dossier.hts_code:
        return []
    found = pack.rate(dossier.hts_code)
    if found is None:
        return [f"no duty rate for {dossier.hts_code} in the rate table; classify to a line that has one"]
    line, rate = found
    if dossier.baseline_duty_pct is None:
        return [f"baseline_duty_pct is missing; the rate table gives {rate:g}% for {line}"]
    if abs(dossier.baseline_duty_pct - rate) > RATE_TOLERANCE:
        return [f"baseline duty {dossier.baseline_duty_pct:g}% does not match the rate table's {rate:g}% for {line}"]
    return []


def _savings(pack: Pack, dossier: Dossier) -> list[str]:
    if dossier.decision != "accept":
        return []
    reasons = []
    base = dossier.baseline_duty_pct
    for lever in dossier.levers:
        reasons += _code_problems(pack, lever.new_hts, f"lever {lever.id} new_hts")
        found = pack.rate(lever.new_hts)
        if found is None:
            reasons.append(f"lever {lever.id}: no duty rate for {lever.new_hts} in the rate table")
        elif abs(found[1] - lever.new_duty_pct) > RATE_TOLERANCE:
            reasons.append(f"lever {lever.id}: new duty {lever.new_duty_pct:g}% does not match the table's "
                           f"{found[1]:g}% for {found[0]}")
        if base is not None and lever.new_duty_pct >= base:
            reasons.append(f"lever {lever.id} saves nothing ({lever.new_duty_pct:g}% ≥ baseline {base:g}%)")
        if not lever.steps:
            reasons.append(f"lever {lever.id} lists no steps")
    optimized = dossier.optimized_duty_pct
    if optimized is not None and base is not None:
        if optimized > base + RATE_TOLERANCE:
            reasons.append(f"optimized duty {optimized:g}% is above the baseline {base:g}%")
        elif optimized < base - RATE_TOLERANCE and not any(
                abs(lv.new_duty_pct - optimized) <= RATE_TOLERANCE for lv in dossier.levers):
            reasons.append(f"unsupported savings claim: optimized duty {optimized:g}% is not the result of any lever")
    return reasons


def run_gates(
    dossier: Dossier | None, schema_problems: Sequence[str], pack: Pack, bundle: Sequence[EvidenceItem],
    request: str, evidence: list[str],
) -> list[GateResult]:
    """All gates over one proposal (a proposal that failed the schema gets only that result)."""
    if dossier is None:
        return [GateResult(gate="schema", passed=False, critical=True, reasons=list(schema_problems))]
    by_id = {item.id: item for item in bundle}
    checks: list[tuple[str, list[str]]] = [("schema", [])]
    if dossier.decision == "accept":
        codes = _code_problems(pack, dossier.hts_code, "hts_code")
    else:
        codes = [] if dossier.refusal_category else ["a refusal must name its refusal_category"]
    checks.append(("code_validity", codes))
    checks.append(("citations", _citations(dossier, by_id)))
    missing = references_missing_document(request, evidence)
    checks.append(("missing_evidence", [f"the request relies on '{missing}', which was not supplied; refuse with "
                                        "missing_evidence or ask for it"] if missing and dossier.decision == "accept"
                   else []))
    checks.append(("duty", _duty(pack, dossier) if not codes else []))
    checks.append(("savings", _savings(pack, dossier)))
    checks.append(("gri_sequence", _gri_sequence(dossier)))
    return [GateResult(gate=name, passed=not reasons, critical=name in CRITICAL_GATES, reasons=reasons)
            for name, reasons in checks]
