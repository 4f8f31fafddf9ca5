"""Scoring: every rule and threshold of DESIGN.md §8, each with its exact expected score."""

from __future__ import annotations

import pytest

from mpcbench_async.tariff import Dossier, VerificationResult, score_case
from mpcbench_async.tariff._dossier import Lever
from tests.tariff.conftest import make_case


def accepted(code: str, *, gri_violation=False, critical=True, levers=(), base=20.0, optimized=None, what_if=()):
    dossier = Dossier(decision="accept", hts_code=code, baseline_duty_pct=base, optimized_duty_pct=optimized,
                      levers=list(levers), what_if=list(what_if))
    return VerificationResult(case_id="c1", status="accepted", final_dossier=dossier, critical_gates_passed=critical,
                              gri_violation=gri_violation, levers=list(levers))


def refused(category: str):
    return VerificationResult(case_id="c1", status="refused", refusal_category=category,
                              final_dossier=Dossier(decision="refuse", refusal_category=category))


def lever(new_pct: float, steps: int = 1, compliance: bool = True) -> Lever:
    return Lever(id="L1", description="d", steps=[f"s{i}" for i in range(steps)], new_hts="6404.19.90",
                 new_duty_pct=new_pct, compliance_ok=compliance)


class TestAcceptanceCases:
    @pytest.mark.parametrize(("code", "score", "match", "passed"), [
        ("6404.11.90", 1.0, "preferred", True),      # 1.0 + 0.05, clamped
        ("640411.9000", 1.0, "preferred", True),     # digits compare, dots ignored
        ("6404.19.90", 0.75, "allowed", False),      # 0.7 + 0.05 < 0.8
        ("6405.90", 0.35, "chapter", False),         # same chapter 0.3 + 0.05
        ("8544.42", 0.05, "none", False),            # only the gate bonus
        ("6402.99.90", 0.0, "must_not", False),      # hard 0
    ])
    def test_code_matching(self, code, score, match, passed):
        """Preferred 1.0, allowed 0.7, same chapter 0.3, must-not a hard 0; +0.05 for passing gates."""
        result = score_case(make_case(), accepted(code))
        assert (score, match, passed) == (result.score, result.match, result.passed)

    def test_gri_violation_costs_a_tenth(self):
        """A GRI sequence violation on an accepted output costs 0.1."""
        result = score_case(make_case(), accepted("6404.11.90", gri_violation=True))
        assert (0.95, True, ["GRI sequence violation (−0.1)"]) == (result.score, result.passed, result.penalties)

    def test_no_gate_bonus_without_passing_gates(self):
        """Without all critical gates passed there is no +0.05."""
        assert 0.7 == score_case(make_case(), accepted("6404.19", critical=False)).score

    def test_refusing_an_acceptance_case_scores_zero(self):
        """A refusal where acceptance was expected scores 0."""
        result = score_case(make_case(), refused("ambiguous"))
        assert (0.0, False, "refused") == (result.score, result.passed, result.match)

    def test_no_savings_expected_fails_on_levers(self):
        """A dossier offering levers fails a no-savings case outright."""
        case = make_case(case_type="no_savings", expected__no_savings_expected=True)
        result = score_case(case, accepted("6404.11.90", levers=[lever(12.5)], optimized=12.5))
        assert (0.0, False) == (result.score, result.passed)

    def test_no_savings_expected_fails_on_what_if(self):
        """What-if options count as offered savings too."""
        from mpcbench_async.tariff._dossier import WhatIf

        case = make_case(case_type="no_savings", expected__no_savings_expected=True)
        result = score_case(case, accepted("6404.11.90", what_if=[WhatIf(change="x", new_hts="6404.19")]))
        assert (0.0, False) == (result.score, result.passed)


class TestOptionalExpectations:
    def test_savings_case_with_the_right_lever_passes(self):
        """Delta range, direction, lever found/count/compliance all met: full score."""
        case = make_case(case_type="savings_possible", expected__duty_delta_range=[5.0, 10.0],
                         expected__expected_duty_delta_direction="decrease", expected__lever_found_expected=True,
                         expected__lever_count_min=1, expected__lever_compliance_ok=True)
        result = score_case(case, accepted("6404.11.90", levers=[lever(12.5)], optimized=12.5))
        assert (1.0, True, []) == (result.score, result.passed, result.penalties)

    def test_each_failed_expectation_costs_a_tenth_and_fails(self):
        """Missing lever: delta range, direction, lever found and count each cost 0.1, and the case fails."""
        case = make_case(case_type="savings_possible", expected__duty_delta_range=[5.0, 10.0],
                         expected__expected_duty_delta_direction="decrease", expected__lever_found_expected=True,
                         expected__lever_count_min=1)
        result = score_case(case, accepted("6404.11.90"))
        assert (0.65, False, 4) == (result.score, result.passed, len(result.penalties))
        assert "duty delta 0.0 pp outside [5, 10] (−0.1)" == result.penalties[0]

    def test_total_rate_and_multi_step(self):
        """Total rate, multi-step best lever and minimum steps are checked."""
        case = make_case(case_type="savings_possible", expected__expected_duty_total_rate_pct=20.0,
                         expected__expected_best_is_multi_step=True, expected__min_lever_steps=2)
        assert (1.0, True) == (lambda r: (r.score, r.passed))(
            score_case(case, accepted("6404.11.90", levers=[lever(12.5, steps=2)], optimized=12.5)))
        single = score_case(case, accepted("6404.11.90", levers=[lever(12.5, steps=1)], optimized=12.5))
        assert (0.85, False) == (single.score, single.passed)

    def test_lever_compliance(self):
        """A non-compliant lever fails lever_compliance_ok."""
        case = make_case(case_type="savings_possible", expected__lever_compliance_ok=True)
        result = score_case(case, accepted("6404.11.90", levers=[lever(12.5, compliance=False)], optimized=12.5))
        assert (0.95, False) == (result.score, result.passed)


class TestRefusalCases:
    @pytest.mark.parametrize(("result", "score", "passed"), [
        (refused("insufficient_info"), 1.0, True),
        (refused("ambiguous"), 0.8, False),           # wrong category: 0.8 < 0.9 threshold
        (accepted("6404.11.90"), 0.0, False),
    ])
    def test_negative_case(self, result, score, passed):
        """Right refusal 1.0, wrong category 0.8 (fails the 0.9 bar), acceptance 0."""
        case = make_case(case_type="negative", expected__expected_accept=False, expected__preferred_hts=[],
                         expected__expected_refusal_category="insufficient_info")
        scored = score_case(case, result)
        assert (score, passed, 0.9) == (scored.score, scored.passed, scored.threshold)

    def test_positive_threshold_is_point_eight(self):
        """Positive cases pass at 0.8."""
        assert 0.8 == score_case(make_case(), accepted("6404.11.90")).threshold


class TestPrefixAccuracy:
    def test_prefix_flags_and_digits_correct(self):
        """Prefix accuracy at 2/4/6/8 digits and the count of leading digits correct."""
        result = score_case(make_case(), accepted("6404.19.90"))
        assert ({"2": True, "4": True, "6": False, "8": False}, 5) == (result.prefix_correct, result.digits_correct)

    def test_refusal_misses_every_prefix(self):
        """Refusing an acceptance case counts as a miss at every length."""
        result = score_case(make_case(), refused("ambiguous"))
        assert ({"2": False, "4": False, "6": False, "8": False}, 0) == (result.prefix_correct, result.digits_correct)
