"""Loading one scenario's generated data (world state + six sources) for the tools.

Accepts the project's own data and data written by the original MPCBench (real
LLM output). Where such data lacks what the tools need — a reference now,
``project_key``, a string ``seed``, a timezone — the loader derives or
normalises it and logs one warning naming the file and field. It never drops
records: source documents are kept as they are, and schema problems are
reported (one warning per file) rather than fatal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson
import structlog

from .._exceptions import InputError
from ._generation import data_path
from ._scenario import Scenario
from ._schemas import SOURCES, SchemaSet

__all__ = ["ScenarioData", "load_scenario_data", "parse_timestamp"]

log = structlog.get_logger(__name__)
_HHMM = re.compile(r"^(\d{1,2}):(\d{2})$")


def parse_timestamp(value: Any, tz: tzinfo) -> datetime | None:
    """An aware datetime from an ISO string (``Z`` allowed); naive values are read in ``tz``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=tz)


@dataclass
class ScenarioData:
    """One scenario's data, ready for the tools. ``warnings`` lists every normalisation."""

    scenario_id: str
    world_state: dict[str, Any]
    sources: dict[str, dict[str, Any]]
    tz: tzinfo
    reference_now: datetime
    workday_start: time
    workday_end: time
    warnings: list[str] = field(default_factory=list)

    @property
    def timezone_name(self) -> str:
        return getattr(self.tz, "key", None) or str(self.tz)

    def source(self, name: str) -> dict[str, Any]:
        return self.sources.get(name) or {}


class _Normaliser:
    """Collects one warning per (file, field) while deriving missing values."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warn(self, path: Path, field_path: str, what: str) -> None:
        message = f"{path}: {field_path}: {what}"
        self.warnings.append(message)
        log.warning("data.normalised", file=str(path), field=field_path, detail=what)


def _read(path: Path) -> dict[str, Any]:
    try:
        doc = orjson.loads(path.read_bytes())
    except FileNotFoundError as exc:
        raise InputError(f"{path}: missing (generate it with `mpcbench-async generate sources`)") from exc
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a JSON object at $, got {type(doc).__name__}")
    return doc


def _timezone(ws: dict[str, Any], scenario: Scenario | None, path: Path, norm: _Normaliser,
              sources: dict[str, dict[str, Any]]) -> tzinfo:
    candidates = [(ws.get("global_settings") or {}).get("timezone"), (ws.get("company") or {}).get("timezone")]
    if scenario is not None:
        candidates.insert(0, scenario.global_settings.timezone)
    for name in candidates:
        if isinstance(name, str) and name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                norm.warn(path, "$.global_settings.timezone", f"{name!r} is not an IANA zone; ignored")
    for stamp in _all_timestamps(sources):
        if stamp.tzinfo is not None:
            offset = stamp.utcoffset() or timedelta(0)
            norm.warn(path, "$.global_settings.timezone", f"missing; using the fixed offset {stamp.tzinfo} of "
                      "the first timestamp in the sources")
            return timezone(offset)
    norm.warn(path, "$.global_settings.timezone", "missing; using UTC")
    return timezone.utc


def _all_timestamps(sources: dict[str, dict[str, Any]]) -> list[datetime]:
    """Communication timestamps (Slack, Gmail) first, then everything else that looks like one."""
    out: list[datetime] = []
    for message in (sources.get("slack") or {}).get("messages") or ():
        if isinstance(message, dict) and (t := parse_timestamp(message.get("timestamp"), timezone.utc)):
            out.append(t)
    for thread in (sources.get("gmail") or {}).get("threads") or ():
        for message in (thread or {}).get("messages") or () if isinstance(thread, dict) else ():
            if isinstance(message, dict) and (t := parse_timestamp(message.get("date"), timezone.utc)):
                out.append(t)
    return out


def _story_start(ws: dict[str, Any], tz: tzinfo) -> datetime | None:
    """The earliest event timestamp of the world state's storylines (original MPCBench layout)."""
    stamps = []
    for event in ws.get("timeline_events") or ():
        if isinstance(event, dict) and not event.get("is_noise"):
            stamps.append(parse_timestamp(event.get("timestamp"), tz))
    for sub in ws.get("sub_scenarios_expanded") or ():
        for event in (sub or {}).get("events") or () if isinstance(sub, dict) else ():
            if isinstance(event, dict):
                stamps.append(parse_timestamp(event.get("timestamp"), tz))
    stamps = [s for s in stamps if s is not None]
    return min(stamps) if stamps else None


def _reference_now(ws: dict[str, Any], scenario: Scenario | None, tz: tzinfo, path: Path, norm: _Normaliser,
                   sources: dict[str, dict[str, Any]]) -> datetime:
    for value, origin in ((ws.get("reference_now"), None),
                          (scenario.reference_now if scenario else None, "the scenario file")):
        parsed = parse_timestamp(value, tz)
        if parsed is not None:
            if origin:
                norm.warn(path, "$.reference_now", f"missing; taken from {origin}")
            return parsed.astimezone(tz)
    start = _story_start(ws, tz)
    if start is not None:
        norm.warn(path, "$.reference_now", f"missing; derived as the first storyline event, {start.isoformat()}")
        return start.astimezone(tz)
    stamps = _all_timestamps(sources)
    if stamps:
        first = min(stamps)
        norm.warn(path, "$.reference_now", f"missing; derived as the earliest message, {first.isoformat()}")
        return first.astimezone(tz)
    raise InputError(f"{path}: $.reference_now is missing and no timestamp in the data to derive it from")


def _clock(value: Any, default: time, path: Path, field_path: str, norm: _Normaliser) -> time:
    match = _HHMM.match(str(value)) if value is not None else None
    if match and int(match.group(1)) < 24 and int(match.group(2)) < 60:
        return time(int(match.group(1)), int(match.group(2)))
    norm.warn(path, field_path, f"{value!r} is not HH:MM; using {default:%H:%M}")
    return default


def _normalise_world_state(ws: dict[str, Any], path: Path, norm: _Normaliser,
                           sources: dict[str, dict[str, Any]]) -> None:
    holders = [("$", ws)] + [(f"$.sub_scenarios_expanded[{i}]", sub)
                             for i, sub in enumerate(ws.get("sub_scenarios_expanded") or ()) if isinstance(sub, dict)]
    for where, holder in holders:
        if "seed" in holder and not isinstance(holder["seed"], str):
            norm.warn(path, f"{where}.seed", f"{type(holder['seed']).__name__} {holder['seed']!r} converted to a string")
            holder["seed"] = str(holder["seed"])
    jira_keys = [p.get("key") for p in (sources.get("jira") or {}).get("projects") or () if isinstance(p, dict)]
    for i, project in enumerate(ws.get("projects") or ()):
        if isinstance(project, dict) and not project.get("project_key"):
            ident = str(project.get("id") or project.get("key") or project.get("name") or f"P{i}")
            key = jira_keys[i] if i < len(jira_keys) and jira_keys[i] else re.sub(r"[^A-Z0-9]", "", ident.upper())
            project["project_key"] = key
            norm.warn(path, f"$.projects[{i}].project_key", f"missing; derived {key!r} from "
                      f"{'the Jira projects' if i < len(jira_keys) else repr(ident)}")


def load_scenario_data(data_dir: str | Path, scenario_id: str, *, scenario: Scenario | None = None,
                       schemas: SchemaSet | None = None) -> ScenarioData:
    """Load ``data/<scenario_id>_*.json``; normalise what the tools need, warning once per field."""
    norm = _Normaliser()
    ws_path = data_path(data_dir, scenario_id, "world_state")
    world_state = _read(ws_path)
    sources = {name: _read(data_path(data_dir, scenario_id, name)) for name in SOURCES}
    if schemas is not None:
        for name, doc in sources.items():
            problems = schemas.problems(name, doc, limit=200)
            if problems:
                norm.warn(data_path(data_dir, scenario_id, name), "$",
                          f"{len(problems)} schema problem(s), kept as is; first: {problems[0]}")
    _normalise_world_state(world_state, ws_path, norm, sources)
    tz = _timezone(world_state, scenario, ws_path, norm, sources)
    now = _reference_now(world_state, scenario, tz, ws_path, norm, sources)
    settings = world_state.get("global_settings") or {}
    start = _clock(settings.get("workday_start", "09:00"), time(9), ws_path, "$.global_settings.workday_start", norm)
    end = _clock(settings.get("workday_end", "18:00"), time(18), ws_path, "$.global_settings.workday_end", norm)
    return ScenarioData(scenario_id=scenario_id, world_state=world_state, sources=sources, tz=tz,
                        reference_now=now, workday_start=start, workday_end=end, warnings=norm.warnings)
