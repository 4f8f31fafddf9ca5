"""The suite runner: record with sim/tariff, replay from fixtures identically, resume, compare."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import orjson

from mpcbench_async._prompts import load_prompts
from mpcbench_async.llm import LLMClient
from mpcbench_async.tariff import build_report, compare_reports, render_diff, run_cases
from tests.conftest import REPO
from tests.tariff.conftest import make_case

PROMPTS = load_prompts(REPO / "prompt_config.json")
CASES = [
    make_case(id="pos_a"),
    make_case(id="pos_b", input__input="Sneaker with textile uppers and rubber soles, sports use; any duty savings?",
              input__options={"max_iters": 3}),
    make_case(id="neg_a", case_type="negative", input__input="Classify it.", expected__expected_accept=False,
              expected__preferred_hts=[], expected__expected_refusal_category="insufficient_info"),
    make_case(id="neg_b", case_type="negative", input__input="Footwear; composition per the attached lab report.",
              expected__expected_accept=False, expected__preferred_hts=[],
              expected__expected_refusal_category="missing_evidence"),
]


async def record_then_replay(pack, tmp_path: Path, sim_url: str):
    fixtures = tmp_path / "fixtures"
    async with LLMClient(sim_base_url=sim_url) as client:
        recorded = await run_cases(CASES, pack=pack, prompts=PROMPTS, mode="record", model="sim/tariff",
                                   client=client, results_path=tmp_path / "record.jsonl", fixtures_dir=fixtures)
    replayed = await run_cases(CASES, pack=pack, prompts=PROMPTS, mode="fixture",
                               results_path=tmp_path / "fixture.jsonl", fixtures_dir=fixtures)
    return recorded, replayed


class TestRunner:
    async def test_fixture_replay_matches_the_recorded_live_run(self, pack, tmp_path, sim):
        """Record mode writes one fixture per case; fixture mode reruns the whole pipeline to identical scores."""
        recorded, replayed = await record_then_replay(pack, tmp_path, sim.base_url)
        assert sorted(f"{c.id}.json" for c in CASES) == sorted(p.name for p in (tmp_path / "fixtures").iterdir())
        assert [(r.case_id, r.score.score) for r in recorded] == [(r.case_id, r.score.score) for r in replayed]
        assert {"ok"} == {r.status for r in replayed}
        by_id = {r.case_id: r for r in replayed}
        assert ("refused", "insufficient_info") == (by_id["neg_a"].result.status,
                                                    by_id["neg_a"].result.refusal_category)
        assert ("refused", "missing_evidence") == (by_id["neg_b"].result.status, by_id["neg_b"].result.refusal_category)
        assert "accepted" == by_id["pos_a"].result.status

    async def test_two_fixture_runs_give_identical_scores_and_resume_skips(self, pack, tmp_path, sim):
        """Fixture mode is deterministic; a second run over the same results file runs nothing new."""
        _, first = await record_then_replay(pack, tmp_path, sim.base_url)
        lines_before = (tmp_path / "fixture.jsonl").read_bytes().count(b"\n")
        second = await run_cases(CASES, pack=pack, prompts=PROMPTS, mode="fixture",
                                 results_path=tmp_path / "fixture.jsonl", fixtures_dir=tmp_path / "fixtures")
        assert lines_before == (tmp_path / "fixture.jsonl").read_bytes().count(b"\n")
        assert [msgspec.to_builtins(r.score) for r in first] == [msgspec.to_builtins(r.score) for r in second]

    async def test_missing_fixture_is_an_error_record_naming_the_file(self, pack, tmp_path):
        """A case without a fixture fails with a message naming the missing file, and the run goes on."""
        [record] = await run_cases(CASES[:1], pack=pack, prompts=PROMPTS, mode="fixture",
                                   results_path=tmp_path / "r.jsonl", fixtures_dir=tmp_path / "none")
        assert ("error", f"{tmp_path / 'none' / 'pos_a.json'}: no fixture for case 'pos_a'; record one with "
                         "``mode=record``") == (record.status, record.error_message)


class TestCompare:
    async def test_diff_names_exactly_the_changed_case(self, pack, tmp_path, sim):
        """Two runs differing in one case's outcome produce a diff naming only that case."""
        _, replayed = await record_then_replay(pack, tmp_path, sim.base_url)
        baseline = build_report(replayed, suite="t", mode="fixture", model="fixture", created_at="a")
        fixture = tmp_path / "fixtures" / "pos_a.json"
        data = orjson.loads(fixture.read_bytes())
        data["replies"] = [orjson.dumps({"decision": "refuse", "refusal_category": "ambiguous"}).decode()] * 3
        fixture.write_bytes(orjson.dumps(data))
        changed = await run_cases(CASES, pack=pack, prompts=PROMPTS, mode="fixture",
                                  results_path=tmp_path / "again.jsonl", fixtures_dir=tmp_path / "fixtures")
        current = build_report(changed, suite="t", mode="fixture", model="fixture", created_at="b")
        diff = compare_reports(baseline, current)
        assert (["pos_a"], [], ["pos_a"], [], []) == (
            [c for c, _, _ in diff.regressed], diff.improved, diff.new_failures, diff.added, diff.removed)
        text = render_diff(diff, "a.json", "b.json")
        assert "- `pos_a`: 1.00 → 0.00 (-1.00)" in text


def write_suite(suite: Path) -> Path:
    """A suite directory holding ``CASES`` as case files."""
    for case in CASES:
        folder = suite / "cases" / case.case_type
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{case.id}.json").write_bytes(msgspec.json.encode(case))
    return suite


class TestSweepSuite:
    def test_tariff_cases_join_the_sweep(self, pack, tmp_path, capsys):
        """`sweep --suite tariff` runs every case live with sim/tariff and writes its report beside the sweep."""
        from mpcbench_async.cli import main

        suite = write_suite(tmp_path / "suite")
        config = tmp_path / "model_config.json"
        config.write_bytes(orjson.dumps({"tariff_models": ["sim/tariff"]}))
        out = tmp_path / "out"
        code = main(["sweep", "--suite", "tariff", "--tariff-path", str(suite), "--pack", str(pack.root),
                     "--config", str(config), "--prompts", str(REPO / "prompt_config.json"), "--out", str(out),
                     "--quiet"])
        assert 0 == code
        printed = capsys.readouterr().out
        assert re.search(rf"^tariff\s+sim/tariff\s+{len(CASES)}\s", printed, re.M)  # its row of the tariff section
        lines = (out / "tariff_sim_tariff.jsonl").read_bytes().splitlines()
        assert len(CASES) == len(lines)
        assert {"ok"} == {orjson.loads(line)["status"] for line in lines}
        assert (out / "tariff_sim_tariff.md").exists()


class TestCaseLoading:
    def test_unknown_key_and_wrong_type_name_file_and_field(self, tmp_path):
        """A case with an unknown key or a wrong type is rejected naming the file and the JSON path."""
        import pytest

        from mpcbench_async import RecordDecodeError
        from mpcbench_async.tariff import load_case

        data = msgspec.to_builtins(CASES[0])
        data["expected"]["colour"] = "red"
        path = tmp_path / "c.json"
        path.write_bytes(orjson.dumps(data))
        with pytest.raises(RecordDecodeError) as caught:
            load_case(path)
        assert f"{path}: Object contains unknown field `colour` - at `$.expected`" == str(caught.value)
        data["expected"].pop("colour")
        data["input"]["options"]["max_iters"] = "three"
        path.write_bytes(orjson.dumps(data))
        with pytest.raises(RecordDecodeError) as caught:
            load_case(path)
        assert f"{path}: Expected `int`, got `str` - at `$.input.options.max_iters`" == str(caught.value)

    def test_a_rerun_with_other_model_settings_replaces_the_cases_it_counts(self, pack, tmp_path, capsys):
        """The tariff section counts the latest invocation's cases per suite × model, never both settings."""
        from mpcbench_async.cli import main
        from mpcbench_async.sweep import summarize

        suite = write_suite(tmp_path / "suite")
        config, out = tmp_path / "model_config.json", tmp_path / "out"
        argv = ["sweep", "--suite", "tariff", "--tariff-path", str(suite), "--pack", str(pack.root),
                "--config", str(config), "--prompts", str(REPO / "prompt_config.json"), "--out", str(out), "--quiet"]
        for temperature in (0.0, 0.5):
            config.write_bytes(orjson.dumps({"tariff_models": ["sim/tariff"],
                                             "defaults": {"params": {"temperature": temperature}}}))
            assert 0 == main(argv)
        capsys.readouterr()
        assert 2 * len(CASES) == len((out / "tariff_sim_tariff.jsonl").read_bytes().splitlines())
        summary = summarize(out)
        assert [("tariff", "sim/tariff", len(CASES))] == [(t.suite, t.model, t.cases) for t in summary.tariff]
        assert summary.other_experiments >= len(CASES)
