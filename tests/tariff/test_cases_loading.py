"""Case loading: other harnesses' enum words are read, bad values list the allowed ones, inconsistent expectations
are rejected, and a suite reports every bad file at once."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import orjson
import pytest

from mpcbench_async import InputError, RecordDecodeError
from mpcbench_async.tariff import load_case, load_suite
from tests.conftest import reference_dir
from tests.tariff.conftest import make_case

DIRECTIONS = "allowed: decrease, none, increase, or null"


def write(path: Path, **overrides) -> Path:
    """Write a valid case with ``overrides`` (``expected__field=value`` paths) applied to its JSON."""
    data = msgspec.to_builtins(make_case())
    for key, value in overrides.items():
        *parents, last = key.split("__")
        node = data
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(data))
    return path


def problem(path: Path, **overrides) -> str:
    with pytest.raises(RecordDecodeError) as caught:
        load_case(write(path, **overrides))
    return str(caught.value)


class TestEnumValues:
    @pytest.mark.parametrize(("written", "read"), [
        ("flat", "none"), ("Flat", "none"), ("unchanged", "none"), ("no-change", "none"), ("no change", "none"),
        ("down", "decrease"), ("Decrease", "decrease"), ("up", "increase"), ("INCREASE", "increase"), (None, None)])
    def test_duty_delta_direction_words(self, tmp_path, written, read):
        """The original harness's ``flat`` and other spellings of a direction load as the canonical value."""
        case = load_case(write(tmp_path / "c.json", expected__expected_duty_delta_direction=written))
        assert read == case.expected.expected_duty_delta_direction

    @pytest.mark.parametrize(("field", "written", "read"), [
        ("case_type", "multi_step", "savings_possible"), ("case_type", "No-Savings", "no_savings"),
        ("case_type", "Savings Possible", "savings_possible"), ("difficulty", "Moderate", "medium"),
        ("difficulty", "EXPERT", "expert")])
    def test_case_type_and_difficulty_words(self, tmp_path, field, written, read):
        """Case types and difficulties are read case-insensitively, with ``-`` or a space for ``_``."""
        assert read == getattr(load_case(write(tmp_path / "c.json", **{field: written})), field)

    @pytest.mark.parametrize(("written", "read"), [
        ("insufficient_information", "insufficient_info"), ("Missing-Evidence", "missing_evidence"), ("none", None)])
    def test_refusal_category_words(self, tmp_path, written, read):
        """Refusal categories accept the long form and spelling variants; ``"none"`` reads as no category."""
        case = load_case(write(tmp_path / "c.json", expected__expected_refusal_category=written))
        assert read == case.expected.expected_refusal_category

    def test_invalid_value_lists_the_allowed_values(self, tmp_path):
        """An unknown direction names the file, the JSON path and every allowed value."""
        path = tmp_path / "c.json"
        assert (f"{path}: Invalid enum value 'sideways' - at `$.expected.expected_duty_delta_direction` "
                f"({DIRECTIONS})") == problem(path, expected__expected_duty_delta_direction="sideways")

    def test_non_string_and_missing_required_values_list_the_allowed_values(self, tmp_path):
        """A number where a case type belongs, or null for a required enum, is rejected the same way."""
        path = tmp_path / "c.json"
        assert (f"{path}: Invalid enum value 3 - at `$.case_type` (allowed: positive, negative, adversarial, "
                "no_savings, savings_possible)") == problem(path, case_type=3)
        assert (f"{path}: Invalid enum value null - at `$.difficulty` (allowed: easy, medium, hard, expert)") == \
            problem(path, difficulty=None)

    def test_every_bad_enum_of_a_file_is_reported(self, tmp_path):
        """Two bad enum values in one file give two lines, each with its path."""
        path = tmp_path / "c.json"
        assert (f"{path}: Invalid enum value 'routine' - at `$.difficulty` (allowed: easy, medium, hard, expert)\n"
                f"{path}: Invalid enum value 'sideways' - at `$.expected.expected_duty_delta_direction` "
                f"({DIRECTIONS})") == problem(path, difficulty="routine",
                                              expected__expected_duty_delta_direction="sideways")


class TestInconsistentExpectations:
    @pytest.mark.parametrize("code", ["6404", "64.04.1", "6404.11.90.00.1", "6404-11-90", "6404.11.90 ", "abcdef"])
    def test_codes_must_have_six_to_ten_digits(self, tmp_path, code):
        """An expected HTS code with fewer than 6 or more than 10 digits, or other characters, is rejected."""
        path = tmp_path / "c.json"
        assert (f"{path}: {code!r} is not an HTS code (6 to 10 digits, dots allowed) - at `$.expected.allowed_hts[1]`"
                == problem(path, expected__allowed_hts=["6404.19", code]))

    @pytest.mark.parametrize("code", ["640411", "6404.11.90", "6404119000", "9999.99.9999"])
    def test_six_to_ten_digit_codes_load(self, tmp_path, code):
        """Codes of 6 to 10 digits load, dotted or not."""
        assert [code] == load_case(write(tmp_path / "c.json", expected__must_not_hts=[code])).expected.must_not_hts

    def test_refusal_without_a_category_is_rejected(self, tmp_path):
        """A case that expects a refusal must say which category."""
        path = tmp_path / "c.json"
        assert (f"{path}: a refusal is expected (expected_accept is false) but no refusal category is given (one of: "
                "insufficient_info, ambiguous, out_of_scope, missing_evidence) - at "
                "`$.expected.expected_refusal_category`") == problem(path, expected__expected_accept=False)

    def test_reversed_delta_range_is_rejected(self, tmp_path):
        """A duty delta range whose low bound is above its high bound is rejected."""
        path = tmp_path / "c.json"
        assert (f"{path}: duty_delta_range [5, 1.5] is reversed (low bound first) - at `$.expected.duty_delta_range`"
                == problem(path, expected__duty_delta_range=[5, 1.5]))

    def test_all_inconsistencies_of_a_file_are_reported(self, tmp_path):
        """A file with a bad code and a reversed range names both."""
        path = tmp_path / "c.json"
        assert (f"{path}: '64' is not an HTS code (6 to 10 digits, dots allowed) - at `$.expected.preferred_hts[0]`\n"
                f"{path}: duty_delta_range [2, 1] is reversed (low bound first) - at `$.expected.duty_delta_range`"
                == problem(path, expected__preferred_hts=["64"], expected__duty_delta_range=[2, 1]))

    def test_unknown_key_still_names_file_and_path(self, tmp_path):
        """Unknown keys keep the decoder's message with the file and JSON path."""
        path = tmp_path / "c.json"
        assert f"{path}: Object contains unknown field `colour` - at `$.expected`" == problem(
            path, expected__colour="red")


class TestSuiteLoading:
    def test_every_bad_file_is_reported_at_once(self, tmp_path):
        """Three bad files among four give one error listing each file with its problem and JSON path."""
        cases = tmp_path / "cases"
        write(cases / "positive" / "a.json", id="a")
        bad_enum = write(cases / "positive" / "b.json", id="b", expected__expected_duty_delta_direction="sideways")
        bad_code = write(cases / "negative" / "c.json", id="c", expected__preferred_hts=["64"])
        not_json = cases / "positive" / "d.json"
        not_json.write_bytes(b"{not json")
        with pytest.raises(InputError) as caught:
            load_suite(cases)
        assert (f"{cases}: 3 of 4 case file(s) are invalid:\n"
                f"  {bad_code}: '64' is not an HTS code (6 to 10 digits, dots allowed) - at "
                "`$.expected.preferred_hts[0]`\n"
                f"  {bad_enum}: Invalid enum value 'sideways' - at `$.expected.expected_duty_delta_direction` "
                f"({DIRECTIONS})\n"
                f"  {not_json}: not valid JSON (JSON is malformed: object keys must be strings (byte 1))"
                ) == str(caught.value)

    def test_duplicate_ids_are_reported_with_the_other_file(self, tmp_path):
        """A second file reusing an id is reported with the file that used it first."""
        first = write(tmp_path / "cases" / "positive" / "a.json", id="same")
        second = write(tmp_path / "cases" / "positive" / "b.json", id="same")
        with pytest.raises(InputError) as caught:
            load_suite(tmp_path / "cases")
        assert (f"{tmp_path / 'cases'}: 1 of 2 case file(s) are invalid:\n"
                f"  {second}: id 'same' is also used by {first} - at `$.id`") == str(caught.value)

    def test_flat_layout_loads_and_hidden_files_are_skipped(self, tmp_path):
        """Case files directly in ``cases/`` load beside typed folders; temporary dot-files are ignored."""
        write(tmp_path / "cases" / "a.json", id="a")
        write(tmp_path / "cases" / "negative" / "b.json", id="b")
        (tmp_path / "cases" / ".c.json.tmp-1.json").write_bytes(b"{")
        assert ["a", "b"] == [c.id for c in load_suite(tmp_path / "cases")]

    def test_reference_cases_load_and_flat_variants_of_them_too(self, tmp_path):
        """The original harness's 72 cases load as they are, and still load with ``flat`` directions written in."""
        source = reference_dir("tariff_whitebox", "benchmarks_tariff", "cases")
        assert 72 == len(load_suite(source))
        copy = tmp_path / "cases"
        shutil.copytree(source, copy)
        for path in sorted(copy.rglob("*.json")):
            data = orjson.loads(path.read_bytes())
            data["expected"]["expected_duty_delta_direction"] = "flat"
            path.write_bytes(orjson.dumps(data))
        assert {"none"} == {c.expected.expected_duty_delta_direction for c in load_suite(copy)}
