"""``--scoring original``: the original tariff harness's scoring rules, rule for rule, on a project result.

The original harness scores a *payload* — what its pack runner returns: the final iteration (``accepted``,
``rejected_because``), the ``tariff_dossier`` (``baseline`` and ``optimized`` code and duty, ``what_if_candidates``,
``mutations``, ``gri_trace``), a ``lever_proof`` and a citation gate result. ``original_payload`` writes a project
``VerificationResult`` in that shape, and ``score_original`` applies the original's rules to it, read the way the
original reads it (``.get`` with the same fallbacks), so that the original's own code, given the same payload,
gives the same score (``tests/tariff/test_scoring_modes.py`` checks this against its source when the reference
folder is present).

How the project's result becomes the original's payload:

- ``accepted`` is the project's acceptance; ``rejected_because`` lists, for a refusal, the original's marker of the
  proposer's refusal category (``missing_evidence``, ``hts_or_questions_missing``, ``conflicts``,
  ``illegal_evasion_suggestion``) or, when no proposal passed the gates, the critical gates that rejected the last
  iteration
  (``missing_evidence`` → ``missing_evidence_gate_failed``, ``gri_sequence`` → ``gri_sequence_violation``; any
  other gate by its own name, which the original reads as ``insufficient_info``).
- ``baseline`` is the dossier's code and stated duty; ``optimized`` is the code and duty *after the lever*: the
  lever whose new duty is the dossier's ``optimized_duty_pct`` (the cheapest such), with the dossier's
  ``savings_note`` as its rationale. With no lever the optimized code is absent, so the baseline code is scored.
- ``mutations`` are the levers (new duty, description); ``lever_proof.selected_levers`` the levers, the applied
  one first, each with its steps as ``sequence`` and ``compliance_ok`` as its plausibility gate;
  ``gri_trace.sequence_ok`` is false on a recorded GRI-sequence violation; the citation gate result is the
  ``citations`` gate's verdict when it checked anything.

The rules (``score_original``), as the original has them: codes match as exact strings; preferred 1.0, allowed
0.7, same chapter 0.3, must-not 0; +0.05 when no critical gate is among the rejection reasons of an accepted
output; −0.1 for a GRI-sequence violation and −0.1 for a duty delta (optimized − baseline, so savings are
negative) outside its range — skipped when no delta can be computed; any other failed expectation (total rate,
direction, lever found/count/compliance, multi-step, steps) sets the score to 0 (with the bonus still added, so
0.05); a no-savings violation sets it to 0; clamp to [0, 1]. Refusal cases: accepted 0; the refusal category —
read from the rejection markers, not from what the proposer said — right 1.0 (or a missing-evidence refusal
whose feedback mentions missing chapter evidence), wrong 0.8. Pass: ≥ 0.9 when a refusal is expected, else ≥ 0.8.
"""

from __future__ import annotations

import math
import re
from typing import Any

import msgspec

from ._cases import Case
from ._dossier import Dossier, Lever
from ._pipeline import VerificationResult
from ._scoring import CaseScore, prefix_scores

__all__ = ["ORIGINAL_CRITICAL_GATES", "original_payload", "score_original"]

CHAPTER_MATCH, ALLOWED_MATCH, PREFERRED_MATCH = 0.3, 0.7, 1.0
REFUSAL_MATCH, REFUSAL_MISMATCH = 1.0, 0.8
PROCESS_BONUS, GRI_PENALTY, DUTY_DELTA_PENALTY = 0.05, 0.1, 0.1

# The rejection markers the original reads as each refusal category, in the order it tries them.
_MARKERS = {
    "missing_evidence": ("missing_evidence", "missing_evidence_gate_failed"),
    "insufficient_info": ("hts_or_questions_missing", "baseline_duty_missing", "insufficient_mutations",
                          "missing_best_option", "mutation_missing_evidence", "missing"),
    "ambiguous": ("gri_sequence_violation", "conflicts", "unsupported"),
    "out_of_scope": ("illegal_evasion_suggestion", "llm_unavailable"),
}
# The marker a project refusal category is written as (the first the original maps back to it).
_CATEGORY_MARKER = {category: markers[0] for category, markers in _MARKERS.items()}
_GATE_MARKER = {"missing_evidence": "missing_evidence_gate_failed", "gri_sequence": "gri_sequence_violation"}
# Rejection reasons that cost an accepted output the process bonus: the gates the original calls critical.
ORIGINAL_CRITICAL_GATES = ("gri_sequence_violation", "essential_character", "ontology_mutex", "bounded_what_ifs",
                           "missing_evidence_gate_failed", "citations")
_MISSING_EVIDENCE_PHRASES = ("missing evidence", "missing chapter evidence", "chapter notes", "attach missing chapter")


def _applied_lever(dossier: Dossier) -> Lever | None:
    """The lever that yields the dossier's optimized duty (the cheapest when several do)."""
    if dossier.optimized_duty_pct is None:
        return None
    fits = [lv for lv in dossier.levers if math.isclose(lv.new_duty_pct, dossier.optimized_duty_pct, abs_tol=1e-9)]
    return min(fits, key=lambda lv: lv.new_duty_pct) if fits else None


def _tariff_dossier(dossier: Dossier, applied: Lever | None, sequence_ok: bool) -> dict[str, Any]:
    optimized: dict[str, Any] = {"rationale": dossier.savings_note}
    if dossier.optimized_duty_pct is not None:
        optimized["duty_rate_pct"] = dossier.optimized_duty_pct
    if applied is not None:
        optimized["hts_code"] = applied.new_hts
    return {
        "baseline": {"hts_code": dossier.hts_code, "duty_rate_pct": dossier.baseline_duty_pct},
        "optimized": optimized,
        "what_if_candidates": [msgspec.to_builtins(w) for w in dossier.what_if],
        "mutations": [{"id": lv.id, "expected_duty_rate_pct": lv.new_duty_pct, "expected_savings_note": lv.description}
                      for lv in dossier.levers],
        "questions_for_user": list(dossier.questions),
        "gri_trace": {"sequence_ok": sequence_ok},
        "citations": [{"source_id": c.evidence_id, "quote": c.quote} for c in dossier.citations()],
    }


def _rejected_because(result: VerificationResult) -> list[str]:
    if result.status == "accepted" or not result.iterations:
        return []
    last = result.iterations[-1]
    failed = [g.gate for g in last.gates if not g.passed and g.critical]  # what rejected it (the last iteration)
    if result.refusal_category != "verification_failed" and result.refusal_category in _CATEGORY_MARKER:
        return [_CATEGORY_MARKER[result.refusal_category]]
    return [_GATE_MARKER.get(gate, gate) for gate in failed] or ["hts_or_questions_missing"]


def original_payload(result: VerificationResult) -> dict[str, Any]:
    """The project's result in the shape the original harness scores (see the module docstring)."""
    dossier = result.final_dossier
    last = result.iterations[-1] if result.iterations else None
    payload: dict[str, Any] = {
        "status": "verified" if result.status == "accepted" else "rejected",
        "iterations": [{"accepted": result.status == "accepted", "rejected_because": _rejected_because(result),
                        "missing": [], "feedback_text": "\n".join(last.rejection_reasons) if last else "",
                        "sequence_violations": ["gri_sequence"] if result.gri_violation else []}],
    }
    if dossier is not None:
        applied = _applied_lever(dossier)
        payload["tariff_dossier"] = _tariff_dossier(dossier, applied, sequence_ok=not result.gri_violation)
        levers = sorted(dossier.levers, key=lambda lv: lv is not applied)
        payload["lever_proof"] = {"selected_levers": [
            {"id": lv.id, "sequence": list(lv.steps), "gate_results": {"plausibility": {"ok": lv.compliance_ok}}}
            for lv in levers]}
    citations = next((g for g in last.gates if g.gate == "citations"), None) if last else None
    if citations is not None and citations.status in ("pass", "fail"):
        payload["citation_gate_result"] = {"ok": citations.passed}
    return payload


# -- reading a payload the way the original does ------------------------------------------------------------------

def _final_iteration(payload: dict[str, Any]) -> dict[str, Any] | None:
    iterations = payload.get("iterations") or (payload.get("proof") or {}).get("iterations") or []
    return iterations[-1] if iterations else None


def _dossier(payload: dict[str, Any]) -> dict[str, Any] | None:
    return payload.get("tariff_dossier") or (payload.get("proof") or {}).get("tariff_dossier")


def _first_of(payload: dict[str, Any], key: str) -> Any:
    """``payload[key]``, else the proof's, when truthy (the original looks in both)."""
    return payload.get(key) or (payload.get("proof") or {}).get(key)


def _rate(summary: dict[str, Any]) -> float | None:
    breakdown = summary.get("duty_breakdown") or {}
    if breakdown.get("total_rate_pct") is not None:
        return float(breakdown["total_rate_pct"])
    return None if summary.get("duty_rate_pct") is None else float(summary["duty_rate_pct"])


def _rates(dossier: dict[str, Any] | None) -> tuple[float | None, float | None]:
    if not dossier:
        return None, None
    return _rate(dossier.get("baseline") or {}), _rate(dossier.get("optimized") or {})


def _final_hts(dossier: dict[str, Any] | None) -> str | None:
    if not dossier:
        return None
    return (dossier.get("optimized") or {}).get("hts_code") or (dossier.get("baseline") or {}).get("hts_code")


def _direction(base: float | None, optimized: float | None) -> str | None:
    if base is None or optimized is None:
        return None
    return "decrease" if optimized < base else "increase" if optimized > base else "flat"


def _sequence_ok(payload: dict[str, Any], dossier: dict[str, Any] | None) -> bool:
    if (_final_iteration(payload) or {}).get("sequence_violations"):
        return False
    ok = ((dossier or {}).get("gri_trace") or {}).get("sequence_ok")
    return True if ok is None else bool(ok)


def _refusal_category(reasons: list[str]) -> str | None:
    if not reasons:
        return None
    for reason in reasons:
        for category, markers in _MARKERS.items():
            if reason in markers:
                return category
    return "insufficient_info"


def _mentions_missing_evidence(payload: dict[str, Any]) -> bool:
    iteration = _final_iteration(payload) or {}
    questions = (_dossier(payload) or {}).get("questions_for_user") or []
    text = " ".join([*(iteration.get("missing") or []), *questions, (iteration.get("feedback_text") or "").lower()])
    return any(phrase in text.lower() for phrase in _MISSING_EVIDENCE_PHRASES)


def _chapter(code: str | None) -> str | None:
    found = re.sub(r"\D", "", code or "")
    return found[:2] if len(found) >= 2 else None


def _no_savings_ok(dossier: dict[str, Any] | None) -> bool:
    if not dossier:
        return True
    if dossier.get("what_if_candidates"):
        return False
    baseline, optimized = dossier.get("baseline") or {}, dossier.get("optimized") or {}
    base, opt = baseline.get("duty_rate_pct"), optimized.get("duty_rate_pct")
    if optimized.get("estimated_savings_per_unit") not in (None, 0, 0.0):
        return False
    if base is not None and opt is not None and float(opt) < float(base):
        return False
    rationale = (optimized.get("rationale") or "").lower()
    if "cannot reduce" not in rationale and "no savings" not in rationale:
        return False
    for mutation in dossier.get("mutations") or []:
        expected = mutation.get("expected_duty_rate_pct")
        if expected is not None and base is not None and float(expected) < float(base):
            return False
        note = (mutation.get("expected_savings_note") or "").lower()
        if "no savings" in note or "cannot reduce" in note:
            continue
        if any(word in note for word in ("savings", "reduce", "lower")):
            return False
    return True


def _lever_stats(payload: dict[str, Any]) -> tuple[int, bool | None, int | None]:
    selected = (_first_of(payload, "lever_proof") or {}).get("selected_levers") or []
    compliance: bool | None = None
    if selected:
        compliance = True
        for lever in selected:
            plausibility = (lever.get("gate_results") or {}).get("plausibility") or {}
            steps = plausibility if isinstance(plausibility, list) else [plausibility]
            if any(not step.get("ok", False) for step in steps):
                compliance = False
                break
    sequence = selected[0].get("sequence") or [] if selected else []
    return len(selected), compliance, len(sequence) if sequence else None


class _Facts(msgspec.Struct, kw_only=True):
    """What the original's rules read from a payload."""

    accepted: bool
    rejected_because: list[str]
    final_hts: str | None
    base: float | None
    optimized: float | None
    sequence_ok: bool
    no_savings_ok: bool
    citations_valid: bool | None
    lever_count: int
    lever_compliance_ok: bool | None
    lever_steps: int | None


def _facts(payload: dict[str, Any]) -> _Facts:
    dossier = _dossier(payload)
    final = _final_iteration(payload)
    base, optimized = _rates(dossier)
    gate = _first_of(payload, "citation_gate_result") or (final or {}).get("citation_gate_result") or {}
    count, compliance, steps = _lever_stats(payload)
    return _Facts(accepted=bool(final.get("accepted")) if final else payload.get("status") == "verified",
                  rejected_because=list((final or {}).get("rejected_because") or []), final_hts=_final_hts(dossier),
                  base=base, optimized=optimized, sequence_ok=_sequence_ok(payload, dossier),
                  no_savings_ok=_no_savings_ok(dossier), citations_valid=bool(gate.get("ok")) if gate else None,
                  lever_count=count, lever_compliance_ok=compliance, lever_steps=steps)


def _code_score(case: Case, code: str | None) -> tuple[float, str | None, list[str]]:
    e = case.expected
    if code and code in e.must_not_hts:
        return 0.0, None, ["must_not_hts"]
    if code in e.preferred_hts:
        return PREFERRED_MATCH, "preferred", []
    if code in e.allowed_hts:
        return ALLOWED_MATCH, "allowed", []
    if code and _chapter(code) in {_chapter(p) for p in e.preferred_hts}:
        return CHAPTER_MATCH, "chapter", []
    return 0.0, "miss", []


def _expectation_failures(case: Case, f: _Facts) -> list[str]:
    """The expectations whose failure sets an accepted output's score to 0."""
    e = case.expected
    failed = []
    if e.expected_duty_total_rate_pct is not None:
        total = f.optimized or f.base  # the original's ``or``: an optimized 0% reads the baseline
        if total is None or not math.isclose(total, e.expected_duty_total_rate_pct, rel_tol=0.0, abs_tol=0.0001):
            failed.append("duty_total_rate_mismatch")
    if e.expected_duty_delta_direction is not None:
        wanted = "flat" if e.expected_duty_delta_direction == "none" else e.expected_duty_delta_direction
        if _direction(f.base, f.optimized) != wanted:
            failed.append("duty_delta_direction_mismatch")
    if e.lever_found_expected is True and f.lever_count < 1:
        failed.append("lever_missing")
    if e.lever_found_expected is False and f.lever_count > 0:
        failed.append("unexpected_lever")
    if e.lever_count_min is not None and f.lever_count < e.lever_count_min:
        failed.append("lever_count_below_min")
    if e.lever_compliance_ok and f.lever_compliance_ok is False:
        failed.append("lever_compliance_failed")
    if e.expected_best_is_multi_step and (f.lever_steps is None or f.lever_steps < 2):
        failed.append("multi_step_lever_missing")
    if e.min_lever_steps is not None and (f.lever_steps is None or f.lever_steps < e.min_lever_steps):
        failed.append("lever_steps_below_min")
    return failed


def _accept_case(case: Case, f: _Facts) -> tuple[float, str | None, list[str]]:
    if not f.accepted:
        return 0.0, None, ["unexpected_refusal"]
    score, match, penalties = _code_score(case, f.final_hts)
    if case.expected.no_savings_expected and not f.no_savings_ok:
        penalties.append("no_savings_violation")
        score = 0.0
    bonus = PROCESS_BONUS if not set(f.rejected_because) & set(ORIGINAL_CRITICAL_GATES) else 0.0
    if not f.sequence_ok:
        penalties.append("gri_sequence_violation")
        score -= GRI_PENALTY
    if f.citations_valid is False:
        penalties.append("citations_invalid_or_missing")
        score = 0.0
    delta = None if f.base is None or f.optimized is None else f.optimized - f.base
    if case.expected.duty_delta_range is not None and delta is not None:
        low, high = case.expected.duty_delta_range
        if not low <= delta <= high:
            penalties.append("duty_delta_out_of_range")
            score -= DUTY_DELTA_PENALTY
    failures = _expectation_failures(case, f)
    if failures:
        penalties += failures
        score = 0.0
    return max(0.0, min(1.0, score + bonus)), match, penalties


def _refusal_case(case: Case, f: _Facts, payload: dict[str, Any]) -> tuple[float, str, list[str]]:
    if f.accepted:
        return 0.0, "accepted", ["unexpected_acceptance"]
    expected = case.expected.expected_refusal_category
    if expected is None or _refusal_category(f.rejected_because) == expected:
        return REFUSAL_MATCH, "refusal", []
    if expected == "missing_evidence" and _mentions_missing_evidence(payload):
        return REFUSAL_MATCH, "refusal", []
    return REFUSAL_MISMATCH, "wrong_refusal", ["refusal_category_mismatch"]


def score_original(case: Case, result: VerificationResult, payload: dict[str, Any] | None = None) -> CaseScore:
    """Score ``result`` by the original harness's rules (``payload``: its original shape, default
    ``original_payload(result)``). ``predicted_hts`` is the code the original scores (after the lever), ``match``
    its match level, ``penalties`` its penalty names."""
    payload = original_payload(result) if payload is None else payload
    f = _facts(payload)
    threshold = 0.8 if case.expected.expected_accept else 0.9
    if case.expected.expected_accept:
        score, match, penalties = _accept_case(case, f)
    else:
        score, match, penalties = _refusal_case(case, f, payload)
    prefix, digits_correct = prefix_scores(case, f.final_hts if f.accepted else None)
    return CaseScore(case_id=case.id, case_type=case.case_type, difficulty=case.difficulty, score=round(score, 4),
                     passed=score >= threshold, threshold=threshold, status=result.status,
                     refusal_category=_refusal_category(f.rejected_because), predicted_hts=f.final_hts,
                     match=match or ("must_not" if "must_not_hts" in penalties else "refused"), penalties=penalties,
                     prefix_correct=prefix, digits_correct=digits_correct, iterations=len(result.iterations),
                     duty_status=result.duty_status, scoring="original")
