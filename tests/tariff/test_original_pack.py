"""The original tariff harness's pack layout: both placements load into the same ``Pack``, with the original ids
and wording (so original citations still match), and every bad pack is one error line naming the file.

The reference pack (``../shared/reference/tariff_whitebox/packs_tariff``) is copied into ``tmp_path`` at test
time; the tests that need it skip when it is absent. The error tests build small original files of their own.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from mpcbench_async import InputError
from mpcbench_async.cli import main
from mpcbench_async.tariff import load_pack, load_report
from mpcbench_async.tariff._dossier import build_bundle
from mpcbench_async.tariff._original_pack import is_original_pack, section_source
from tests.conftest import REPO, reference_dir

GRIS = ["GRI.1", "GRI.2", "GRI.3", "GRI.4", "GRI.5", "GRI.6"]
CH64 = ["CH64.NOTE1", "CH64.NOTE4", "HTS.6402", "HTS.6404"]
CH73 = ["CH73.NOTE1", "CH73.NOTE2", "HTS.7318", "HTS.7315", "HTS.7326"]
CH84 = ["CH84.NOTE1", "CH84.NOTE2", "HTS.8413", "HTS.8414", "HTS.8421"]
CH85 = ["CH85.NOTE1", "CH85.NOTE2", "HTS.8504", "HTS.8536", "HTS.8544", "HTS.8517"]
# Pack order: the GRIs, then each section's note before its chapters' notes and headings.
IDS = [*GRIS, "SEC12.NOTE1", *CH64, "SEC15.NOTE1", *CH73, "SEC16.NOTE1", *CH84, *CH85]


def reference_pack() -> Path:
    return reference_dir("tariff_whitebox", "packs_tariff")


def nested(tmp_path: Path) -> Path:
    """The harness's own placement: ``evidence/sources/*.json``, axioms and ontology at the top."""
    return Path(shutil.copytree(reference_pack(), tmp_path / "nested"))


def flat(tmp_path: Path) -> Path:
    """``storage/packs/<suite>/gri.json`` as the original list, beside the chapter files, axioms and ontology."""
    source, root = reference_pack(), tmp_path / "flat"
    root.mkdir()
    for path in [*(source / "evidence" / "sources").glob("*.json"), source / "axioms.json", source / "ontology.json"]:
        shutil.copy(path, root / path.name)
    return root


def source(source_id: str, source_type: str, text: str) -> dict[str, Any]:
    return {"source_id": source_id, "source_type": source_type, "title": source_id, "effective_date": "2024-01-01",
            "url": None, "text": text}


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else orjson.dumps(data))


def small(root: Path) -> Path:
    """A minimal flat original pack: two GRIs and one chapter-85 note and heading."""
    write(root / "gri.json", [source("GRI.1", "gri", "Terms of the headings."), source("GRI.6", "gri", "Subheadings.")])
    write(root / "chapter_85_notes.json", [source("CH85.NOTE1", "chapter_note", "Electrical machinery.")])
    write(root / "chapter_85_headings.json", [source("HTS.8544", "heading", "Insulated wire.")])
    return root


def walk_citations(data: Any) -> list[dict[str, Any]]:
    """Every ``{source_id, quote}`` object anywhere in a fixture."""
    if isinstance(data, dict):
        own = [data] if {"source_id", "quote"} <= data.keys() else []
        return own + [c for value in data.values() for c in walk_citations(value)]
    if isinstance(data, list):
        return [c for value in data for c in walk_citations(value)]
    return []


@pytest.fixture(params=[nested, flat], ids=["nested", "flat"])
def original(request, tmp_path: Path) -> Path:
    return request.param(tmp_path)


class TestReferencePack:
    def test_both_placements_load_every_item_with_its_source_and_heading(self, original):
        """29 items in pack order; sources ``gri``, ``section_<roman>`` and ``chapter_NN``; headings have 4 digits."""
        pack = load_pack(original)
        assert IDS == list(pack.items)
        assert {"gri": 6, "section_xii": 1, "chapter_64": 4, "section_xv": 1, "chapter_73": 5, "section_xvi": 1,
                "chapter_84": 5, "chapter_85": 6} == Counter(item.source for item in pack.items.values())
        assert GRIS == [item.id for item in pack.gri]
        assert {i: i[4:] for i in IDS if i.startswith("HTS.")} == {
            item.id: item.heading for item in pack.items.values() if item.heading}

    def test_texts_are_the_original_wording(self, original):
        """Each item's text is its original ``text``, unchanged (no title prefixed)."""
        pack = load_pack(original)
        files = sorted((reference_pack() / "evidence" / "sources").glob("*.json"))
        texts = {s["source_id"]: s["text"] for path in files for s in orjson.loads(path.read_bytes())}
        assert texts == {item.id: item.text for item in pack.items.values()}

    def test_the_ch85_fixtures_classification_quote_is_in_its_item(self, original):
        """``fixture_ch85.json``'s ``proposals[0].citations`` quote HTS.8544 verbatim."""
        fixture = reference_dir("tariff_whitebox", "benchmarks_tariff", "fixtures", "fixture_ch85.json")
        [citation] = orjson.loads(fixture.read_bytes())["proposals"][0]["citations"]
        assert "HTS.8544" == citation["source_id"]
        assert citation["quote"] in load_pack(original).items["HTS.8544"].text

    def test_every_citation_of_the_original_fixtures_is_verbatim(self, original):
        """All 48 ``{source_id, quote}`` of the 7 original fixtures name an item whose text holds the quote."""
        pack = load_pack(original)
        fixtures = sorted(reference_dir("tariff_whitebox", "benchmarks_tariff", "fixtures").glob("*.json"))
        citations = [c for path in fixtures for c in walk_citations(orjson.loads(path.read_bytes()))]
        assert (7, 48) == (len(fixtures), len(citations))
        assert [] == [c for c in citations if c["quote"] not in pack.items[c["source_id"]].text]

    def test_candidate_chapter_85_gets_its_notes_headings_and_section_note(self, original):
        """Every GRI, Section XVI's note, chapter 85's notes and headings; nothing of chapter 84; no rate lines."""
        bundle = build_bundle(load_pack(original), "Insulated copper cable, PVC jacket", [], ["85"])
        assert [*GRIS, "SEC16.NOTE1", *CH85] == [item.id for item in bundle]

    @pytest.mark.parametrize(("chapter", "note"), [("64", "SEC12.NOTE1"), ("73", "SEC15.NOTE1"),
                                                   ("84", "SEC16.NOTE1")])
    def test_a_section_note_counts_for_each_chapter_of_its_section(self, original, chapter, note):
        bundle = build_bundle(load_pack(original), "goods", [], [chapter])
        assert [note] == [item.id for item in bundle if item.source.startswith("section_")]

    def test_without_candidate_chapters_the_best_matching_notes_are_chosen(self, original):
        bundle = build_bundle(load_pack(original), "Insulated copper wire cable with connectors", [], [])
        assert [*GRIS, "CH85.NOTE2", "HTS.8544"] == [item.id for item in bundle]

    def test_no_duty_table_so_no_duty_can_be_contradicted(self, original):
        """The original pack has no rates: every code is without a line (its duty ``unverified``)."""
        pack = load_pack(original)
        assert (None, None, []) == (pack.rate("8544.11.00"), pack.rate("6404.11.90"), pack.rate_items({"8544"}))

    def test_the_original_layout_is_recognised_and_the_projects_is_not(self, original):
        assert (True, False) == (is_original_pack(original), is_original_pack(REPO / "storage" / "packs" / "tariff"))


class TestSections:
    @pytest.mark.parametrize(("chapter", "section"), [
        ("01", "section_i"), ("5", "section_i"), ("63", "section_xi"), ("64", "section_xii"), ("67", "section_xii"),
        ("68", "section_xiii"), ("72", "section_xv"), ("83", "section_xv"), ("84", "section_xvi"),
        ("85", "section_xvi"), ("86", "section_xvii"), ("97", "section_xxi"), ("99", "section_xxii"),
        ("00", None), ("100", None), ("8a", None)])
    def test_section_of_a_chapter(self, chapter, section):
        assert section == section_source(chapter)


def in_list(path: Path, number: int, what: str) -> str:
    return f"{path}: original harness evidence list, item {number}: {what}"


def missing_text(root: Path) -> str:
    write(root / "gri.json", [source("GRI.1", "gri", "x"), source("GRI.2", "gri", "x"),
                              {"source_id": "GRI.3", "source_type": "gri", "title": "GRI 3"}])
    return in_list(root / "gri.json", 3, "Object missing required field `text`")


def unknown_field(root: Path) -> str:
    write(root / "chapter_85_notes.json", [{**source("CH85.NOTE1", "chapter_note", "x"), "heading": "8544"}])
    return in_list(root / "chapter_85_notes.json", 1, "Object contains unknown field `heading`")


def mixed_file(root: Path) -> str:
    write(root / "chapter_85_notes.json",
          [source("CH85.NOTE1", "chapter_note", "x"), source("HTS.8536", "heading", "y")])
    return in_list(root / "chapter_85_notes.json", 2, "source_type 'heading' in a file of 'chapter_note' items")


def heading_of_another_chapter(root: Path) -> str:
    write(root / "chapter_85_headings.json", [source("HTS.8413", "heading", "Pumps.")])
    return in_list(root / "chapter_85_headings.json", 1, "'HTS.8413' is not a heading of chapter 85")


def id_used_twice(root: Path) -> str:
    """A section's notes are read before its chapters': the chapter file holds the second use."""
    write(root / "section_xvi_notes.json", [source("CH85.NOTE1", "section_note", "x")])
    return in_list(root / "chapter_85_notes.json", 1, "source_id 'CH85.NOTE1' is also in section_xvi_notes.json")


def not_a_list(root: Path) -> str:
    write(root / "chapter_85_notes.json", {"chapter": "85", "snippets": []})
    return f"{root / 'chapter_85_notes.json'}: not an original harness evidence list (a JSON list of {{source_id, " \
           "source_type, title, effective_date, url, text}})"


def not_json(root: Path) -> str:
    write(root / "chapter_85_notes.json", b"[{")
    return f"{root / 'chapter_85_notes.json'}: not valid JSON (Input data was truncated)"


def unsupported(path: Path) -> str:
    return f"{path}: unsupported file in an original harness pack; the loader reads gri.json, chapter_NN_notes.json, " \
           "chapter_NN_headings.json and section_<roman>_notes.json (axioms.json and ontology.json at the top): " \
           "rename it to the one whose items it holds, or move it out"


def unsupported_file(root: Path) -> str:
    write(root / "chapter_85_rulings.json", [source("NY.N123", "ruling", "x")])
    return unsupported(root / "chapter_85_rulings.json")


def unknown_section(root: Path) -> str:
    write(root / "section_xxiii_notes.json", [source("SEC23.NOTE1", "section_note", "x")])
    return unsupported(root / "section_xxiii_notes.json")


def project_rates_beside(root: Path) -> str:
    write(root / "duty_rates.json", {"rates": {}})
    return f"{root / 'duty_rates.json'}: the project's pack layout inside an original harness pack (its gri.json is " \
           "the original list); a pack is in one layout: move it out, or convert the whole pack"


def no_gri(root: Path) -> str:
    sources = root / "evidence" / "sources"
    sources.mkdir(parents=True)
    for path in root.glob("chapter_*.json"):
        path.rename(sources / path.name)
    (root / "gri.json").unlink()
    return f"{sources / 'gri.json'}: missing; an original harness pack needs its GRI texts"


def bad_axioms(root: Path) -> str:
    write(root / "axioms.json", {"subject": "GRI_1"})
    return f"{root / 'axioms.json'}: Expected `array`, got `object`"


def bad_ontology(root: Path) -> str:
    write(root / "ontology.json", {"opposites": [], "mutex_sets": [], "aliases": {}, "material_axes": "textile",
                                   "component_axes": []})
    return f"{root / 'ontology.json'}: Expected `array`, got `str` - at `$.material_axes`"


def neither_layout(root: Path) -> str:
    (root / "gri.json").unlink()
    return f"{root / 'gri.json'}: cannot read (No such file or directory)"


BAD: list[Callable[[Path], str]] = [
    missing_text, unknown_field, mixed_file, heading_of_another_chapter, id_used_twice, not_a_list, not_json,
    unsupported_file, unknown_section, project_rates_beside, no_gri, bad_axioms, bad_ontology, neither_layout]


class TestBadPacks:
    @pytest.mark.parametrize("spoil", BAD, ids=[f.__name__ for f in BAD])
    def test_one_line_naming_the_file_and_what_is_wrong(self, tmp_path, spoil):
        root = small(tmp_path / "pack")
        expected = spoil(root)
        with pytest.raises(InputError) as info:
            load_pack(root)
        assert [expected] == str(info.value).splitlines()

    def test_the_projects_gri_json_beside_evidence_sources(self, tmp_path):
        root = tmp_path / "pack"
        small(root / "evidence" / "sources")
        write(root / "gri.json", {"rules": []})
        with pytest.raises(InputError) as info:
            load_pack(root)
        assert [f"{root / 'gri.json'}: the project's pack layout inside an original harness pack (evidence/sources/); "
                "a pack is in one layout: move it out, or convert the whole pack"] == str(info.value).splitlines()

    def test_the_small_pack_itself_loads(self, tmp_path):
        pack = load_pack(small(tmp_path / "pack"))
        assert (["GRI.1", "GRI.6", "CH85.NOTE1", "HTS.8544"], "8544") == (list(pack.items),
                                                                          pack.items["HTS.8544"].heading)


class TestProjectPack:
    def test_the_project_pack_loads_as_before(self):
        """The shipped pack: GRI texts titled, every chapter snippet as written, under ``chapter_NN``, with rates."""
        root = REPO / "storage" / "packs" / "tariff"
        pack = load_pack(root)
        rules = orjson.loads((root / "gri.json").read_bytes())["rules"]
        chapters = [orjson.loads(p.read_bytes()) for p in sorted((root / "notes").glob("chapter_*.json"))]
        expected = [(r["id"], "gri", f"{r['title']}: {r['text']}", None) for r in rules] + [
            (s["id"], f"chapter_{c['chapter']}", s["text"], s.get("heading")) for c in chapters for s in c["snippets"]]
        assert expected == [(i.id, i.source, i.text, i.heading) for i in pack.items.values()]
        assert pack.rate("6404.11.90") is not None


class TestCli:
    def test_tariff_run_with_an_original_pack(self, tmp_path, capsys):
        """`tariff run --pack <original pack>` runs the original cases with it: every case scored, no error."""
        cases = sorted(reference_dir("tariff_whitebox", "benchmarks_tariff", "cases", "positive").glob("*.json"))[:3]
        suite = tmp_path / "suite"
        for path in cases:
            write(suite / "cases" / "positive" / path.name, path.read_bytes())
        code = main(["tariff", "run", "--path", str(suite), "--pack", str(nested(tmp_path)), "--mode", "live",
                     "--model", "sim/tariff", "--out", str(tmp_path / "out"),
                     "--config", str(REPO / "model_config.json"), "--prompts", str(REPO / "prompt_config.json")])
        [json_report] = (tmp_path / "out").glob("tariff_benchmark_*.json")
        report = load_report(json_report)
        assert (0, 3, 0) == (code, report.totals.cases, report.errors)

    def test_a_bad_original_pack_is_one_error_line_and_exit_2(self, tmp_path, capsys):
        root = small(tmp_path / "pack")
        expected = missing_text(root)
        code = main(["tariff", "run", "--path", str(REPO / "storage" / "benchmarks" / "tariff"), "--pack", str(root),
                     "--out", str(tmp_path / "out")])
        assert (2, f"error: {expected}\n") == (code, capsys.readouterr().err)
