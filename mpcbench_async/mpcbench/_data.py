"""Loading one scenario's generated data (world state + six sources) for the tools.

Accepts the project's own data and data written by the original MPCBench (real
LLM output). Where such data lacks what the tools need — a reference now,
``project_key``, a string ``seed``, a timezone — the loader derives or
normalises it and logs one warning naming the file and field. It never drops
records: source documents are kept as they are, and schema problems are
reported (one warning per file) rather than fatal. Calendar rows that state
availability rather than busy time (``_availability``) are reported once each.
A value of the wrong JSON kind where the readers expect an object or an array
(``"company": "Acme"``, ``"events": 3``) holds no records: it is read as empty
(a source's top-level arrays are replaced, with a warning), never a crash.

The reference now, in priority order:

1. ``reference_now`` in the world state, else in the scenario file;
2. the request that starts the storyline: the earliest message (an event with
   a sender and a text or body, not a calendar entry) among the world state's
   storyline events — ``timeline_events`` not marked ``is_noise`` and
   ``sub_scenarios_expanded[*].events``; noise scenarios never count;
3. the earliest storyline event of any kind;
4. the earliest Slack or Gmail message in the sources.

Steps 2–4 take the earliest stamp among those within a month of the rest of the
data (``_timestamps``: the median of the per-file medians), when any are: an LLM
that wrote 2024 Slack epochs for a 2025 storyline does not move the now a year.
Whatever its origin, a now more than a month from the rest of the data is
reported on ``$.reference_now``, and so is each file whose stamps centre more
than a month from the now (on its first dated row); a stamp that does not parse
is reported on its row (five per file, then a count).

A planning window the world state states (``time_window.week_of``,
``planning_window.week_of``, ``timeline.planning_window_start`` …) outside the
week after the reference now's week is reported, since a task's "next week"
would then mean another week than the storyline's.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta, timezone, tzinfo
from decimal import Decimal, InvalidOperation
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson

from .._exceptions import InputError
from ._availability import calendar_rows, title_of
from ._generation import data_path
from ._scenario import Scenario
from ._schemas import SOURCES, SchemaSet
from ._timestamps import Stamp, centre, data_stamps, disagrees

__all__ = ["GMAIL_TIME_KEYS", "SLACK_TIME_KEYS", "ScenarioData", "first_of", "load_scenario_data", "parse_timestamp"]

log = logging.getLogger(__name__)
T = TypeVar("T")
_HHMM = re.compile(r"^(\d{1,2}):(\d{2})$")
_EPOCH = re.compile(r"^(?:\d{9,10}|\d{12,13})(?:\.\d+)?$")  # seconds (Slack's "1732366021.003000") or milliseconds
SLACK_TIME_KEYS = ("timestamp", "ts")
GMAIL_TIME_KEYS = ("date", "timestamp", "sent_at", "internalDate")
EVENT_TIME_KEYS = ("timestamp", "ts", "time", "date", "sent_at", "datetime")
SENDER_KEYS = ("from", "sender", "user", "user_id", "author")
TEXT_KEYS = ("text", "body", "message")
STAMPS_CACHED = 65536
"""Text stamps whose parse ``parse_timestamp`` keeps (a datetime each; the shipped scenarios hold a few thousand)."""
WINDOW_FIELDS = [(holder, name) for holder in ("time_window", "planning_window", "timeline", "scheduling_window")
                 for name in ("week_of", "planning_window_start", "window_start", "start", "start_date")]


def first_of(record: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    """The first of ``keys`` the record has a value for: exports name the same field differently."""
    for key in keys:  # a loop, not a generator: called a few times per record a tool reads
        value = record.get(key)
        if value is not None and value != "":
            return value
    return None


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one: real exports put a string where an object is expected."""
    return value if isinstance(value, dict) else {}


def _arr(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one (a number or a string holds no records)."""
    return value if isinstance(value, list) else []


def _from_epoch(text: str) -> datetime | None:
    """An epoch stamp, exactly (no float rounding): seconds, or milliseconds when it has 12–13 digits."""
    try:
        seconds = Decimal(text)
    except InvalidOperation:
        return None
    if seconds >= 10**11:
        seconds /= 1000
    whole = int(seconds)
    micro = int(((seconds - whole) * 1_000_000).to_integral_value())
    return datetime.fromtimestamp(whole, UTC) + timedelta(microseconds=micro)


def _parse(value: Any) -> datetime | None:
    """A datetime from any stamp form real exports use; naive when the stamp states no offset.

    A text stamp is parsed once per process (``_parse_text``): the calendar tools read the same events' stamps
    on every call, and an e-mail date goes through the ``email`` parser (issue 31).
    """
    return _parse_text(value) if isinstance(value, str) else _parse_any(value)


def _parse_any(value: Any) -> datetime | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = str(value).strip()
    if _EPOCH.match(text):
        return _from_epoch(text)
    if not isinstance(value, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(text)  # e-mail Date headers: "Mon, 24 Nov 2025 10:02:15 -0500"
    except (TypeError, ValueError, IndexError):
        return None


_parse_text = functools.lru_cache(maxsize=STAMPS_CACHED)(_parse_any)


def parse_timestamp(value: Any, tz: tzinfo) -> datetime | None:
    """An aware datetime from ISO 8601 (``Z``, ``+09:00``, ``+0900``), epoch seconds or milliseconds (numbers or
    strings such as Slack's ``"1732366021.003000"``) or an e-mail date; naive values are read in ``tz``."""
    parsed = _parse_text(value) if isinstance(value, str) else _parse_any(value)  # _parse inline: per stamp read
    if parsed is None:
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
    _derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def derived(self, name: str, build: Callable[[], T]) -> T:
        """``build()``, computed once per data and kept: what every run's tools and checks would otherwise
        recompute from the same records (the calendar's blocks, the sources' percentages, the user table).

        The data is read-only once loaded (``dataclasses.replace`` makes a new one, with nothing derived).
        Two threads may both build a value the first time; they build equal ones and either is kept.
        """
        try:
            return self._derived[name]
        except KeyError:
            value = self._derived.setdefault(name, build())
            return value

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to a remote worker) without what was derived: the receiver derives its own."""
        return {**self.__dict__, "_derived": {}}

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
        log.warning("data.normalised", extra={"file": str(path), "field": field_path, "detail": what})


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


def _source_messages(sources: dict[str, dict[str, Any]]) -> Iterator[tuple[str, str, Any]]:
    """(source, JSON path, raw stamp) of every Slack and Gmail message, in file order."""
    for i, message in enumerate(_arr(_obj(sources.get("slack")).get("messages"))):
        if isinstance(message, dict):
            yield "slack", f"$.messages[{i}]", first_of(message, SLACK_TIME_KEYS)
    for i, thread in enumerate(_arr(_obj(sources.get("gmail")).get("threads"))):
        for j, message in enumerate(_arr(_obj(thread).get("messages"))):
            if isinstance(message, dict):
                yield "gmail", f"$.threads[{i}].messages[{j}]", first_of(message, GMAIL_TIME_KEYS)


def _timezone(ws: dict[str, Any], scenario: Scenario | None, path: Path, norm: _Normaliser,
              sources: dict[str, dict[str, Any]]) -> tzinfo:
    candidates = [_obj(ws.get("global_settings")).get("timezone"), _obj(ws.get("company")).get("timezone")]
    if scenario is not None:
        candidates.insert(0, scenario.global_settings.timezone)
    for name in candidates:
        if isinstance(name, str) and name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                norm.warn(path, "$.global_settings.timezone", f"{name!r} is not an IANA zone; ignored")
    for _, _, raw in _source_messages(sources):
        stamp = _parse(raw) if isinstance(raw, str) and not _EPOCH.match(raw.strip()) else None
        if stamp is not None and stamp.tzinfo is not None:
            norm.warn(path, "$.global_settings.timezone", f"missing; using the fixed offset {stamp.tzinfo} of "
                      "the first timestamp in the sources")
            return timezone(stamp.utcoffset() or timedelta(0))
    norm.warn(path, "$.global_settings.timezone", "missing; using UTC")
    return UTC


def _storyline(ws: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(JSON path, event) of the world state's storyline events; noise never counts."""
    for i, event in enumerate(_arr(ws.get("timeline_events"))):
        if isinstance(event, dict) and not event.get("is_noise"):
            yield f"$.timeline_events[{i}]", event
    for i, sub in enumerate(_arr(ws.get("sub_scenarios_expanded"))):
        for j, event in enumerate(_arr(_obj(sub).get("events"))):
            if isinstance(event, dict) and not event.get("is_noise"):
                yield f"$.sub_scenarios_expanded[{i}].events[{j}]", event


def _parts(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The event and the records directly inside it (``data``, ``details``, a ``messages`` list …)."""
    parts = [event]
    for value in event.values():
        if isinstance(value, dict):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(v for v in value if isinstance(v, dict))
    return parts


def _is_message(event: dict[str, Any]) -> bool:
    """An e-mail, Slack or chat message: a sender and a text or body, and not a calendar entry."""
    parts = _parts(event)
    kind = " ".join(str(event.get(k, "")) for k in ("source", "channel", "type", "kind")).lower()
    if "calendar" in kind and not any(word in kind for word in ("mail", "slack", "chat", "message")):
        return False
    return all(any(isinstance(p.get(k), str) and p[k].strip() for p in parts for k in keys)
               for keys in (SENDER_KEYS, TEXT_KEYS))


def _event_time(event: dict[str, Any], tz: tzinfo) -> datetime | None:
    """When a storyline event happened: its own stamp, else one inside it (``data.sent_at``)."""
    for part in _parts(event):
        if (stamp := parse_timestamp(first_of(part, EVENT_TIME_KEYS), tz)) is not None:
            return stamp
    return None


def _earliest(found: Iterator[tuple[str, datetime | None]], centre_: datetime | None) -> tuple[str, datetime] | None:
    """The (where, when) with the earliest instant, among those that agree with the rest of the data when any do
    (a 2024 Slack epoch in a 2025 storyline is not the now); the first written wins a tie."""
    dated = [(when, index, where) for index, (where, when) in enumerate(found) if when is not None]
    dated = [d for d in dated if not disagrees(d[0], centre_)] or dated
    if not dated:
        return None
    when, _, where = min(dated)
    return where, when


def _reference_now(ws: dict[str, Any], scenario: Scenario | None, tz: tzinfo, paths: dict[str, Path],
                   norm: _Normaliser, sources: dict[str, dict[str, Any]], centre_: datetime | None) -> datetime:
    """The reference now by the module's rule, warning once on ``$.reference_now`` what it was derived from."""
    path = paths["world_state"]
    given = parse_timestamp(ws.get("reference_now"), tz)
    if given is not None:
        return given.astimezone(tz)
    from_scenario = parse_timestamp(scenario.reference_now if scenario else None, tz)
    if from_scenario is not None:
        now = from_scenario.astimezone(tz)
        norm.warn(path, "$.reference_now", f"missing; taken from the scenario file ({now.isoformat()})")
        return now
    story = list(_storyline(ws))
    candidates = [
        ("the request that starts the storyline",
         _earliest(((where, _event_time(e, tz)) for where, e in story if _is_message(e)), centre_)),
        ("the earliest storyline event (no storyline event is a message)",
         _earliest(((where, _event_time(e, tz)) for where, e in story), centre_)),
        ("the earliest Slack/Gmail message (the world state has no dated storyline events)",
         _earliest(((f"{paths[source].name} {where}", parse_timestamp(raw, tz))
                    for source, where, raw in _source_messages(sources)), centre_)),
    ]
    for origin, found in candidates:
        if found is not None:
            where, when = found
            now = when.astimezone(tz)
            norm.warn(path, "$.reference_now", f"missing; derived from {origin}, {where} ({now.isoformat()})")
            return now
    raise InputError(f"{path}: $.reference_now is missing and no timestamp in the data to derive it from")


def _check_planning_windows(ws: dict[str, Any], now: datetime, tz: tzinfo, path: Path, norm: _Normaliser) -> None:
    """Warn about each stated planning window that does not start in the week after the reference now's week."""
    monday = now.date() - timedelta(days=now.weekday()) + timedelta(days=7)
    holders = [("$", ws)] + [(f"$.sub_scenarios_expanded[{i}]", sub)
                             for i, sub in enumerate(_arr(ws.get("sub_scenarios_expanded"))) if isinstance(sub, dict)]
    for where, holder in holders:
        for container, name in WINDOW_FIELDS:
            box = holder.get(container)
            stamp = parse_timestamp(box.get(name), tz) if isinstance(box, dict) else None
            day = stamp.astimezone(tz).date() if stamp else None
            if day is not None and not monday <= day <= monday + timedelta(days=6):
                norm.warn(path, f"{where}.{container}.{name}",
                          f"{day.isoformat()} is not in the week after the reference now "
                          f"({now.isoformat()}), {monday.isoformat()} to {(monday + timedelta(days=6)).isoformat()}")


def _report_calendar_rows(calendar: dict[str, Any], path: Path, norm: _Normaliser) -> None:
    """One warning per calendar row (or free-slot list) read as availability or left unclear."""
    reported: set[str] = set()
    for row in calendar_rows(calendar):
        if row.reading.kind == "busy" or row.report_path in reported:
            continue
        reported.add(row.report_path)
        title = title_of(row.record)
        what = repr(title) if title else (f"the slots of {row.owner}" if row.report_path != row.path else "the row")
        if row.reading.kind == "available":
            norm.warn(path, row.report_path, f"{what} read as availability, not busy time ({row.reading.why})")
        else:
            norm.warn(path, row.report_path, f"{what} is unclear ({row.reading.why}); counted as busy time")


_UNPARSABLE_SHOWN = 5  # rows named per file; the rest are counted


def _report_unparsable(stamps: list[Stamp], paths: dict[str, Path], norm: _Normaliser) -> None:
    """One warning per timestamp that does not parse (the tools cannot date or order its row), at most
    ``_UNPARSABLE_SHOWN`` per file and then a count of the rest."""
    bad: dict[str, list[Stamp]] = {}
    for stamp in stamps:
        if stamp.when is None:
            bad.setdefault(stamp.source, []).append(stamp)
    for source, rows in bad.items():
        for stamp in rows[:_UNPARSABLE_SHOWN]:
            norm.warn(paths[source], stamp.where, f"timestamp {str(stamp.raw)[:60]!r} does not parse; the row is "
                      "undated for the tools")
        if len(rows) > _UNPARSABLE_SHOWN:
            norm.warn(paths[source], rows[_UNPARSABLE_SHOWN].where,
                      f"and {len(rows) - _UNPARSABLE_SHOWN} more timestamp(s) in this file that do not parse")


def _report_disagreements(now: datetime, centre_: datetime | None, medians: dict[str, datetime],
                          stamps: list[Stamp], paths: dict[str, Path], norm: _Normaliser) -> None:
    """Warn when the reference now, or a file's timestamps, sit more than a month from the rest of the data."""
    if centre_ is not None and disagrees(now, centre_):
        norm.warn(paths["world_state"], "$.reference_now",
                  f"{now.isoformat()} is {abs(now - centre_).days} days from the rest of the data, whose timestamps "
                  f"centre on {centre_.astimezone(now.tzinfo).date().isoformat()}; the agent is told it is "
                  f"{now.date().isoformat()}")
    for source, median in medians.items():
        if disagrees(median, now):
            first = next(s for s in stamps if s.source == source and s.when is not None and s.activity)
            norm.warn(paths[source], first.where,
                      f"the timestamps of this file centre on {median.astimezone(now.tzinfo).date().isoformat()}, "
                      f"{abs(median - now).days} days from the reference now {now.date().isoformat()}")


def _clock(value: Any, default: time, path: Path, field_path: str, norm: _Normaliser) -> time:
    match = _HHMM.match(str(value)) if value is not None else None
    if match and int(match.group(1)) < 24 and int(match.group(2)) < 60:
        return time(int(match.group(1)), int(match.group(2)))
    norm.warn(path, field_path, f"{value!r} is not HH:MM; using {default:%H:%M}")
    return default


# The top-level arrays of each source that the tools, the checks and this loader iterate.
_SOURCE_LISTS = {"slack": ("channels", "users", "messages"), "gmail": ("threads",),
                "calendar": ("calendars", "events", "free_busy"), "contacts": ("contacts",),
                "jira": ("projects", "issues"), "drive": ("files",)}


def _normalise_source_lists(sources: dict[str, dict[str, Any]], paths: dict[str, Path], norm: _Normaliser) -> None:
    """A number, string or boolean where a source's array belongs holds no records: read it as empty, warning once."""
    for name, keys in _SOURCE_LISTS.items():
        doc = sources[name]
        for key in keys:
            value = doc.get(key)
            if value is not None and not isinstance(value, (list, dict)):
                shown = orjson.dumps(value).decode()[:40]
                norm.warn(paths[name], f"$.{key}", f"{shown} is not an array; read as empty")
                doc[key] = []


def _normalise_world_state(ws: dict[str, Any], path: Path, norm: _Normaliser,
                           sources: dict[str, dict[str, Any]]) -> None:
    holders = [("$", ws)] + [(f"$.sub_scenarios_expanded[{i}]", sub)
                             for i, sub in enumerate(_arr(ws.get("sub_scenarios_expanded"))) if isinstance(sub, dict)]
    for where, holder in holders:
        if "seed" in holder and not isinstance(holder["seed"], str):
            seed = holder["seed"]
            norm.warn(path, f"{where}.seed", f"{type(seed).__name__} {seed!r} converted to a string")
            holder["seed"] = str(seed)
    jira_keys = [p.get("key") for p in _arr(_obj(sources.get("jira")).get("projects")) if isinstance(p, dict)]
    for i, project in enumerate(_arr(ws.get("projects"))):
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
    paths = {name: data_path(data_dir, scenario_id, name) for name in ("world_state", *SOURCES)}
    ws_path = paths["world_state"]
    world_state = _read(ws_path)
    sources = {name: _read(paths[name]) for name in SOURCES}
    if schemas is not None:
        for name, doc in sources.items():
            problems = schemas.problems(name, doc, limit=200)
            if problems:
                norm.warn(paths[name], "$", f"{len(problems)} schema problem(s), kept as is; first: {problems[0]}")
    _normalise_source_lists(sources, paths, norm)
    _normalise_world_state(world_state, ws_path, norm, sources)
    _report_calendar_rows(sources["calendar"], paths["calendar"], norm)
    tz = _timezone(world_state, scenario, ws_path, norm, sources)
    stamps = data_stamps(sources, _storyline(world_state), lambda raw: parse_timestamp(raw, tz))
    centre_, medians = centre(stamps)
    _report_unparsable(stamps, paths, norm)
    now = _reference_now(world_state, scenario, tz, paths, norm, sources, centre_)
    _report_disagreements(now, centre_, medians, stamps, paths, norm)
    _check_planning_windows(world_state, now, tz, ws_path, norm)
    settings = _obj(world_state.get("global_settings"))
    start = _clock(settings.get("workday_start", "09:00"), time(9), ws_path, "$.global_settings.workday_start", norm)
    end = _clock(settings.get("workday_end", "18:00"), time(18), ws_path, "$.global_settings.workday_end", norm)
    return ScenarioData(scenario_id=scenario_id, world_state=world_state, sources=sources, tz=tz,
                        reference_now=now, workday_start=start, workday_end=end, warnings=norm.warnings)
