"""Calendar logic: busy intervals per person and the free time everyone shares.

Fixes of the original: working hours in the scenario's IANA zone (DST-aware via
zoneinfo), weekends skipped unless asked for, events spanning several days or
given as all-day dates handled, and an optional minimum slot length. Rows that
state availability rather than busy time never block time (the rule is in
``mpcbench._availability``); rows whose meaning is unclear count as busy.
The loops a model's date range or people make long stop at a ``checkpoint()``
per step (the tool's time limit, ``tools._execution``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..._checkpoint import checkpoint
from .._availability import CalendarRow, calendar_rows
from .._data import ScenarioData, parse_timestamp
from ._dates import local_datetime

__all__ = ["Block", "Interval", "attendee_emails", "busy_in", "busy_intervals", "calendar_blocks", "common_free_slots",
           "event_interval", "intersect", "merge", "scenario_blocks"]

Interval = tuple[datetime, datetime]
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _stamp(value: Any, tz: tzinfo) -> tuple[Any, tzinfo]:
    """The raw stamp and the zone to read it in: Google's {"dateTime"|"date", "timeZone"} shapes unwrapped."""
    if not isinstance(value, dict):
        return value, tz
    zone = value.get("timeZone")
    if isinstance(zone, str):
        try:
            tz = ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return value.get("dateTime") or value.get("date"), tz


def event_interval(event: Mapping[str, Any], tz: tzinfo) -> Interval | None:
    """An event's (start, end) as aware datetimes; all-day dates span whole local days."""
    (start_raw, start_tz), (end_raw, end_tz) = _stamp(event.get("start"), tz), _stamp(event.get("end"), tz)
    if all(isinstance(raw, str) and _DATE.match(raw.strip()) for raw in (start_raw, end_raw)):  # all-day: [start, end)
        try:
            first, last = date.fromisoformat(start_raw.strip()), date.fromisoformat(end_raw.strip())
        except ValueError:
            return None
        last = max(last, first + timedelta(days=1))
        return local_datetime(first, time(0), tz), local_datetime(last, time(0), tz)
    start, end = parse_timestamp(start_raw, start_tz), parse_timestamp(end_raw, end_tz)
    if start is None or end is None or end <= start:
        return None
    return start, end


def attendee_emails(event: Mapping[str, Any]) -> set[str]:
    """Lower-cased e-mails of an event's attendees and organizer."""
    emails = set()
    for attendee in event.get("attendees") or ():
        email = attendee.get("email") if isinstance(attendee, dict) else attendee
        if isinstance(email, str):
            emails.add(email.lower())
    organizer = event.get("organizer")
    if isinstance(organizer, dict):
        organizer = organizer.get("email")
    if isinstance(organizer, str):
        emails.add(organizer.lower())
    return emails


@dataclass(frozen=True)
class Block:
    """A calendar row with a readable interval and the people whose time it concerns."""

    row: CalendarRow
    people: frozenset[str]
    interval: Interval


def calendar_blocks(calendar: dict[str, Any], tz: tzinfo) -> list[Block]:
    """Every row of ``calendar`` that has a readable interval (cancelled events left out)."""
    owners = {str(c.get("id")): str(c.get("email", "")).lower()
              for c in calendar.get("calendars") or () if isinstance(c, dict)}
    blocks = []
    for row in calendar_rows(calendar):
        if row.owner:  # a free/busy slot belongs to its block's e-mail
            people = {row.owner}
        else:
            people = attendee_emails(row.record) | {owners.get(str(row.record.get("calendar_id")), "")}
        if (interval := event_interval(row.record, tz)) is not None:
            blocks.append(Block(row, frozenset(people - {""}), interval))
    return blocks


def scenario_blocks(data: ScenarioData) -> tuple[Block, ...]:
    """``calendar_blocks`` of the scenario's calendar in its zone, read once per data: every run's calendar
    tools and planning checks read the same rows (issue 31: a third of a planning run's CPU was re-reading them)."""
    return data.derived("calendar_blocks", lambda: tuple(calendar_blocks(data.source("calendar"), data.tz)))


def busy_in(blocks: Iterable[Block], emails: Iterable[str]) -> list[Interval]:
    """Every interval of ``blocks`` in which at least one of ``emails`` is busy (events + free_busy blocks;
    availability rows never count, unclear ones do)."""
    wanted = {e.lower() for e in emails}
    return [b.interval for b in blocks if b.people & wanted and b.row.reading.kind != "available"]


def busy_intervals(calendar: dict[str, Any], emails: Iterable[str], tz: tzinfo) -> list[Interval]:
    """Every interval in which at least one of ``emails`` is busy (``busy_in`` over the calendar's blocks)."""
    return busy_in(calendar_blocks(calendar, tz), emails)


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Union of intervals, sorted, overlapping or touching ones joined."""
    merged: list[Interval] = []
    for start, end in sorted(intervals):
        checkpoint()
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def intersect(intervals: Iterable[Interval], windows: Sequence[Interval]) -> list[Interval]:
    """The parts of ``intervals`` that lie inside ``windows`` (both sorted and disjoint)."""
    parts: list[Interval] = []
    for s, e in intervals:
        checkpoint()
        parts += [(max(s, ws), min(e, we)) for ws, we in windows if max(s, ws) < min(e, we)]
    return parts


def common_free_slots(
    busy: Sequence[Interval],
    first_day: date,
    last_day: date,
    tz: tzinfo,
    workday_start: time,
    workday_end: time,
    *,
    min_minutes: int = 1,
    include_weekends: bool = False,
) -> list[Interval]:
    """Free intervals inside working hours on each day of [first_day, last_day], at least ``min_minutes`` long."""
    blocked = merge(busy)
    slots: list[Interval] = []
    day = first_day
    while day <= last_day:
        checkpoint()
        if include_weekends or day.weekday() < 5:
            window_start = local_datetime(day, workday_start, tz)
            window_end = local_datetime(day, workday_end, tz)
            cursor = window_start
            for start, end in blocked:
                if end <= cursor or start >= window_end:
                    continue
                if start > cursor:
                    slots.append((cursor, min(start, window_end)))
                cursor = max(cursor, end)
                if cursor >= window_end:
                    break
            if cursor < window_end:
                slots.append((cursor, window_end))
        day += timedelta(days=1)
    minimum = timedelta(minutes=min_minutes)
    return [(s, e) for s, e in slots if e - s >= minimum]
