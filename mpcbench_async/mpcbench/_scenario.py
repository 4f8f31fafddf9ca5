"""MPCBench scenarios: the hand-written input from which world states and sources are generated.

``scenarios/<scenario_id>.json`` holds people, projects (key, milestones, Jira
seeds), ``global_settings`` (IANA timezone, workday hours), a reference
``reference_now`` and abstract ``sub_scenarios``. ``noise_level`` and ``depth``
(0–1) steer generation: how much unrelated traffic, and how indirect the clues.
Loading rejects unknown or wrong-typed fields with the file and JSON path, and
values the generator cannot use: an id that cannot be a file name, clock times
that are not times of day or a workday that ends before it starts, and milestone
or Jira target dates that are not ``YYYY-MM-DD``.
"""

from __future__ import annotations

import fnmatch
import re
from datetime import date, datetime, time
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from .._exceptions import InputError
from .._validate import id_problem, timestamp_problem
from ..records import load_json_file

__all__ = [
    "GlobalSettings",
    "Person",
    "Project",
    "Scenario",
    "SubScenario",
    "list_scenarios",
    "load_scenario",
]

Unit = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
HHMM = Annotated[str, msgspec.Meta(pattern=r"^\d{2}:\d{2}$")]
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class _Strict(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    pass


class GlobalSettings(_Strict):
    timezone: str
    workday_start: HHMM = "09:00"
    workday_end: HHMM = "18:00"


class Person(_Strict):
    id: str
    name: str
    email: str
    team: str = ""
    role: str = ""


class Milestone(_Strict):
    name: str
    date: str


class JiraSeed(_Strict):
    issue_key: Annotated[str, msgspec.Meta(pattern=r"^[A-Z][A-Z0-9]+-\d+$")]
    summary: str
    status: str
    target_date: str | None = None
    fix_version: str | None = None


class Project(_Strict):
    project_key: Annotated[str, msgspec.Meta(pattern=r"^[A-Z][A-Z0-9]+$")]
    name: str
    milestones: list[Milestone] = []
    jira_seeds: list[JiraSeed] = []


class SubScenario(_Strict):
    """An abstract storyline the generator turns into concrete events.

    ``type`` is one of ``planning_meeting``, ``feature_rollout_eta``,
    ``weekly_report`` (others are allowed and treated as context); the hint
    fields say what must be true in the generated data.
    """

    id: str
    type: str
    abstract_description: str
    participants_hint: list[str] = []
    constraints_hint: dict[str, Any] | str | None = None
    issue_key_hint: str | None = None
    project_key_hint: str | None = None
    metrics_hint: dict[str, Any] | None = None
    customer: dict[str, str] | None = None
    documents_hint: list[str] = []


class Scenario(_Strict):
    scenario_id: str
    description: str
    noise_level: Unit
    depth: Unit
    global_settings: GlobalSettings
    people: list[Person]
    reference_now: str | None = None
    company: str = ""
    org_units: list[str] = []
    projects: list[Project] = []
    sub_scenarios: list[SubScenario] = []

    def now(self) -> datetime:
        """The reference 'now' as an aware datetime in the scenario's timezone."""
        assert self.reference_now is not None
        return datetime.fromisoformat(self.reference_now).astimezone(ZoneInfo(self.global_settings.timezone))


def _dates(scenario: Scenario) -> list[tuple[str, str]]:
    """(JSON path, value) of every calendar date the scenario states."""
    found = []
    for i, project in enumerate(scenario.projects):
        found += [(f"$.projects[{i}].milestones[{j}].date", m.date) for j, m in enumerate(project.milestones)]
        found += [(f"$.projects[{i}].jira_seeds[{j}].target_date", seed.target_date)
                  for j, seed in enumerate(project.jira_seeds) if seed.target_date is not None]
    return found


def _day_problems(scenario: Scenario) -> list[str]:
    """Workday clock times that are not times of day (or end before they start), and unreadable dates."""
    settings = scenario.global_settings
    problems = []
    clocks = {}
    for name in ("workday_start", "workday_end"):
        try:
            clocks[name] = time.fromisoformat(getattr(settings, name))
        except ValueError:
            problems.append(f"$.global_settings.{name} {getattr(settings, name)!r} is not a time of day (HH:MM)")
    if len(clocks) == 2 and clocks["workday_end"] <= clocks["workday_start"]:
        problems.append(f"$.global_settings.workday_end {settings.workday_end!r} is not after workday_start "
                        f"{settings.workday_start!r}")
    for where, value in _dates(scenario):
        try:
            date.fromisoformat(value)
        except ValueError:
            problems.append(f"{where} {value!r} is not a date (YYYY-MM-DD)")
    return problems


def _check(scenario: Scenario, source: str) -> None:
    """Semantic checks msgspec cannot express; each names the field."""
    if (problem := id_problem(scenario.scenario_id)) is not None:
        raise InputError(f"{source}: $.scenario_id {scenario.scenario_id[:80]!r} {problem}")
    if not SAFE_ID.match(scenario.scenario_id):
        raise InputError(f"{source}: $.scenario_id {scenario.scenario_id!r} "
                         "may use only letters, digits, '_', '.', '-'")
    if problems := _day_problems(scenario):
        raise InputError("\n".join(f"{source}: {p}" for p in problems))
    try:
        ZoneInfo(scenario.global_settings.timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InputError(f"{source}: $.global_settings.timezone {scenario.global_settings.timezone!r} "
                         "is not an IANA time zone") from exc
    if scenario.reference_now is None:
        raise InputError(f"{source}: $.reference_now is required "
                         "(ISO 8601 with offset, e.g. 2025-11-12T10:00:00+09:00)")
    if (problem := timestamp_problem(scenario.reference_now)) is not None:  # a real day, an offset within ±14:00
        raise InputError(f"{source}: $.reference_now {scenario.reference_now!r} {problem}")
    if datetime.fromisoformat(scenario.reference_now).tzinfo is None:
        raise InputError(f"{source}: $.reference_now {scenario.reference_now!r} needs a UTC offset")
    ids = [p.id for p in scenario.people]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise InputError(f"{source}: $.people has duplicate ids {dup}")


def load_scenario(path: str | Path) -> Scenario:
    """Load and check one scenario file; errors name the file and field."""
    path = Path(path)
    scenario = load_json_file(path, Scenario)
    _check(scenario, str(path))
    if path.stem != scenario.scenario_id:
        raise InputError(f"{path}: $.scenario_id {scenario.scenario_id!r} must match the file name {path.stem!r}")
    return scenario


def list_scenarios(directory: str | Path, pattern: str = "*") -> list[Path]:
    """Scenario files in ``directory`` whose id matches the glob ``pattern``, sorted."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: scenarios directory not found")
    return sorted(p for p in directory.glob("*.json") if fnmatch.fnmatch(p.stem, pattern))
