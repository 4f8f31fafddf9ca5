"""Rules for untrusted input values that several loaders share: identifiers, free-form JSON, output directories,
dates and times.

Each function returns why a value is unusable (a phrase a loader puts after the
file and field it names) or ``None`` when it is fine, so loaders can collect every
problem before they raise. The rules exist because these values travel further
than the file they come from: ids become file names and keys, free-form JSON is
re-encoded into requests (orjson refuses more than 254 levels of nesting and
integers beyond 64 bits), and an output directory must be usable before the first
paid call, not after it. A date or date-time must exist on the calendar
(``2025-02-30`` does not) and its UTC offset must be one a place can have: within
±14:00 (``MAX_UTC_OFFSET``: every time zone in use lies within −12:00…+14:00; ISO 8601
itself does not bound the offset, and Python accepts up to ±23:59 and ``+05:99``).
"""

from __future__ import annotations

import calendar
import os
import re
import unicodedata
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = ["MAX_ID_BYTES", "MAX_NESTING", "MAX_UTC_OFFSET", "id_problem", "json_problem", "name_problem",
           "output_dir_problem", "timestamp_problem"]

MAX_ID_BYTES = 200  # a file name holds 255 bytes; room is left for prefixes and suffixes such as ``.json``
MAX_NESTING = 32  # objects and arrays inside one free-form field (a structured-output JSON schema needs ~25)
_INT64 = (-(2**63), 2**64 - 1)
MAX_UTC_OFFSET = timedelta(hours=14)
"""The largest UTC offset a date-time may state (Pacific/Kiritimati is +14:00; no zone is further from UTC)."""
_YMD = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})")
_OFFSET = re.compile(r"(?<=\d)([+-])(\d{2}):?(\d{2})(?::?(\d{2})(?:\.\d+)?)?$")


def _control(value: str) -> str | None:
    """The first control or lone surrogate character in ``value``, if any."""
    return next((ch for ch in value if unicodedata.category(ch) in ("Cc", "Cs")), None)


def name_problem(value: str) -> str | None:
    """Why ``value`` cannot name something (a model, a template): empty, too long, or holding control characters."""
    if not value.strip():
        return "must not be empty"
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_ID_BYTES:
        return f"is {len(value)} characters ({size} bytes) long; at most {MAX_ID_BYTES} bytes are allowed"
    if (ch := _control(value)) is not None:
        return f"contains the control character U+{ord(ch):04X}"
    return None


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be an id in file names: a ``name_problem``, a path separator, ``..`` or a leading ``.``."""
    if (problem := name_problem(value)) is not None:
        return problem
    if "/" in value or "\\" in value:
        return "must not contain a path separator (/ or \\)"
    if ".." in value or value.startswith("."):
        return "must not contain '..' or start with '.'"
    return None


def _walk(value: Any, path: str, depth: int) -> Iterator[tuple[str, str]]:
    """(path, problem) of each node of a decoded JSON value that cannot be re-encoded safely."""
    stack = [(value, path, depth)]
    while stack:
        node, where, level = stack.pop()
        if isinstance(node, (dict, list)):
            if level > MAX_NESTING:
                yield where, f"nests deeper than {MAX_NESTING} levels"
                continue
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, child in items:
                stack.append((child, f"{where}.{key}" if isinstance(node, dict) else f"{where}[{key}]", level + 1))
        elif isinstance(node, int) and not isinstance(node, bool) and not _INT64[0] <= node <= _INT64[1]:
            yield where, f"integer {node} does not fit in 64 bits"


def json_problem(value: Any, path: str) -> tuple[str, str] | None:
    """The first (JSON path, problem) in a free-form value: nesting beyond ``MAX_NESTING`` or a too large integer.

    ``value`` itself is level 1 when it is an object or array.
    """
    return next(_walk(value, path, 1), None)


def output_dir_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be an output directory: a file there or above it, or not writable; ``None`` when usable."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        return f"{path} is a file, not a directory"
    absolute = path.absolute()
    base = next((p for p in (absolute, *absolute.parents) if p.exists()), Path("/"))
    if base != absolute and not base.is_dir():
        return f"{path}: cannot create the directory there, {base} is a file"
    if not os.access(base, os.W_OK | os.X_OK):
        return f"{path}: {base} is not writable"
    return None


def _offset_problem(text: str) -> str | None:
    """Why the UTC offset ``text`` ends with cannot be real (minutes past 59, beyond ±14:00), or None."""
    match = _OFFSET.search(text[8:])  # after the date: its own "-" signs are no offset
    if match is None:
        return None
    sign, hours, minutes, seconds = match.groups()
    shown = match.group(0)
    if int(minutes) > 59 or int(seconds or 0) > 59:
        return f"has the UTC offset {shown}, whose minutes or seconds are past 59"
    if timedelta(hours=int(hours), minutes=int(minutes), seconds=int(seconds or 0)) > MAX_UTC_OFFSET:
        return f"has the UTC offset {shown}; offsets lie within ±14:00"
    return None


def timestamp_problem(text: str) -> str | None:
    """Why ``text`` is not a real ISO 8601 date or date-time, or ``None`` when it is.

    Real means: the day exists (``2025-02-30`` and month 13 do not), the clock time is one of the day's, and
    the UTC offset, if any, is within ``MAX_UTC_OFFSET`` with minutes 00–59. The phrase goes after the value.
    """
    try:
        datetime.fromisoformat(text)
    except ValueError as exc:
        day = _YMD.match(text)
        if day is not None:
            year, month, number = map(int, day.groups())
            if not 1 <= month <= 12:
                return f"is not a real date (there is no month {month:02d})"
            days = calendar.monthrange(year, month)[1]
            if not 1 <= number <= days:
                return f"is not a real date ({calendar.month_name[month]} {year} has {days} days)"
        if (offset := _offset_problem(text)) is not None:
            return offset
        return f"is not an ISO 8601 date or date-time ({exc})"
    return _offset_problem(text)
