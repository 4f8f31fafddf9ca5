"""MPCBench tasks: ``tasks/<task_type>/<task_id>.json``.

Each task names its scenario, the prompt the agent gets, checkable
``answer_requirements`` for the judge, and — where the truth is computable —
machine-checkable facts for the deterministic checks (planning: participants,
duration, window; email reply: the Jira issue and its target date; weekly
report: the metrics). Files of the original MPCBench (no ``scenario_id`` or
``task_type``) load too: the type comes from the folder, the scenario from the
caller.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any, Literal

import msgspec

from .._exceptions import InputError
from ..records import load_json_file

__all__ = ["PlanningFacts", "Task", "TaskFacts", "load_task", "list_tasks"]

TaskType = Literal["planning", "email_reply", "document_generation"]
TASK_TYPES: tuple[str, ...] = ("planning", "email_reply", "document_generation")


class PlanningFacts(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What a correct meeting proposal must satisfy."""

    participants: list[str]
    duration_minutes: int
    window_start: str
    window_end: str


class TaskFacts(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Machine-checkable facts; which ones apply depends on the task type."""

    planning: PlanningFacts | None = None
    issue_key: str | None = None
    target_date: str | None = None
    metrics: dict[str, float] = {}


class Task(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    task_id: str
    user_prompt: str
    answer_requirements: list[str]
    scenario_id: str = ""
    task_type: TaskType | None = None
    expected_tool_sequence: list[dict[str, Any]] = []
    data_dependencies: dict[str, Any] = {}
    facts: TaskFacts = msgspec.field(default_factory=TaskFacts)


def load_task(path: str | Path, *, scenario_id: str | None = None) -> Task:
    """Load a task; ``task_type`` defaults to the folder name, ``scenario_id`` to the argument."""
    path = Path(path)
    task = load_json_file(path, Task)
    if task.task_type is None:
        folder = path.parent.name
        if folder not in TASK_TYPES:
            raise InputError(f"{path}: $.task_type is missing and the folder {folder!r} is not one of "
                             f"{', '.join(TASK_TYPES)}")
        task = msgspec.structs.replace(task, task_type=folder)  # type: ignore[arg-type]
    if scenario_id:
        if task.scenario_id and task.scenario_id != scenario_id:
            raise InputError(f"{path}: $.scenario_id is {task.scenario_id!r} but --scenario-id is {scenario_id!r}")
        task = msgspec.structs.replace(task, scenario_id=scenario_id)
    if not task.scenario_id:
        raise InputError(f"{path}: $.scenario_id is missing (pass --scenario-id)")
    if not task.answer_requirements:
        raise InputError(f"{path}: $.answer_requirements must list at least one requirement")
    return task


def list_tasks(directory: str | Path, pattern: str = "*") -> list[Path]:
    """Task files under ``directory`` (``<type>/<id>.json``) whose ``type/id`` matches the glob."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: tasks directory not found")
    return sorted(p for p in directory.glob("*/*.json")
                  if fnmatch.fnmatch(f"{p.parent.name}/{p.stem}", pattern) or fnmatch.fnmatch(p.stem, pattern))
