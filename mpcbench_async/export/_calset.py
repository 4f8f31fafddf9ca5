"""People's labels of a sweep as a judge calibration set, in the format of the project's labelled judge set.

The format is that of ``tests/mpcbench/judge_cases.json``: ``bases`` (judge inputs, as ``build_judge_input``
makes them, without the final answer and the step list the tests derive) and ``cases`` (``id``, ``base``,
``band``: the answer-requirements band a person put the answer in — ``>=4`` for 4–5, ``3``, ``<=2`` for
1–2 — and the ``final_answer``). Each labelled run with a person's answer-requirements score is one base and
one case, both named by the run's key; ``labels`` adds, per case, what the format has no place for: the
model, task and trial, who labelled it and when, the reason, every latest label of the run, and each judge's
scores. A judge test reads it as it reads the hand-written set (``judge_input(case)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._resources import workspace_path
from ..labels import LABELS, read_labels
from ..mpcbench import build_judge_input, list_tasks, load_task
from ..sweep import kept_records

__all__ = ["calibration_set"]

ARS = "axis:answer_requirements_satisfaction"
BASE_FIELDS = ("task_id", "task_type", "user_prompt", "answer_requirements", "rationale", "stop_reason", "tool_trace")


def _band(score: int) -> str:
    return ">=4" if score >= 4 else "3" if score == 3 else "<=2"


def calibration_set(sweep_dir: str | Path, *, tasks_dir: str | Path = "tasks",
                    scenario_id: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """The calibration set of the sweep's labels, and one warning line per label or line left out, and why."""
    sweep_dir = Path(sweep_dir)
    labels = read_labels(sweep_dir)
    kept = {k.record.key: k for k in kept_records(sweep_dir)}
    tasks = {}
    for path in list_tasks(workspace_path(tasks_dir)):
        task = load_task(path, scenario_id=scenario_id)
        tasks[task.task_id] = task
    warnings = [*labels.problems, *labels.orphans(kept)]
    bases: dict[str, Any] = {}
    cases: list[dict[str, Any]] = []
    notes: dict[str, Any] = {}
    for key, items in sorted(labels.by_run().items()):
        run = kept.get(key)
        if run is None:
            continue  # warned above (orphans)
        label = items.get(ARS)
        if label is None:
            warnings.append(f"{LABELS}: run {key} has no answer_requirements_satisfaction score from a person: "
                            "not a calibration case")
            continue
        known = tasks.get(run.record.task_id)
        if run.record.run is None or known is None:
            why = "it ended in an error, with no answer" if known is not None else \
                f"its task {run.record.task_id} is not in {tasks_dir}"
            warnings.append(f"{LABELS}: run {key} is left out: {why}")
            continue
        built = build_judge_input(run.record.run, known)
        bases[key] = {name: built[name] for name in BASE_FIELDS}
        assert isinstance(label.value, int)
        cases.append({"id": key, "base": key, "band": _band(label.value), "final_answer": built["final_answer"]})
        notes[key] = {"model": run.record.model, "task_id": run.record.task_id, "trial": run.record.trial,
                      "annotator": label.annotator, "at": label.at, "reason": label.reason,
                      "labels": {item: found.value for item, found in sorted(items.items())},
                      "judges": {j.judge_model: {axis: getattr(j.judgement.scores, axis).score
                                                 for axis in ("answer_requirements_satisfaction",
                                                              "source_grounded_reasoning")}
                                 for j in run.judgements
                                 if j.judgement is not None and j.judgement.scores is not None}}
    about = (f"Judge inputs of the runs of sweep {sweep_dir.name} that people labelled in the viewer "
             f"({LABELS}), each with the answer_requirements_satisfaction band of the person's score "
             "(>=4: 4-5, 3, <=2: 1-2). Written by `mpcbench-async labels export`; 'labels' holds each case's "
             "labels, who made them and the judges' scores.")
    return {"about": about, "bases": bases, "cases": cases, "labels": notes}, warnings
