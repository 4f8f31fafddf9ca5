"""The published table, honestly (issue 23, point 6): what the recorded files hold, beside the published cells."""

from __future__ import annotations

from pathlib import Path

from mpcbench_async.levels import level_rows, read_results, render_levels_table, scored_results
from mpcbench_async.levels._stats import PUBLISHED, ScoredRun


def _runs(results: list[Path]) -> list[ScoredRun]:
    return [run for path in results for run in scored_results(path, [line for _, line in read_results(path)])]


def test_the_recorded_level_1_exp1_file_holds_five_instances_at_0_90_and_80_percent(results):
    """L1 GPT-4o is published as 0.84 / 70%; the committed exp1 file holds 5 instances at 0.90 / 80%, which cannot
    be a 70% EM rate (that needs a multiple of 10 instances)."""
    rows = {(r.level, r.split): r for r in level_rows(_runs(results))}
    l1 = rows[(1, "exp1")]
    assert (l1.model, l1.instances, l1.runs, round(l1.mean_f1, 4), l1.em_rate) == ("gpt-4o", 5, 5, 0.9, 0.8)
    assert (l1.published_f1, l1.published_em) == (0.84, 0.70)
    assert l1.supports_published == "cannot support: EM 70% needs a multiple of 10 instances, these runs hold 5"
    assert l1.f1_ci is not None and l1.f1_ci[0] <= 0.9 <= l1.f1_ci[1]


def test_repeated_runs_of_one_instance_are_trials_for_pass_k(results):
    """The five February level-3 exp1 files run the same five instances: 25 runs, five trials per instance; pass^k
    for k = 1, 2, 4 and 5 (the most trials), or for every k asked for."""
    rows = {(r.level, r.split): r for r in level_rows(_runs(results))}
    l3 = rows[(3, "exp1")]
    assert (l3.instances, l3.runs) == (5, 25)
    assert list(l3.pass_k) == ["pass^1", "pass^2", "pass^4", "pass^5"]
    assert l3.pass_k["pass^1"] == l3.em_rate == 0.08
    assert l3.pass_k["pass^5"] == 0.0
    every = {(r.level, r.split): r for r in level_rows(_runs(results), pass_k=range(1, 9))}[(3, "exp1")]
    assert list(every.pass_k) == ["pass^1", "pass^2", "pass^3", "pass^4", "pass^5"]
    assert {k: v for k, v in every.pass_k.items() if k != "pass^3"} == l3.pass_k


def test_the_table_prints_published_beside_measured_and_names_the_cells_without_runs(results):
    """Every measured row shows its published cell; o4-mini and GPT-5, with no recorded runs, are listed as
    unsupported."""
    table = render_levels_table(level_rows(_runs(results)))
    assert "| 1 | gpt-4o | exp1 | 5 | 5 | 0.90 [" in table
    assert "| 0.84 / 70% | cannot support" in table
    for level in (1, 2, 3):
        for model in ("o4-mini", "gpt-5"):
            p = PUBLISHED[(level, model)]
            assert f"- L{level} {model}: F1 {p.f1:.2f}, EM {p.em:.0%}" in table
    assert "- L1 gpt-4o" not in table


def test_model_names_with_provider_prefixes_and_dates_find_their_published_cell():
    """``openai/gpt-4o-2024-08-06`` is GPT-4o of the published table; an unknown model has no cell."""
    runs = [ScoredRun(instance_id=f"i{n}", level=1, split="s", model=model, f1=1.0, exact_match=True)
            for n in range(10) for model in ("openai/gpt-4o-2024-08-06", "acme/other")]
    rows = {r.model: r for r in level_rows(runs)}
    assert rows["openai/gpt-4o-2024-08-06"].published_f1 == 0.84
    assert rows["openai/gpt-4o-2024-08-06"].supports_published == "differs (published F1 outside the CI)"
    assert rows["acme/other"].published_f1 is None


def test_current_only_keeps_the_lines_whose_world_matches(results, upstream, capsys):
    """``levels summary --current-only``: the older-world runs leave the table; level 3 over both splits is then 10
    instances at F1 0.20 and EM 10%, the published 0.22 / 10% inside its CI."""
    from mpcbench_async.cli import main

    assert 0 == main(["levels", "summary", *map(str, results), "--current-only", "--data", str(upstream)])
    out = capsys.readouterr().out
    [l3] = [line for line in out.splitlines() if line.startswith("| 3 | gpt-4o | all |")]
    assert l3.startswith("| 3 | gpt-4o | all | 10 | 10 | 0.20 [")
    assert l3.endswith("| 10% | pass^1 0.10 | 0.22 / 10% | consistent (published F1 inside the CI) |")
    assert "| 2 | gpt-4o | exp1 | 5 | 5 | 0.70 [" in out


def test_a_thousand_trials_compute_eleven_pass_k_values(monkeypatch):
    """One instance run 1,000 times: pass^k at k = 1, 2, 4, …, 512 and 1,000 — 11 values, not 1,000."""
    from mpcbench_async.levels import _stats

    computed: list[int] = []
    real = _stats.pass_hat_k
    monkeypatch.setattr(_stats, "pass_hat_k", lambda trials, k: computed.append(k) or real(trials, k))
    runs = [ScoredRun(instance_id="i1", level=1, split="s", model="m", f1=1.0, exact_match=n % 10 != 0)
            for n in range(1000)]
    [row] = level_rows(runs)
    ks = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000]
    assert ks == computed
    assert [f"pass^{k}" for k in ks] == list(row.pass_k)
