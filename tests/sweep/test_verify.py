"""Issue 26 point 5: ``verify`` re-scores a finished sweep from its stored records, without any model call, and
names every stored score that does not reproduce with the reason."""

from __future__ import annotations

import shutil

import orjson
import pytest

from mpcbench_async.cli import main
from mpcbench_async.mpcbench import checks_version, load_prompts, sim_judge_version
from mpcbench_async.sweep import Mismatch, run_sweep, verify_sweep
from mpcbench_async.sweep import _verify as verify_module
from tests.conftest import REPO
from tests.sweep_options import sweep_options

from .summary_lines import run, write

DIRS = {"tasks_dir": REPO / "tasks", "data_dir": REPO / "data", "scenarios_dir": REPO / "scenarios"}
EDITED = "same check code, task and data: the stored result was edited"


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """The sc01 tasks (planning, email reply, weekly report) × oracle and lazy agents, judged by sim/judge."""
    out = tmp_path_factory.mktemp("verify") / "out"
    options = sweep_options(out=out, models=["sim/oracle-agent", "sim/lazy-agent"], judges=["sim/judge"],
                           tasks="sc01_*", handle_signals=False, certificate=False, **DIRS)
    import anyio

    anyio.run(run_sweep, options)
    return out


@pytest.fixture
def sweep(finished, tmp_path):
    """A copy of the finished sweep that a test may tamper with."""
    return shutil.copytree(finished, tmp_path / "copy")


def _lines(path):
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _write(path, records):
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def test_a_finished_sweep_verifies_clean_without_a_model_call(sweep, monkeypatch):
    """6 runs' checks, 6 judge inputs and summary.json reproduce; no client is ever made."""
    def no_client(*args, **kwargs):
        raise AssertionError("verify made a model client")

    monkeypatch.setattr("mpcbench_async.llm.LLMClient.__init__", no_client)
    result = verify_sweep(sweep, rejudge=True, prompts=REPO / "prompt_config.json", **DIRS)
    assert (6, 6, True, []) == (result.runs, result.judgements, result.summary_checked, result.mismatches)
    assert result.report().endswith("every stored score is reproduced bit for bit")
    runs = _lines(sweep / "runs.jsonl")
    assert {checks_version()} == {r["checks_version"] for r in runs}
    assert all(len(j["input_digest"]) == 16 for j in _lines(sweep / "judgements.jsonl"))


def test_a_tampered_check_is_named_with_its_record_and_reason(sweep):
    """One check of one run flipped from pass to fail in runs.jsonl: that record and check are listed, the
    reason is an edit (same code, task and data); the summary rebuilt from the edited records differs from the
    stored one, and says so path by path."""
    runs = _lines(sweep / "runs.jsonl")
    target = next(r for r in runs if r["model"] == "sim/oracle-agent" and r["task_id"] == "sc01_planning")
    target["checks"][1]["status"] = "fail"
    _write(sweep / "runs.jsonl", runs)
    result = verify_sweep(sweep, **DIRS)
    assert Mismatch(file="runs.jsonl", key=target["key"], what=target["checks"][1]["name"], stored="fail",
                    now="pass", reason=EDITED) == result.mismatches[0]
    assert all(m.file == "summary.json" for m in result.mismatches[1:])
    assert "$.models[1].checks_passed" in [m.what for m in result.mismatches]


def test_a_tampered_summary_score_is_named_by_its_path(sweep):
    """pass_at_k edited in summary.json: exactly that path, stored and rebuilt value."""
    summary = orjson.loads((sweep / "summary.json").read_bytes())
    real = summary["models"][1]["pass_at_k"]
    summary["models"][1]["pass_at_k"] = 0.99
    (sweep / "summary.json").write_bytes(orjson.dumps(summary))
    [mismatch] = verify_sweep(sweep, **DIRS).mismatches
    assert ("summary.json", "$.models[1].pass_at_k", "0.99", orjson.dumps(real).decode()) == (
        mismatch.file, mismatch.what, mismatch.stored, mismatch.now)
    assert mismatch.reason.startswith("summary.json differs from the summary rebuilt from the records")


def test_a_changed_judge_prompt_is_reported_for_every_judgement(sweep, tmp_path):
    """--rejudge with a judge prompt edited since the sweep: each of the 6 judgements is listed with both prompt
    digests; without --rejudge nothing is rebuilt and the sweep verifies."""
    prompts = orjson.loads((REPO / "prompt_config.json").read_bytes())
    prompts["judge"]["system"] += " Be strict."
    (tmp_path / "prompts.json").write_bytes(orjson.dumps(prompts))
    before = load_prompts(REPO / "prompt_config.json").digest("judge", "repair")
    after = load_prompts(tmp_path / "prompts.json").digest("judge", "repair")
    result = verify_sweep(sweep, rejudge=True, prompts=tmp_path / "prompts.json", **DIRS)
    assert 6 == len(result.mismatches)
    assert {("judgements.jsonl", "judge input", f"the judge prompt changed since the sweep (digest {before} → "
             f"{after})")} == {(m.file, m.what, m.reason) for m in result.mismatches}
    assert verify_sweep(sweep, prompts=tmp_path / "prompts.json", **DIRS).ok


def test_changed_check_code_is_the_reason_when_the_version_differs(sweep, monkeypatch):
    """Checks that now give another result under another checks version: the reason names both versions."""
    real = verify_module.run_checks

    def stricter(task, answer, data):
        return [type(c)(name=c.name, status="fail", detail="stricter") for c in real(task, answer, data)]

    monkeypatch.setattr(verify_module, "run_checks", stricter)
    monkeypatch.setattr(verify_module, "checks_version", lambda: "0123456789abcdef")
    reasons = {m.reason for m in verify_sweep(sweep, **DIRS).mismatches if m.file == "runs.jsonl"}
    assert {f"the check code changed since the run (checks version {checks_version()} → 0123456789abcdef)"} == reasons


def test_the_command_exits_1_on_a_difference_and_2_for_no_sweep(sweep, tmp_path, capsys):
    dirs = [f"--{name.replace('_', '-')}={path}" for name, path in DIRS.items()]
    assert 0 == main(["verify", str(sweep), "--rejudge", *dirs])
    assert "every stored score is reproduced bit for bit" in capsys.readouterr().out
    judgements = _lines(sweep / "judgements.jsonl")
    judgements[0]["input_digest"] = "ffffffffffffffff"
    _write(sweep / "judgements.jsonl", judgements)
    assert 1 == main(["verify", str(sweep), "--rejudge", *dirs])
    out = capsys.readouterr().out
    assert "1 stored score(s) not reproduced:" in out
    assert f"judgements.jsonl {judgements[0]['key']}: judge input: stored ffffffffffffffff, now " in out
    assert 2 == main(["verify", str(tmp_path / "empty")])
    assert "no manifest.json and runs.jsonl here" in capsys.readouterr().err


def test_a_tampered_sim_judge_score_is_scored_again_and_named(sweep):
    """sim/judge is a pure rubric: --rejudge scores each of its judgements again in-process. One ARS edited in
    judgements.jsonl is listed with the stored and the rubric's scores and called an edit; every judgement stored
    the rubric's version."""
    judgements = _lines(sweep / "judgements.jsonl")
    assert {sim_judge_version()} == {j["rubric_version"] for j in judgements}
    target = judgements[2]
    scores = target["judgement"]["scores"]
    real = scores["answer_requirements_satisfaction"]["score"]
    scores["answer_requirements_satisfaction"]["score"] = 5 - real
    _write(sweep / "judgements.jsonl", judgements)
    result = verify_sweep(sweep, rejudge=True, prompts=REPO / "prompt_config.json", **DIRS)
    sgr = scores["source_grounded_reasoning"]["score"]
    assert Mismatch(file="judgements.jsonl", key=target["key"], what="sim/judge scores",
                    stored=f"ARS {5 - real}, SGR {sgr}", now=f"ARS {real}, SGR {sgr}",
                    reason="same rubric and judge input: the stored scores were edited") == result.mismatches[0]
    assert all(m.file == "summary.json" for m in result.mismatches[1:])


def test_a_changed_rubric_is_the_reason_when_its_version_differs(sweep, monkeypatch):
    """A rubric that now scores every input 0/0 under another version: each judgement names both versions."""
    monkeypatch.setattr(verify_module, "sim_judge_scores", lambda judge_input: (0, 0))
    monkeypatch.setattr(verify_module, "sim_judge_version", lambda: "fedcba9876543210")
    reasons = {m.reason for m in verify_sweep(sweep, rejudge=True, prompts=REPO / "prompt_config.json",
                                              **DIRS).mismatches}
    assert {f"sim/judge's rubric changed since (version {sim_judge_version()} → fedcba9876543210)"} == reasons


def test_a_summary_rebuilt_with_other_ks_still_verifies(tmp_path, capsys):
    """``summarize --pass-k 1,3`` rewrote summary.json of a 5-trial sweep with pass^1 and pass^3 (the default
    being 1, 2, 4, 5): verify rebuilds it with the same ks and finds it equal."""
    write(tmp_path / "runs.jsonl", *(run(f"run-{n}", trial=n, checks="pf"[n % 2]) for n in range(5)))
    assert 0 == main(["summarize", str(tmp_path), "--pass-k", "1,3"])
    capsys.readouterr()
    assert [] == verify_module._summary_mismatches(tmp_path)
    summary = orjson.loads((tmp_path / "summary.json").read_bytes())
    summary["models"][0]["stats"]["pass_hat_k"][1]["value"] = 0.5
    (tmp_path / "summary.json").write_bytes(orjson.dumps(summary))
    assert ["$.models[0].stats.pass_hat_k[1].value"] == [m.what for m in verify_module._summary_mismatches(tmp_path)]


class TestVersionsCoverTheirCode:
    """A version digests the code a score is computed with, found by following imports, not by a list that drifts."""

    def test_the_checks_version_covers_every_module_the_checks_import_and_no_plumbing(self) -> None:
        from mpcbench_async.mpcbench import _provenance

        files = {f.relative_to(_provenance._PACKAGE).as_posix() for f in _provenance._closure(_provenance.CHECK_ENTRY)}
        assert {"mpcbench/_checks.py", "_answers.py", "_rows.py", "mpcbench/_timestamps.py",
                "mpcbench/tools/_calendar.py"} <= files
        assert [] == sorted(f for f in files if f.split("/")[0] in _provenance.PLUMBING)

    def test_the_sim_judge_version_covers_every_rule_module(self) -> None:
        from mpcbench_async.mpcbench import _provenance

        files = {f.name for f in _provenance._closure(_provenance.SIM_JUDGE_ENTRY)}
        rules = {f.name for f in (_provenance._PACKAGE / "mpcbench" / "_sim").glob("_judge_*.py")}
        assert rules <= files
