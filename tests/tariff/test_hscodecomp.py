"""HSCodeComp as a suite: the importer, the shipped conversion, its report beside the published figures, and runs
through `tariff run` and `sweep`."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import orjson
import pytest

from mpcbench_async import InputError
from mpcbench_async.cli import main
from mpcbench_async.tariff import (
    Dossier,
    TariffCaseRecord,
    VerificationResult,
    build_report,
    load_report,
    load_suite,
    read_hscodecomp,
    render_report,
    score_case,
    write_hscodecomp,
)
from mpcbench_async.tariff._hscodecomp import HSCODECOMP_PUBLISHED, ImportSummary
from tests.conftest import REPO
from tests.tariff.conftest import make_case

SHIPPED = REPO / "storage" / "benchmarks" / "hscodecomp"
DATASET = REPO.parent / "shared" / "datasets" / "hscodecomp"
QUESTION = ("\nGiven product information, you are required to classify the following product according to US HSCode "
            "standards and output a 10-digit HSCode.\n\n## Output Format Requirements\n- Use LaTeX format: `\\boxed{}`")


def row(task_id, hs_code, **overrides) -> dict:
    """One line in the shape of HSCodeComp's test_data.jsonl (attributes as a JSON string, Chinese paths too)."""
    data = {"product_name": "Cute Dragon  Magnetic Pendant",
            "product_attributes": orjson.dumps({"Origin": "Mainland China", "Material": "Metal", "Brand Name": "",
                                                "Metals Type": "Copper", "each pack": 1}).decode(),
            "price": 141.0, "currency_code": "CNY",
            "cate_lv1_desc": "Jewelry & Accessories", "cate_lv1_desc_cn": "珠宝饰品及配件",
            "cate_lv2_desc": "Fashion Jewelry", "cate_lv2_desc_cn": "流行饰品",
            "cate_lv3_desc": "Pendants", "cate_lv3_desc_cn": "项链吊坠", "cate_lv4_desc": "Pendants",
            "cate_lv4_desc_cn": "项链吊坠", "cate_lv5_desc": "Pendants", "cate_lv5_desc_cn": "项链吊坠",
            "hs_code": hs_code, "task_id": task_id, "question": QUESTION}
    return {**data, **overrides}


def jsonl(path: Path, *rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(r if isinstance(r, bytes) else orjson.dumps(r) for r in rows) + b"\n")
    return path


def dataset() -> Path:
    """The HSCodeComp test set beside the checkout, skipping the test when it is absent."""
    if not (DATASET / "test_data.jsonl").exists():
        pytest.skip(f"HSCodeComp test set not available at {DATASET}")
    return DATASET


class TestConversion:
    def test_a_listing_becomes_this_exact_case(self, tmp_path):
        """Title, attributes (empty ones dropped), price with currency and the English path form the request."""
        [case] = read_hscodecomp(jsonl(tmp_path / "t.jsonl", row(7, 7117199000)))
        assert {"id": "hscodecomp_0007", "pack_id": "tariff", "case_type": "positive", "difficulty": "hard",
                "input": {"input": "Classify this e-commerce listing to its 10-digit US HTS code.\n"
                                   "Title: Cute Dragon Magnetic Pendant\n"
                                   "Attributes:\n- Origin: Mainland China\n- Material: Metal\n- Metals Type: Copper\n"
                                   "- each pack: 1\n"
                                   "Price: 141.0 CNY\n"
                                   "Category: Jewelry & Accessories > Fashion Jewelry > Pendants",
                          "options": {}},
                "expected": {"preferred_hts": ["7117199000"]},
                "notes": {"source": "t.jsonl, task_id 7 (HSCodeComp by AIDC-AI, Apache-2.0)",
                          "tags": ["hscodecomp", "chapter_71"]}} == msgspec.to_builtins(case)

    @pytest.mark.parametrize(("hs_code", "code"), [
        (101210000, "0101210000"), ("0101210000", "0101210000"), ("0101.21.00.00", "0101210000"),
        (9615903000, "9615903000")])
    def test_codes_are_ten_digit_strings_with_leading_zeros(self, tmp_path, hs_code, code):
        """An integer code of chapters 01–09 gets its lost leading zero back; dotted strings are read as digits."""
        [case] = read_hscodecomp(jsonl(tmp_path / "t.jsonl", row(1, hs_code)))
        assert [code] == case.expected.preferred_hts

    def test_without_price_or_attributes_those_lines_are_left_out(self, tmp_path):
        """A listing with no price, no currency and empty attributes still converts, without those lines."""
        [case] = read_hscodecomp(jsonl(tmp_path / "t.jsonl", row(2, 7117199000, price=None, currency_code=None,
                                                                   product_attributes="{}", cate_lv3_desc="")))
        assert ("Classify this e-commerce listing to its 10-digit US HTS code.\nTitle: Cute Dragon Magnetic Pendant\n"
                "Category: Jewelry & Accessories > Fashion Jewelry > Pendants") == case.input.input

    def test_the_question_prompt_is_not_copied(self, tmp_path):
        """The dataset's own prompt (web sites, LaTeX answer format) never reaches the case."""
        [case] = read_hscodecomp(jsonl(tmp_path / "t.jsonl", row(3, 7117199000)))
        assert ("boxed" not in case.input.input, "Given product information" not in case.input.input) == (True, True)

    def test_ids_are_stable_and_come_from_task_id(self, tmp_path):
        """Ids are built from task_id alone (zero-padded numbers; other ids made file-safe), in file order."""
        cases = read_hscodecomp(jsonl(tmp_path / "t.jsonl", row(12, 7117199000), row("dev/A 7", 7117199000),
                                      row(0, 7117199000)))
        assert ["hscodecomp_0012", "hscodecomp_dev_A_7", "hscodecomp_0000"] == [c.id for c in cases]

    def test_every_bad_line_is_reported_with_its_field(self, tmp_path):
        """Bad codes, attributes, missing fields, broken JSON and reused task ids are all listed at once."""
        path = jsonl(tmp_path / "t.jsonl", row(1, 7117199000), row(2, 12345),
                     row(3, 7117199000, product_attributes="x"), {"task_id": 4, "hs_code": 7117199000}, b"{broken",
                     row(1, 7117199000), row(6, "71171990AB"))
        with pytest.raises(InputError) as caught:
            read_hscodecomp(path)
        assert (f"{path}: 6 line(s) cannot be imported:\n"
                f"  {path}:2: hs_code 12345 has 5 digits; HSCodeComp codes have 10 - at `$.hs_code`\n"
                f"  {path}:3: product_attributes is not a JSON object (JSON is malformed: invalid character (byte 0)) "
                "- at `$.product_attributes`\n"
                f"  {path}:4: Object missing required field `product_name`\n"
                f"  {path}:5: not valid JSON (JSON is malformed: object keys must be strings (byte 1))\n"
                f"  {path}:6: task_id gives case id 'hscodecomp_0001', already used on line 1 - at `$.task_id`\n"
                f"  {path}:7: hs_code '71171990AB' is not a code - at `$.hs_code`") == str(caught.value)

    def test_an_empty_file_is_an_error(self, tmp_path):
        """A file with no listings is refused rather than producing an empty suite."""
        path = tmp_path / "t.jsonl"
        path.write_bytes(b"\n\n")
        with pytest.raises(InputError) as caught:
            read_hscodecomp(path)
        assert f"{path}: no listings found" == str(caught.value)


class TestWriting:
    def test_cases_and_license_files_are_written(self, tmp_path):
        """Cases go to cases/positive/<id>.json and the dataset's LICENSE and NOTICE are copied beside them."""
        source = jsonl(tmp_path / "src" / "t.jsonl", row(0, 7117199000), row(1, 101210000))
        (tmp_path / "src" / "LICENSE").write_text("Apache License 2.0")
        (tmp_path / "src" / "NOTICE").write_text("Copyright (C) 2025 AIDC-AI")
        summary = write_hscodecomp(read_hscodecomp(source), tmp_path / "out", license_dir=tmp_path / "src")
        assert ImportSummary(cases=2, cases_dir=str(tmp_path / "out" / "cases"),
                             copied=["LICENSE", "NOTICE"]) == summary
        assert (["LICENSE", "NOTICE", "cases/positive/hscodecomp_0000.json", "cases/positive/hscodecomp_0001.json"],
                "Copyright (C) 2025 AIDC-AI") == (
            sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file()),
            (tmp_path / "out" / "NOTICE").read_text())
        assert ["0101210000", "7117199000"] == sorted(c.expected.preferred_hts[0]
                                                      for c in load_suite(tmp_path / "out" / "cases"))

    def test_reimport_replaces_the_whole_cases_directory(self, tmp_path):
        """Importing a smaller file leaves exactly its cases: no stale case from the earlier import."""
        write_hscodecomp(read_hscodecomp(jsonl(tmp_path / "a.jsonl", row(0, 7117199000), row(1, 7117199000))), tmp_path)
        summary = write_hscodecomp(read_hscodecomp(jsonl(tmp_path / "b.jsonl", row(1, 7117199000))), tmp_path)
        assert (["hscodecomp_0001"], ["LICENSE", "NOTICE"]) == (
            [c.id for c in load_suite(tmp_path / "cases")], summary.missing)
        assert ["a.jsonl", "b.jsonl", "cases"] == sorted(p.name for p in tmp_path.iterdir())

    def test_a_directory_holding_other_cases_is_not_replaced(self, tmp_path):
        """Importing over a hand-written suite is refused, and the suite is left as it was."""
        own = tmp_path / "cases" / "negative" / "neg_01.json"
        own.parent.mkdir(parents=True)
        own.write_bytes(b"{}")
        with pytest.raises(InputError) as caught:
            write_hscodecomp(read_hscodecomp(jsonl(tmp_path / "a.jsonl", row(0, 7117199000))), tmp_path)
        assert (f"{tmp_path / 'cases'}: holds other cases (negative/neg_01.json); import into a new directory or one "
                "holding a previous HSCodeComp import", [own]) == (str(caught.value), list(tmp_path.rglob("*.json")))

    def test_cli_import(self, tmp_path, capsys):
        """`tariff import hscodecomp FILE --out DIR` writes the suite and warns when the license files are missing."""
        source = jsonl(tmp_path / "t.jsonl", row(0, 7117199000))
        assert 0 == main(["tariff", "import", "hscodecomp", str(source), "--out", str(tmp_path / "suite")])
        printed = capsys.readouterr()
        assert (f"1 cases -> {tmp_path / 'suite' / 'cases'}/\n",
                f"warning: no LICENSE or NOTICE beside {source}; the dataset's license requires them to travel with "
                f"any copy: add them to {tmp_path / 'suite'}/\n") == (printed.out, printed.err)


class TestShippedSuite:
    def test_shipped_suite_has_632_listings_with_ten_digit_codes(self):
        """storage/benchmarks/hscodecomp holds 632 cases, ids from task_id 0–631, codes as 10-digit strings."""
        cases = load_suite(SHIPPED / "cases")
        assert (632, [f"hscodecomp_{i:04d}" for i in range(632)], {10}, {"tariff"}, {"positive"}) == (
            len(cases), sorted(c.id for c in cases), {len(c.expected.preferred_hts[0]) for c in cases},
            {c.pack_id for c in cases}, {c.case_type for c in cases})
        assert all(c.expected.preferred_hts[0].isdigit() for c in cases)

    def test_shipped_suite_is_the_dataset_converted_with_its_license(self, tmp_path):
        """Regenerating from the dataset gives byte-identical case files, and LICENSE and NOTICE are the dataset's."""
        source = dataset()
        write_hscodecomp(read_hscodecomp(source / "test_data.jsonl"), tmp_path, license_dir=source)
        fresh = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
        shipped = {p.relative_to(SHIPPED): p.read_bytes() for p in SHIPPED.rglob("*")
                   if p.is_file() and p.name != "README.md"}
        assert fresh == shipped

    def test_readme_names_source_license_and_the_command(self):
        """The suite's README gives the source, the license and the command that regenerates it."""
        text = (SHIPPED / "README.md").read_text()
        assert all(part in text for part in (
            "arXiv 2510.19631", "Apache-2.0", "commit ee329e9",
            "mpcbench-async tariff import hscodecomp ../shared/datasets/hscodecomp/test_data.jsonl"))


CASES = [make_case(id=f"h{i}", expected__preferred_hts=[code], expected__allowed_hts=[], expected__must_not_hts=[],
                   notes={"tags": ["hscodecomp"]})
         for i, code in enumerate(["7117199000", "7117199000", "0101210000", "8517130000"])]


def answered(case, code: str | None) -> TariffCaseRecord:
    """A record of ``case`` accepted with ``code`` (refused when None)."""
    result = (VerificationResult(case_id=case.id, status="refused", refusal_category="insufficient_info")
              if code is None else
              VerificationResult(case_id=case.id, status="accepted", critical_gates_passed=True,
                                 final_dossier=Dossier(decision="accept", hts_code=code, baseline_duty_pct=0.0)))
    return TariffCaseRecord(key=case.id, status="ok", case_id=case.id, mode="live", model="m", result=result,
                            score=score_case(case, result))


class TestReport:
    REPORT = build_report([answered(CASES[0], "7117.19.90.00"), answered(CASES[1], "7117.11.00.00"),
                           answered(CASES[2], None),
                           TariffCaseRecord(key="h3", status="error", case_id="h3", mode="live", model="m",
                                            error_class="ServerError", error_message="HTTP 500")],
                          suite="hscodecomp", mode="live", model="m", created_at="t", cases=CASES)

    def test_prefix_accuracy_and_average_digits_count_refusals_and_errors_as_misses(self):
        """Exact match at 2/4/6/8/10 digits and average leading digits correct, over all four cases."""
        assert ({"2": 0.5, "4": 0.5, "6": 0.25, "8": 0.25, "10": 0.25}, {str(n): 4 for n in (2, 4, 6, 8, 10)}, 3.75,
                4) == (self.REPORT.prefix_accuracy, self.REPORT.prefix_cases, self.REPORT.average_digits_correct,
                       self.REPORT.digits_cases)

    def test_published_figures_travel_in_the_json(self, tmp_path):
        """The JSON report carries the published figures and reads back unchanged."""
        path = tmp_path / "r.json"
        path.write_bytes(msgspec.json.encode(self.REPORT))
        assert list(HSCODECOMP_PUBLISHED) == load_report(path).published

    def test_markdown_sets_this_run_beside_the_published_figures(self):
        """The Markdown table lines this run up with GPT-5, GPT-4o, the best agent and human experts."""
        text = render_report(self.REPORT)
        assert """## Beside published results

Exact match on the first N digits (– where not published). Published figures: HSCodeComp, arXiv 2510.19631, \
HSCodeComp test set (632 listings).

| system | 2 digits | 4 digits | 6 digits | 8 digits | 10 digits | avg digits correct |
|---|---:|---:|---:|---:|---:|---:|
| **this run: `m`, 4 cases** | 50.0% | 50.0% | 25.0% | 25.0% | 25.0% | 3.75 |
| GPT-5 | – | – | 56.3% | – | 29.0% | – |
| GPT-4o | – | – | 45.7% | – | 18.4% | – |
| Best agent (SmolAgent, GPT-5 with vision) | – | – | – | – | 46.8% | – |
| Human experts | – | – | – | – | 95.0% | – |

Average digits correct published on another test set (for scale, not comparable case by case): GPT-5-Thinking \
5.61 (ATLAS, arXiv 2509.18400, ATLAS test set); ATLAS fine-tuned model 6.30 (ATLAS, arXiv 2509.18400, ATLAS test \
set).
""" in text

    def test_other_suites_have_no_published_section(self):
        """Cases not tagged hscodecomp get no published figures."""
        plain = make_case(id="p")
        report = build_report([answered(plain, "6404.11.90")], suite="tariff", mode="live", model="m",
                              created_at="t", cases=[plain])
        assert ([], False) == (report.published, "Beside published results" in render_report(report))


def small_suite(tmp_path: Path, count: int = 6) -> Path:
    """The first ``count`` shipped HSCodeComp cases as a suite directory."""
    suite = tmp_path / "suite"
    for path in sorted((SHIPPED / "cases" / "positive").glob("*.json"))[:count]:
        target = suite / "cases" / "positive" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    return suite


class TestRuns:
    def test_tariff_run_live_with_sim_tariff(self, tmp_path, capsys):
        """`tariff run --suite hscodecomp --mode live --model sim/tariff` runs every case and writes both reports."""
        suite = small_suite(tmp_path)
        code = main(["tariff", "run", "--suite", "hscodecomp", "--path", str(suite), "--mode", "live", "--model",
                     "sim/tariff", "--out", str(tmp_path / "out"), "--config", str(REPO / "model_config.json"),
                     "--prompts", str(REPO / "prompt_config.json")])
        [json_report] = (tmp_path / "out").glob("hscodecomp_benchmark_*.json")
        report = load_report(json_report)
        assert (0, 6, 0, "sim/tariff", 6, list(HSCODECOMP_PUBLISHED)) == (
            code, report.totals.cases, report.errors, report.model, report.prefix_cases["10"], report.published)
        assert "## Beside published results" in json_report.with_suffix(".md").read_text()

    def test_sweep_suite_hscodecomp(self, tmp_path, capsys):
        """`sweep --suite hscodecomp` runs the suite with each tariff model and writes its report beside the sweep."""
        suite = small_suite(tmp_path, 4)
        config = tmp_path / "model_config.json"
        config.write_bytes(orjson.dumps({"tariff_models": ["sim/tariff"]}))
        out = tmp_path / "out"
        code = main(["sweep", "--suite", "hscodecomp", "--hscodecomp-path", str(suite), "--config", str(config),
                     "--prompts", str(REPO / "prompt_config.json"), "--out", str(out), "--quiet"])
        report = load_report(out / "hscodecomp_sim_tariff.json")
        assert (0, 4, {"ok"}, 4, list(HSCODECOMP_PUBLISHED)) == (
            code, len((out / "hscodecomp_sim_tariff.jsonl").read_bytes().splitlines()),
            {orjson.loads(line)["status"] for line in (out / "hscodecomp_sim_tariff.jsonl").read_bytes().splitlines()},
            report.totals.cases, report.published)
        printed = capsys.readouterr().out
        assert re.search(r"^hscodecomp\s+sim/tariff\s+4\s", printed, re.M)  # its row of the tariff section
        assert "agent model" not in printed  # no empty MPCBench table for a tariff-only sweep

    def test_fixture_mode_without_fixtures_is_one_clear_error(self, tmp_path, capsys):
        """A suite with no recorded fixtures in fixture mode (the default) exits 2 with one line saying to run it
        live."""
        suite = small_suite(tmp_path, 2)
        code = main(["tariff", "run", "--suite", "hscodecomp", "--path", str(suite), "--out", str(tmp_path / "out")])
        assert (2, f"error: {suite / 'fixtures'}: no recorded fixtures for suite 'hscodecomp'; run it live with "
                   "--mode live --model M (or record fixtures with --mode record --model M)\n") == (
            code, capsys.readouterr().err)
        assert not (tmp_path / "out").exists()

    def test_a_suite_name_with_a_dot_keeps_its_whole_name_in_the_report_files(self, tmp_path, capsys):
        """`--suite hscodecomp.v2` writes `hscodecomp.v2_benchmark_*.json` and `.md` (suffixes appended, not
        replaced)."""
        suite = small_suite(tmp_path, 2)
        code = main(["tariff", "run", "--suite", "hscodecomp.v2", "--path", str(suite), "--mode", "live", "--model",
                     "sim/tariff", "--out", str(tmp_path / "out"), "--config", str(REPO / "model_config.json"),
                     "--prompts", str(REPO / "prompt_config.json")])
        names = sorted(p.suffix for p in (tmp_path / "out").glob("hscodecomp.v2_benchmark_*"))
        assert (0, [".json", ".md"]) == (code, names)
