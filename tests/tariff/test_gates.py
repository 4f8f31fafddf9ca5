"""Gates and the revise loop: each defect is rejected with its reason; the fixed revision is accepted."""

from __future__ import annotations

import copy

import orjson
import pytest

from mpcbench_async._prompts import load_prompts
from mpcbench_async.tariff import verify
from tests.conftest import REPO
from tests.tariff.conftest import make_case

PROMPTS = load_prompts(REPO / "prompt_config.json")
GOOD = {
    "decision": "accept",
    "gri_steps": [
        {"rule": "GRI1", "conclusion": "6404", "citations": [{"evidence_id": "ch64-6404", "quote":
            "Heading 6404 covers footwear with outer soles of rubber or plastics and uppers of textile materials."}]},
        {"rule": "GRI6", "conclusion": "6404.11", "citations": [{"evidence_id": "GRI6", "quote": "GRI6 text."}]},
    ],
    "hts_code": "6404.11.90", "baseline_duty_pct": 20.0,
}


class Replies:
    """A proposer that plays given replies in order and records what it was told."""

    def __init__(self, *dossiers: dict) -> None:
        self.replies = [orjson.dumps(d).decode() for d in dossiers]
        self.seen: list[list] = []

    async def propose(self, case_id, messages, iteration):
        self.seen.append(messages)
        return self.replies[iteration]


def broken(**changes) -> dict:
    dossier = copy.deepcopy(GOOD)
    for key, value in changes.items():
        dossier[key] = value
    return dossier


DEFECTS = {
    "citation not in bundle": (broken(gri_steps=[{"rule": "GRI1", "conclusion": "x", "citations": [
        {"evidence_id": "ch64-6404", "quote": "Heading 6404 covers all sports shoes."}]}]),
        "[citations] citation of 'ch64-6404': the quote 'Heading 6404 covers all sports shoes.' does not appear "
        "verbatim in that evidence"),
    "GRI 3 before GRI 1": (broken(gri_steps=[GOOD["gri_steps"][0] | {"rule": "GRI3b"}, GOOD["gri_steps"][0]]),
                           "[gri_sequence] the GRI steps must start with GRI 1 (headings and section/chapter notes)"),
    "nonexistent code": (broken(hts_code="6499.99.00"),
                         "[code_validity] hts_code '6499.99.00': subheading 6499.99 does not exist in HS 2022"),
    "unsupported savings": (broken(optimized_duty_pct=6.0),
                            "[savings] unsupported savings claim: optimized duty 6% is not the result of any lever"),
    "wrong duty": (broken(baseline_duty_pct=3.0),
                   "[duty] baseline duty 3% does not match the US rate table's 20% for 6404.11.90"),
}


class TestGates:
    @pytest.mark.parametrize("defect", sorted(DEFECTS))
    async def test_defect_is_rejected_then_fixed_revision_accepted(self, pack, defect):
        """A dossier with the defect is rejected with the right reason; the corrected revision is accepted."""
        dossier, reason = DEFECTS[defect]
        proposer = Replies(dossier, GOOD)
        result = await verify(make_case(), proposer, pack, PROMPTS)
        assert ("accepted", 2, "6404.11.90") == (result.status, len(result.iterations), result.final_dossier.hts_code)
        assert [reason] == result.iterations[0].rejection_reasons
        assert reason in proposer.seen[1][-1].content  # the critique went back to the proposer
        assert [] == result.iterations[1].rejection_reasons

    async def test_missing_document_blocks_acceptance(self, pack):
        """A request relying on an unsupplied lab report cannot be accepted; a missing_evidence refusal is."""
        case = make_case(input__input="Footwear with textile uppers; composition per the attached lab report.")
        refusal = {"decision": "refuse", "refusal_category": "missing_evidence"}
        result = await verify(case, Replies(GOOD, refusal), pack, PROMPTS)
        assert ("refused", "missing_evidence") == (result.status, result.refusal_category)
        assert ["[missing_evidence] the request relies on 'per the attached lab report', which was not supplied; "
                "refuse with missing_evidence or ask for it"] == result.iterations[0].rejection_reasons

    async def test_schema_errors_name_the_field(self, pack):
        """A dossier with an unknown field is rejected naming it."""
        result = await verify(make_case(), Replies(broken(colour="red"), GOOD), pack, PROMPTS)
        assert ["[schema] the dossier does not match the schema: Object contains unknown field `colour`"] == (
            result.iterations[0].rejection_reasons)

    async def test_gri_violation_on_the_last_iteration_is_accepted_but_flagged(self, pack):
        """On the last iteration only critical gates block; a GRI order violation is recorded for scoring."""
        case = make_case(input__options={"max_iters": 1})
        dossier, _ = DEFECTS["GRI 3 before GRI 1"]
        result = await verify(case, Replies(dossier), pack, PROMPTS)
        assert ("accepted", True) == (result.status, result.gri_violation)

    async def test_never_valid_ends_verification_failed(self, pack):
        """When no proposal passes within max_iters the case is refused as verification_failed."""
        case = make_case(input__options={"max_iters": 2})
        result = await verify(case, Replies(broken(hts_code="1"), broken(hts_code="2")), pack, PROMPTS)
        assert ("refused", "verification_failed", 2) == (result.status, result.refusal_category,
                                                         len(result.iterations))
