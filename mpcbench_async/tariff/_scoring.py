"""Scoring a verification result against a case's expectations (DESIGN.md §8), 0–1 with partial credit.

Acceptance cases: preferred code 1.0, allowed 0.7, same 2-digit chapter as a
preferred code 0.3, else 0; a ``must_not_hts`` match is a hard 0; +0.05 when all
critical gates passed on the accepted output; −0.1 for a GRI-sequence
violation; each failed optional expectation (duty delta range, total rate,
delta direction, lever found/count/compliance, multi-step, minimum steps)
costs 0.1 and fails the case; clamp to [0, 1]. Refusal cases: right category
1.0, wrong category 0.8, accepted 0. ``no_savings_expected`` fails the case
(score 0) when the dossier offers levers or what-if options. Pass thresholds:
negative (and refusal-expected adversarial) ≥ 0.9, all others ≥ 0.8. Codes
compare by digits, dots ignored; a code matches an expected code when its
digits start with the expected code's digits. The result's duty status
(verified, unverified where the pack has no line for the code, not stated) is
carried on the score for the report; it never changes the score.
"""

from __future__ import annotations

from ._cases import Case
from ._inputs import SCORING_MODES, ScoringMode
from ._pack import digits
from ._pipeline import VerificationResult
from ._records import CaseScore

__all__ = ["CaseScore", "PREFIX_LENGTHS", "SCORING_MODES", "ScoringMode", "prefix_scores", "score_case"]

# Bumped whenever a scoring rule changes: it is part of each case's resume key, so a rerun rescores.
SCORING_VERSION = 2

PREFIX_LENGTHS = (2, 4, 6, 8, 10)
RATE_TOLERANCE = 0.01


def _matches(predicted: str, expected: list[str]) -> bool:
    p = digits(predicted)
    return any(p.startswith(digits(e)) for e in expected if digits(e))


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _optional_expectations(case: Case, result: VerificationResult) -> list[str]:
    """Failed optional expectations, as messages."""
    e = case.expected
    dossier = result.final_dossier
    failures = []
    base = dossier.baseline_duty_pct if dossier else None
    optimized = dossier.optimized_duty_pct if dossier and dossier.optimized_duty_pct is not None else base
    delta = (base - optimized) if base is not None and optimized is not None else None
    levers = list(dossier.levers) if dossier else []
    if e.duty_delta_range is not None:
        low, high = e.duty_delta_range
        if delta is None or not low - RATE_TOLERANCE <= delta <= high + RATE_TOLERANCE:
            failures.append(f"duty delta {delta if delta is not None else 'n/a'} pp outside [{low:g}, {high:g}]")
    if e.expected_duty_total_rate_pct is not None and (
            base is None or abs(base - e.expected_duty_total_rate_pct) > RATE_TOLERANCE):
        failures.append(f"total rate {base}% ≠ expected {e.expected_duty_total_rate_pct:g}%")
    if e.expected_duty_delta_direction is not None:
        direction = None if delta is None else "decrease" if delta > RATE_TOLERANCE else "increase" \
            if delta < -RATE_TOLERANCE else "none"
        if direction != e.expected_duty_delta_direction:
            failures.append(f"duty delta direction {direction} ≠ expected {e.expected_duty_delta_direction}")
    if e.lever_found_expected is not None and bool(levers) != e.lever_found_expected:
        failures.append(f"lever found {bool(levers)} ≠ expected {e.lever_found_expected}")
    if e.lever_count_min is not None and len(levers) < e.lever_count_min:
        failures.append(f"{len(levers)} lever(s) < minimum {e.lever_count_min}")
    if e.lever_compliance_ok is not None and levers and any(lv.compliance_ok != e.lever_compliance_ok for lv in levers):
        failures.append(f"lever compliance ≠ expected {e.lever_compliance_ok}")
    best = min(levers, key=lambda lv: lv.new_duty_pct) if levers else None
    if e.expected_best_is_multi_step is not None:
        multi = best is not None and len(best.steps) >= 2
        if multi != e.expected_best_is_multi_step:
            failures.append(f"best lever multi-step {multi} ≠ expected {e.expected_best_is_multi_step}")
    if e.min_lever_steps is not None and (best is None or len(best.steps) < e.min_lever_steps):
        failures.append(f"best lever has {len(best.steps) if best else 0} step(s) < minimum {e.min_lever_steps}")
    return failures


def prefix_scores(case: Case, predicted: str | None) -> tuple[dict[str, bool], int | None]:
    """Exact match of the accepted code on the first 2/4/6/8/10 digits of the first preferred code, and the number
    of leading digits in common (a refusal of an acceptance case misses at every length; refusal cases have none)."""
    e = case.expected
    if not (e.expected_accept and e.preferred_hts):
        return {}, None
    p, want = digits(predicted or ""), digits(e.preferred_hts[0])
    return ({str(n): p[:n] == want[:n] for n in PREFIX_LENGTHS if len(want) >= n}, _common_prefix(p, want))


def score_case(case: Case, result: VerificationResult, *, scoring: ScoringMode = "project") -> CaseScore:
    """Score one case's result by the project's rules (or, ``scoring="original"``, the original harness's:
    ``_original``); every deduction is listed in ``penalties``."""
    if scoring == "original":
        from ._original import score_original  # it builds on this module

        return score_original(case, result)
    e = case.expected
    refusal_expected = not e.expected_accept
    threshold = 0.9 if case.case_type == "negative" or (case.case_type == "adversarial" and refusal_expected) else 0.8
    dossier = result.final_dossier
    predicted = dossier.hts_code if dossier and result.status == "accepted" else None
    prefix, digits_correct = prefix_scores(case, predicted)
    score, passed, match, penalties = _grade(case, result, predicted, threshold)
    return CaseScore(case_id=case.id, case_type=case.case_type, difficulty=case.difficulty, score=score, passed=passed,
                     threshold=threshold, status=result.status, refusal_category=result.refusal_category,
                     predicted_hts=predicted, match=match, penalties=penalties, prefix_correct=prefix,
                     digits_correct=digits_correct, iterations=len(result.iterations), duty_status=result.duty_status)


def _grade(case: Case, result: VerificationResult, predicted: str | None,
           threshold: float) -> tuple[float, bool, str, list[str]]:
    """Score, passed, match and penalties: a refusal case by the refusal's category, any other by the code."""
    e = case.expected
    dossier = result.final_dossier
    if not e.expected_accept:
        if result.status == "accepted":
            return 0.0, False, "accepted", ["accepted a refusal case"]
        right = result.refusal_category == e.expected_refusal_category
        score = 1.0 if right else 0.8
        penalties = [] if right else [f"refusal category {result.refusal_category} ≠ {e.expected_refusal_category}"]
        return score, score >= threshold, "refusal" if right else "wrong_refusal", penalties
    if result.status != "accepted" or not predicted:
        return 0.0, False, "refused", [f"refused ({result.refusal_category}) but acceptance was expected"]
    if e.must_not_hts and _matches(predicted, e.must_not_hts):
        return 0.0, False, "must_not", [f"{predicted} is a must-not code"]
    if _matches(predicted, e.preferred_hts):
        score, match = 1.0, "preferred"
    elif _matches(predicted, e.allowed_hts):
        score, match = 0.7, "allowed"
    elif any(digits(predicted)[:2] == digits(code)[:2] for code in e.preferred_hts):
        score, match = 0.3, "chapter"
    else:
        score, match = 0.0, "none"
    penalties = []
    if result.critical_gates_passed:
        score += 0.05
    if result.gri_violation:
        score -= 0.1
        penalties.append("GRI sequence violation (−0.1)")
    optional = _optional_expectations(case, result)
    for failure in optional:
        score -= 0.1
        penalties.append(f"{failure} (−0.1)")
    score = round(min(1.0, max(0.0, score)), 4)
    passed = score >= threshold and not optional
    if e.no_savings_expected and dossier and (dossier.levers or dossier.what_if):
        penalties.append("no savings expected, but the dossier offers levers or what-if options (fails the case)")
        score, passed = 0.0, False
    return score, passed, match, penalties
