"""Every timestamp of a scenario's data, where it is, and when the data as a whole says it happened.

The loader (``_data``) uses this to warn about what a user cannot see by reading one file: a row whose
stamp does not parse (the tools would drop or misorder it), and a file — or a reference now — whose
stamps sit more than ``AGREEMENT`` away from the rest of the data (an LLM that wrote 2024 Slack epochs
for a 2025 storyline). "The rest of the data" is the median of the per-file medians, so one wrong file
cannot pull it; a reference now is derived only from stamps that agree with it when any do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

__all__ = ["AGREEMENT", "Stamp", "centre", "data_stamps", "disagrees"]

AGREEMENT = timedelta(days=31)  # farther than this from the rest of the data, a stamp is in another month or year
_SLACK = ("timestamp", "ts")
_GMAIL = ("date", "timestamp", "sent_at", "internalDate")
_JIRA = ("updated", "created", "resolutiondate", "duedate")  # only ``updated`` is activity
_DRIVE = ("modified_time", "modifiedTime", "created_time", "createdTime", "updated_at", "created_at")
_CALENDAR = ("start", "end")
_EVENT = ("timestamp", "ts", "time", "date", "sent_at", "datetime")


@dataclass(frozen=True, slots=True)
class Stamp:
    """One timestamp: the source it is in (``slack`` … or ``world_state``), its JSON path, the raw value and the
    instant it reads as (``None`` when it does not parse)."""

    source: str
    where: str
    raw: Any
    when: datetime | None
    activity: bool = True  # when something happened (a message, a meeting, an update), not a creation or due date


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _fields(record: Any, keys: tuple[str, ...], where: str) -> Iterator[tuple[str, Any]]:
    if not isinstance(record, dict):
        return
    for key in keys:
        value = record.get(key)
        if isinstance(value, dict):  # Google's {"dateTime"|"date": …}
            value = value.get("dateTime") or value.get("date")
        if value not in (None, "") and not isinstance(value, (dict, list)):
            yield f"{where}.{key}", value


def _raw(sources: Mapping[str, Mapping[str, Any]],
         storyline: Iterator[tuple[str, dict[str, Any]]]) -> Iterator[tuple[str, str, Any, bool]]:
    """(source, JSON path, raw stamp, activity) of every dated row the tools read."""
    for i, message in enumerate(_list(sources.get("slack", {}).get("messages"))):
        yield from (("slack", w, v, True) for w, v in _fields(message, _SLACK, f"$.messages[{i}]"))
    for i, thread in enumerate(_list(sources.get("gmail", {}).get("threads"))):
        for j, message in enumerate(_list(thread.get("messages") if isinstance(thread, dict) else None)):
            yield from (("gmail", w, v, True) for w, v in _fields(message, _GMAIL, f"$.threads[{i}].messages[{j}]"))
    for i, event in enumerate(_list(sources.get("calendar", {}).get("events"))):
        yield from (("calendar", w, v, True) for w, v in _fields(event, _CALENDAR, f"$.events[{i}]"))
    for i, issue in enumerate(_list(sources.get("jira", {}).get("issues"))):
        for holder, where in ((issue, f"$.issues[{i}]"), (issue.get("fields") if isinstance(issue, dict) else None,
                                                            f"$.issues[{i}].fields")):
            yield from (("jira", w, v, w.endswith(".updated")) for w, v in _fields(holder, _JIRA, where))
    for i, file in enumerate(_list(sources.get("drive", {}).get("files"))):
        yield from (("drive", w, v, False) for w, v in _fields(file, _DRIVE, f"$.files[{i}]"))
    for where, event in storyline:
        yield from (("world_state", w, v, True) for w, v in _fields(event, _EVENT, where))


def data_stamps(sources: Mapping[str, Mapping[str, Any]], storyline: Iterator[tuple[str, dict[str, Any]]],
                parse: Callable[[Any], datetime | None]) -> list[Stamp]:
    """Every stamp of the sources' rows and the storyline's events, read with ``parse`` (aware, or None)."""
    return [Stamp(source, where, raw, parse(raw), activity)
            for source, where, raw, activity in _raw(sources, storyline)]


def _median(values: list[datetime]) -> datetime:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def centre(stamps: list[Stamp]) -> tuple[datetime | None, dict[str, datetime]]:
    """(the data's centre: the median of the per-source medians of activity stamps, or None with fewer than two
    dated sources; each dated source's median)."""
    by_source: dict[str, list[datetime]] = {}
    for stamp in stamps:
        if stamp.when is not None and stamp.activity:
            by_source.setdefault(stamp.source, []).append(stamp.when)
    medians = {source: _median(whens) for source, whens in by_source.items()}
    return (_median(list(medians.values())) if len(medians) >= 2 else None), medians


def disagrees(when: datetime, centre_: datetime | None) -> bool:
    """``when`` is more than ``AGREEMENT`` from the data's centre (never, when there is no centre)."""
    return centre_ is not None and abs(when - centre_) > AGREEMENT
