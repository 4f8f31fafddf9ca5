"""Gates on real answer shapes: they check what the pack can verify, mark the rest unverified, and never cap
accuracy (no block, no penalty, no critique for what the pack lacks)."""

from __future__ import annotations

import copy

import msgspec
import orjson
import pytest

from mpcbench_async._prompts import load_prompts
from mpcbench_async.tariff import score_case, verify
from mpcbench_async.tariff._dossier import Dossier
from mpcbench_async.tariff._gates import GateResult, run_gates
from tests.conftest import REPO
from tests.tariff.conftest import make_case
from tests.tariff.test_gates import Replies

PROMPTS = load_prompts(REPO / "prompt_config.json")
CITE = [{"rule": "GRI1", "conclusion": "6404", "citations": [{"evidence_id": "ch64-6404", "quote":
         "Heading 6404 covers footwear with outer soles of rubber or plastics and uppers of textile materials."}]}]
LISTED = {"decision": "accept", "gri_steps": CITE, "hts_code": "6404.11.90", "baseline_duty_pct": 20.0}
# 6404.20 (leather outer soles, textile uppers) exists in HS 2022; the unit-test pack has no duty line under it.
UNLISTED = {"decision": "accept", "gri_steps": CITE, "hts_code": "6404.20.6060", "baseline_duty_pct": 10.5}
REFUSAL = {"decision": "refuse", "refusal_category": "insufficient_info", "questions": ["What is the upper made of?"]}


def gates_for(pack, dossier: dict, request: str = "Running shoe, polyester mesh upper, rubber outsole.",
              evidence: list[str] | None = None) -> dict[str, GateResult]:
    results = run_gates(msgspec.convert(dossier, Dossier), [], pack, list(pack.items.values()), request,
                        evidence or [])
    return {g.gate: g for g in results}


def with_(base: dict, **changes) -> dict:
    dossier = copy.deepcopy(base)
    dossier.update(changes)
    return dossier


class TestCodeValidity:
    @pytest.mark.parametrize("code", ["6404.11", "6404.11.90", "6404.11.9020", "6404119020", "6404.11.90.20",
                                      "6404 11 90", " 6404.11.90 ", "0101.21.00"])
    def test_well_formed_codes_of_6_8_or_10_digits_are_valid(self, pack, code):
        """Digits grouped by dots or spaces, 6, 8 or 10 in all, of an HS 2022 subheading, pass."""
        assert ("pass", []) == (gates_for(pack, with_(LISTED, hts_code=code))["code_validity"].status,
                                gates_for(pack, with_(LISTED, hts_code=code))["code_validity"].reasons)

    @pytest.mark.parametrize("code", ["6404", "6404.11.9", "6404.11.902", "6404.11.90201", "HTS 6404.11.90",
                                      "6404-11-90", "6404.11.90 (HTSUS)"])
    def test_malformed_codes_fail_with_the_accepted_shapes(self, pack, code):
        """A code of another length or with other characters is rejected, and the reason shows valid shapes."""
        gate = gates_for(pack, with_(LISTED, hts_code=code))["code_validity"]
        assert ("fail", [f"hts_code {code!r} is not a well-formed code: write 6, 8 or 10 digits, optionally grouped "
                         "by dots (6404.11, 6404.11.90, 6404.11.9020)"]) == (gate.status, gate.reasons)

    @pytest.mark.parametrize(("code", "subheading"), [("8517.12.00", "8517.12"), ("9999.99.9999", "9999.99"),
                                                      ("6499.99.00", "6499.99")])
    def test_codes_outside_hs_2022_fail(self, pack, code, subheading):
        """An HS 2017 code, the 'not specified' 9999.99 and an invented subheading are not HS 2022 codes."""
        gate = gates_for(pack, with_(LISTED, hts_code=code))["code_validity"]
        assert [f"hts_code {code!r}: subheading {subheading} does not exist in HS 2022"] == gate.reasons


class TestDuty:
    def test_stated_duty_matching_the_line_passes(self, pack):
        """A 10-digit code under the pack's 8-digit line, stating that line's rate, is verified."""
        gate = gates_for(pack, with_(LISTED, hts_code="6404.11.9020"))["duty"]
        assert ("pass", True, [], []) == (gate.status, gate.passed, gate.reasons, gate.notes)

    def test_duty_contradicting_the_line_fails(self, pack):
        """A stated duty that contradicts the pack's line for the code still fails, naming the line's rate."""
        gate = gates_for(pack, with_(LISTED, hts_code="6404.11.9020", baseline_duty_pct=12.0))["duty"]
        assert ("fail", False, ["baseline duty 12% does not match the US rate table's 20% for 6404.11.90"]) == (
            gate.status, gate.passed, gate.reasons)

    def test_code_without_a_line_is_unverified_not_failed(self, pack):
        """Where the pack has no line for the code, the duty is unverified: it passes, with a note saying so."""
        gate = gates_for(pack, UNLISTED)["duty"]
        assert ("unverified", True, [], ["the pack has no US duty line for 6404.20.6060; the stated 10.5% is "
                                         "unverified"]) == (gate.status, gate.passed, gate.reasons, gate.notes)

    def test_code_without_a_line_and_no_stated_duty_is_unverified(self, pack):
        """An unlisted code with no duty stated is unverified too (nothing in the pack to ask for)."""
        gate = gates_for(pack, with_(UNLISTED, baseline_duty_pct=None))["duty"]
        assert ("unverified", ["the pack has no US duty line for 6404.20.6060; no baseline duty stated"]) == (
            gate.status, gate.notes)

    def test_six_digit_code_is_not_covered_by_a_narrower_line(self, pack):
        """6404.11 may hold lines at other rates, so the pack's 6404.11.90 line does not verify (or refute) it."""
        gate = gates_for(pack, with_(LISTED, hts_code="6404.11", baseline_duty_pct=7.5))["duty"]
        assert ("unverified", True) == (gate.status, gate.passed)

    def test_no_stated_duty_on_a_listed_code_is_not_a_failure(self, pack):
        """A dossier that states no duty has no duty claim to check: n/a, not a block."""
        gate = gates_for(pack, with_(LISTED, baseline_duty_pct=None))["duty"]
        assert ("n/a", True) == (gate.status, gate.passed)

    async def test_unverified_duty_is_accepted_first_time_without_critique(self, pack):
        """The correct code with an unlisted duty is accepted at once, recorded as unverified, and scores in full."""
        case = make_case(expected__preferred_hts=["6404.20.60"])
        proposer = Replies(UNLISTED)
        result = await verify(case, proposer, pack, PROMPTS)
        score = score_case(case, result)
        assert ("accepted", 1, [], "unverified") == (result.status, len(result.iterations),
                                                     result.iterations[0].rejection_reasons, result.duty_status)
        assert (1.0, True, "unverified") == (score.score, score.passed, score.duty_status)

    async def test_critique_for_another_gate_says_nothing_about_the_unverified_duty(self, pack):
        """When another gate rejects, the critique lists only that gate's reasons: nothing pushes to another code."""
        bad_quote = with_(UNLISTED, gri_steps=[{"rule": "GRI1", "conclusion": "6404", "citations": [
            {"evidence_id": "ch64-6404", "quote": "Heading 6404 covers leather soles."}]}])
        proposer = Replies(bad_quote, UNLISTED)
        result = await verify(make_case(expected__preferred_hts=["6404.20.60"]), proposer, pack, PROMPTS)
        critique = proposer.seen[1][-1].content
        assert ("accepted", "unverified") == (result.status, result.duty_status)
        assert ["[citations] citation of 'ch64-6404': the quote 'Heading 6404 covers leather soles.' does not "
                "appear verbatim in that evidence"] == result.iterations[0].rejection_reasons
        assert ("[duty]" in critique, "6404.20.6060" in critique, "rate" in critique) == (False, False, False)

    async def test_verified_and_not_stated_duty_are_recorded(self, pack):
        """The accepted result records verified when the duty matches its line, not_stated when none was given."""
        verified = await verify(make_case(), Replies(LISTED), pack, PROMPTS)
        silent = await verify(make_case(), Replies(with_(LISTED, baseline_duty_pct=None)), pack, PROMPTS)
        refused = await verify(make_case(), Replies(REFUSAL), pack, PROMPTS)
        assert ("verified", "not_stated", None) == (verified.duty_status, silent.duty_status, refused.duty_status)


class TestSavings:
    LEVER = {"id": "L1", "description": "leather outsole", "steps": ["change the outsole to leather"],
             "new_hts": "6404.20.60", "new_duty_pct": 10.0}

    def test_lever_to_an_unlisted_code_is_unverified_not_failed(self, pack):
        """A lever whose target code has no pack line is unverified, with a note; it does not block."""
        gate = gates_for(pack, with_(LISTED, levers=[self.LEVER], optimized_duty_pct=10.0))["savings"]
        assert ("unverified", True, ["lever L1: the pack has no US duty line for 6404.20.60; the stated 10% is "
                                     "unverified"]) == (gate.status, gate.passed, gate.notes)

    def test_lever_contradicting_a_listed_line_fails(self, pack):
        """A lever rate that contradicts the pack's line for its target fails."""
        lever = self.LEVER | {"new_hts": "6404.19.90", "new_duty_pct": 5.0}
        gate = gates_for(pack, with_(LISTED, levers=[lever], optimized_duty_pct=5.0))["savings"]
        assert ("fail", ["lever L1: new duty 5% does not match the US rate table's 12.5% for 6404.19.90"]) == (
            gate.status, gate.reasons)

    def test_unsupported_savings_claim_fails_even_when_unverified(self, pack):
        """An optimized duty no lever produces fails whatever the pack holds (the dossier contradicts itself)."""
        gate = gates_for(pack, with_(UNLISTED, optimized_duty_pct=2.0))["savings"]
        assert ("fail", ["unsupported savings claim: optimized duty 2% is not the result of any lever"]) == (
            gate.status, gate.reasons)

    def test_no_levers_and_no_claim_is_not_applicable(self, pack):
        """A dossier that claims no savings has nothing for the savings gate to check."""
        assert "n/a" == gates_for(pack, LISTED)["savings"].status


class TestStatuses:
    def test_a_refusal_has_nothing_to_verify_but_its_category(self, pack):
        """For a refusal the duty, savings, GRI and citation gates are n/a; its category is checked."""
        statuses = {name: g.status for name, g in gates_for(pack, REFUSAL).items()}
        assert {"schema": "pass", "code_validity": "pass", "citations": "n/a", "missing_evidence": "n/a",
                "duty": "n/a", "savings": "n/a", "gri_sequence": "n/a"} == statuses

    def test_missing_evidence_applies_only_when_the_request_relies_on_a_document(self, pack):
        """Listing boilerplate leaves the gate n/a; reliance fails an acceptance and passes a refusal."""
        listing = "Title: Bench drill\nAttributes:\n- Machinery Test Report: Available\n- Certification: CE"
        relies = "Bench drill; motor power per the attached datasheet."
        refusal = {"decision": "refuse", "refusal_category": "missing_evidence"}
        assert ("n/a", "fail", "pass") == (gates_for(pack, LISTED, listing)["missing_evidence"].status,
                                           gates_for(pack, LISTED, relies)["missing_evidence"].status,
                                           gates_for(pack, refusal, relies)["missing_evidence"].status)

    def test_old_records_without_a_status_decode_with_their_verdict(self):
        """Gate results written before statuses existed decode as fail or pass from ``passed``."""
        old = [{"gate": "duty", "passed": False, "critical": True, "reasons": ["x"]},
               {"gate": "duty", "passed": True, "critical": True}]
        decoded = msgspec.json.decode(orjson.dumps(old), type=list[GateResult])
        assert ["fail", "pass"] == [g.status for g in decoded]
