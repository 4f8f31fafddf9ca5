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

Loading refuses, with the file and every bad field, what would crash or mislead
later: ids that cannot be file names (``_validate.id_problem``), an empty prompt
or requirement, fact dates the checks cannot read (``YYYY-MM-DD``, optionally
followed by an ISO time with a UTC offset within ±14:00; the checks use the date), a planning window that ends
before it starts, a meeting length outside 1–1,440 minutes, a planning fact
without participants, a ``facts`` object that gives nothing the checks of the
task's type read (``"facts": {}``; leave ``facts`` out for a judge-only task, as the
original's files do), and free-form fields (``data_dependencies``,
``expected_tool_sequence``) nested too deeply or holding integers beyond 64 bits.
"""

from __future__ import annotations

import fnmatch
from datetime import date
from pathlib import Path
from typing import Any, Literal

import msgspec

from .._exceptions import InputError
from .._validate import id_problem, json_problem, timestamp_problem
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


# The facts the deterministic checks of each task type read (``_checks``); a given ``facts`` must hold one.
_CHECKED_FACTS: dict[str, tuple[str, ...]] = {
    "planning": ("planning",), "email_reply": ("issue_key", "target_date"), "document_generation": ("metrics",)}


class _FactsGiven(msgspec.Struct):
    """Whether the file writes ``facts`` at all (absent: a judge-only task; ``{}``: a mistake)."""

    facts: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


def _facts_problem(task: Task, task_type: str) -> str | None:
    """Why the ``facts`` a file gives are useless to its type's checks, or None."""
    checked = _CHECKED_FACTS[task_type]
    if any(getattr(task.facts, name) for name in checked):
        return None
    fields = " or ".join(f"$.facts.{name}" for name in checked)
    return (f"$.facts: gives nothing the {task_type} checks verify (they read {fields}); "
            "give those facts, or leave $.facts out for a task only the judge scores")


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
    if (problem := id_problem(named)) is not None:
        where = ("$.scenario_id" if task.scenario_id else "$.data_dependencies.scenario_id" if nested
                 else "--scenario-id")
        raise InputError(f"{path}: {where}: {_shown(named)} {problem}")
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


def _shown(value: object) -> str:
    """A value as it is written in the JSON file (``"2025-13-01"``, ``7``), cut to 80 characters."""
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 80 else text[:77] + "..."


def _date_problem(value: str) -> str | None:
    """Why ``value`` is not a date the checks can read (they use its first ten characters), or None."""
    try:
        date.fromisoformat(value[:10])
    except ValueError:
        return f"{_shown(value)} is not a date (YYYY-MM-DD)"
    if len(value) > 10 and (problem := timestamp_problem(value)) is not None:  # the time, or an offset past ±14:00
        return f"{_shown(value)} {problem}"
    return None


def _planning_problems(facts: PlanningFacts) -> list[str]:
    where = "$.facts.planning"
    problems = []
    if not facts.participants:
        problems.append(f"{where}.participants: must name at least one participant")
    problems += [f"{where}.participants[{i}]: {_shown(p)} names nobody (give a name or an e-mail)"
                 for i, p in enumerate(facts.participants) if not any(ch.isalnum() for ch in p)]
    if not 1 <= facts.duration_minutes <= 24 * 60:
        problems.append(f"{where}.duration_minutes: {facts.duration_minutes} is not a meeting length in minutes "
                        "(1 to 1440)")
    dated = [(name, getattr(facts, name)) for name in ("window_start", "window_end")]
    bad = [f"{where}.{name}: {problem}" for name, value in dated if (problem := _date_problem(value)) is not None]
    if not bad and date.fromisoformat(facts.window_end[:10]) < date.fromisoformat(facts.window_start[:10]):
        bad.append(f"{where}.window_end: {_shown(facts.window_end)} is before window_start "
                   f"{_shown(facts.window_start)}")
    return problems + bad


def _problems(task: Task) -> list[str]:
    """Every field of a decoded task that is unusable, each as ``$.path: what is wrong``."""
    problems = []
    if (problem := id_problem(task.task_id)) is not None:
        problems.append(f"$.task_id: {_shown(task.task_id)} {problem}")
    if not task.user_prompt.strip():
        problems.append("$.user_prompt: must not be empty")
    if not task.answer_requirements:
        problems.append("$.answer_requirements: must list at least one requirement")
    problems += [f"$.answer_requirements[{i}]: must not be empty" for i, r in enumerate(task.answer_requirements)
                 if not r.strip()]
    for name in ("data_dependencies", "expected_tool_sequence"):
        if (found := json_problem(getattr(task, name), f"$.{name}")) is not None:
            problems.append(f"{found[0]}: {found[1]}")
    jira_key = task.data_dependencies.get("jira_issue_key")
    if jira_key is not None and not (isinstance(jira_key, str) and jira_key.strip()):
        problems.append(f"$.data_dependencies.jira_issue_key: must be a non-empty string, got {_shown(jira_key)}")
    if task.facts.planning is not None:
        problems += _planning_problems(task.facts.planning)
    if task.facts.target_date is not None and (problem := _date_problem(task.facts.target_date)) is not None:
        problems.append(f"$.facts.target_date: {problem}")
    return problems


def load_task(path: str | Path, *, scenario_id: str | None = None) -> Task:
    """Load a task; ``task_type`` defaults to the folder name, the scenario to ``scenario_id`` when it names none.

    Every unusable field is reported at once, one line each, naming the file and the field.
    """
    path = Path(path)
    task = load_json_file(path, Task)
    problems = _problems(task)
    if problems:
        raise InputError("\n".join(f"{path}: {p}" for p in problems))
    task_type: str | None = task.task_type  # a folder name until checked against TASK_TYPES
    if task_type is None:
        task_type = path.parent.name
        if task_type not in TASK_TYPES:
            raise InputError(f"{path}: $.task_type is missing and the folder {task_type!r} is not one of "
                             f"{', '.join(TASK_TYPES)}")
    if load_json_file(path, _FactsGiven).facts and (problem := _facts_problem(task, task_type)):
        raise InputError(f"{path}: {problem}")
    return msgspec.structs.replace(task, task_type=task_type, scenario_id=_scenario_of(task, path, scenario_id),
                                   expected_tool_sequence=_tool_steps(task.expected_tool_sequence, path))


def list_tasks(directory: str | Path, pattern: str = "*") -> list[Path]:
    """Task files under ``directory`` (``<type>/<id>.json``) whose ``type/id`` matches the glob."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: tasks directory not found")
    return sorted(p for p in directory.glob("*/*.json")
                  if fnmatch.fnmatch(f"{p.parent.name}/{p.stem}", pattern) or fnmatch.fnmatch(p.stem, pattern))
