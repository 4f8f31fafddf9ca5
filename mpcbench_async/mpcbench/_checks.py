"""Deterministic checks beside the judge, where the truth is computable from the data.

* planning — every proposed slot lies inside the participants' true common free
  time (from the calendar, in working hours, weekdays, inside the window, after
  the reference now), lasts
  the requested duration, and the answer names every participant;
* email_reply — a date or window stated in the answer matches the Jira target
  (the issue's fixVersion releaseDate);
* document_generation — every expected metric is quoted, and every percentage
  the answer quotes exists somewhere in the sources.

Slots are read from free text: a date (``2025-11-24``, ``Nov 24``, ``24 November``,
``Monday 24 Nov``) followed closely by a time range (``10:00-10:45``,
``10:00 to 10:45``, ``2pm–2:45pm``).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta


import msgspec
import orjson

from ._data import ScenarioData
from ._task import Task
from .tools import busy_intervals, common_free_slots, words

__all__ = ["CheckResult", "find_dates", "find_slots", "run_checks"]

MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"])}
MONTHS |= {m[:3]: i for m, i in list(MONTHS.items())} | {"sept": 9}
_MONTH = r"(?P<mon>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DATE = re.compile(
    r"(?P<iso>\d{4}-\d{2}-\d{2})"
    r"|(?:" + _MONTH + r"\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<y1>\d{4}))?)"
    r"|(?:(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+(?P<mon2>" + "|".join(sorted(MONTHS, key=len, reverse=True))
    + r")\.?(?:,?\s+(?P<y2>\d{4}))?)",
    re.I,
)
_CLOCK = r"(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?"
_RANGE = re.compile(_CLOCK + r"\s*(?:-|–|—|to|until)\s*" + _CLOCK, re.I)


class CheckResult(msgspec.Struct, kw_only=True):
    name: str
    passed: bool
    detail: str


def _year_for(month: int, day: int, anchor: date) -> int:
    """The year that puts month/day closest to the anchor (answers rarely state the year)."""
    candidates = [date(anchor.year + k, month, day) for k in (-1, 0, 1) if _valid(anchor.year + k, month, day)]
    return min(candidates, key=lambda d: abs(d - anchor)).year if candidates else anchor.year


def _valid(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def find_dates(text: str, anchor: date) -> list[tuple[int, date]]:
    """Every date mentioned in ``text`` as (position after it, date)."""
    found = []
    for m in _DATE.finditer(text):
        try:
            if m.group("iso"):
                value = date.fromisoformat(m.group("iso"))
            else:
                month = MONTHS[(m.group("mon") or m.group("mon2")).lower()]
                day = int(m.group("d1") or m.group("d2"))
                year = m.group("y1") or m.group("y2")
                value = date(int(year) if year else _year_for(month, day, anchor), month, day)
        except ValueError:
            continue
        found.append((m.end(), value))
    return found


def _clock(hour: str, minute: str | None, meridiem: str | None, fallback: str | None) -> time | None:
    h, mi = int(hour), int(minute or 0)
    meridiem = (meridiem or fallback or "").lower().replace(".", "")
    if meridiem == "pm" and h < 12:
        h += 12
    if meridiem == "am" and h == 12:
        h = 0
    return time(h, mi) if h < 24 and mi < 60 else None


def find_slots(text: str, anchor: date) -> list[tuple[date, time, time]]:
    """(day, start, end) for every time range that follows a date within 80 characters."""
    slots = []
    dates = find_dates(text, anchor)
    for i, (end_pos, day) in enumerate(dates):
        limit = dates[i + 1][0] if i + 1 < len(dates) else len(text)
        segment = text[end_pos:min(limit, end_pos + 80)]
        for m in _RANGE.finditer(segment):
            start = _clock(m.group(1), m.group(2), m.group(3), m.group(6))
            end = _clock(m.group(4), m.group(5), m.group(6), m.group(3))
            if start and end and end > start:
                slots.append((day, start, end))
    return slots


def _planning(task: Task, run_answer: str, data: ScenarioData) -> list[CheckResult]:
    facts = task.facts.planning
    if facts is None:
        return []
    tz = data.tz
    first, last = date.fromisoformat(facts.window_start[:10]), date.fromisoformat(facts.window_end[:10])
    emails = [p.lower() for p in facts.participants if "@" in p]
    busy = busy_intervals(data.source("calendar"), emails, tz)
    free = common_free_slots(busy, first, last, tz, data.workday_start, data.workday_end)
    proposed = find_slots(run_answer, data.reference_now.date())
    results = [CheckResult(name="planning.slots_found", passed=bool(proposed),
                           detail=f"{len(proposed)} slot(s) found in the answer")]
    inside, exact = [], []
    for day, start, end in proposed:
        lo = datetime.combine(day, start, tzinfo=tz)
        hi = datetime.combine(day, end, tzinfo=tz)
        inside.append(lo >= data.reference_now and any(s <= lo and hi <= e for s, e in free))
        exact.append(hi - lo == timedelta(minutes=facts.duration_minutes))
    label = [f"{d} {s:%H:%M}-{e:%H:%M}" for d, s, e in proposed]
    results.append(CheckResult(
        name="planning.slots_free", passed=bool(proposed) and all(inside),
        detail="; ".join(f"{lab}: {'free' if ok else 'NOT common free time'}" for lab, ok in zip(label, inside))
        or "no slots"))
    results.append(CheckResult(
        name="planning.duration", passed=bool(proposed) and all(exact),
        detail=f"requested {facts.duration_minutes} min; " + "; ".join(
            f"{lab}: {'ok' if ok else 'wrong length'}" for lab, ok in zip(label, exact))))
    people = _participant_names(facts.participants, data)
    answer_words = set(words(run_answer))
    missing = [name for name, email in people if not (set(words(name)) <= answer_words or email in run_answer.lower())]
    results.append(CheckResult(name="planning.participants", passed=not missing,
                               detail="all participants named" if not missing else f"missing: {', '.join(missing)}"))
    return results


def _participant_names(participants: list[str], data: ScenarioData) -> list[tuple[str, str]]:
    """(full name, email) for each participant given by email or name."""
    contacts = [c for c in data.source("contacts").get("contacts") or () if isinstance(c, dict)]
    out = []
    for p in participants:
        match = next((c for c in contacts if str(c.get("email", "")).lower() == p.lower()
                      or str(c.get("name", "")).lower() == p.lower()), None)
        out.append((str(match.get("name")) if match else p, str(match.get("email", "")).lower() if match else p.lower()))
    return out


def _target_date(task: Task, data: ScenarioData) -> date | None:
    if task.facts.target_date:
        return date.fromisoformat(task.facts.target_date)
    for issue in data.source("jira").get("issues") or ():
        if isinstance(issue, dict) and issue.get("key") == task.facts.issue_key:
            for version in issue.get("fixVersions") or ():
                if isinstance(version, dict) and version.get("releaseDate"):
                    return date.fromisoformat(str(version["releaseDate"])[:10])
    return None


def _email_reply(task: Task, answer: str, data: ScenarioData) -> list[CheckResult]:
    target = _target_date(task, data)
    if target is None:
        return []
    mentioned = [d for _, d in find_dates(answer, data.reference_now.date())]
    week_of = re.search(r"week of", answer, re.I) is not None
    ok = any(d == target or (week_of and d <= target < d + timedelta(days=7)) for d in mentioned)
    return [CheckResult(name="email_reply.target_date", passed=ok,
                        detail=f"target {target.isoformat()}; dates in answer: "
                               f"{', '.join(sorted({d.isoformat() for d in mentioned})) or 'none'}")]


_NUMBER = re.compile(r"[-+−]?\d+(?:\.\d+)?")


def _numbers(text: str) -> set[float]:
    return {abs(float(n.replace("−", "-"))) for n in _NUMBER.findall(text)}


def _document(task: Task, answer: str, data: ScenarioData) -> list[CheckResult]:
    results = []
    quoted = _numbers(answer)
    if task.facts.metrics:
        missing = [k for k, v in task.facts.metrics.items() if abs(v) not in quoted]
        results.append(CheckResult(name="report.metrics_quoted", passed=not missing,
                                   detail="all expected metrics quoted" if not missing else f"missing: {', '.join(missing)}"))
    percents = {abs(float(p)) for p in re.findall(r"(\d+(?:\.\d+)?)\s*%", answer)}
    corpus = _numbers(orjson.dumps(data.sources).decode())
    invented = sorted(p for p in percents if p not in corpus)
    results.append(CheckResult(name="report.metrics_in_sources", passed=not invented,
                               detail="every quoted percentage is in the sources" if not invented
                               else f"not in any source: {', '.join(f'{p:g}%' for p in invented)}"))
    return results


def run_checks(task: Task, final_answer: str, data: ScenarioData) -> list[CheckResult]:
    """The deterministic checks that apply to ``task`` (none when it declares no facts)."""
    if task.task_type == "planning":
        return _planning(task, final_answer, data)
    if task.task_type == "email_reply":
        return _email_reply(task, final_answer, data)
    if task.task_type == "document_generation":
        return _document(task, final_answer, data)
    return []


