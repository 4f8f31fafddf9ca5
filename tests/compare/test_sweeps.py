"""Sweep against sweep on hand-written directories with known scores (tests/compare/sweeps.py): exact values."""

from __future__ import annotations

import msgspec
import numpy as np
import pytest

from mpcbench_async.compare import compare_sweeps, render_markdown
from mpcbench_async.compare._sweeps import _unpaired_ci
from mpcbench_async.stats import Interval, bootstrap_mean_ci

from .sweeps import sweep_a, sweep_b


@pytest.fixture
def dirs(tmp_path):
    return sweep_a(tmp_path / "A"), sweep_b(tmp_path / "B")


def builtins(value):
    return msgspec.to_builtins(value)


class TestFindings:
    def test_regressions_improvements_and_new_failures(self, dirs):
        """t1's paired CI [-2, -2] and t4's checks 2/2 → 1/2 are regressions; t2's unpaired CI [2, 2] and t4's SGR
        +2 (no CI) improvements; t3 ok → error and t4 passed → failed are new failures."""
        result = compare_sweeps(*dirs)
        assert [
            {"model": "m", "suite": None, "task": "t1", "metric": "ars", "a": 4.5, "b": 2.5, "delta": -2.0,
             "ci": {"low": -2.0, "high": -2.0}, "rule": "95% CI [-2.00, -2.00] excludes 0"},
            {"model": "m", "suite": None, "task": "t4", "metric": "checks", "a": 1.0, "b": 0.5, "delta": -0.5,
             "ci": None, "rule": "checks passed → failed, no CI"},
        ] == builtins(result.regressions)
        assert [
            {"model": "m", "suite": None, "task": "t2", "metric": "ars", "a": 2.0, "b": 4.0, "delta": 2.0,
             "ci": {"low": 2.0, "high": 2.0}, "rule": "95% CI [2.00, 2.00] excludes 0"},
            {"model": "m", "suite": None, "task": "t4", "metric": "sgr", "a": 2.0, "b": 4.0, "delta": 2.0, "ci": None,
             "rule": "rise ≥ 1, no CI"},
        ] == builtins(result.improvements)
        assert [
            {"model": "m", "suite": None, "task": "t3", "change": "ok → error",
             "detail": "1 of 1 trial(s) in B ended in an error"},
            {"model": "m", "suite": None, "task": "t4", "change": "passed → failed",
             "detail": "1 of 1 trial(s) in B failed"},
        ] == builtins(result.new_failures)

    def test_min_delta_is_the_threshold_without_a_ci(self, dirs):
        """With --min-delta 2.5 the +2 SGR of t4 (no CI) no longer counts; CI-based findings are unchanged."""
        result = compare_sweeps(*dirs, min_delta=2.5)
        assert ([("t1", "ars"), ("t4", "checks")], [("t2", "ars")]) == (
            [(f.task, f.metric) for f in result.regressions], [(f.task, f.metric) for f in result.improvements])

    def test_one_side_only_is_listed_not_compared(self, dirs):
        """Tasks and models on one side only are named; only shared tasks are compared."""
        result = compare_sweeps(*dirs)
        [model] = result.models
        assert ([], ["m2"], ["t5"], ["t6"], ["t1", "t2", "t3", "t4"]) == (
            result.models_only_in_a, result.models_only_in_b, model.tasks_only_in_a, model.tasks_only_in_b,
            [t.task_id for t in model.tasks])


class TestCells:
    def test_a_paired_cell_leaves_infrastructure_errors_out(self, dirs):
        """t1: ARS is the mean over both judges (4 and 5 → 4.5); B's rate-limit error is counted apart, not a trial,
        so both sides have trials 0 and 1 and the interval is paired."""
        t1 = compare_sweeps(*dirs).models[0].tasks[0]
        assert {"task_id": "t1", "task_type": "planning",
                "a": {"trials": 2, "errors": 0, "infra_errors": 0, "passed": 2, "failed": 0},
                "b": {"trials": 2, "errors": 0, "infra_errors": 1, "passed": 2, "failed": 0},
                "ars": {"a": 4.5, "b": 2.5, "delta": -2.0, "ci": {"low": -2.0, "high": -2.0}, "ci_kind": "paired"},
                "sgr": {"a": 3.0, "b": 3.0, "delta": 0.0, "ci": {"low": 0.0, "high": 0.0}, "ci_kind": "paired"},
                "checks": {"a": 1.0, "b": 1.0, "delta": 0.0, "ci": {"low": 0.0, "high": 0.0}, "ci_kind": "paired"},
                } == builtins(t1)

    def test_different_trial_indices_give_an_unpaired_interval_and_an_error_has_no_scores(self, dirs):
        """t2 has trials 0–1 in A and 0–2 in B: unpaired. t3's only B trial is an error: no B value, no delta."""
        _, t2, t3, _ = compare_sweeps(*dirs).models[0].tasks
        assert ("unpaired", 3, {"a": 4.0, "b": None, "delta": None, "ci": None, "ci_kind": None}) == (
            t2.ars.ci_kind, t2.b.trials, builtins(t3.ars))
        assert {"trials": 1, "errors": 1, "infra_errors": 0, "passed": 0, "failed": 1} == builtins(t3.b)


class TestOverTasks:
    def test_per_model_paired_difference_over_tasks(self, dirs):
        """As the summary pairs two models: over the task × trial pairs both scored, the interval resampling tasks.
        ARS: t1 trials 0, 1: 4.5 → 2.5 twice; t2 trials 0, 1: 2 → 4 twice (B's trial 2 has no A); t4: 4 → 4 (t3 has
        no B value): 5 pairs, -2, -2, +2, +2, 0; the tasks' means -2, +2, 0 resampled with weights 2, 2, 1."""
        model = compare_sweeps(*dirs).models[0]
        ci = bootstrap_mean_ci([-2.0, 2.0, 0.0], weights=[2, 2, 1])
        assert ci is not None
        assert {"a": 3.5, "b": 3.5, "paired": {"n": 5, "mean_diff": 0.0, "ci": {"low": round(ci.low, 4),
                "high": round(ci.high, 4)}, "wins": 2, "losses": 2, "ties": 1, "sign_p": 1.0}} == builtins(model.ars)
        # checks: t4's only pair 100% → 50%; the other four pairs stay at 100%
        assert (5, 1.0, 0.8333, -0.1, 0, 1, 4) == (model.checks.paired.n, model.checks.a, model.checks.b,
                                                    model.checks.paired.mean_diff, model.checks.paired.wins,
                                                    model.checks.paired.losses, model.checks.paired.ties)


class TestUnpairedInterval:
    def test_matches_a_plain_loop_over_the_same_draws(self):
        """Each resample draws A's indices, then B's, from one seeded generator; percentile of the differences."""
        a, b = [1.0, 2.0, 4.0], [3.0, 5.0, 4.0, 6.0]
        rng = np.random.default_rng(0)
        draws_a = rng.integers(0, len(a), size=(2000, len(a)))
        draws_b = rng.integers(0, len(b), size=(2000, len(b)))
        diffs = sorted(sum(b[j] for j in draws_b[i]) / len(b) - sum(a[j] for j in draws_a[i]) / len(a)
                       for i in range(2000))
        low, high = np.quantile(diffs, [0.025, 0.975])
        ci = _unpaired_ci(a, b, 0.95)
        assert (pytest.approx(low), pytest.approx(high)) == (ci.low, ci.high)
        assert ci.low < 18 / 4 - 7 / 3 < ci.high  # the observed difference lies inside

    def test_constant_sides_give_a_point_interval(self):
        assert Interval(low=2.0, high=2.0) == _unpaired_ci([2.0, 2.0], [4.0, 4.0, 4.0], 0.95)


class TestMarkdown:
    def test_exact_lines(self, dirs):
        """The findings, the per-model table and the per-task rows, as printed."""
        text = render_markdown(compare_sweeps(*dirs))
        lines = text.splitlines()
        assert lines[:4] == ["# Sweep comparison", "", f"A: `{dirs[0]}`  ", f"B: `{dirs[1]}`"]
        expected = """## Regressions (2)

- `m` / `t1` ARS: 4.50 → 2.50 (-2.00; 95% CI [-2.00, -2.00] excludes 0)
- `m` / `t4` checks: 100.0% → 50.0% (-50.0 pp; checks passed → failed, no CI)

## Improvements (2)

- `m` / `t2` ARS: 2.00 → 4.00 (+2.00; 95% CI [2.00, 2.00] excludes 0)
- `m` / `t4` SGR: 2.00 → 4.00 (+2.00; rise ≥ 1, no CI)

## New failures (2)

- `m` / `t3`: ok → error (1 of 1 trial(s) in B ended in an error)
- `m` / `t4`: passed → failed (1 of 1 trial(s) in B failed)
"""
        assert expected in text
        assert ("| checks | 5 | 100.0% | 83.3% | -10.0 pp | [-50.0, 0.0] pp | 0 / 1 / 4 | 1.000 |" in lines)
        assert ("| t1 | planning | 2 / 2 (+0 / 1 infra, left out) | 0 / 0 | 4.50 → 2.50 | -2.00 [-2.00, -2.00] | "
                "3.00 → 3.00 | +0.00 [0.00, 0.00] | 100.0% → 100.0% | +0.0 pp [0.0, 0.0] |") in lines
        assert ("| t2 | planning | 2 / 3 | 0 / 0 | 2.00 → 4.00 | +2.00 [2.00, 2.00] unpaired | 3.00 → 3.00 | "
                "+0.00 [0.00, 0.00] unpaired | 100.0% → 100.0% | +0.0 pp [0.0, 0.0] unpaired |") in lines
        assert "| t3 | planning | 1 / 1 | 0 / 1 | 4.00 → – | – | 4.00 → – | – | 100.0% → – | – |" in lines
        assert lines[-9:] == ["Tasks only in A: `t5`  ", "Tasks only in B: `t6`", "",
                              "## On one side only (not compared)", "", "Agent models only in A: (none)  ",
                              "Agent models only in B: `m2`  ", "Tariff reports only in A: (none)  ",
                              "Tariff reports only in B: (none)"]


class TestJudgeErrorsFromLabels:
    def test_a_regression_people_labelled_as_a_judge_error_says_so(self, dirs, tmp_path):
        """B's t1 ARS regression (judges 2 and 3): a person scored b-t1-0 at 5, so j1 is 3 points off and j2 2 —
        both judge errors; b-t1-1 labelled 3 is within one point of both. t2's improvement has no label: no note."""
        from mpcbench_async.compare import finding_line
        from mpcbench_async.labels import Label, append_labels

        _, b = dirs
        ars = "axis:answer_requirements_satisfaction"
        append_labels(b, [Label(run_key="b-t1-0", item=ars, value=5, annotator="Ada", at="t"),
                          Label(run_key="b-t1-1", item=ars, value=3, annotator="Ada", at="t")])
        result = compare_sweeps(*dirs)
        regression = next(f for f in result.regressions if (f.task, f.metric) == ("t1", "ars"))
        assert "B b-t1-0 trial 0: j1 2, human 5; B b-t1-0 trial 0: j2 3, human 5" == regression.judge_error
        assert finding_line(regression).endswith(
            "— judge error, as people labelled it: B b-t1-0 trial 0: j1 2, human 5; B b-t1-0 trial 0: j2 3, human 5")
        assert "judge_error" not in builtins(next(f for f in result.improvements if f.task == "t2"))
        assert "judge error, as people labelled it" in render_markdown(result)
