"""The statistics from streamed rows (``iter_run_rows(..., ordered=True)``, what ``summarize`` feeds them, one row
at a time) equal the statistics of the sorted list (``kept_runs``): the memory saving changes no value."""

from __future__ import annotations

from collections.abc import Iterator

from mpcbench_async.sweep import RunRow, iter_run_rows, kept_runs
from mpcbench_async.sweep._reading import Reader
from mpcbench_async.sweep._statistics import statistics

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
