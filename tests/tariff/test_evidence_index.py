"""Evidence selection from the pack's word index: the same notes, in the same order, as ranking every note.

The reference is the selection as it was before the index: ``_text.rank`` over every chapter note of the
pack, one field (the note's text) of weight 1, the best 14.
"""

from __future__ import annotations

import pytest

from mpcbench_async._text import rank
from mpcbench_async.tariff import Case, Pack, digits, load_pack, load_suite
from mpcbench_async.tariff._dossier import build_bundle
from mpcbench_async.tariff._pack import EvidenceItem
from tests.conftest import REPO, reference_dir

LIMIT = 14
SHIPPED_PACK = REPO / "storage" / "packs" / "tariff"


def ranked(pack: Pack, text: str, limit: int = LIMIT) -> list[str]:
    """The reference: every note scored by ``rank`` on each request."""
    return [item.id for _, item in rank(pack.notes, text, lambda n: [(n.text, 1.0)], limit=limit)]


def indexed(pack: Pack, text: str, limit: int = LIMIT) -> list[str]:
    return [item.id for item in pack.best_notes(text, limit=limit)]


def reference_bundle(pack: Pack, case: Case) -> list[str]:
    """The bundle's ids as built before the index: GRIs, chosen notes, their headings' rate lines, request items."""
    request = case.input
    if request.options.candidate_chapters:
        wanted = {f"chapter_{c.zfill(2)}" for c in request.options.candidate_chapters}
        chosen = [n.id for n in pack.notes if n.source in wanted]
    else:
        chosen = ranked(pack, request.input + " " + " ".join(request.evidence))
    headings = {pack.items[i].heading[:4] for i in chosen if pack.items[i].heading}
    rates = sorted((item for heading in headings for item in pack.rate_items({heading})), key=lambda r: digits(r.id))
    return ([g.id for g in pack.gri] + chosen + [r.id for r in rates]
            + [f"req-{i + 1}" for i in range(len(request.evidence))])


def request_text(case: Case) -> str:
    return case.input.input + " " + " ".join(case.input.evidence)


class TestSuites:
    def test_every_shipped_case_selects_what_ranking_every_note_selects(self):
        """On each of the shipped suite's cases, the indexed selection and the whole bundle equal the reference."""
        pack = load_pack(SHIPPED_PACK)
        cases = load_suite(REPO / "storage" / "benchmarks" / "tariff" / "cases")
        assert 72 == len(cases)
        assert [ranked(pack, request_text(c)) for c in cases] == [indexed(pack, request_text(c)) for c in cases]
        assert [reference_bundle(pack, c) for c in cases] == [
            [item.id
             for item in build_bundle(pack, c.input.input, c.input.evidence, c.input.options.candidate_chapters)]
            for c in cases]

    def test_hscodecomp_listings_select_what_ranking_every_note_selects(self):
        """On every 8th HSCodeComp listing shipped (real titles, attributes and category paths), the same notes."""
        pack = load_pack(SHIPPED_PACK)
        cases = load_suite(REPO / "storage" / "benchmarks" / "hscodecomp" / "cases")[::8]
        assert 79 == len(cases)
        assert [ranked(pack, request_text(c)) for c in cases] == [indexed(pack, request_text(c)) for c in cases]

    def test_original_harness_cases_select_what_ranking_every_note_selects(self):
        """On the original harness's 72 cases (run with the project's pack), the same notes."""
        pack = load_pack(SHIPPED_PACK)
        cases = load_suite(reference_dir("tariff_whitebox", "benchmarks_tariff", "cases"))
        assert 72 == len(cases)
        assert [ranked(pack, request_text(c)) for c in cases] == [indexed(pack, request_text(c)) for c in cases]


class TestRanking:
    @pytest.mark.parametrize("text", [
        "footwear",  # a whole word
        "foot",  # a prefix of four letters matches "footwear"
        "sol",  # three letters match whole words only (none here)
        "uppers of rubber",  # stop words dropped; more distinct words first
        "rubber rubber textile",  # a repeated word counts twice
        "the of and",  # only stop words: they are the query
        "",  # no words: every note in pack order
        "!!! ---",
        "outer soles of rubber or plastics",  # the whole query as a phrase of a note adds one
        "material upper largest",
        "Heading 6404 COVERS footwear",  # case-insensitive, digits are words
    ])
    def test_scores_and_ties_match_the_reference(self, pack, text):
        """Whole words, prefixes of four letters or more, repeats, stop words, phrases and ties: as ``rank``."""
        assert ranked(pack, text) == indexed(pack, text)

    def test_phrase_bonus_breaks_a_tie(self, pack):
        """Two notes matching the same words are ordered by which holds the query as a phrase, not pack order."""
        assert ["ch64-6402", "ch64-6404"] == indexed(pack, "uppers of rubber or plastics")

    def test_a_repeated_query_word_breaks_a_tie(self, pack):
        """Notes matching as many distinct words are ordered by matches counted with repeats, not pack order."""
        assert ["ch64-note-4", "ch64-6404"] == indexed(pack, "textile surface surface")

    def test_words_of_four_letters_or_more_match_as_prefixes(self, pack):
        """"foot" finds "footwear"; "sol" (three letters) does not find "soles"."""
        assert (["ch64-6404", "ch64-6402"], []) == (indexed(pack, "foot"), indexed(pack, "sol"))

    def test_notes_sharing_no_word_are_left_out_and_limit_applies(self, pack):
        """A note with none of the query's words is not selected; ``limit`` keeps the best."""
        assert (["ch64-note-4"], ["ch64-6404"]) == (indexed(pack, "surface area"), indexed(pack, "footwear", limit=1))

    def test_a_pack_without_notes_selects_nothing(self, tmp_path):
        """An empty pack gives an empty selection."""
        empty = Pack(tmp_path, [EvidenceItem(id="GRI1", source="gri", text="GRI1: rule")], {})
        assert ([], []) == (indexed(empty, "footwear"), indexed(empty, ""))


class TestRateItems:
    def test_rate_lines_come_in_table_code_order_for_the_asked_headings(self, pack):
        """Rate evidence for the asked headings only, ordered by table code, whatever the headings' order."""
        assert ["rate-6402.99.90", "rate-6404.11.90", "rate-6404.19.90"] == [
            item.id for item in pack.rate_items({"6404", "6402", "9999"})]
        assert ["rate-6404.11.90", "rate-6404.19.90"] == [item.id for item in pack.rate_items({"6404"})]
