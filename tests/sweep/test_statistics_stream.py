"""The statistics from streamed rows (``iter_run_rows(..., ordered=True)``, what ``summarize`` feeds them, one row
at a time) equal the statistics of the sorted list (``kept_runs``): the memory saving changes no value."""

from __future__ import annotations

import random
from collections.abc import Iterator

from mpcbench_async.sweep import RunRow, iter_run_rows, kept_runs
from mpcbench_async.sweep._reading import Reader
from mpcbench_async.sweep._statistics import statistics, statistics_of

from .summary_lines import judgement, run, write
from .test_summary_stats import _write_sweep


def _stream(tmp_path) -> Iterator[RunRow]:
    reader = Reader(tmp_path)
    runs = reader.runs()
    return iter_run_rows(runs, reader.judgements(runs), ordered=True)


def test_ordered_rows_come_in_kept_runs_order(tmp_path):
    _write_sweep(tmp_path)
    rows = kept_runs(tmp_path)
    assert len(rows) > 10
    assert rows == list(_stream(tmp_path))


def test_statistics_of_a_one_shot_stream_equal_those_of_the_list(tmp_path):
    _write_sweep(tmp_path)
    streamed = statistics(_stream(tmp_path))
    assert statistics(kept_runs(tmp_path)) == streamed
    assert streamed.models and streamed.paired and streamed.judge_agreement and streamed.judge_spread


def test_statistics_of_the_reader_columns_equal_those_of_the_rows(tmp_path):
    """The summary's statistics read the reader's columns where they lie (``statistics_of``): the same values as
    the rows' statistics, with two agent models (paired differences) and two judges (agreement, spread, means)."""
    _write_sweep(tmp_path)
    reader = Reader(tmp_path)
    runs = reader.runs()
    columns = statistics_of(runs, reader.judgements(runs))
    assert statistics(kept_runs(tmp_path)) == columns
    assert len(columns.models) >= 2 and columns.paired and columns.judge_agreement and columns.judge_spread


def test_statistics_of_the_columns_equal_the_rows_with_three_judges_and_redone_judgements(tmp_path):
    """Seeded: 3 agent models × 4 tasks × 7 trials, runs in shuffled order (the columns' order is not the rows'),
    each judged by up to three judges (means like 11/3, whose float sums depend on their order), some unscored or
    failed, some runs judged twice by one judge (a keyless directory keeps both: the rows take the later), some
    runs failed. Every statistic of the columns equals the rows'."""
    rng = random.Random(7)
    units = [(m, t, n) for m in "abc" for t in ("t1", "t2", "t3", "t4") for n in range(7)]
    rng.shuffle(units)
    runs, judgements = [], []
    for model, task, trial in units:
        key = f"run-{model}-{task}-{trial}"
        if rng.random() < 0.1:
            runs.append(run(key, model=model, task=task, trial=trial, status="error", error_class="AgentError",
                            retryable=rng.random() < 0.5, error_message="boom"))
            continue
        runs.append(run(key, model=model, task=task, trial=trial, checks=rng.choice(["", "p", "pf", "pp", "n"])))
        for judge in rng.sample(["j1", "j2", "j3"], rng.randint(0, 3)):
            for again in range(rng.choice([1, 1, 1, 2])):
                fate = rng.random()
                judgements.append(judgement(
                    f"judge-{key}-{judge}-{again}", key, model=model, judge=judge, sgr=rng.randint(0, 5),
                    ars=None if fate < 0.1 else rng.randint(0, 5), status="error" if fate > 0.92 else "ok",
                    error_class="JudgeError", error_message="x"))
    rng.shuffle(judgements)
    write(tmp_path / "runs.jsonl", *runs)
    write(tmp_path / "judgements.jsonl", *judgements)
    reader = Reader(tmp_path)
    kept = reader.runs()
    columns = statistics_of(kept, reader.judgements(kept))
    assert statistics(kept_runs(tmp_path)) == columns
    assert len(columns.models) == 3 and len(columns.paired) == 3 and len(columns.judge_agreement) == 3
