"""Instants as the three-level MPCBench reads and writes them.

The original stores naive local times ("2026-01-19T13:00:00", read in the world's
time zone) beside ones with an offset ("…+09:00"), and writes every candidate as
``YYYY-MM-DDTHH:MM:SS±HH:MM`` in the world's zone. Its oracle compares candidates
as those exact strings, so the format here is part of the benchmark.

One deliberate fix: the original attaches the world's zone to any string without
a ``+`` or ``Z`` — also to one with a negative offset ("…-05:00"), whose offset it
then drops. Here an explicit offset is always kept. Every reference world is in
Asia/Seoul (+09:00), where both readings agree.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["daily_interval", "format_instant", "overlaps", "parse_instant", "zone"]


@lru_cache(maxsize=64)
def zone(name: str) -> ZoneInfo:
    """The IANA zone ``name``; ``ValueError`` naming it when unknown."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r}") from exc


def parse_instant(text: str, tz: str) -> datetime:
    """An aware datetime: ``text``'s own offset when it has one, else read as local time in ``tz``."""
    if not isinstance(text, str) or "T" not in text:
        raise ValueError(f"not an ISO-8601 date-time: {text!r}")
    value = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    return value if value.tzinfo is not None else value.replace(tzinfo=zone(tz))


def format_instant(value: datetime, tz: str) -> str:
    """``value`` in ``tz`` as the original writes candidates: seconds always, offset as ``±HH:MM``."""
    local = value.astimezone(zone(tz))
    offset = local.strftime("%z")
    return local.strftime("%Y-%m-%dT%H:%M:%S") + (offset[:3] + ":" + offset[3:] if offset else "")


def overlaps(start1: datetime, end1: datetime, start2: datetime, end2: datetime) -> bool:
    """Half-open intervals: touching ends do not overlap."""
    return start1 < end2 and start2 < end1


def daily_interval(anchor: datetime, start_hhmm: str, end_hhmm: str, tz: str) -> tuple[datetime, datetime]:
    """``HH:MM``–``HH:MM`` on ``anchor``'s calendar day in ``tz``; an end at or before the start is the next day."""
    local = anchor.astimezone(zone(tz))
    start = _at(local, start_hhmm)
    end = _at(local, end_hhmm)
    return start, end if end > start else end + timedelta(days=1)


def _at(day: datetime, hhmm: str) -> datetime:
    hour, minute = (int(part) for part in hhmm.split(":"))
    return day.replace(hour=hour, minute=minute, second=0, microsecond=0)

