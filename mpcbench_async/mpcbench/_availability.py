"""Calendar rows that state availability rather than busy time.

Real calendar exports mix busy time with statements of free time, and a row
read as busy when it means "I am free" silently removes the very slots a
planning task is about. Every calendar row (``events[i]``, and each slot of a
``free_busy`` block) is therefore read with one rule:

* **availability** — never blocks time — when a field says so:
  ``transparency: "transparent"``; ``status``, ``type``, ``busy_status`` /
  ``busyStatus``, ``show_as`` / ``showAs``, ``free_busy`` / ``freeBusy`` /
  ``free_busy_status`` or ``availability`` equal to free, available,
  availability or open; ``availability: true``; ``busy: false``; or the slot
  sits in a ``free_busy`` block's ``free_slots`` / ``available_slots`` /
  ``availability`` / ``free`` / ``available`` list. A title alone counts too when
  it plainly offers time: it starts or ends with "Available"/"Availability"
  ("Available for calls", "Alex - availability"), is just "Free" or "Open", or
  says "Free for meetings", "Free slot", "Open slot", "Bookable", "Book me",
  "Open office hours".
* **busy** otherwise: every row without such a statement, a field that says
  busy (``transparency: "opaque"``, ``show_as: "busy"``, ``status: "tentative"``
  …, whatever the title says), and titles such as "OOO", "Out of office",
  "Unavailable", "Not available", "No availability".
* **unclear** — counted as busy, and flagged — when the signals disagree or
  hedge: a field says free but the title says busy ("OOO", "Blocked", "PTO");
  a title offers time but also says busy or hedges ("Tentatively available",
  "Free?", "Available for emergencies only"); or a title that only mentions
  availability mid-way ("API availability review") or says "Office hours".

Counting an unclear row as busy is the safe side for scheduling (a proposed
slot never lands on it); the flag keeps the reading from being silent: the
loader warns once per row and the calendar tools mark such rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["CalendarRow", "Reading", "calendar_rows", "read_row", "title_of"]

Kind = Literal["busy", "available", "unclear"]
STATUS_FIELDS = ("transparency", "status", "type", "busy_status", "busyStatus", "show_as", "showAs", "free_busy",
                 "freeBusy", "free_busy_status", "availability")
FREE_VALUES = frozenset({"free", "available", "availability", "open", "transparent"})
BUSY_VALUES = frozenset({"busy", "opaque", "oof", "out_of_office", "outofoffice", "away", "tentative", "blocked",
                         "unavailable", "workingelsewhere"})
TITLE_FIELDS = ("title", "summary", "subject", "name")
BUSY_LISTS = ("time_slots", "busy", "busy_slots", "slots")
FREE_LISTS = ("free_slots", "available_slots", "availability", "free", "available", "free_times")

_OFFERS = re.compile(
    r"^\W*(?:free|open)\W*$|^\W*availab(?:le|ility)\b|\bavailab(?:le|ility)\W*$"
    r"|\bbookable\b|\bbook (?:me|a slot|time)\b"
    r"|\b(?:free|open) (?:slots?|windows?|time)\b|\b(?:free|open) (?:for|to) (?:meetings?|meet|calls?|chats?|booking)\b"
    r"|\bopen office hours\b", re.I)
_NEGATED = re.compile(r"\b(?:not|un) ?(?:available|free)\b|\bno (?:availability|free time)\b", re.I)
_BUSY = re.compile(r"\b(?:ooo|out of (?:the )?office|busy|blocked|do not book|don'?t book|no meetings|vacation|pto"
                   r"|holiday|sick|on leave)\b", re.I)
_HEDGE = re.compile(r"\?|\b(?:tentative(?:ly)?|maybe|possibly|perhaps|might|if needed|only|emergenc(?:y|ies)"
                    r"|urgent)\b", re.I)
_MAYBE = re.compile(r"\bavailab(?:le|ility)\b|\boffice hours\b", re.I)


@dataclass(frozen=True)
class Reading:
    """How a row is read: ``busy``, ``available`` or ``unclear`` (counted busy), and why."""

    kind: Kind
    why: str = ""


BUSY = Reading("busy")


@dataclass(frozen=True)
class CalendarRow:
    """One event or free/busy slot as written, where it sits, and how it is read."""

    path: str  # "$.events[3]", "$.free_busy[1].free_slots[0]"
    record: Mapping[str, Any]
    reading: Reading
    owner: str  # the free_busy block's e-mail; "" for events
    report_path: str  # where the loader reports it: the row, or the whole free-slot list once


def title_of(row: Mapping[str, Any]) -> str:
    """The row's title under any of the names exports use ("" when it has none)."""
    return next((str(row[k]) for k in TITLE_FIELDS if isinstance(row.get(k), str) and row[k].strip()), "")


def _field_reading(row: Mapping[str, Any]) -> Reading | None:
    """What the row's status fields state, if anything (the first field that says free or busy)."""
    for name in STATUS_FIELDS:
        value = row.get(name)
        if isinstance(value, str):
            text = value.strip().lower().replace(" ", "_").replace("-", "_")
            if text in FREE_VALUES:
                return Reading("available", f"{name} {value!r}")
            if text in BUSY_VALUES:
                return Reading("busy", f"{name} {value!r}")
    if row.get("availability") is True or row.get("busy") is False:
        return Reading("available", "availability true" if row.get("availability") is True else "busy false")
    if row.get("busy") is True:
        return Reading("busy", "busy true")
    return None


def _title_reading(title: str) -> Reading | None:
    """What the title alone says: None when it says nothing about availability."""
    if _NEGATED.search(title):
        return Reading("busy", "the title says not available")
    if _OFFERS.search(title):
        if _BUSY.search(title) or _HEDGE.search(title):
            return Reading("unclear", "the title offers time but also says busy or hedges")
        return Reading("available", "the title offers time")
    if _MAYBE.search(title):
        return Reading("unclear", "the title may offer time or block it")
    return None


def read_row(row: Mapping[str, Any], inherited: Reading | None = None) -> Reading:
    """Read one event or slot; ``inherited`` is what its free_busy block or list states for it."""
    title = title_of(row)
    stated = _field_reading(row) or inherited
    if stated is not None and stated.kind == "busy":
        return stated
    if stated is not None:
        if title and (_BUSY.search(title) or _NEGATED.search(title)):
            return Reading("unclear", f"{stated.why}, but the title says busy")
        return stated
    return _title_reading(title) or BUSY


def _free_busy_rows(index: int, block: Mapping[str, Any]) -> Iterator[CalendarRow]:
    owner = str(block.get("email", "")).lower()
    block_reading = _field_reading(block)
    for key, slots in block.items():
        if not isinstance(slots, list) or key not in BUSY_LISTS + FREE_LISTS:
            continue
        listed = Reading("available", f"listed under {key}") if key in FREE_LISTS else block_reading
        for j, slot in enumerate(slots):
            if isinstance(slot, dict):
                path = f"$.free_busy[{index}].{key}[{j}]"
                yield CalendarRow(path, slot, read_row(slot, listed), owner,
                                  f"$.free_busy[{index}].{key}" if key in FREE_LISTS else path)


def calendar_rows(calendar: Mapping[str, Any]) -> Iterator[CalendarRow]:
    """Every event that is not cancelled and every free/busy slot, each with its reading."""
    for i, event in enumerate(calendar.get("events") or ()):
        if isinstance(event, dict) and str(event.get("status", "")).lower() != "cancelled":
            yield CalendarRow(f"$.events[{i}]", event, read_row(event), "", f"$.events[{i}]")
    for i, block in enumerate(calendar.get("free_busy") or ()):
        if isinstance(block, dict):
            yield from _free_busy_rows(i, block)
