"""The reader's packed columns are as narrow as the sweep's values allow (names' numbers and check counts in 2
bytes, trials in 4), and a value that does not fit widens its column alone with every row kept: never wrong, never an
error (``_reading.Packed.write``)."""

from __future__ import annotations

from mpcbench_async.sweep._reading import Reader, Runs
from mpcbench_async.sweep._statistics import statistics, statistics_of
from mpcbench_async.sweep._table import kept_runs

from .summary_lines import judgement, run, write


def test_a_name_number_past_65535_and_a_trial_past_2_31_widen_their_columns(tmp_path):
    """70,000 distinct error classes (each a name number) and a trial of 2^31 + 5: the error class column becomes 4-byte
    the trial column 8-byte, and every kept row reads as written; the statistics of the columns still equal the
    rows'."""
    records = [run(f"run-{n:06d}", task="t1", trial=n, status="error", error_class=f"E{n}", error_message="x")
               for n in range(70_000)]
    records += [run("run-big", task="t2", trial=2**31 + 5, checks="pp"), run("run-neg", task="t2", trial=-3,
                                                                             checks="pf")]
    write(tmp_path / "runs.jsonl", *records)
    write(tmp_path / "judgements.jsonl", judgement("judge-big", "run-big", ars=5, sgr=4))
    reader = Reader(tmp_path)
    runs = reader.runs()
    assert isinstance(runs, Runs)
    assert (runs.error_n.typecode, runs.model_n.typecode, runs.trial.typecode, runs.checks_passed.typecode) == \
        ("i", "H", "q", "H")  # each column as its own values need
    assert [(runs["run-000000"].error_class, runs["run-069999"].error_class, runs["run-069999"].trial),
            (runs["run-big"].trial, runs["run-big"].checks_passed, runs["run-neg"].trial)] == \
        [("E0", "E69999", 69_999), (2**31 + 5, 2, -3)]
    judges = reader.judgements(runs)
    assert statistics(kept_runs(tmp_path)) == statistics_of(runs, judges)


def test_a_rewritten_slot_widens_too(tmp_path):
    """A key's later ok record replaces its earlier error in place: a check count past 65,535 there widens it."""
    write(tmp_path / "runs.jsonl", run("run-a", status="error", error_class="E", error_message="x"),
          run("run-a", checks="p" * 70_000))
    runs = Reader(tmp_path).runs()
    assert (runs.checks_applied.typecode, runs["run-a"].checks_applied, runs["run-a"].ok) == ("i", 70_000, True)


def test_a_run_scored_past_65535_widens_its_ars_columns(tmp_path):
    """66,000 scored judgements of one run (a keyless directory keeps each: their keys differ): its ARS sum and
    count pass 65,535 and their columns widen, both read as counted."""
    write(tmp_path / "runs.jsonl", run("run-a", checks="p"))
    write(tmp_path / "judgements.jsonl", *(judgement(f"judge-{n}", "run-a", ars=1) for n in range(66_000)))
    reader = Reader(tmp_path)
    runs = reader.runs()
    reader.judgements(runs)
    assert (runs.ars_total.typecode, runs.ars_n.typecode, runs["run-a"].ars_total, runs["run-a"].ars_n) == \
        ("i", "i", 66_000, 66_000)
