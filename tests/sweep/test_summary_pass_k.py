"""pass^k in the summary at k = 1, 2, 4, 8, … and K: a 1,000-trial sweep computes 11 values, not 1,000, and its
summary.md keeps every line readable; JSON readers (the viewer, compare) take what the summary holds."""

from __future__ import annotations

import math
import re

import orjson
import pytest

from mpcbench_async.compare import compare_paths
from mpcbench_async.report import render_markdown, render_table
from mpcbench_async.sweep import RunRow, _statistics, summarize, write_summary
from mpcbench_async.view._pages import leaderboard

from .summary_lines import judgement, run, write

TRIALS = 1_000
KS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000]


def _rows(tasks: int = 10, trials: int = TRIALS) -> list[RunRow]:
    """One model, ``tasks`` × ``trials`` runs; task i fails its first i trials."""
    return [RunRow(key=f"r{t}-{n}", agent_model="m", task_id=f"t{t}", task_type="planning", trial=n, status="ok",
                   infra_error=False, checks_passed=int(n >= t), checks_total=1, passed=n >= t,
                   scores={"j": [4.0, 3.0]}) for t in range(tasks) for n in range(trials)]


@pytest.fixture
def computed(monkeypatch):
    """The k of every pass^k value the summary's statistics compute from now on."""
    ks: list[int] = []
    real = _statistics.pass_hat_k

    def counting(counts, k):
        ks.append(k)
        return real(counts, k)

    monkeypatch.setattr(_statistics, "pass_hat_k", counting)
    return ks


def test_a_thousand_trials_compute_eleven_values(computed):
    """10 tasks × 1,000 trials: pass^k at k = 1, 2, 4, …, 512 and 1,000 — 11 values, each over the 10 tasks."""
    stats = _statistics.statistics(_rows()).models["m"]
    assert KS == computed
    assert [(k, 10) for k in KS] == [(p.k, p.tasks) for p in stats.pass_hat_k]
    expected = [round(sum(math.comb(TRIALS - t, k) / math.comb(TRIALS, k) for t in range(10)) / 10, 4) for k in KS]
    assert expected == [p.value for p in stats.pass_hat_k]  # tau-bench's C(c, k) / C(n, k), task t passing n − t


def test_the_ks_can_be_named(computed):
    """Named ks are reported as asked, those above every task's trial count left out."""
    stats = _statistics.statistics(_rows(trials=6), pass_k=[3, 1, 5, 7]).models["m"]
    assert [1, 3, 5] == computed == [p.k for p in stats.pass_hat_k]


def test_models_with_different_trial_counts_share_the_columns(tmp_path):
    """a ran 2 trials, b 5: one column per k either reports (1, 2, 4, 5); a's cells beyond its trials are –."""
    runs = [run(f"run-{m}-{n}", model=m, trial=n, checks="p") for m, trials in (("a", 2), ("b", 5))
            for n in range(trials)]
    write(tmp_path / "runs.jsonl", *runs)
    summary = summarize(tmp_path)
    assert [[1, 2], [1, 2, 4, 5]] == [[p.k for p in m.stats.pass_hat_k] for m in summary.models]
    assert ("| agent model | checked/tasks | ARS | SGR | checks | pass^1 | pass^2 | pass^4 | pass^5 | var ARS "
            "| var SGR |"
            in render_markdown(summary))
    assert "| a | 1/1 | – | – | 100% | 100% | 100% | – | – | – | – |" in render_markdown(summary)


@pytest.fixture(scope="module")
def long_sweep(tmp_path_factory):
    """Two tasks × 1,000 judged trials of one agent model, written as the runner writes them."""
    out = tmp_path_factory.mktemp("long_sweep")
    runs, judgements = [], []
    for task in ("t1", "t2"):
        for trial in range(TRIALS):
            key = f"run-{task}-{trial}"
            runs.append(run(key, model="agent-model", task=task, trial=trial, checks="p" if trial % 7 else "f"))
            judgements.append(judgement(f"judge-{key}", key, model="agent-model", judge="judge-model"))
    write(out / "runs.jsonl", *runs)
    write(out / "judgements.jsonl", *judgements)
    write_summary(out)
    return out


def test_summary_md_lines_stay_readable(long_sweep):
    """With 1,000 trials no line of summary.md passes 200 characters (it was 10,957) and no paragraph line 100;
    the terminal table's lines stay under 200 too."""
    lines = (long_sweep / "summary.md").read_text(encoding="utf-8").splitlines()
    assert max(len(line) for line in lines) <= 200
    assert max(len(line) for line in lines if not line.startswith("|")) <= 100
    assert max(len(line) for line in render_table(summarize(long_sweep)).splitlines()) <= 200
    header = next(line for line in lines if line.startswith("| agent model | checked/tasks |"))
    assert [f"pass^{k}" for k in KS] == [cell.strip() for cell in header.split("|") if "pass^" in cell]


def test_json_readers_take_the_reported_ks(long_sweep, tmp_path):
    """summary.json lists the reported ks; the viewer's leaderboard shows those columns; compare still runs."""
    data = orjson.loads((long_sweep / "summary.json").read_bytes())
    assert KS == [p["k"] for p in data["models"][0]["stats"]["pass_hat_k"]]
    board = leaderboard(summarize(long_sweep))
    assert KS == [int(k) for k in re.findall(r'class="num pass-k" data-k="(\d+)"', board)]
    result = compare_paths(long_sweep, long_sweep)
    assert ([], []) == (result.regressions, result.new_failures)


def test_summarize_takes_the_ks_from_the_command_line(tmp_path, capsys):
    """``summarize DIR --pass-k 1,3,9`` writes pass^1 and pass^3 for 5 trials (9 is above them)."""
    from mpcbench_async.cli import main

    write(tmp_path / "runs.jsonl", *(run(f"run-{n}", trial=n, checks="p") for n in range(5)))
    assert 0 == main(["summarize", str(tmp_path), "--pass-k", "1,3,9"])
    data = orjson.loads((tmp_path / "summary.json").read_bytes())
    assert [1, 3] == [p["k"] for p in data["models"][0]["stats"]["pass_hat_k"]]
    assert " pass^1 pass^3 " in capsys.readouterr().out
