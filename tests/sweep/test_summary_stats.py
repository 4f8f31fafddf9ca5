"""The summary's statistics on a sweep with known scores: every value against an independent computation
(hand-worked means, scipy's bootstrap and binomial test, brute-force pass^k, a closed-form kappa), and the
summary is byte-stable for the same files."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats

from mpcbench_async.report import render_markdown, render_table
from mpcbench_async.sweep import summarize

from .summary_lines import judgement, run, write

# (model, task, trial) -> checks, {judge: (ARS, SGR) | None (unscored)}; "infra" / "error" for failed runs
SWEEP = {
    ("a", "t1", 0): ("pp", {"j1": (4, 3), "j2": (5, 3)}),
    ("a", "t1", 1): ("pf", {"j1": (3, 2), "j2": (3, 4)}),
    ("a", "t2", 0): ("ff", {"j1": (2, 2), "j2": (2, 1)}),
    ("a", "t2", 1): "infra",
    ("a", "t3", 0): ("", {"j1": (5, 5), "j2": (4, 5)}),
    ("a", "t3", 1): ("", {"j1": (5, 4), "j2": None}),
    ("b", "t1", 0): ("pp", {"j1": (5, 4), "j2": (5, 5)}),
    ("b", "t1", 1): ("pp", {"j1": (4, 4), "j2": (5, 4)}),
    ("b", "t2", 0): ("pf", {"j1": (3, 3), "j2": (2, 3)}),
    ("b", "t2", 1): ("pp", {"j1": (3, 2), "j2": (3, 3)}),
    ("b", "t3", 0): "error",
    ("b", "t3", 1): ("", {"j1": (4, 4), "j2": (4, 3)}),
}


def _write_sweep(path, sweep=SWEEP):
    runs, judgements = [], []
    for (model, task, trial), spec in sweep.items():
        key = f"run-{model}-{task}-{trial}"
        if spec == "infra":
            runs.append(run(key, model=model, task=task, trial=trial, status="error", retryable=True,
                            error_class="RateLimitError", error_message="429"))
        elif spec == "error":
            runs.append(run(key, model=model, task=task, trial=trial, status="error", error_class="AgentError",
                            error_message="boom"))
        else:
            checks, scores = spec
            runs.append(run(key, model=model, task=task, trial=trial, checks=checks))
            for judge, given in scores.items():
                ars, sgr = given if given is not None else (None, 0)
                judgements.append(judgement(f"judge-{key}-{judge}", key, model=model, judge=judge, ars=ars, sgr=sgr))
    write(path / "runs.jsonl", *runs)
    write(path / "judgements.jsonl", *judgements)


def _ci(values, weights=None, seed=0):
    """The 95% percentile bootstrap of the (weighted) mean, resampling with numpy's Generator in a plain loop."""
    values, weights = np.asarray(values, float), np.ones(len(values)) if weights is None else np.asarray(weights)
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(2000):
        drawn = rng.integers(0, len(values), size=len(values))
        stats.append((values[drawn] * weights[drawn]).sum() / weights[drawn].sum())
    return round(float(np.percentile(stats, 2.5)), 4), round(float(np.percentile(stats, 97.5)), 4)


def _pass_hat(tasks, k):
    """Brute force: per task with ≥ k trials, the share of its k-subsets of trials that all passed."""
    shares = [np.mean([all(c) for c in itertools.combinations(t, k)]) for t in tasks if len(t) >= k]
    return round(float(np.mean(shares)), 4)


@pytest.fixture
def summary(tmp_path):
    _write_sweep(tmp_path)
    return summarize(tmp_path)


class TestOverTasks:
    def test_judge_axes_are_means_of_task_means_with_bootstrap_cis(self, summary):
        """a: a run's score is the mean over its judges, a task's the mean over its scored trials —
        ARS t1 (4.5 + 3)/2, t2 2, t3 (4.5 + 5)/2; SGR t1 3, t2 1.5, t3 (5 + 4)/2."""
        a, b = (m.stats for m in summary.models)
        assert (3, 3.5, 3, 3.0) == (a.ars.tasks, a.ars.mean, a.sgr.tasks, a.sgr.mean)
        assert (a.ars.ci.low, a.ars.ci.high) == _ci([3.75, 2, 4.75])
        assert (a.sgr.ci.low, a.sgr.ci.high) == _ci([3, 1.5, 4.5])
        assert (round(11.5 / 3, 4), 3.5) == (b.ars.mean, b.sgr.mean)  # t3's errored trial has no score
        assert (b.ars.ci.low, b.ars.ci.high) == _ci([4.75, 2.75, 4])

    def test_same_as_scipy_bootstrap(self, summary):
        ref = scipy.stats.bootstrap((np.array([3.75, 2, 4.75]),), np.mean, n_resamples=2000, method="percentile",
                                    rng=np.random.default_rng(0)).confidence_interval
        ci = summary.models[0].stats.ars.ci
        assert (round(ref.low, 4), round(ref.high, 4)) == (ci.low, ci.high)

    def test_check_rate_is_pooled_with_a_ci_over_tasks(self, summary):
        """a: t1 passed 3 of 4 checks, t2 0 of 2, t3 had none: 3/6, resampled by task with its checks."""
        a, b = (m.stats.check_rate for m in summary.models)
        assert (2, 0.5, 0.5) == (a.tasks, a.mean, summary.models[0].check_pass_rate)
        assert (a.ci.low, a.ci.high) == _ci([3 / 4, 0 / 2], weights=[4, 2])
        assert (2, 0.875) == (b.tasks, b.mean)
        assert (b.ci.low, b.ci.high) == _ci([4 / 4, 3 / 4], weights=[4, 4])

    def test_pass_hat_k_leaves_out_infrastructure_errors(self, summary):
        """a: t1 [pass, fail], t2 [fail] (its infra error is no trial), t3 unverified (no check applied: no trial,
        whatever its ARS); b: t1 [pass, pass], t2 [fail, pass], t3 [error = fail] (its other trial is unverified)."""
        a_tasks = [[True, False], [False]]
        b_tasks = [[True, True], [False, True], [False]]
        a, b = (m.stats.pass_hat_k for m in summary.models)
        assert [(1, 2, _pass_hat(a_tasks, 1)), (2, 1, _pass_hat(a_tasks, 2))] == [(p.k, p.tasks, p.value) for p in a]
        assert [(1, 3, _pass_hat(b_tasks, 1)), (2, 2, _pass_hat(b_tasks, 2))] == [(p.k, p.tasks, p.value) for p in b]
        assert [0.25, 0.0, 0.5, 0.5] == [p.value for p in a + b]
        first = summary.models[0]
        assert (1, 0.0, 3, 2, 2) == (first.k, first.pass_at_k, first.tasks, first.tasks_checked, first.unverified)

    def test_trial_variance(self, summary):
        """a: t1 ARS var(4.5, 3) = 1.125, SGR var(3, 3) = 0; t3 ARS var(4.5, 5) = 0.125, SGR var(5, 4) = 0.5."""
        a, b = (m.stats.trial_variance for m in summary.models)
        assert (2, 0.625, 0.25) == (a.tasks, a.ars, a.sgr)
        assert (2, 0.125, 0.125) == (b.tasks, b.ars, b.sgr)


class TestPaired:
    def test_b_minus_a_on_the_same_task_and_trial(self, summary):
        """Cells both scored: (t1, 0), (t1, 1), (t2, 0), (t3, 1); a's t2/1 was an infra error, b's t3/0 an error."""
        [pair] = summary.paired
        ars = [5 - 4.5, 4.5 - 3, 2.5 - 2, 4 - 5]
        sgr = [4.5 - 3, 4 - 3, 3 - 1.5, 3.5 - 4]
        assert ("a", "b") == (pair.model_a, pair.model_b)
        for paired, diffs in ((pair.ars, ars), (pair.sgr, sgr)):
            assert (4, round(float(np.mean(diffs)), 4), 3, 1, 0) == (
                paired.n, paired.mean_diff, paired.wins, paired.losses, paired.ties)
            assert scipy.stats.binomtest(3, 4).pvalue == pytest.approx(paired.sign_p, rel=1e-12)

    def test_the_ci_resamples_tasks(self, summary):
        """Tasks t1 (two cells), t2, t3 are drawn whole; each resample's statistic is the mean of its cells."""
        diffs = {"t1": [0.5, 1.5], "t2": [0.5], "t3": [-1.0]}
        members = list(diffs.values())
        rng = np.random.default_rng(0)
        means = []
        for _ in range(2000):
            drawn = [d for g in rng.integers(0, 3, size=3) for d in members[g]]
            means.append(np.mean(drawn))
        ci = summary.paired[0].ars.ci
        assert (round(float(np.percentile(means, 2.5)), 4), round(float(np.percentile(means, 97.5)), 4)) == (
            ci.low, ci.high)


class TestJudges:
    def test_agreement_against_a_closed_form_kappa_and_scipy_spearman(self, summary):
        """The 9 runs both judges scored (a's t3/1 was left unscored by j2)."""
        both = [((4, 3), (5, 3)), ((3, 2), (3, 4)), ((2, 2), (2, 1)), ((5, 5), (4, 5)), ((5, 4), (5, 5)),
                ((4, 4), (5, 4)), ((3, 3), (2, 3)), ((3, 2), (3, 3)), ((4, 4), (4, 3))]
        [pair] = summary.judge_agreement
        assert ("j1", "j2", 9) == (pair.judge_a, pair.judge_b, pair.n)
        for axis, agreement in enumerate((pair.ars, pair.sgr)):
            x = np.array([s1[axis] for s1, _ in both], float)
            y = np.array([s2[axis] for _, s2 in both], float)
            kappa = 2 * np.cov(x, y, bias=True)[0, 1] / (x.var() + y.var() + (x.mean() - y.mean()) ** 2)
            assert round(float(kappa), 4) == agreement.kappa
            assert round(float(scipy.stats.spearmanr(x, y).statistic), 4) == agreement.spearman

    def test_spread(self, summary):
        """max − min per run over the 9 runs with two scores: ARS 1,0,0,1,0,1,1,0,0; SGR 0,2,1,0,1,0,0,1,1."""
        spread = summary.judge_spread
        assert (9, round(4 / 9, 4), 1.0, round(6 / 9, 4), 2.0) == (
            spread.runs, spread.ars.mean, spread.ars.max, spread.sgr.mean, spread.sgr.max)


class TestRendering:
    def test_terminal_tables(self, summary):
        a, b = summary.models[0].stats, summary.models[1].stats
        table = render_table(summary)
        ci = f"{a.ars.mean:.2f} [{a.ars.ci.low:.2f}, {a.ars.ci.high:.2f}]"
        assert ci == "3.50 [2.00, 4.75]"
        lines = table.splitlines()
        start = lines.index("agent model checked/tasks               ARS               SGR          checks pass^1 "
                            "pass^2 var ARS var SGR")
        assert [f"a                     2/3 {ci} 3.00 [1.50, 4.50]   50% [0%, 75%]    25%     0%    0.62    0.25",
                "b                     3/3 3.83 [2.75, 4.75] 3.50 [2.75, 4.25] 88% [75%, 100%]    50%    50%    "
                "0.12    0.12",
                ] == lines[start + 2:start + 4]
        assert b.check_rate.mean == 0.875
        pair = summary.paired[0]
        assert f"a b ARS  4 +0.38 [{pair.ars.ci.low:+.2f}, {pair.ars.ci.high:+.2f}]    3      1    0 0.625" in lines
        assert "a b SGR  4 +0.88 [-0.50, +1.50]    3      1    0 0.625" in lines
        assert "j1      j2      9  0.80  0.82  0.64  0.63" in lines
        assert ("judge spread (max − min of a run's scores, over the 9 runs scored by two judges or more): ARS mean "
                "0.44, max 1; SGR mean 0.67, max 2") in " ".join(table.split("\n"))

    def test_markdown_sections(self, summary):
        markdown = render_markdown(summary)
        assert markdown.index("## Over tasks") < markdown.index("## Paired differences") < markdown.index(
            "## Judge agreement") < markdown.index("## By task type")
        assert ("| a | 2/3 | 3.50 [2.00, 4.75] | 3.00 [1.50, 4.50] | 50% [0%, 75%] | 25% | 0% | 0.62 | 0.25 |"
                in markdown)
        assert "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n" in markdown

    def test_sections_that_do_not_apply_are_left_out(self, tmp_path):
        """One agent model and one judge: no paired table, no agreement, no spread."""
        _write_sweep(tmp_path, {("a", "t1", 0): ("p", {"j1": (4, 4)}), ("a", "t2", 0): ("f", {"j1": (2, 3)})})
        summary = summarize(tmp_path)
        assert ([], [], None) == (summary.paired, summary.judge_agreement, summary.judge_spread)
        table, markdown = render_table(summary), render_markdown(summary)
        assert "Over tasks:" in table and "## Over tasks" in markdown
        for absent in ("Paired differences", "Judge agreement", "judge spread"):
            assert absent not in table and absent not in markdown

    def test_a_single_task_has_no_interval(self, tmp_path):
        _write_sweep(tmp_path, {("a", "t1", 0): ("p", {"j1": (4, 4)})})
        stats = summarize(tmp_path).models[0].stats
        assert (1, 4.0, None) == (stats.ars.tasks, stats.ars.mean, stats.ars.ci)
        assert "a                     1/1 4.00 4.00   100%   100%       –       –" in render_table(summarize(tmp_path))


def test_summary_files_are_byte_stable(tmp_path):
    """``summarize`` twice over the same files writes the same summary.json and summary.md, byte for byte."""
    _write_sweep(tmp_path)
    outputs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "mpcbench_async", "summarize", str(tmp_path)],
                              capture_output=True, text=True)
        assert 0 == done.returncode, done.stderr
        outputs.append(((tmp_path / "summary.json").read_bytes(), (tmp_path / "summary.md").read_bytes(),
                        done.stdout))
    assert outputs[0] == outputs[1]
    assert b'"paired": [' in outputs[0][0] and b'"pass_hat_k": [' in outputs[0][0]
