"""Case ids name fixture files: unsafe ids are refused at load, and no fixture path leaves the fixtures directory."""

from __future__ import annotations

from pathlib import Path

import msgspec
import orjson
import pytest

from mpcbench_async import InputError, RecordDecodeError, load_prompts
from mpcbench_async.llm import LLMClient
from mpcbench_async.tariff import FixtureTransport, LLMProposer, load_case, load_suite, read_hscodecomp, verify
from mpcbench_async.tariff._fixtures import RecordingProposer
from tests.conftest import REPO
from tests.tariff.conftest import make_case


def write_case(path: Path, case_id: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(msgspec.to_builtins(make_case(id=case_id))))
    return path


class TestLoading:
    @pytest.mark.parametrize(("case_id", "problem"), [
        ("../../outside", "must not contain a path separator (/ or \\)"),
        ("..", "must not contain '..' or start with '.'"),
        ("nul\x00id", "contains the control character U+0000"),
        ("c" * 1000, "is 1000 characters (1000 bytes) long; at most 200 bytes are allowed"),
    ])
    def test_unsafe_ids_are_refused_at_load(self, tmp_path, case_id, problem):
        """An id that cannot be a fixture file name is refused with the file and `$.id`."""
        path = write_case(tmp_path / "positive" / "c.json", case_id)
        with pytest.raises(RecordDecodeError) as caught:
            load_case(path)
        assert f"{path}: id {case_id[:80]!r} {problem} (it names the case's fixture file) - at `$.id`" == str(
            caught.value)

    def test_a_suite_lists_the_bad_id_with_the_other_problems(self, tmp_path):
        """load_suite reports the unsafe id among every bad file, before any case runs."""
        write_case(tmp_path / "positive" / "good.json", "good")
        bad = write_case(tmp_path / "positive" / "bad.json", "a/b")
        with pytest.raises(InputError) as caught:
            load_suite(tmp_path)
        assert (f"{tmp_path}: 1 of 2 case file(s) are invalid:\n  {bad}: id 'a/b' must not contain a path separator "
                "(/ or \\) (it names the case's fixture file) - at `$.id`") == str(caught.value)

    def test_a_case_nested_too_deeply_to_decode_is_one_problem(self, tmp_path):
        """5,000 levels of nesting are reported as a problem of the file, not a RecursionError."""
        path = tmp_path / "positive" / "deep.json"
        path.parent.mkdir(parents=True)
        path.write_text('{"id": "c1", "notes": {"tags": ' + "[" * 5000 + "]" * 5000 + "}}")
        with pytest.raises(RecordDecodeError) as caught:
            load_case(path)
        assert f"{path}: nested too deeply to read" == str(caught.value)

    def test_a_long_hscodecomp_task_id_is_refused_naming_the_line(self, tmp_path):
        """An HSCodeComp task_id that would make a 1,000-character case id is refused with its line."""
        path = tmp_path / "hscodecomp.jsonl"
        path.write_bytes(orjson.dumps({"task_id": "t" * 1000, "product_name": "mug", "hs_code": "6912004400"}))
        with pytest.raises(InputError) as caught:
            read_hscodecomp(path)
        assert (f"{path}: 1 line(s) cannot be imported:\n  {path}:1: task_id {'t' * 80!r} gives a case id that is "
                "1011 characters (1011 bytes) long; at most 200 bytes are allowed - at `$.task_id`") == str(
            caught.value)


class TestFixturePaths:
    """Proposers given an id from elsewhere (not loaded through load_case) still never leave the directory."""

    async def test_record_mode_refuses_a_dot_dot_id_before_the_call(self, tmp_path, pack, make_client, sim):
        """RecordingProposer refuses '../' before calling the model: nothing is written outside, no call is made."""
        fixtures = tmp_path / "storage" / "fixtures"
        fixtures.mkdir(parents=True)
        proposer = RecordingProposer(LLMProposer(make_client(), "sim/tariff"), fixtures)
        with pytest.raises(InputError) as caught:
            await verify(make_case(id="../../escaped"), proposer, pack, load_prompts(REPO / "prompt_config.json"))
        assert (f"{fixtures}: case id '../../escaped' cannot name a fixture file: must not contain a path separator "
                "(/ or \\)") == str(caught.value)
        assert (0, []) == (sim.stats.total_received, list(tmp_path.rglob("escaped*")))

    async def test_fixture_mode_refuses_a_symlink_out_of_the_directory(self, tmp_path, pack):
        """A fixture file that is a symlink to a file outside the fixtures directory is not read."""
        fixtures = tmp_path / "fixtures"
        fixtures.mkdir()
        outside = tmp_path / "secret.json"
        outside.write_text('{"case_id": "c1", "model": "m", "replies": ["{}"]}')
        (fixtures / "c1.json").symlink_to(outside)
        async with LLMClient(transport=FixtureTransport(fixtures)) as client:
            with pytest.raises(InputError) as caught:
                await verify(make_case(id="c1"), LLMProposer(client, "fixture"), pack,
                             load_prompts(REPO / "prompt_config.json"))
        assert (f"{fixtures}: case id 'c1' cannot name a fixture file: resolves outside the fixtures directory"
                == str(caught.value))
