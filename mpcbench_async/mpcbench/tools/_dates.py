"""Dates the model may write, resolved against the scenario's reference now (never the wall clock).

An absolute date or date-time must be real as a whole (``_validate.timestamp_problem``): a day the
calendar has, a clock time of the day, a UTC offset within ±14:00. ``2025-02-30``, ``…T25:00`` or
``…+25:00`` is an error the model sees, never a date read from the first ten characters.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, tzinfo

from ..._validate import timestamp_problem

__all__ = ["DateError", "local_datetime", "resolve_date", "resolve_range"]

_RELATIVE = re.compile(r"^([+-])(\d+)\s*(d|day|days|w|week|weeks)$")
_ABSOLUTE = re.compile(r"\d{4}-\d{2}-\d{2}")
ACCEPTED = ("YYYY-MM-DD, an ISO datetime, today, tomorrow, yesterday, this_week, next_week, last_week, "
            "+Nd/-Nd (days from today)")


class DateError(ValueError):
    """A date expression the tools cannot read; the message lists the accepted forms."""


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def resolve_date(expression: str, now: datetime) -> date:
    """One date: absolute (``2025-11-20``, ISO datetime) or relative to ``now``."""
    text = expression.strip().lower().replace(" ", "_")
    today = now.date()
    named = {"today": today, "tomorrow": today + timedelta(days=1), "yesterday": today - timedelta(days=1),
             "this_week": _week_start(today), "next_week": _week_start(today) + timedelta(days=7),
             "last_week": _week_start(today) - timedelta(days=7)}
    if text in named:
        return named[text]
    match = _RELATIVE.match(text.replace("_", ""))
    if match:
        sign, amount, unit = match.groups()
        days = int(amount) * (7 if unit.startswith("w") else 1)
        return today + timedelta(days=days if sign == "+" else -days)
    absolute = expression.strip()
    if _ABSOLUTE.match(absolute) and (problem := timestamp_problem(absolute)) is not None:
        raise DateError(f"the date {absolute!r} {problem}; use {ACCEPTED}")
    try:
        return date.fromisoformat(absolute[:10])
    except ValueError:
        raise DateError(f"cannot read the date {expression!r}; use {ACCEPTED}") from None


def resolve_range(start: str | None, end: str | None, now: datetime) -> tuple[date, date]:
    """An inclusive date range; without ``end`` it spans seven days (a week name as ``start`` gives Mon–Sun)."""
    first = resolve_date(start or "today", now)
    last = resolve_date(end, now) if end else first + timedelta(days=6)
    if last < first:
        raise DateError(f"end date {last.isoformat()} is before start date {first.isoformat()}")
    return first, last


def local_datetime(day: date, clock: time, tz: tzinfo) -> datetime:
    """``day`` at ``clock`` in ``tz``, valid across DST changes (zoneinfo resolves the offset)."""
    return datetime.combine(day, clock, tzinfo=tz)
