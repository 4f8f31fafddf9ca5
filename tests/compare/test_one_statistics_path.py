"""One statistics path (issue 28 point 2), ``compare``'s side: the same pair of score sets shows the same difference
and interval in ``compare``'s Markdown as in the summary's (and so, by tests/view/test_one_statistics_path.py, as in
the viewer's Overview, its Compare page and the HTML report).

The summary pairs two agent models of one sweep; ``compare`` pairs one model across two sweeps. Given the same scores
(model ``a`` of one sweep as sweep A's ``m``, model ``b`` as sweep B's ``m``, two trials of every task on both
sides), both resample tasks and pair by task, so the intervals agree to the digit.
"""

from __future__ import annotations

import re
from pathlib import Path

from mpcbench_async.compare import compare_sweeps
from mpcbench_async.compare import render_markdown as compare_markdown
from mpcbench_async.report import render_markdown
from mpcbench_async.sweep import summarize
from tests.sweep.summary_lines import judgement, run, write

NUMBER = re.compile(r"[-+]?\d+\.\d+")
# (task, trial) -> (ARS, SGR) of models a and b: differences of both signs, so the interval straddles or not
SCORES = {
    "a": {("t1", 0): (4, 3), ("t1", 1): (5, 3), ("t2", 0): (2, 2), ("t2", 1): (3, 4), ("t3", 0): (5, 5),
          ("t3", 1): (4, 5), ("t4", 0): (1, 2), ("t4", 1): (2, 2), ("t5", 0): (3, 3), ("t5", 1): (3, 1)},
    "b": {("t1", 0): (5, 4), ("t1", 1): (5, 5), ("t2", 0): (4, 2), ("t2", 1): (3, 5), ("t3", 0): (4, 5),
          ("t3", 1): (4, 4), ("t4", 0): (3, 3), ("t4", 1): (2, 4), ("t5", 0): (3, 4), ("t5", 1): (5, 2)},
}


def write_runs(root: Path, models: dict[str, str]) -> Path:
    """A sweep directory holding ``SCORES[source]`` as model ``name`` for each ``name: source``, one judge."""
    runs, verdicts = [], []
    for name, source in models.items():
        for (task, trial), (ars, sgr) in SCORES[source].items():
            key = f"{name}-{source}-{task}-{trial}"
            runs.append(run(key, model=name, task=task, trial=trial, checks="p"))
            verdicts.append(judgement(f"{key}-j", key, ars=ars, sgr=sgr, model=name)
                            | {"task_id": task, "trial": trial})
    root.mkdir(parents=True)
    write(root / "runs.jsonl", *runs)
    write(root / "judgements.jsonl", *verdicts)
    return root


def test_compare_shows_the_summarys_interval_for_the_same_scores(tmp_path):
    summary_md = render_markdown(summarize(write_runs(tmp_path / "one", {"a": "a", "b": "b"}))).splitlines()
    compared = compare_markdown(compare_sweeps(write_runs(tmp_path / "A", {"m": "a"}),
                                               write_runs(tmp_path / "B", {"m": "b"}))).splitlines()
    for axis in ("ARS", "SGR"):
        [line] = [row for row in summary_md if row.startswith(f"| a | b | {axis} |")]
        summary_cells = [c.strip() for c in line.strip("|").split("|")]
        [line] = [row for row in compared if row.startswith(f"| {axis} |")]
        compare_cells = [c.strip() for c in line.strip("|").split("|")]
        shown = {"summary.md": [float(x) for x in NUMBER.findall(summary_cells[4] + " " + summary_cells[5])],
                 "compare": [float(x) for x in NUMBER.findall(compare_cells[4] + " " + compare_cells[5])]}
        assert shown["summary.md"] == shown["compare"], axis
        assert len(shown["compare"]) == 3  # the difference and both ends of its interval
        # the same pairs, the same sign test: n, wins / losses / ties and the p-value as written
        summary_counts = [summary_cells[3], " / ".join(summary_cells[6:9]), summary_cells[9]]
        assert summary_counts == [compare_cells[1], compare_cells[6], compare_cells[7]], axis
