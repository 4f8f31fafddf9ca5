"""Calendar logic: busy intervals per person and the free time everyone shares.

Fixes of the original: working hours in the scenario's IANA zone (DST-aware via
zoneinfo), weekends skipped unless asked for, events spanning several days or
given as all-day dates handled, and an optional minimum slot length.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

from .._data import parse_timestamp
from ._dates import local_datetime

__all__ = ["Interval", "attendee_emails", "busy_intervals", "common_free_slots", "event_interval", "merge"]

Interval = tuple[datetime, datetime]


def event_interval(event: dict[str, Any], tz: tzinfo) -> Interval | None:
    """An event's (start, end) as aware datetimes; all-day dates span whole local days."""
    start_raw, end_raw = event.get("start"), event.get("end")
    if isinstance(start_raw, dict):  # Google's {"dateTime": …} / {"date": …} shapes
        start_raw = start_raw.get("dateTime") or start_raw.get("date")
    if isinstance(end_raw, dict):
        end_raw = end_raw.get("dateTime") or end_raw.get("date")
    if not isinstance(start_raw, str) or not isinstance(end_raw, str):
        return None
    if len(start_raw.strip()) == 10 and len(end_raw.strip()) == 10:  # all-day: [start, end) dates
        try:
            first, last = date.fromisoformat(start_raw.strip()), date.fromisoformat(end_raw.strip())
        except ValueError:
            return None
        last = max(last, first + timedelta(days=1))
        return local_datetime(first, time(0), tz), local_datetime(last, time(0), tz)
    start, end = parse_timestamp(start_raw, tz), parse_timestamp(end_raw, tz)
    if start is None or end is None or end <= start:
        return None
    return start, end


def attendee_emails(event: dict[str, Any]) -> set[str]:
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


def busy_intervals(calendar: dict[str, Any], emails: Iterable[str], tz: tzinfo) -> list[Interval]:
    """Every interval in which at least one of ``emails`` is busy (events + free_busy blocks)."""
    wanted = {e.lower() for e in emails}
    calendar_owner = {str(c.get("id")): str(c.get("email", "")).lower()
                      for c in calendar.get("calendars") or () if isinstance(c, dict)}
    busy: list[Interval] = []
    for event in calendar.get("events") or ():
        if not isinstance(event, dict) or str(event.get("status", "")).lower() == "cancelled":
            continue
        people = attendee_emails(event)
        owner = calendar_owner.get(str(event.get("calendar_id")))
        if owner:
            people.add(owner)
        if people & wanted and (interval := event_interval(event, tz)):
            busy.append(interval)
    for block in calendar.get("free_busy") or ():  # original MPCBench data: busy time slots per email
        if isinstance(block, dict) and str(block.get("email", "")).lower() in wanted:
            for slot in block.get("time_slots") or ():
                if isinstance(slot, dict) and (interval := event_interval(slot, tz)):
                    busy.append(interval)
    return busy


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Union of intervals, sorted, overlapping or touching ones joined."""
    merged: list[Interval] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


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
