"""Country- and programme-aware duty: a case's duty is checked in its importing country's table at its trade
programme's rate; what the pack lacks is unverified, never contradicted; the oracle passes every US and CA case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from mpcbench_async._exceptions import InputError, RecordDecodeError
from mpcbench_async.tariff import Case, Dossier, load_case, load_pack, score_case, verify
from mpcbench_async.tariff._gates import run_gates
from mpcbench_async.tariff._sim_policy import _code_and_rate
from mpcbench_async.tariff._trade import country_from_tags, programme_from_tags, programme_key
from tests.tariff.conftest import CH64, GRI
from tests.tariff.test_oracle_ceiling import PROMPTS, OffByOnePoint, OracleProposer

CH73 = {"chapter": "73", "title": "Articles of iron or steel", "snippets": [
    {"id": "ch73-7318", "heading": "7318",
     "text": "Heading 7318 covers screws, bolts, nuts, washers and similar articles of iron or steel."}]}
US_RATES = {"source": "test", "rates": {
    "6402.99.90": {"general_pct": 20.0, "description": "rubber/plastics uppers", "programmes": {"USMCA": 0.0,
                                                                                               "GSP": 0.0}},
    "6404.11.90": {"general_pct": 20.0, "description": "textile upper sports shoes"},
    "6404.19.90": {"general_pct": 12.5, "programmes": {"usmca": 0.0, "gsp": 4.0}},
    "7318.15": {"general_pct": 8.5, "programmes": {"USMCA": 0.0}},
    "7318.15.20": {"general_pct": 0.0, "description": "bolts"}}}
CA_RATES = {"country": "CA", "rates": {
    "6402.99": {"general_pct": 30.0, "programmes": {"CUSMA": 0.0}},
    "6404.19": {"general_pct": 18.0, "programmes": {"CUSMA": 0.0, "GPT": 13.0}}}}

# id → (options, tags, code, expected rate, duty status the oracle's answer gets)
CASES: dict[str, tuple[dict[str, Any], list[str], str, float, str]] = {
    "us_general": ({}, [], "6404.11.90", 20.0, "verified"),
    "us_usmca_option": ({"trade_programme": "USMCA"}, [], "6402.99.90", 0.0, "verified"),
    "us_usmca_tag_precise_code": ({}, ["usmca"], "6402.99.9040", 0.0, "verified"),
    "us_cusma_other_harness": ({"trade_program": "CUSMA", "importing_country": "USA"}, [], "6402.99.90", 0.0,
                               "verified"),
    "us_gsp": ({"trade_programme": "gsp"}, [], "6404.19.90", 4.0, "verified"),
    "us_usmca_from_parent_line": ({"trade_programme": "T-MEC"}, [], "7318.15.20", 0.0, "verified"),
    "us_general_child_line": ({}, [], "7318.15.2065", 0.0, "verified"),
    "us_canadian_goods_usmca": ({"origin_country": "CA"}, ["canada", "usmca"], "6402.99.90", 0.0, "verified"),
    "us_programme_without_line": ({"trade_programme": "AGOA"}, [], "6404.11.90", 0.0, "unverified"),
    "ca_general_option": ({"import_country": "CA"}, [], "6402.99.00", 30.0, "verified"),
    "ca_general_tag_precise_code": ({}, ["canada"], "6402.99.0090", 30.0, "verified"),
    "ca_cusma_tags": ({}, ["country_ca", "cusma"], "6402.99", 0.0, "verified"),
    "ca_gpt_treatment": ({"import_country": "Canada", "tariff_treatment": "GPT"}, [], "6404.19.00", 13.0,
                         "verified"),
    "ca_programme_without_line": ({"import_country": "CA", "trade_programme": "CPTPP"}, [], "6402.99.00", 0.0,
                                  "unverified"),
    "mx_no_table": ({"import_country": "MX"}, [], "7318.15.20", 33.0, "unverified"),
}
SAVINGS = {  # id → (options, code, baseline, lever target, delta)
    "us_savings": ({}, "6404.11.90", 20.0, "6404.19.90", 7.5),
    "ca_savings": ({"import_country": "CA"}, "6402.99.00", 30.0, "6404.19", 12.0),
}


def case_data(case_id: str, options: dict[str, Any], tags: list[str], code: str, **expected: Any) -> dict[str, Any]:
    return {"id": case_id, "pack_id": "tariff", "case_type": "positive", "difficulty": "medium",
            "input": {"input": "Footwear or fasteners, as the case says.", "options": options},
            "expected": {"preferred_hts": [code], **expected}, "notes": {"source": "test", "tags": tags}}


def read_case(tmp_path: Path, data: dict[str, Any]) -> Case:
    path = tmp_path / "cases" / f"{data['id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(data))
    return load_case(path)


def write_pack(root: Path, **tables: dict[str, Any]) -> Path:
    (root / "notes").mkdir(parents=True)
    (root / "gri.json").write_bytes(orjson.dumps(GRI))
    (root / "notes" / "chapter_64.json").write_bytes(orjson.dumps(CH64))
    (root / "notes" / "chapter_73.json").write_bytes(orjson.dumps(CH73))
    for name, table in tables.items():
        (root / f"{name}.json").write_bytes(orjson.dumps(table))
    return root


@pytest.fixture
def pack(tmp_path):
    return load_pack(write_pack(tmp_path / "pack", duty_rates=US_RATES, duty_rates_CA=CA_RATES))


@pytest.fixture
def cases(tmp_path) -> list[Case]:
    """The US and CA cases, loaded from files as a suite's are."""
    built = [case_data(i, o, t, code, expected_duty_total_rate_pct=rate) for i, (o, t, code, rate, _) in CASES.items()]
    built += [case_data(i, o, [], code, expected_duty_total_rate_pct=base,
                        duty_delta_range=[delta, delta], lever_found_expected=True)
              for i, (o, code, base, _, delta) in SAVINGS.items()]
    return [read_case(tmp_path, data) for data in built]


def gates(pack, dossier: dict[str, Any], country: str | None = None, programme: str | None = None) -> dict:
    results = run_gates(msgspec.convert({"decision": "accept", **dossier}, Dossier), [], pack, [], "", [],
                        country=country, programme=programme)
    return {g.gate: (g.status, g.reasons or g.notes) for g in results if g.gate in ("duty", "savings")}


class TestOracle:
    async def test_the_oracle_passes_every_us_and_ca_case(self, pack, cases):
        """Stating the case's country and programme rate passes 100% of the cases, with the expected duty statuses
        and levers checked in the case's country."""
        proposer = OracleProposer(cases, pack)
        results = {c.id: await verify(c, proposer, pack, PROMPTS) for c in cases}
        passed = {c.id: score_case(c, results[c.id]).passed for c in cases}
        statuses = {case_id: r.duty_status for case_id, r in results.items()}
        levers = {case_id: [(lv.new_hts, lv.new_duty_pct) for lv in r.levers] for case_id, r in results.items()
                  if r.levers}
        assert {c.id: True for c in cases} == passed
        assert {**{i: spec[4] for i, spec in CASES.items()}, **dict.fromkeys(SAVINGS, "verified")} == statuses
        assert {i: [(target, base - delta)] for i, (_, _, base, target, delta) in SAVINGS.items()} == levers
        assert {c.id: [] for c in cases} == {c.id: [g.status for g in results[c.id].iterations[0].gates
                                                    if g.status == "fail"] for c in cases}

    async def test_under_the_original_rules_too(self, pack, cases):
        """The oracle shaped to the original's rules (its levers lead to the expected code) passes every case scored
        by them: the country and programme rates hold in both modes."""
        proposer = OracleProposer(cases, pack, "original")
        results = {c.id: await verify(c, proposer, pack, PROMPTS, scoring="original") for c in cases}
        assert {c.id: (True, []) for c in cases} == {
            c.id: (score_case(c, results[c.id], scoring="original").passed,
                   [g.gate for it in results[c.id].iterations for g in it.gates if g.status == "fail"]) for c in cases}

    async def test_a_rate_one_point_off_fails_wherever_the_case_has_a_line(self, pack, cases):
        """The ceiling is not vacuous: one point off is rejected on every case whose country and programme have a
        line for the code, and only there."""
        proposer = OffByOnePoint(cases, pack)
        first = {c.id: (await verify(c, proposer, pack, PROMPTS)).iterations[0].gates for c in cases}
        rejected = {case_id for case_id, found in first.items() if any(g.gate == "duty" and g.status == "fail"
                                                                       for g in found)}
        assert {i for i, spec in CASES.items() if spec[4] == "verified"} | set(SAVINGS) == rejected


class TestDutyGate:
    @pytest.mark.parametrize(("dossier", "country", "programme", "expected"), [
        ({"hts_code": "6402.99.90", "baseline_duty_pct": 20.0}, "CA", None,
         ("fail", ["baseline duty 20% does not match the CA rate table's 30% for 6402.99"])),
        ({"hts_code": "6402.99.00", "baseline_duty_pct": 5.0}, "ca", "usmca",
         ("fail", ["baseline duty 5% does not match the CA rate table's CUSMA 0% for 6402.99"])),
        ({"hts_code": "6402.99.90", "baseline_duty_pct": 20.0}, None, "CUSMA",
         ("fail", ["baseline duty 20% does not match the US rate table's USMCA 0% for 6402.99.90"])),
        ({"hts_code": "7318.15.20", "baseline_duty_pct": 33.0}, "MX", None,
         ("unverified", ["the pack has no MX duty table for 7318.15.20; the stated 33% is unverified"])),
        ({"hts_code": "6404.11.90", "baseline_duty_pct": 0.0}, "US", "USMCA",
         ("unverified", ["the pack has no US duty line giving the USMCA rate for 6404.11.90; the stated 0% is "
                         "unverified"])),
        ({"hts_code": "6402.99.00", "baseline_duty_pct": 30.0}, "CA", "MFN", ("pass", [])),
    ])
    def test_statuses_and_messages_name_the_country_and_programme(self, pack, dossier, country, programme, expected):
        """A rate is checked in the case's country's table at its programme's rate; a missing table or programme
        line leaves it unverified."""
        assert expected == gates(pack, dossier, country, programme)["duty"]

    @pytest.mark.parametrize(("code", "programme"), [("7318.15", "GSP"), ("7318.15.20", "GSP"),
                                                     ("7318.15.2065", "GSP")])
    def test_a_general_only_line_never_contradicts_a_programme_rate(self, pack, code, programme):
        """7318.15.20's line states only the general rate and its parent no GSP rate: GSP at 33% is unverified for
        the precise codes as for 7318.15 — the more precise code does no worse."""
        assert "unverified" == gates(pack, {"hts_code": code, "baseline_duty_pct": 33.0}, None, programme)["duty"][0]

    @pytest.mark.parametrize(("case_programme", "claimed", "rate", "expected"), [
        (None, "CUSMA", 0.0, ("pass", [])),
        (None, "USMCA", 5.0, ("fail", ["baseline duty 5% does not match the US rate table's USMCA 0% for 6404.19.90"])),
        (None, "MFN", 12.5, ("pass", [])),
        ("GSP", "USMCA", 4.0, ("pass", [])),
        ("GSP", "USMCA", 0.0, ("fail", ["baseline duty 0% does not match the US rate table's GSP 4% for 6404.19.90"])),
        ("MFN", "USMCA", 0.0, ("fail", ["baseline duty 0% does not match the US rate table's 12.5% for 6404.19.90"])),
    ])
    def test_the_answer_s_programme_counts_only_where_the_case_names_none(self, pack, case_programme, claimed, rate,
                                                                         expected):
        """The case's programme (even "MFN") decides; where it names none, the answer's claimed programme is
        checked at that programme's rate."""
        dossier = {"hts_code": "6404.19.90", "baseline_duty_pct": rate, "trade_programme": claimed}
        assert expected == gates(pack, dossier, None, case_programme)["duty"]

    def test_levers_are_checked_in_the_case_s_country(self, pack):
        """A lever's rate is checked in the same table and column as the baseline."""
        lever = {"id": "L1", "description": "textile upper", "steps": ["change the upper"], "new_hts": "6404.19",
                 "new_duty_pct": 12.0}
        dossier = {"hts_code": "6402.99.00", "baseline_duty_pct": 30.0, "levers": [lever], "optimized_duty_pct": 12.0}
        unlisted = {**dossier, "levers": [lever | {"new_hts": "6404.11.90"}]}
        assert {"duty": ("pass", []), "savings": (
            "fail", ["lever L1: new duty 12% does not match the CA rate table's 18% for 6404.19"])} == gates(
            pack, dossier, "CA")
        assert ("unverified", ["lever L1: the pack has no CA duty line for 6404.11.90; the stated 12% is unverified"]
                ) == gates(pack, unlisted, "CA")["savings"]


class TestPackTables:
    def test_rate_takes_the_longest_line_stating_the_programme(self, pack):
        """A precise code takes its parent line's rate; under a programme, the longest line stating it."""
        assert [("6402.99", 30.0), ("6402.99", 0.0), ("7318.15.20", 0.0), ("7318.15", 0.0), None, None, None] == [
            pack.rate("6402.99.0090", country="CA"), pack.rate("6402.99.0090", country="Canada", programme="CUSMA"),
            pack.rate("7318.15.2065"), pack.rate("7318.15.2065", programme="usmca"),
            pack.rate("7318.15.20", programme="GSP"), pack.rate("6402.99", country="MX"),
            pack.rate("6402", country="CA")]

    def test_evidence_shows_every_table_with_its_country_and_programmes(self, pack):
        """Rate evidence keeps the US text shape, names other countries in theirs, and the sim still reads it."""
        items = pack.rate_items({"6402"})
        assert [("rate-6402.99.90", "6402.99.90: US general duty rate 20% (USMCA 0%, GSP 0%) (rubber/plastics uppers)"),
                ("rate-CA-6402.99", "6402.99: CA general duty rate 30% (CUSMA 0%)")] == [(i.id, i.text) for i in items]
        assert [("6402.99.90", 20.0), ("6402.99", 30.0)] == [_code_and_rate(i.text) for i in items]

    def test_default_country_comes_from_the_main_table(self, tmp_path):
        """duty_rates.json may name its country; it is then the pack's default, with plain rate ids."""
        pack = load_pack(write_pack(tmp_path / "p", duty_rates=CA_RATES, duty_rates_US=US_RATES))
        assert ("CA", ["CA", "US"], ("6402.99", 30.0), ["rate-6402.99", "rate-US-6402.99.90"]) == (
            pack.default_country, pack.countries, pack.rate("6402.99.00"), [i.id for i in pack.rate_items({"6402"})])

    @pytest.mark.parametrize(("tables", "message"), [
        ({"duty_rates": US_RATES, "duty_rates_CA": {"rates": {"6402.99": {"general_pct": 30, "programmes": {
            "CUSMA": 0}, "colour": "red"}}}},
         "duty_rates_CA.json: Object contains unknown field `colour` - at `$.rates[...]`"),
        ({"duty_rates": US_RATES, "duty_rates_CA": {"rates": {"6402.99": {"general_pct": 30, "programmes": {
            "CUSMA": "free"}}}}},
         "duty_rates_CA.json: Expected `float`, got `str` - at `$.rates[...].programmes[...]`"),
        ({"duty_rates": US_RATES, "duty_rates_CA": {"rates": {"6402.99": {"general_pct": 30, "programmes": {
            "USMCA": 0, "CUSMA": 0}}}}},
         "duty_rates_CA.json: programme 'CUSMA' repeats programme USMCA - at `$.rates.6402.99.programmes`"),
        ({"duty_rates": {"rates": {"6402.99": {"general_pct": 30, "programmes": {"MFN": 30}}}}},
         "duty_rates.json: programme 'MFN' is the general rate: give it as general_pct - at "
         "`$.rates.6402.99.programmes`"),
        ({"duty_rates": US_RATES, "duty_rates_CA": US_RATES | {"country": "US"}},
         "duty_rates_CA.json: country 'US' - at `$.country` (expected CA, as the file name says)"),
        ({"duty_rates": US_RATES | {"country": "Narnia"}},
         "duty_rates.json: country 'Narnia' - at `$.country` (expected a two-letter code (US, CA))"),
        ({"duty_rates": US_RATES, "duty_rates_canada": CA_RATES},
         "duty_rates_canada.json: name a country's duty table duty_rates_<CC>.json, with its two-letter code "
         "(duty_rates_CA.json)"),
        ({"duty_rates": CA_RATES, "duty_rates_CA": CA_RATES}, "duty_rates_CA.json: CA already has a duty table ("),
    ])
    def test_bad_tables_are_errors_naming_file_and_field(self, tmp_path, tables, message):
        """Unknown fields, wrong types, a programme named twice or as the general rate, and a country that is not
        the file's are errors that name the file and the field."""
        with pytest.raises(InputError) as caught:
            load_pack(write_pack(tmp_path / "p", **tables))
        assert message in str(caught.value)


class TestCaseTerms:
    @pytest.mark.parametrize(("options", "tags", "expected"), [
        ({}, [], (None, None)),
        ({"import_country": "canada", "trade_programme": "MFN"}, ["usmca", "country_mx"], ("CA", "MFN")),
        ({"destination_country": "Mexico", "tariff_treatment": "T-MEC"}, [], ("MX", "T-MEC")),
        ({"country": "US", "program": "GSP"}, [], ("US", "GSP")),
        ({}, ["gri_1", "import-ca", "programme_cafta_dr"], ("CA", "CAFTADR")),
        ({"origin_country": "Canada"}, ["canada", "us", "nafta"], ("US", "USMCA")),
        ({}, ["usmca_not_eligible", "origin_ca", "canadian", "cptpp_member"], (None, None)),
    ])
    def test_options_then_tags_name_the_country_and_programme(self, tmp_path, options, tags, expected):
        """The options (under other harnesses' names too) decide; else exact tags; a tag naming the origin or
        merely mentioning a programme names nothing."""
        case = read_case(tmp_path, case_data("c", options, tags, "6402.99.90"))
        assert expected == (case.import_country, case.trade_programme)

    @pytest.mark.parametrize(("options", "message"), [
        ({"import_country": "CA", "importing_country": "US"},
         "`importing_country` 'US' contradicts `import_country` 'CA' (two names of one option) - at "
         "`$.input.options.importing_country`"),
        ({"import_country": "Atlantis"},
         "import_country 'Atlantis' is not a country: give its two-letter code (US, CA) - at "
         "`$.input.options.import_country`"),
        ({"trade_programme": 7}, "Expected `str | null`, got `int` - at `$.input.options.trade_programme`"),
        ({"tariff_scheme": "CUSMA"}, "Object contains unknown field `tariff_scheme` - at `$.input.options`"),
    ])
    def test_bad_terms_are_errors_naming_the_field(self, tmp_path, options, message):
        """Two names of one option that disagree, a country that is not one, a wrong type and an unknown key are
        errors naming the file and field."""
        with pytest.raises(RecordDecodeError) as caught:
            read_case(tmp_path, case_data("c", options, [], "6402.99.90"))
        assert f"c.json: {message}" in str(caught.value)

    def test_programme_names_and_tags(self):
        """One agreement's names are one key; the general rate has none; only exact tags name a programme."""
        assert (["USMCA", "USMCA", "USMCA", "GSP", None, None, None], "USMCA", None, "CA") == (
            [programme_key(n) for n in ("CUSMA", "t-mec", "usmca", "GPT", "MFN", "", None)],
            programme_from_tags(["chapter_64", "CUSMA"]), programme_from_tags(["gsp_eligible"]),
            country_from_tags(["destination_mx", "canada"], origin="Mexico"))


class TestTermsInTheRequest:
    @pytest.mark.parametrize(("text", "expected"), [
        ("Steel hex bolts, zinc plated, imported into Canada. CUSMA originating.", ("CA", "USMCA")),
        ("Made in Canada, shipped to the United States under USMCA.", ("US", "USMCA")),
        ("Running shoes for entry into the U.S.; USMCA-qualifying per the supplier.", ("US", "USMCA")),
        ("Ladies sneakers, textile upper. Cleared by CBSA at Toronto.", ("CA", None)),
        ("Cotton T-shirts, GSP eligible, imported into USA.", ("US", "GSP")),
        ("Goods are not USMCA originating; entry into the US at the general rate.", ("US", None)),
        ("USMCA: not eligible (non-originating parts). Importer of record in Mexico.", (None, None)),
        ("Product of Mexico, 100% polyester backpack.", (None, None)),
        ("No GSP claim is made for these leather handbags.", (None, None)),
        ("Women's knit sweater, 80% cotton 20% nylon.", (None, None)),
    ])
    def test_the_request_names_them_when_options_and_tags_do_not(self, tmp_path, text, expected):
        """The importing country as a broker reads it ("imported into Canada", "cleared by CBSA"), never the
        goods' origin; a programme the request claims, never one it denies."""
        data = case_data("c", {}, [], "6402.99.90")
        data["input"]["input"] = text
        case = read_case(tmp_path, data)
        assert expected == (case.import_country, case.trade_programme)

    def test_the_options_win_over_the_request(self, tmp_path):
        data = case_data("c", {"import_country": "US", "trade_programme": "MFN"}, [], "6402.99.90")
        data["input"]["input"] = "Boots imported into Canada under CUSMA."
        assert ("US", "MFN") == (read_case(tmp_path, data).import_country, read_case(tmp_path, data).trade_programme)
