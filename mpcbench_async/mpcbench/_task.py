"""MPCBench tasks: ``tasks/<task_type>/<task_id>.json``.

Each task names its scenario, the prompt the agent gets, checkable
``answer_requirements`` for the judge, and — where the truth is computable —
machine-checkable facts for the deterministic checks (planning: participants,
duration, window; email reply: the Jira issue and its target date; weekly
report: the metrics).

Files of the original MPCBench load as they are: the type comes from the
folder when ``task_type`` is absent; the scenario from ``scenario_id``, else
``data_dependencies.scenario_id``, else the caller's default (``--scenario-id``);
``expected_tool_sequence`` items written as ``{"tool", "reason"}`` are read as
``{"tool_name", "description"}``.
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


def _scenario_of(task: Task, path: Path, default: str | None) -> str:
    """The scenario the task names (``scenario_id``, then ``data_dependencies.scenario_id``), else ``default``."""
    nested = task.data_dependencies.get("scenario_id")
    if nested is not None and not (isinstance(nested, str) and nested):
        raise InputError(f"{path}: $.data_dependencies.scenario_id must be a non-empty string, got {nested!r}")
    if task.scenario_id and nested and nested != task.scenario_id:
        raise InputError(f"{path}: $.scenario_id is {task.scenario_id!r} but $.data_dependencies.scenario_id is "
                         f"{nested!r}; keep one")
    named = task.scenario_id or nested or default
    if not named:
        raise InputError(f"{path}: the task names no scenario (neither $.scenario_id nor "
                         "$.data_dependencies.scenario_id is set); pass --scenario-id, the scenario for tasks "
                         "that name none")
    return named


def _tool_steps(steps: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    """Steps with ``tool_name`` and ``description``, read from the original's ``tool``/``reason`` spelling too.

    Any other key of a step is kept as it is.
    """
    out = []
    for i, step in enumerate(steps):
        tool = step.get("tool_name", step.get("tool"))
        if not isinstance(tool, str) or not tool:
            raise InputError(f"{path}: $.expected_tool_sequence[{i}] names no tool (tool_name or tool)")
        rest = {k: v for k, v in step.items() if k not in ("tool", "reason")}
        out.append(rest | {"tool_name": tool, "description": str(step.get("description", step.get("reason", "")))})
    return out


def load_task(path: str | Path, *, scenario_id: str | None = None) -> Task:
    """Load a task; ``task_type`` defaults to the folder name, the scenario to ``scenario_id`` when it names none."""
    path = Path(path)
    task = load_json_file(path, Task)
    task_type = task.task_type
    if task_type is None:
        task_type = path.parent.name
        if task_type not in TASK_TYPES:
            raise InputError(f"{path}: $.task_type is missing and the folder {task_type!r} is not one of "
                             f"{', '.join(TASK_TYPES)}")
    if not task.answer_requirements:
        raise InputError(f"{path}: $.answer_requirements must list at least one requirement")
    return msgspec.structs.replace(task, task_type=task_type, scenario_id=_scenario_of(task, path, scenario_id),
                                   expected_tool_sequence=_tool_steps(task.expected_tool_sequence, path))


def list_tasks(directory: str | Path, pattern: str = "*") -> list[Path]:
    """Task files under ``directory`` (``<type>/<id>.json``) whose ``type/id`` matches the glob."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: tasks directory not found")
    return sorted(p for p in directory.glob("*/*.json")
                  if fnmatch.fnmatch(f"{p.parent.name}/{p.stem}", pattern) or fnmatch.fnmatch(p.stem, pattern))
