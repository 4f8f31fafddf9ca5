"""The tariff section: prefix accuracy at 2–10 digits, per case type, and per chapter when the cases are given."""

from __future__ import annotations

from pathlib import Path

import msgspec
import orjson
import pytest

from mpcbench_async.tariff import BenchmarkReport, CaseScore
from mpcbench_async.tariff._report import GroupStats
from mpcbench_async.view import case_chapters, open_index
from mpcbench_async.view._pages import overview_body
from tests.view.dom import Element, parse

# case id -> (case type, expected code, correct at 2/4/6/8/10 digits, passed)
CASES = {
    "c1": ("positive", "7117199000", (True, True, True, True, True), True),
    "c2": ("positive", "7117110000", (True, True, False, False, False), False),
    "c3": ("adversarial", "8471300100", (True, False, False, False, False), False),
    "c4": ("adversarial", "8471500150", (False, False, False, False, False), False),
}


def _report() -> BenchmarkReport:
    scores = [CaseScore(case_id=case_id, case_type=kind, difficulty="hard", score=1.0 if passed else 0.2,
                        passed=passed, threshold=0.8, status="accepted",
                        prefix_correct=dict(zip(("2", "4", "6", "8", "10"), correct, strict=True)))
              for case_id, (kind, _, correct, passed) in CASES.items()]
    return BenchmarkReport(suite="hscodecomp", mode="live", model="sim/tariff", created_at="2026-11-23T00:00:00+00:00",
                           totals=GroupStats(cases=4, passed=1, pass_rate=0.25, average_score=0.4), cases=scores)


@pytest.fixture
def with_report(sweep_dir: Path) -> Path:
    (sweep_dir / "hscodecomp_sim-tariff.json").write_bytes(msgspec.json.encode(_report()))
    return sweep_dir


@pytest.fixture
def cases_dir(tmp_path: Path) -> Path:
    root = tmp_path / "cases"
    for case_id, (kind, code, _, _) in CASES.items():
        (root / kind).mkdir(parents=True, exist_ok=True)
        case = {"id": case_id, "pack_id": "tariff", "case_type": kind, "difficulty": "hard",
                "input": {"input": f"Classify item {case_id}.", "options": {}},
                "expected": {"preferred_hts": [code]}, "notes": {"tags": ["hscodecomp"]}}
        (root / kind / f"{case_id}.json").write_bytes(orjson.dumps(case))
    return root


def _section(html: str) -> Element:
    return parse(f"<div>{html}</div>").one("section", id="tariff")


def _rows(table: Element) -> list[list[str]]:
    return [[td.text for td in tr.all("td")] for tr in table.one("tbody").all("tr")]


class TestTariffSection:
    def test_prefix_accuracy_at_each_length(self, with_report):
        section = _section(overview_body(open_index(with_report)))
        block = section.one(cls="tariff-report", data_suite="hscodecomp", data_model="sim/tariff")
        assert [["75.0% (4)", "50.0% (4)", "25.0% (4)", "25.0% (4)", "25.0% (4)"]] == _rows(
            block.one("table", cls="prefix-accuracy"))

    def test_per_case_type(self, with_report):
        section = _section(overview_body(open_index(with_report)))
        assert [["adversarial", "2", "0.0%", "50.0%", "0.0%", "0.0%", "0.0%", "0.0%"],
                ["positive", "2", "50.0%", "100.0%", "100.0%", "50.0%", "50.0%", "50.0%"]] == _rows(
            section.one("table", cls="by-case-type"))

    def test_per_chapter_from_the_cases_expected_codes(self, with_report, cases_dir):
        chapters = case_chapters([cases_dir])
        assert {"c1": "71", "c2": "71", "c3": "84", "c4": "84"} == chapters
        section = _section(overview_body(open_index(with_report), chapters))
        assert [["71", "2", "50.0%", "100.0%", "100.0%", "50.0%", "50.0%", "50.0%"],
                ["84", "2", "0.0%", "50.0%", "0.0%", "0.0%", "0.0%", "0.0%"]] == _rows(
            section.one("table", cls="by-chapter"))

    def test_without_the_cases_the_chapter_table_says_what_to_pass(self, with_report):
        section = _section(overview_body(open_index(with_report)))
        assert "pass --cases DIR" in section.one("p", cls="by-chapter").text
