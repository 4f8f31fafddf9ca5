"""labels.jsonl: appended whole under a lock, read back with the latest label per item winning and history kept;
torn and foreign lines and labels of runs no longer kept are each reported, and nothing is lost."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import orjson
import pytest

from mpcbench_async.labels import Label, LabelSet, append_labels, label_problem, read_labels


def label(run_key: str, item: str, value: str | int, who: str = "ann", at: str = "2026-11-28T10:00:00.000Z",
          reason: str = "") -> Label:
    return Label(run_key=run_key, item=item, value=value, annotator=who, at=at, reason=reason)


def test_the_latest_label_per_item_wins_and_every_line_stays(tmp_path):
    append_labels(tmp_path, [label("run-a", "outcome", "wrong"), label("run-a", "axis:source_grounded_reasoning", 2)])
    append_labels(tmp_path, [label("run-a", "outcome", "correct", who="bo", reason="the slot is right")])
    labels = read_labels(tmp_path)
    assert (3, [], 0, 0) == (labels.lines, labels.problems, labels.torn_lines, labels.foreign_lines)
    assert {"run-a": {"outcome": label("run-a", "outcome", "correct", who="bo", reason="the slot is right"),
                      "axis:source_grounded_reasoning": label("run-a", "axis:source_grounded_reasoning", 2)}} \
        == labels.by_run()
    written = [orjson.loads(line) for line in (tmp_path / "labels.jsonl").read_bytes().splitlines()]
    assert ["wrong", 2, "correct"] == [w["value"] for w in written]
    assert {"run_key", "item", "value", "annotator", "at", "reason", "kind"} == set(written[0])


def test_no_labels_file_is_an_empty_set(tmp_path):
    assert LabelSet() == read_labels(tmp_path)


def test_a_torn_last_line_is_reported_and_the_next_append_stays_whole(tmp_path):
    append_labels(tmp_path, [label("run-a", "outcome", "wrong")])
    with (tmp_path / "labels.jsonl").open("ab") as fh:
        fh.write(b'{"run_key":"run-b","item":"outc')  # a viewer killed mid-write
    torn = read_labels(tmp_path)
    assert (1, 1, [f"{tmp_path / 'labels.jsonl'} line 2: torn (no newline at the end of the file: its write was cut "
                   "short): skipped"]) == (torn.lines, torn.torn_lines, torn.problems)
    append_labels(tmp_path, [label("run-c", "check:planning.slots_free", "right")])
    after = read_labels(tmp_path)
    assert (2, 0, 1) == (after.lines, after.torn_lines, after.foreign_lines)  # the torn line is a line of its own now
    assert [f"{tmp_path / 'labels.jsonl'} line 2: not a label (Input data was truncated): skipped"] == after.problems
    assert {"run-a", "run-c"} == set(after.by_run())


def test_foreign_lines_and_bad_values_are_each_reported_by_line(tmp_path):
    (tmp_path / "labels.jsonl").write_bytes(
        b'{"key":"run-1","status":"ok"}\n'
        + orjson.dumps({"run_key": "run-a", "item": "outcome", "value": "great", "annotator": "a", "at": "t"}) + b"\n"
        + orjson.dumps({"run_key": "run-a", "item": "axis:answer_requirements_satisfaction", "value": 0,
                        "annotator": "a", "at": "t"}) + b"\n"
        + b"\n"
        + orjson.dumps({"run_key": "run-a", "item": "outcome", "value": "unsure", "annotator": "a", "at": "t"}) + b"\n")
    labels = read_labels(tmp_path)
    path = tmp_path / "labels.jsonl"
    assert [f"{path} line 1: not a label (Object missing required field `run_key`): skipped",
            f"{path} line 2: not a label (outcome must be one of correct, wrong, unsure, not 'great'): skipped",
            f"{path} line 3: not a label (axis:answer_requirements_satisfaction must be a whole score 1–5, not 0): "
            "skipped"] == labels.problems
    assert (1, 3, "unsure") == (labels.lines, labels.foreign_lines, labels.latest[("run-a", "outcome")].value)


@pytest.mark.parametrize(("item", "value", "problem"), [
    ("outcome", "correct", None), ("axis:source_grounded_reasoning", 5, None), ("check:x", "wrong", None),
    ("axis:source_grounded_reasoning", True, "axis:source_grounded_reasoning must be a whole score 1–5, not True"),
    ("axis:speed", 3, "unknown item 'axis:speed' (outcome, axis:<answer_requirements_satisfaction | "
                      "source_grounded_reasoning> or check:<name>)"),
    ("check:x", "ok", "check:x must be one of right, wrong, not 'ok'")])
def test_label_problem(item, value, problem):
    assert problem == label_problem(item, value)


def test_labels_of_runs_no_longer_kept_are_reported_once_per_run(tmp_path):
    append_labels(tmp_path, [label("run-a", "outcome", "wrong"), label("run-gone", "outcome", "wrong"),
                             label("run-gone", "check:x", "right")])
    assert ["labels.jsonl: 2 label(s) of run run-gone, which this sweep does not keep (a run of another experiment, "
            "or of a directory the labels were copied from): kept in the file, not counted"] \
        == read_labels(tmp_path).orphans({"run-a"})


def _label_many(args: tuple[str, str, int]) -> int:
    directory, who, n = args
    for i in range(n):
        append_labels(directory, [label(f"run-{who}-{i}", "outcome", "wrong", who=who, reason="x" * 3000),
                                  label(f"run-{who}-{i}", "check:c", "right", who=who, reason="y" * 3000)])
    return n


def test_two_viewers_labelling_one_directory_lose_nothing(tmp_path):
    """Two processes append 2 × 150 submissions of two 3 kB lines each at once: every line arrives whole."""
    with ProcessPoolExecutor(2) as pool:
        assert [150, 150] == list(pool.map(_label_many, [(str(tmp_path), "a", 150), (str(tmp_path), "b", 150)]))
    labels = read_labels(tmp_path)
    assert (600, []) == (labels.lines, labels.problems)
    assert {f"run-{w}-{i}" for w in "ab" for i in range(150)} == set(labels.by_run())
