"""Issue 26 point 3: a validity certificate in every summary — oracle ceiling and lazy floor from the sim baselines
run on the sweep's own tasks (cached, skippable), vacuous passes, check–judge and judge–judge agreement, tasks with
no check — and ``sweep --require-valid`` exiting 4 when it fails."""

from __future__ import annotations

import shutil

import msgspec
import orjson
import pytest

from mpcbench_async.cli import main
from mpcbench_async.report import render_markdown
from mpcbench_async.stats import weighted_kappa
from mpcbench_async.sweep import FamilyCertificate, run_sweep, summarize
from mpcbench_async.sweep import _baselines as baselines_module
from mpcbench_async.sweep._baselines import BaselineFile, TaskBaseline
from mpcbench_async.sweep._certificate import Rate, certificate_of
from mpcbench_async.sweep._summary_types import Thresholds
from mpcbench_async.testing import write_workspace
from tests.conftest import REPO
from tests.sweep_options import sweep_options

from .summary_lines import case, judgement, run, write

DIRS = {"tasks_dir": REPO / "tasks", "data_dir": REPO / "data", "scenarios_dir": REPO / "scenarios"}
FAMILIES = ["document_generation", "email_reply", "planning"]


def _options(out, cache, **changes):
    """sc01's three tasks (one per family) × the oracle and lazy agents, judged by sim/judge."""
    return sweep_options(out=out, models=["sim/oracle-agent", "sim/lazy-agent"], judges=["sim/judge"],
                        handle_signals=False, certificate_cache=cache, **{"tasks": "sc01_*", **DIRS, **changes})


@pytest.fixture
def counted_agents(monkeypatch):
    """The agents the certificate's baselines ran, in order (their runs still happen)."""
    ran: list[tuple[str, str]] = []
    real = baselines_module.run_agent

    async def counting(client, model, task, *args, **kwargs):
        ran.append((model, task.task_id))
        return await real(client, model, task, *args, **kwargs)

    monkeypatch.setattr(baselines_module, "run_agent", counting)
    return ran


async def test_the_shipped_tasks_get_a_valid_certificate_in_every_summary(tmp_path):
    """Per family: 1 task, the oracle passes it (100% ceiling), the lazy agent fails it (0% floor), the 4
    non-answers pass none of the checks that apply to them, and the sim judge agrees with the checks on both runs.
    summary.json holds the certificate; summary.md shows it."""
    result = await run_sweep(_options(tmp_path / "out", tmp_path / "cache"))
    cert = result.certificate
    assert ("valid", "computed", []) == (cert.status, cert.baselines, cert.problems)
    assert [*FAMILIES, "all"] == [f.family for f in cert.families]
    for family in cert.families[:3]:
        assert FamilyCertificate(family=family.family, tasks=1, tasks_without_check=0,
                                 oracle=Rate(passed=1, of=1, rate=1.0), lazy=Rate(passed=0, of=1, rate=0.0),
                                 vacuous_passes=0, vacuous_checks=4, compared_runs=2) == family
    assert (3, Rate(passed=3, of=3, rate=1.0), 12, 6) == (cert.families[3].tasks, cert.families[3].oracle,
                                                          cert.families[3].vacuous_checks,
                                                          cert.families[3].compared_runs)
    stored = orjson.loads((tmp_path / "out" / "summary.json").read_bytes())["certificate"]
    assert msgspec.to_builtins(cert) == stored
    markdown = (tmp_path / "out" / "summary.md").read_text()
    assert "## Validity certificate: VALID" in markdown
    assert "| planning | 1 | 0 | 100% (1/1) | 0% (0/1) | 0 of 4 | 0 of 2 | 0 of 2 |" in markdown
    assert "judge–judge agreement: not applicable (no run was scored by two judges)" in " ".join(markdown.split())


async def test_baselines_are_cached_per_task_and_reused_across_sweeps(tmp_path, counted_agents):
    """The first sweep runs both baselines on each of the 3 tasks and caches 3 files; a sweep of the same tasks
    into another directory runs none; editing one task file reruns that task's baselines only."""
    await run_sweep(_options(tmp_path / "a", tmp_path / "cache"))
    assert 6 == len(counted_agents)
    assert 3 == len(list((tmp_path / "cache").glob("*.json")))
    again = await run_sweep(_options(tmp_path / "b", tmp_path / "cache"))
    assert (6, "valid") == (len(counted_agents), again.certificate.status)
    tasks = shutil.copytree(REPO / "tasks", tmp_path / "tasks")
    edited = tasks / "planning" / "sc01_planning.json"
    doc = orjson.loads(edited.read_bytes())
    doc["answer_requirements"] = [*doc["answer_requirements"], "Is polite."]
    edited.write_bytes(orjson.dumps(doc))
    await run_sweep(_options(tmp_path / "c", tmp_path / "cache", tasks_dir=tasks))
    assert [("sim/oracle-agent", "sc01_planning"), ("sim/lazy-agent", "sc01_planning")] == counted_agents[6:]


async def test_no_certificate_skips_the_baselines_and_says_so(tmp_path, counted_agents):
    """--no-certificate: no baseline runs, no cache; the verdict is unknown and says why; the agreement figures
    from the sweep's own runs are still there."""
    result = await run_sweep(_options(tmp_path / "out", tmp_path / "cache", certificate=False))
    cert = result.certificate
    assert ([], False) == (counted_agents, (tmp_path / "cache").exists())
    assert ("unknown", "skipped", None, 6) == (cert.status, cert.baselines, cert.families[3].oracle,
                                               cert.families[3].compared_runs)
    assert "## Validity certificate: unknown: its baselines were skipped (``certificate=False``)" in (
        tmp_path / "out" / "summary.md").read_text()


def test_require_valid_exits_4_when_the_certificate_fails(tmp_path, capsys):
    """A workspace whose tasks have nothing to check: every unit ok, but no family has a checked task — exit 4, the
    reasons on stderr. The shipped sc01 tasks pass with exit 0; --require-valid with --no-certificate is a user
    error."""
    root = write_workspace(tmp_path / "ws")
    args = ["sweep", "--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json"),
            "--tasks-dir", str(root / "tasks"), "--data-dir", str(root / "data"), "--quiet",
            "--certificate-cache", str(tmp_path / "cache")]
    assert 4 == main([*args, "--out", str(tmp_path / "out"), "--require-valid"])
    err = capsys.readouterr().err
    assert "--require-valid: the validity certificate is INVALID" in err
    assert ("  mpcbench planning: no check applies to the oracle's answer on any of its 2 task(s), so its scores rest "
            "on the judge alone") in err.splitlines()
    assert 0 == main([*args, "--out", str(tmp_path / "out")])  # without the flag a failed certificate is no error
    shipped = ["sweep", "--tasks", "sc01_*", "--models", "sim/oracle-agent", "--judges", "sim/judge", "--quiet",
               "--certificate-cache", str(tmp_path / "cache"), "--require-valid"]
    assert 0 == main([*shipped, "--out", str(tmp_path / "shipped")])
    assert 2 == main([*shipped, "--out", str(tmp_path / "skipped"), "--no-certificate"])
    assert "error: --require-valid needs the certificate's baselines: drop --no-certificate" in capsys.readouterr().err


def test_thresholds_come_from_the_model_config(tmp_path, capsys):
    """$.certificate sets the thresholds the certificate records; a bad one fails before any call, naming the file
    and field."""
    root = write_workspace(tmp_path / "ws")
    config = orjson.loads((root / "model_config.json").read_bytes())
    args = ["sweep", "--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json"),
            "--tasks-dir", str(root / "tasks"), "--data-dir", str(root / "data"), "--quiet", "--out",
            str(tmp_path / "out"), "--certificate-cache", str(tmp_path / "cache")]
    (root / "model_config.json").write_bytes(orjson.dumps({**config, "certificate": {"min_oracle": 2}}))
    assert 2 == main(args)
    assert "model_config.json: $.certificate: Expected `float` <= 1.0 - at `$.min_oracle`" in capsys.readouterr().err
    assert not (tmp_path / "out" / "runs.jsonl").exists()
    (root / "model_config.json").write_bytes(orjson.dumps({**config, "certificate": {"max_lazy": 0.5}}))
    assert 0 == main(args)
    assert Thresholds(max_lazy=0.5) == summarize(tmp_path / "out").certificate.thresholds


def test_each_figure_outside_its_threshold_is_a_named_problem():
    """An oracle failing 1 of 2 tasks, a lazy agent passing 1 of 2 and a non-answer passing a check: each named
    with its family and figures, for the family and for all."""
    baselines = BaselineFile(tasks=[
        TaskBaseline(task_id="a", task_type="planning", oracle="pass", lazy="pass", vacuous_checks=4,
                     vacuous_passes=["planning.slots_found on 'Next week works.'"]),
        TaskBaseline(task_id="b", task_type="planning", oracle="fail", lazy="fail", vacuous_checks=4)])
    cert = certificate_of([], baselines, [], tariff=False, levels=False)
    assert "invalid" == cert.status
    assert [
        "mpcbench planning: oracle ceiling 50% (1 of 2 checked tasks) is below 95%",
        "mpcbench planning: lazy floor 50% (1 of 2 checked tasks) is above 10%",
        "mpcbench planning: non-answers pass 1 check(s) (at most 0 allowed), e.g. a: planning.slots_found on "
        "'Next week works.'",
    ] == cert.problems[:3]
    assert 6 == len(cert.problems)  # the same three for "all"


def test_check_judge_and_judge_judge_agreement_from_the_sweeps_runs(tmp_path):
    """r1 fails a check and the judges' mean ARS is 4.5; r2 passes every check rated 2.5; r3 agrees (pass, 5);
    r4 has no applicable check and is not compared. Two judges scored every run: their kappa is given. A tariff
    case adds the tariff suite as not applicable."""
    runs = [run("r1", task="t1", checks="pf"), run("r2", task="t2", checks="p"), run("r3", task="t3", checks="pp"),
            run("r4", task="t4", checks="n")]
    scores = {"r1": (4, 5), "r2": (2, 3), "r3": (5, 5), "r4": (5, 4)}
    judges = [judgement(f"{judge}-{key}", key, ars=pair[i], judge=judge) for key, pair in scores.items()
              for i, judge in enumerate(("ja", "jb"))]
    write(tmp_path / "runs.jsonl", *runs)
    write(tmp_path / "judgements.jsonl", *judges)
    write(tmp_path / "tariff_m.jsonl", case("case-1", "c1"))
    cert = summarize(tmp_path).certificate
    planning, total = cert.families
    assert ("planning", 4, 1, 3, 1, 1) == (planning.family, planning.tasks, planning.tasks_without_check,
                                          planning.compared_runs, planning.check_fail_judge_high,
                                          planning.check_pass_judge_low)
    assert ("unknown", "missing", None) == (cert.status, cert.baselines, planning.oracle)
    assert [("ja", "jb", 4)] == [(j.judge_a, j.judge_b, j.runs) for j in cert.judge_agreement]
    kappa = round(weighted_kappa([4, 2, 5, 5], [5, 3, 5, 4]), 4)  # ja and jb on r1…r4
    assert [("ja", "jb", 4, kappa)] == [(j.judge_a, j.judge_b, j.runs, j.ars_kappa) for j in planning.judge_agreement]
    assert total.judge_agreement == cert.judge_agreement
    assert f"| planning | 4 | 1 | – | – | – | 1 of 3 | 1 of 3 | {kappa:.2f} (n 4) |" in render_markdown(
        summarize(tmp_path))
    assert ["tariff"] == [s.suite for s in cert.suites]
    assert "tariff: not applicable — cases are scored against their expected codes" in " ".join(render_markdown(
        summarize(tmp_path)).split())


async def test_a_sweep_that_extends_the_experiment_keeps_the_earlier_tasks_baselines(tmp_path):
    """sc01's 3 tasks, then sc02's 2 into the same directory: the certificate covers all 5 tasks the summary
    counts, not only the last invocation's."""
    await run_sweep(_options(tmp_path / "out", tmp_path / "cache"))
    result = await run_sweep(_options(tmp_path / "out", tmp_path / "cache", tasks="sc02_*"))
    total = result.certificate.families[-1]
    assert ("all", 5, Rate(passed=5, of=5, rate=1.0)) == (total.family, total.tasks, total.oracle)


def test_a_sweep_without_mpcbench_runs_has_no_certificate_to_fail(tmp_path):
    """Tariff cases alone: the certificate is not applicable (it is not unknown, which --require-valid refuses) and
    says why the tariff suite has none."""
    write(tmp_path / "tariff_m.jsonl", case("case-1", "c1"))
    summary = summarize(tmp_path)
    assert ("not applicable", [], ["tariff"]) == (summary.certificate.status, summary.certificate.families,
                                                 [s.suite for s in summary.certificate.suites])
    assert "## Validity certificate: not applicable (no MPCBench run)" in render_markdown(summary)
