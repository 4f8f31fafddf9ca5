"""Judge–human and check–human agreement from labels, and the summary's section made from a real sweep's labels."""

from __future__ import annotations

import numpy as np
import orjson
import pytest

from mpcbench_async.cli import main
from mpcbench_async.labels import Label, LabelledRun, LabelSet, append_labels, calibrate, judge_errors, read_labels
from mpcbench_async.stats import spearman, weighted_kappa
from mpcbench_async.sweep import kept_runs

ARS = "axis:answer_requirements_satisfaction"


def labels_of(*labels: tuple[str, str, str | int]) -> LabelSet:
    found = LabelSet(latest={}, problems=[])
    for key, item, value in labels:
        found.latest[(key, item)] = Label(run_key=key, item=item, value=value, annotator="a", at="t")
        found.lines += 1
    return found


def test_judge_human_agreement_per_judge_and_axis_with_intervals():
    judged = [0, 1, 2, 3, 4, 5, 5, 2]
    human = [1, 1, 3, 3, 5, 5, 4, 5]
    runs = [LabelledRun(key=f"r{i}", passed=None, scores={"j": [float(j), 3.0], "k": [None, None]})
            for i, j in enumerate(judged)]
    cal = calibrate(runs, labels_of(*((f"r{i}", ARS, h) for i, h in enumerate(human))))
    [agreement] = cal.judges  # judge k left every run unscored: no pairs, no row
    assert ("j", "answer_requirements_satisfaction", 8) == (agreement.judge, agreement.axis, agreement.n)
    assert round(weighted_kappa(judged, human), 4) == agreement.kappa
    assert round(spearman(judged, human), 4) == agreement.spearman
    assert 7 / 8 == agreement.within_one  # only 2 against 5 is further than one point
    for value, ci in ((agreement.kappa, agreement.kappa_ci), (agreement.spearman, agreement.spearman_ci),
                      (agreement.within_one, agreement.within_one_ci)):
        assert ci is not None and ci.low <= value <= ci.high
    assert (8, 8, 0, []) == (cal.labelled_runs, cal.label_lines, cal.orphan_labels, cal.warnings)


def test_check_and_outcome_agreement_and_runs_not_kept():
    runs = [LabelledRun(key="r1", passed=True), LabelledRun(key="r2", passed=False),
            LabelledRun(key="r3", passed=None), LabelledRun(key="r4", passed=True)]
    cal = calibrate(runs, labels_of(("r1", "outcome", "correct"), ("r2", "outcome", "correct"),
                                    ("r3", "outcome", "wrong"), ("r4", "outcome", "unsure"),
                                    ("r1", "check:a", "right"), ("r2", "check:a", "wrong"), ("r2", "check:b", "right"),
                                    ("gone", "check:a", "wrong")), kept={"r1", "r2", "r3", "r4", "r5"})
    assert [("all checks", 3, round(2 / 3, 4)), ("a", 2, 0.5), ("b", 1, 1.0)] == [
        (c.what, c.n, c.share) for c in cal.checks]
    assert cal.checks[2].ci is None  # one item: no interval
    assert ("outcome", 2, 0.5) == (cal.outcome.what, cal.outcome.n, cal.outcome.share)  # r3 unverified, r4 unsure
    assert (4, 1) == (cal.labelled_runs, cal.orphan_labels)
    assert 1 == len(cal.warnings) and cal.warnings[0].startswith("labels.jsonl: 1 label(s) of run gone,")


def test_judge_errors_are_two_points_or_more():
    runs = [LabelledRun(key="r1", scores={"j": [1.0, 4.0], "k": [3.0, 4.0]}, passed=None),
            LabelledRun(key="r2", scores={"j": [4.0, 4.0]}, passed=None)]
    errors = judge_errors(runs, labels_of(("r1", ARS, 4), ("r1", "axis:source_grounded_reasoning", 2),
                                          ("r2", ARS, 3)))
    assert {"r1": ["ARS: j 1, human 4", "SGR: j 4, human 2", "SGR: k 4, human 2"]} == errors


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    out = tmp_path_factory.mktemp("shipped") / "sweep"
    assert 0 == main(["sweep", "--out", str(out), "--no-certificate", "--quiet"])
    return out


def test_the_summary_shows_calibration_from_the_labels_and_reports_bad_lines(shipped, tmp_path, capsys):
    import shutil

    out = tmp_path / "sweep"
    shutil.copytree(shipped, out)
    rows = kept_runs(out)
    human = {r.key: 1 + i % 5 for i, r in enumerate(rows)}
    append_labels(out, [Label(run_key=k, item=ARS, value=v, annotator="a", at="t") for k, v in human.items()])
    append_labels(out, [Label(run_key="run-0000000000000000", item="outcome", value="wrong", annotator="a", at="t")])
    with (out / "labels.jsonl").open("ab") as fh:
        fh.write(b'{"not": "a label"}\n{"run_key": "run-')
    assert 0 == main(["summarize", str(out)])
    capsys.readouterr()
    summary = orjson.loads((out / "summary.json").read_bytes())
    cal = summary["calibration"]
    pairs = np.array([(r.scores["sim/judge"][0], human[r.key]) for r in rows])
    [judge] = cal["judges"]
    assert (len(rows), len(rows), len(rows) + 1, 1, 1, 1) == (
        judge["n"], cal["labelled_runs"], cal["label_lines"], cal["torn_lines"], cal["foreign_lines"],
        cal["orphan_labels"])
    assert round(weighted_kappa(pairs[:, 0], pairs[:, 1]), 4) == judge["kappa"]
    assert round(float((abs(pairs[:, 0] - pairs[:, 1]) <= 1).mean()), 4) == judge["within_one"]
    assert 3 == len(cal["warnings"])
    md = (out / "summary.md").read_text()
    assert "## Calibration against human labels" in md
    assert (f"| sim/judge | ARS | {len(rows)} | {judge['kappa']:.2f} [{judge['kappa_ci']['low']:.2f}, "
            f"{judge['kappa_ci']['high']:.2f}] |") in md
    assert md.count("- warning:") == 3  # a long path may start the next line
    assert "calibration" not in orjson.loads((shipped / "summary.json").read_bytes())  # no labels file: no section
    assert read_labels(shipped).lines == 0


def test_labels_survive_a_resumed_sweep_and_its_summary_counts_them(shipped, tmp_path, capsys):
    """Labels made after a sweep: a resume (same command, one more trial) leaves labels.jsonl as it was, its
    labels still name kept runs, and the summary it writes (not the cached one) has them."""
    import shutil

    out = tmp_path / "sweep"
    shutil.copytree(shipped, out)
    rows = kept_runs(out)
    append_labels(out, [Label(run_key=r.key, item=ARS, value=3, annotator="a", at="t") for r in rows])
    labelled = (out / "labels.jsonl").read_bytes()
    assert 0 == main(["sweep", "--out", str(out), "--no-certificate", "--quiet", "--trials", "2"])
    capsys.readouterr()
    assert labelled == (out / "labels.jsonl").read_bytes()
    cal = orjson.loads((out / "summary.json").read_bytes())["calibration"]
    assert (len(rows), 0, len(rows)) == (cal["labelled_runs"], cal["orphan_labels"], cal["judges"][0]["n"])
    assert 2 * len(rows) == len(kept_runs(out))  # the resume ran the new trials; the labelled runs stayed kept
    # a resume with nothing to run reuses its summary only while labels.jsonl is unchanged (it is a summary input)
    append_labels(out, [Label(run_key=rows[0].key, item=ARS, value=5, annotator="b", at="t")])
    assert 0 == main(["sweep", "--out", str(out), "--no-certificate", "--quiet", "--trials", "2"])
    assert len(rows) + 1 == orjson.loads((out / "summary.json").read_bytes())["calibration"]["label_lines"]
