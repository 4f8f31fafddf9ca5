"""Reading what real model answers say: dates, proposed meeting slots, date windows and quoted quantities.

Shared by the deterministic MPCBench checks and the rule-based sim judge; standard library only (and the
package's ``checkpoint``).

An answer's length is the model's to choose, and some readings pair each match with every earlier one (a span
against the spans taken, a line against the dates found): every loop over an answer's matches, lines or findings
calls ``checkpoint()`` once per step, so that the checks, run on the event loop under a short budget first
(``mpcbench._suite``), stop there when an answer makes them long and run again in a thread. Outside such a run a
checkpoint does nothing, and nothing read changes.

Dates (``find_dates``)
    ``2025-11-25``; ``11/25``, ``11/25/2025``, ``25/11/2025`` (month/day, the US order, unless the
    first number is above 12 — or unless only the day/month reading fits a weekday written beside
    it or the task's window); ``25.11.2025``; ``Nov 25``, ``Nov 25th``, ``November 25, 2025``,
    ``25 Nov``, ``the 25th of November``; ``Tuesday the 25th`` / ``Tue 25th`` (the month whose 25th
    is a Tuesday nearest the window); ``the 25th`` alone (that day in the window, else the next one
    after the anchor); a weekday alone (``Tuesday`` → that weekday inside the window, else the next
    one after the anchor; ``next Tuesday`` → the Tuesday of the week after the anchor's week;
    ``this Tuesday`` → the anchor's week); ``today``, ``tomorrow``. A missing year is the one that
    puts the date nearest the window (or the anchor). Weekday ranges (``Mon–Fri``) and plurals
    (``Mondays``) are not dates. ``May``/``March``/``Mar`` and weekday or month abbreviations count
    only capitalised (``we may 5…`` is not a date).

Slots (``find_slots``)
    Times ``2:30 PM``, ``2:30pm``, ``2 p.m.``, ``14:30``, ``14.30``, ``14h30``, ``noon``; ISO date-times
    with offsets. Ranges join two times with ``-`` ``–`` ``—`` ``to`` ``until`` ``till`` ``through``
    (``between … and …`` too; in a table row two cells ``| 14:00 | 14:45 |``); a meridiem written
    once is shared (``2:30–3:15pm``; ``11:30–12:15pm`` is 11:30 am). A time without a meridiem is
    read as written, except hours 1–6 without a leading zero, which are afternoon. A start with a
    length (``2:30 PM for 45 minutes``, ``2:30 PM (45 min)``) ends after that length; a start alone
    takes the meeting length the answer states once (``a 45-minute sync``, ``Duration: 45 min``,
    ``Suggested times (45 min):``), else it lasts ``default_minutes`` and is returned with
    ``length_stated=False``. A zone or offset after a time (``UTC``, ``ET``/``EST``/``EDT``, ``PT``,
    ``CET``, ``KST``, ``JST``, ``IST``, ``NPT``, ``NT``, ``+05:45``, ``UTC+9``, ``(Asia/Seoul)``,
    ``Seoul time``, ``Eastern Time``, ``2 PM Eastern``, ``local time``), named by the table column it sits in
    (``| Start (UTC) |``), or declared for the answer (``All times in ET``) is converted into the
    scenario zone; an abbreviation with several meanings (``IST``, ``CST``, ``BST``) takes the one
    whose offset equals the scenario zone's, else the first listed. Each time takes the date of its
    sentence (the date after it when the sentence opens with the time — ``10:00 on Tue Nov 25`` —
    else the one before it), else the latest date of the lines above (a heading ``**Tue Nov 25**``
    over bullets).

    Only PROPOSED slots are returned. The rule a careful reader applies:
    * the last cue word before a time in its clause (a clause ends at ``.``, ``;``, ``!``, ``?``,
      ``, so``, ``, but`` and the like) decides. Context cues make it a mention: busy, booked,
      blocked, occupied, unavailable, not free/available, conflict, clash, out of office, is
      out/away/off, on leave, vacation, holiday, travel, lunch, working/business/office/core hours,
      workday, avoid, except, excluding, outside, existing, already, standup, recurring, every,
      has/have a, holds, ends, finishes, until, till, given, because, due to, considering, rules out,
      wrote, said, sent, posted, mentioned, asked, received, message, reference, now, currently,
      deadline, due, constraint, can't. Strong proposal cues — option, propose, suggest, recommend,
      how/what about, could, can, would work, works, slot, alternative, candidate, best, preferred,
      choice, pick, go with, book, schedule, let's, invite — and weak ones — available,
      availability, free, open — make it a proposal;
    * a time written as the time of a known event (``the 09:30 standup``, ``Alice's 3pm call``) is a
      mention;
    * after the time (up to the next date or time in the clause; a date attached to the time is
      skipped) a rejection — busy, booked, blocked, taken, occupied, unavailable, not
      free/available, conflict, clash, doesn't/won't work, ruled out, excluded, rejected, lunch,
      existing, already, working/business hours — makes it a mention unless negated just before it
      (``no conflicts``, ``after lunch``, ``within working hours``);
    * a time with no cue in its clause inherits its section: a heading line (ending in ``:``, a
      ``#`` heading or a bold line) gives the lines under it the class of its first cue
      (``Busy times:``, ``Existing meetings:`` → mentions; ``Proposed slots:`` → proposals) until
      the next heading; block quotes (``>``) are quotations, never proposals;
    * when any time is proposed with a strong cue, times offered only as free or available are the
      windows the proposals came from (``free 12:00–18:00 … I suggest 12:00–12:45``), not proposals;
      so is a range that strictly contains another proposed slot on the same day; duplicates count
      once.

Date windows (``find_periods``)
    Each date above, and ``week of <date>`` / ``week commencing <date>`` (Monday to Sunday),
    ``by``/``no later than``/``on or before <date or window>`` (a deadline: from the anchor to its
    last day; ``before <date>`` ends the day before), ``after <date>`` / ``shortly after our release
    on <date>`` (the fortnight after that day; ``on or after`` includes it), date ranges (``Dec
    15–19``, ``15–19 December``, ``between Dec 15 and Dec 19``), a month (``in December``, ``December
    2025``), parts of a month (``early``/``beginning of``/``start of`` 1–10, ``mid``/``mid-``/``middle
    of`` 11–20, ``late``/``end of`` 21–last, ``first half`` 1–15, ``second half`` 16–last, ``first`` …
    ``fourth week of`` 1–7 … 22–28, ``last week of`` the last 7 days), ``this``/``next week``,
    ``this``/``next month`` (``later this month`` from the anchor), ``in two weeks`` (that day, give
    or take half a week), ``within the next 2–3 weeks`` / ``within a month`` (a deadline). A range with
    both ends written as days is ``explicit`` (its width is the writer's choice, not a calendar unit's;
    ``Dec 1 – Dec 31`` is the month).

Quantities (``find_quantities``)
    Percentages (``12%``, ``12 percent``, ``12 pct``) and plain numbers (``1,204``, ``17``,
    ``seventeen``, ``240ms``, ``1.2k``); not the numbers inside dates, times, zone offsets,
    identifiers (``APP-412``, ``#412``, ``p95``, ``Q4``, ``v2.3``), list markers, years or labels such
    as ``Option 2``/``Sprint 14``. A direction written beside it (``down 12%``, ``dropped by 12%``,
    ``-12%``, ``↓12%``, ``12% ↓``, ``12% lower``, ``15% faster``/``slower``, ``a 12% decrease``) signs the
    value and sets ``direction``; ``improved`` sets none, and ``rose to 99.2%`` is a level (``is 15%
    slower`` is not). An unsigned change after a before and an after level (``212 → 180 (15%)``,
    ``from 47 to 41 min (12%)``, a table's two level cells before a change column) takes their direction.
    The label is the words of its clause around it (in a Markdown table the whole row and the column's
    header), cut at a neighbouring number only across a separator (``,`` — not one grouping thousands
    — ``;`` ``|`` ``/`` ``and``) — except that a change written just after a level (``Pilot sites: 28, up
    12%``, ``WAU 50,000 → 55,000 (+10%)``) keeps the level's label. CSV rows (``_rows``) are read cell by
    cell: a bare-number cell is labelled by the row's other cells and its column's header, is a
    percentage when written so or when the header or row names one (``change_pct``), and is signed data
    (unsigned in a change column is a rise). ``same_quantity`` compares two
    quantities as a reader would: same kind, same magnitude, no contradicting directions, and
    labels sharing a significant word (stemmed; bug/issue/ticket/defect and
    closed/resolved/fixed/completed are synonyms) or an acronym (``DAU`` ↔ ``daily active users``; in lower
    case, ``wau``, only for the initials of three or more words).
    ``json_quantities`` reads the quantities a JSON document states: those its strings quote (a
    string holding a JSON object or array is read as JSON), and numeric fields — a percentage when
    the key path names one (``uptime_percent``, ``error_pct``, ``failure_rate``, ``conversion_ratio``;
    not ``…percentile``), labelled by that path and the name of the object holding it, with the direction
    ``key_direction`` reads (``…_reduction_pct: 15`` is down, ``…_change_percent: 10`` up).
"""

from __future__ import annotations

import calendar
import functools
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from ._checkpoint import checkpoint
from ._rows import Row, csv_rows, table_header

__all__ = [
    "DateMention",
    "Period",
    "Quantity",
    "Slot",
    "Stated",
    "clock_ranges",
    "find_dates",
    "find_periods",
    "find_quantities",
    "find_slots",
    "fold",
    "json_quantities",
    "key_direction",
    "label_words",
    "labels_match",
    "same_quantity",
]


@dataclass(frozen=True, slots=True)
class DateMention:
    """A date written in the text: its character span and the calendar day it names."""

    start: int
    end: int
    value: date
    kind: str = "date"  # "date" (day and month written) | "weekday" (a weekday or today/tomorrow only)


@dataclass(frozen=True, slots=True)
class Slot:
    """A proposed meeting slot, aware and in the scenario zone; ``text`` is the snippet it was read from."""

    start: datetime
    end: datetime
    text: str
    length_stated: bool = True


@dataclass(frozen=True, slots=True)
class Period:
    """A day or window of days the text names (``Dec 18``, ``week of Dec 15``, ``mid-December``)."""

    start: int
    end: int
    first: date
    last: date
    text: str
    deadline: bool = False  # "by <date>": from the anchor up to ``last``
    explicit: bool = False  # both ends written as days ("Dec 8 – Dec 29", "between Dec 8 and 28"), not a named window


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number quoted in the text: value (signed when a direction is written), kind and the words around it."""

    value: float
    kind: str  # "percent" | "number"
    label: str
    start: int
    end: int
    direction: int = 0  # -1 down, +1 up, 0 not stated


# -- lexicon -----------------------------------------------------------------------------------------------

_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
_MONTH_NUMBER = {name[:3]: i + 1 for i, name in enumerate(_MONTH_NAMES)}
_WEEKDAY_NUMBER = {"mo": 0, "tu": 1, "we": 2, "th": 3, "fr": 4, "sa": 5, "su": 6}


def _capitalised(words: Iterable[str]) -> str:
    """Alternatives matched only Capitalised or UPPER-case (abbreviations that are also English words)."""
    return "|".join(f"{w.capitalize()}|{w.upper()}" for w in words)


_MONTH = (r"(?:(?i:january|february|april|june|july|august|september|october|november|december)"
          r"|March|MARCH|May|MAY"
          r"|(?:(?i:jan|feb|apr|jun|jul|aug|sept|sep|oct|nov|dec)|" + _capitalised(["mar"]) + r")\.?)(?![A-Za-z])")
_WEEKDAY = (r"(?:(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
            r"|(?:" + _capitalised(["mon", "tues", "tue", "weds", "wed", "thurs", "thur", "thu", "fri", "sat", "sun"])
            + r")\.?)(?![A-Za-z])")
_ORDINAL = r"(?:st|nd|rd|th)"
# What a month's name or a weekday's can start with (its first two letters, in any case): a superset.
_MONTH_START = r"(?i:[jfasond][aepuco])|M[aA]"
_WEEKDAY_START = r"(?i:[mtwfs][ouehra])"


def _starting(start: str, pattern: str) -> str:
    """``pattern`` behind a lookahead of what its matches start with (``start``, a superset of it): the same matches,
    found faster. The regular expression engine tries a pattern at every position of the text and, at each, every
    alternative of a case-insensitive alternation (dozens of month, weekday and cue words) before giving up; the
    lookahead gives up at once where no match can start (most positions). The scans of an answer were most of a
    check's CPU (issue 31)."""
    return f"(?={start})(?:{pattern})"


# The forms starting with a digit (day or year first) apart from the one starting with a month's name: a match
# starts with one or the other, so the order between them does not change what is found.
_EXPLICIT = re.compile(
    _starting(r"\d",
              r"(?<![\w/.-])(?P<iy>\d{4})[-/.](?P<im>\d{1,2})[-/.](?P<id>\d{1,2})(?!\d)"
              r"|(?<![\w/.:-])(?P<na>\d{1,2})/(?P<nb>\d{1,2})(?:/(?P<ny>\d{4}|\d{2}))?(?![\d/])"
              r"|(?<![\w.:-])(?P<ea>\d{1,2})\.(?P<eb>\d{1,2})\.(?P<ey>\d{4})(?!\d)"
              rf"|(?<![\w:.$])(?P<dd>\d{{1,2}}){_ORDINAL}?(?:\s+of)?[\s-]*(?P<dmon>{_MONTH})"
              r"(?:[\s,-]+(?P<dy>\d{4})(?![:\d]))?")
    + "|" + _starting(_MONTH_START,
                      rf"(?P<mon>{_MONTH})[\s.-]*(?P<md>\d{{1,2}}){_ORDINAL}?"
                      r"(?!\d|:\d|\s*(?i:[ap]\.?m\b|%|h\b|hours?\b))(?:,?\s+(?P<my>\d{4})(?![:\d]))?")
)
_WEEKDAY_DAY = re.compile(_starting(_WEEKDAY_START,
                                    rf"(?P<wd>{_WEEKDAY}),?\s+"
                                    rf"(?:the\s+(?P<a>\d{{1,2}}){_ORDINAL}?|(?P<b>\d{{1,2}}){_ORDINAL})(?!\w)"))
_BARE_ORDINAL = re.compile(rf"(?i)(?<![\w])the\s+(?P<d>\d{{1,2}}){_ORDINAL}(?![\w])")
_WEEKDAY_ALONE = re.compile(_starting(rf"(?i:[ntcf][eho])|{_WEEKDAY_START}",
                                      rf"(?:(?P<rel>(?i:next|this|coming|following))\s+)?(?P<wd>{_WEEKDAY})"
                                      r"|(?P<word>(?i:today|tomorrow))(?![A-Za-z])"))
_WEEKDAY_RANGE_AFTER = re.compile(rf"\s*(?:-|–|—|(?i:to|through|thru|until))\s*{_WEEKDAY}")
_WEEKDAY_RANGE_BEFORE = re.compile(rf"{_WEEKDAY}\s*(?:-|–|—|(?i:to|through|thru|until))\s*$")
_JOINS_WEEKDAY = re.compile(r"[\s,(]*")


# -- dates -------------------------------------------------------------------------------------------------

# Years an answer about workplace plans can mean; outside them a "date" is noise, and the day arithmetic
# around a reading (week of, +14 days, next month) would step past datetime's range.
_YEARS = range(1000, 9000)


def _valid(year: int, month: int, day: int) -> date | None:
    if year not in _YEARS:
        return None
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _nearest(candidates: Iterable[date | None], ref: date, weekday: int | None) -> date | None:
    """The candidate nearest ``ref``; candidates on the written weekday first (a reader trusts both)."""
    options = [c for c in candidates if c is not None]
    if weekday is not None and any(c.weekday() == weekday for c in options):
        options = [c for c in options if c.weekday() == weekday]
    return min(options, key=lambda c: (abs(c - ref), c)) if options else None


def _month_day(month: int, day: int, year: str | None, ref: date, weekday: int | None) -> date | None:
    if year:
        y = int(year)
        return _valid(y + 2000 if y < 100 else y, month, day)
    return _nearest((_valid(ref.year + k, month, day) for k in (-1, 0, 1)), ref, weekday)


def _numeric(a: int, b: int, year: str | None, ref: date, weekday: int | None,
             window: tuple[date, date] | None) -> date | None:
    """``a/b``: month/day unless a > 12, or unless only day/month fits the written weekday or the window."""
    us, eu = _month_day(a, b, year, ref, weekday), _month_day(b, a, year, ref, weekday)
    readings = [d for d in (us, eu) if d is not None]
    if weekday is not None and any(d.weekday() == weekday for d in readings):
        readings = [d for d in readings if d.weekday() == weekday]
    if window is not None and any(window[0] <= d <= window[1] for d in readings):
        readings = [d for d in readings if window[0] <= d <= window[1]]
    return readings[0] if readings else None


def _weekday_of(word: str | None) -> int | None:
    return _WEEKDAY_NUMBER[word.lower()[:2]] if word else None


def _explicit_value(m: re.Match[str], ref: date, weekday: int | None, window: tuple[date, date] | None) -> date | None:
    g = m.group
    if g("iy"):
        return _valid(int(g("iy")), int(g("im")), int(g("id")))
    if g("na"):
        if m.group(0) == "24/7":
            return None
        return _numeric(int(g("na")), int(g("nb")), g("ny"), ref, weekday, window)
    if g("ea"):
        return _numeric(int(g("ea")), int(g("eb")), g("ey"), ref, weekday, window)
    if g("mon"):
        return _month_day(_MONTH_NUMBER[g("mon").lower()[:3]], int(g("md")), g("my"), ref, weekday)
    return _month_day(_MONTH_NUMBER[g("dmon").lower()[:3]], int(g("dd")), g("dy"), ref, weekday)


def _weekday_date(weekday: int, rel: str | None, anchor: date, window: tuple[date, date] | None) -> date:
    monday = anchor - timedelta(days=anchor.weekday())
    rel = (rel or "").lower()
    if rel in ("next", "following"):
        return monday + timedelta(days=7 + weekday)
    if rel == "this":
        return monday + timedelta(days=weekday)
    if window is not None:
        day = window[0]
        while day <= window[1]:
            if day.weekday() == weekday:
                return day
            day += timedelta(days=1)
    return anchor + timedelta(days=(weekday - anchor.weekday() - 1) % 7 + 1)


def _day_of_month(day: int, anchor: date, window: tuple[date, date] | None) -> date | None:
    """``the 18th``: that day inside the window, else the first one on or after the anchor."""
    first = window[0] if window else anchor
    for k in range(3):
        year, month = first.year + (first.month - 1 + k) // 12, (first.month - 1 + k) % 12 + 1
        value = _valid(year, month, day)
        if value and value >= first and (window is None or value <= window[1]):
            return value
    return None


# Scans made per reading compiled once here (``re.search(pattern, …)`` looks the pattern up in ``re``'s cache: two
# Python calls per use, issue 31).
_OPENS = re.compile(r"\s*\(?")


def _free(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    # A loop, not all() over a generator, which costs a resumption per span taken (issue 31). Called once per match
    # of a scan, against every span taken so far: a checkpoint per call (module docstring).
    checkpoint()
    for s, e in taken:  # noqa: SIM110
        if start < e and end > s:
            return False
    return True


def find_dates(text: str, *, anchor: date, window: tuple[date, date] | None = None) -> list[DateMention]:
    """Every date written in ``text``, in order (see the module docstring for the forms read)."""
    ref = window[0] if window else anchor
    weekdays: list[tuple[int, int, int, str | None, str | None]] = []
    for m in _WEEKDAY_ALONE.finditer(text):
        checkpoint()
        if m.group("wd") and (_WEEKDAY_RANGE_AFTER.match(text, m.end())
                              or _WEEKDAY_RANGE_BEFORE.search(text[max(0, m.start() - 16):m.start()])):
            continue
        weekdays.append((m.start(), m.end(), -1 if m.group("word") else _WEEKDAY_NUMBER[m.group("wd").lower()[:2]],
                         m.group("rel"), m.group("word")))
    mentions: list[DateMention] = []
    taken: list[tuple[int, int]] = []
    for m in _EXPLICIT.finditer(text):
        checkpoint()
        start, end = m.span()
        before = after = None
        for w in weekdays:  # each a slice of the text up to the date: a checkpoint per weekday
            checkpoint()
            if w[2] < 0:
                continue
            if before is None and w[1] <= start and _JOINS_WEEKDAY.fullmatch(text[w[1]:start]):
                before = w
            if after is None and w[0] >= end and _OPENS.fullmatch(text[end:w[0]]):
                after = w
            if before is not None and after is not None:
                break
        hint = before or after
        value = _explicit_value(m, ref, hint[2] if hint else None, window)
        if value is None:
            continue
        if before:
            start = before[0]
        if after:
            end = after[1] + (1 if text[after[1]:after[1] + 1] == ")" else 0)
        mentions.append(DateMention(start, end, value))
        taken.append((start, end))
    for m in _WEEKDAY_DAY.finditer(text):
        if not _free(taken, *m.span()):
            continue
        day = int(m.group("a") or m.group("b"))
        months = [(ref.year + (ref.month - 1 + k) // 12, (ref.month - 1 + k) % 12 + 1) for k in (-1, 0, 1, 2)]
        value = _nearest((_valid(y, mo, day) for y, mo in months), ref, _weekday_of(m.group("wd")))
        if value is not None:
            mentions.append(DateMention(m.start(), m.end(), value))
            taken.append(m.span())
    for m in _BARE_ORDINAL.finditer(text):
        if _free(taken, *m.span()) and (value := _day_of_month(int(m.group("d")), anchor, window)):
            mentions.append(DateMention(m.start(), m.end(), value))
            taken.append(m.span())
    for start, end, weekday, rel, word in weekdays:
        if not _free(taken, start, end):
            continue
        if word:
            value = anchor + timedelta(days=1 if word.lower() == "tomorrow" else 0)
        else:
            value = _weekday_date(weekday, rel, anchor, window)
        mentions.append(DateMention(start, end, value, kind="weekday"))
    return sorted(mentions, key=lambda d: d.start)


# -- periods (dates and windows of dates) --------------------------------------------------------------------

_MONTH_ALONE = re.compile(_starting(
    rf"(?i:[tembslf][heiatno])|[1-4](?i:[snrt])|{_MONTH_START}",
    r"(?P<part>(?i:(?:the\s+)?(?:early|mid|late|end\s+of|beginning\s+of|start\s+of|middle\s+of"
    r"|(?:first|second)\s+half\s+of|(?:first|second|third|fourth|last|1st|2nd|3rd|4th)\s+week\s+of))[\s-]+)?"
    rf"(?P<mon>{_MONTH})(?:,?\s+(?P<year>\d{{4}}))?"
))
_MONTH_PARTS = {"early": (1, 10), "beginning": (1, 10), "start": (1, 10), "mid": (11, 20), "middle": (11, 20),
                "late": (21, 31), "end": (21, 31), "first half": (1, 15), "second half": (16, 31),
                "first week": (1, 7), "second week": (8, 14), "third week": (15, 21), "fourth week": (22, 28),
                "last week": (-6, 31)}
_ORDINAL_WORDS = {"1st": "first", "2nd": "second", "3rd": "third", "4th": "fourth"}
_WEEK_OF = re.compile(r"(?i:(?:the\s+)?(?:week\s+(?:of|beginning|starting|commencing)|w/c)\s+"
                      r"(?:(?:mon(?:day)?|the)\b,?\s*)?)$")
_BY = re.compile(r"(?i:\b(?:by|no\s+later\s+than|on\s+or\s+before|not\s+later\s+than|before)\s+(?:the\s+)?)$")
_AFTER = re.compile(r"(?i:\b(?P<inclusive>on\s+or\s+)?(?:(?:shortly|soon|right|just|sometime)\s+)?"
                    r"(?:after|following)\s+"
                    r"(?:(?:the|our|your|its|this|that|a|an)\s+)?(?:[\w.-]+\s+){0,4}?(?:(?:on|of)\s+)?)$")
_RANGE_JOIN = re.compile(r"\s*(?:-|–|—|(?i:to|through|thru|until|and))\s*")
_RANGE_DAY = re.compile(rf"\s*(?:-|–|—|(?i:to|through|thru|until|and))\s*(?P<d>\d{{1,2}}){_ORDINAL}?"
                        r"(?![\d:]|\s*(?i:[ap]\.?m\b|%|h\b))")
_DAY_BEFORE_RANGE = re.compile(rf"(?<![\w:.])(?P<d>\d{{1,2}}){_ORDINAL}?\s*(?:-|–|—|(?i:to|through))\s*$")
_RELATIVE_WEEK = re.compile(r"(?i)\b(?=[emltn][aineh])(?P<part>(?:early|mid|late|later|end\s+of|the\s+end\s+of)"
                            r"[\s-]+)?(?P<which>this|next)\s+(?P<unit>week|month)\b")
_COUNT = r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|a\s+couple\s+of|a\s+few"
_RELATIVE_SPAN = re.compile(
    rf"(?i)\b(?P<kind>in|within|over)\s+(?:the\s+)?(?P<next>(?:next|coming)\s+)?(?:about\s+|around\s+|roughly\s+"
    rf"|approximately\s+|~)?(?P<n>{_COUNT})(?:\s*(?:-|–|to|or)\s*(?P<m>{_COUNT}))?\s+(?P<unit>days?|weeks?|months?)\b")
_COUNT_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30}


def find_periods(text: str, *, anchor: date) -> list[Period]:
    """Every date or window of dates named in ``text`` (see the module docstring), in order."""
    dates = find_dates(text, anchor=anchor)
    periods: list[Period] = []
    used: set[int] = set()
    for i, d in enumerate(dates):
        checkpoint()
        if i in used:
            continue
        first, last, start, end = d.value, d.value, d.start, d.end
        nxt = dates[i + 1] if i + 1 < len(dates) else None
        day_range = _RANGE_DAY.match(text, end)
        explicit = True
        if nxt and _RANGE_JOIN.fullmatch(text[end:nxt.start]) and nxt.value >= first:
            last, end = nxt.value, nxt.end
            used.add(i + 1)
        elif day_range and (later := _valid(first.year, first.month, int(day_range.group("d")))) and later > first:
            last, end = later, day_range.end()
        elif (earlier := _DAY_BEFORE_RANGE.search(text[max(0, start - 12):start])) and (
                opening := _valid(first.year, first.month, int(earlier.group("d")))) and opening < first:
            first, start = opening, start - len(earlier.group(0))
        else:
            explicit = False
        before = text[max(0, start - 40):start]
        if (week := _WEEK_OF.search(before)) and first == last:
            first = first - timedelta(days=first.weekday())
            last, start = first + timedelta(days=6), start - len(week.group(0))
        if by := _BY.search(text[max(0, start - 24):start]):
            exclusive = by.group(0).strip().lower().startswith("before")
            first, last, start = anchor, last - timedelta(days=1 if exclusive else 0), start - len(by.group(0))
        elif after := _AFTER.search(text[max(0, start - 60):start]):
            # "shortly after our v1.6 release on Dec 18": the two weeks after that day
            first, last = (first if after.group("inclusive") else last + timedelta(days=1)), last + timedelta(days=14)
            start -= len(after.group(0))
        whole_month = first.day == 1 and last == first.replace(day=calendar.monthrange(first.year, first.month)[1])
        periods.append(Period(start, end, first, last, text[start:end], deadline=bool(by),
                              explicit=explicit and not week and not by and not after and not whole_month))
    taken = [(p.start, p.end) for p in periods]
    for m in _MONTH_ALONE.finditer(text):
        if not _free(taken, *m.span()):
            continue
        month = _MONTH_NUMBER[m.group("mon").lower()[:3]]
        if m.group("year"):
            year = int(m.group("year"))
            if year not in _YEARS:
                continue
        else:
            nearest = _month_day(month, 1, None, anchor, None)
            assert nearest is not None, "every month has a day 1"
            year = nearest.year
        days = calendar.monthrange(year, month)[1]
        lo, hi = _month_part(m.group("part"), days)
        first, last, start = date(year, month, lo), date(year, month, min(hi, days)), m.start()
        if by := _BY.search(text[max(0, start - 24):start]):
            first, start = anchor, start - len(by.group(0))
        periods.append(Period(start, m.end(), first, last, text[start:m.end()], deadline=bool(by)))
    periods += [_relative_period(m, anchor) for m in _RELATIVE_WEEK.finditer(text)]
    periods += [_relative_span(m, anchor) for m in _RELATIVE_SPAN.finditer(text)]
    return sorted(periods, key=lambda p: p.start)


def _month_part(part: str | None, days: int) -> tuple[int, int]:
    """First and last day of ``early``, ``mid-``, ``end of``, ``the 2nd week of``… in a month of ``days`` days."""
    words = " ".join((part or "").lower().replace("-", " ").split()).removeprefix("the ").removesuffix(" of").split()
    key = " ".join(_ORDINAL_WORDS.get(w, w) for w in words)
    lo, hi = _MONTH_PARTS.get(key, (1, days))
    return (days + lo if lo < 0 else lo), min(hi, days)


def _relative_period(m: re.Match[str], anchor: date) -> Period:
    """``this week``, ``next month``, ``later this month``, ``early next month``."""
    later = m.group("which").lower() == "next"
    if m.group("unit").lower() == "week":
        first = anchor - timedelta(days=anchor.weekday()) + timedelta(days=7 if later else 0)
        return Period(m.start(), m.end(), first, first + timedelta(days=6), m.group(0))
    year, month = (anchor.year + anchor.month // 12, anchor.month % 12 + 1) if later else (anchor.year, anchor.month)
    days = calendar.monthrange(year, month)[1]
    lo, hi = _month_part(m.group("part"), days)
    first, last = date(year, month, lo), date(year, month, min(hi, days))
    if (m.group("part") or "").lower().startswith("later"):
        first = max(anchor, date(year, month, 1))
    return Period(m.start(), m.end(), first, last, m.group(0))


def _count(word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else _COUNT_WORDS[word]


def _relative_span(m: re.Match[str], anchor: date) -> Period:
    """``in two weeks`` (that day, give or take half a week), ``within the next 2–3 weeks`` (a deadline)."""
    unit = _UNIT_DAYS[m.group("unit").lower().rstrip("s")]
    low, high = _count(m.group("n")) * unit, _count(m.group("m") or m.group("n")) * unit
    if m.group("kind").lower() == "in" and not m.group("next"):
        slack = unit // 2
        return Period(m.start(), m.end(), anchor + timedelta(days=low - slack), anchor + timedelta(days=high + slack),
                      m.group(0))
    return Period(m.start(), m.end(), anchor, anchor + timedelta(days=high), m.group(0), deadline=True)


# -- zones ---------------------------------------------------------------------------------------------------

_ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "UTC": ("UTC",), "GMT": ("UTC", "Europe/London"), "Z": ("UTC",),
    "ET": ("America/New_York",), "EST": ("America/New_York",), "EDT": ("America/New_York",),
    "CT": ("America/Chicago",), "CST": ("America/Chicago", "Asia/Shanghai"), "CDT": ("America/Chicago",),
    "MT": ("America/Denver",), "MST": ("America/Denver", "America/Phoenix"), "MDT": ("America/Denver",),
    "PT": ("America/Los_Angeles",), "PST": ("America/Los_Angeles",), "PDT": ("America/Los_Angeles",),
    "AKST": ("America/Anchorage",), "AKDT": ("America/Anchorage",), "HST": ("Pacific/Honolulu",),
    "AST": ("America/Halifax", "Asia/Riyadh"), "ADT": ("America/Halifax",),
    "NT": ("America/St_Johns",), "NST": ("America/St_Johns",), "NDT": ("America/St_Johns",),
    "BST": ("Europe/London", "Asia/Dhaka"), "WET": ("Europe/Lisbon",), "WEST": ("Europe/Lisbon",),
    "CET": ("Europe/Paris",), "CEST": ("Europe/Paris",), "EET": ("Europe/Athens",), "EEST": ("Europe/Athens",),
    "MSK": ("Europe/Moscow",), "GST": ("Asia/Dubai",), "PKT": ("Asia/Karachi",),
    "IST": ("Asia/Kolkata", "Europe/Dublin", "Asia/Jerusalem"), "NPT": ("Asia/Kathmandu",),
    "ICT": ("Asia/Bangkok",), "WIB": ("Asia/Jakarta",), "SGT": ("Asia/Singapore",), "HKT": ("Asia/Hong_Kong",),
    "PHT": ("Asia/Manila",), "KST": ("Asia/Seoul",), "JST": ("Asia/Tokyo",), "AEST": ("Australia/Sydney",),
    "AEDT": ("Australia/Sydney",), "ACST": ("Australia/Adelaide",), "ACDT": ("Australia/Adelaide",),
    "AWST": ("Australia/Perth",), "NZST": ("Pacific/Auckland",), "NZDT": ("Pacific/Auckland",),
    "SAST": ("Africa/Johannesburg",), "WAT": ("Africa/Lagos",), "EAT": ("Africa/Nairobi",),
    "CAT": ("Africa/Maputo",), "BRT": ("America/Sao_Paulo",), "ART": ("America/Argentina/Buenos_Aires",),
}
_LONG_NAMES: dict[str, tuple[str, ...]] = {
    "eastern": ("America/New_York",), "central": ("America/Chicago",), "mountain": ("America/Denver",),
    "pacific": ("America/Los_Angeles",), "atlantic": ("America/Halifax",), "newfoundland": ("America/St_Johns",),
    "central european": ("Europe/Paris",), "eastern european": ("Europe/Athens",),
    "western european": ("Europe/Lisbon",), "british": ("Europe/London",), "greenwich mean": ("UTC",),
    "coordinated universal": ("UTC",), "universal": ("UTC",), "india": ("Asia/Kolkata",),
    "indian": ("Asia/Kolkata",), "nepal": ("Asia/Kathmandu",), "korea": ("Asia/Seoul",),
    "korean": ("Asia/Seoul",), "japan": ("Asia/Tokyo",), "japanese": ("Asia/Tokyo",), "uk": ("Europe/London",),
    "china": ("Asia/Shanghai",), "singapore": ("Asia/Singapore",),
}


def _zone_pattern(*, attached: bool) -> re.Pattern[str]:
    """A zone or offset: right after a time (``attached``), or anywhere in a declaration line."""
    edge = "" if attached else r"(?<![A-Za-z])"
    bare = (r"(?P<bare>(?P<bsign>[+\-−])(?P<bh>\d{2}):?(?P<bm>\d{2}))(?!\d)" if attached
            else r"\((?P<bare>(?P<bsign>[+\-−])(?P<bh>\d{2}):?(?P<bm>\d{2}))\)")
    body = (r"(?P<off>(?:UTC|GMT)\s*(?P<sign>[+\-−–])\s*(?P<oh>\d{1,2})(?::?(?P<om>\d{2}))?)"
            rf"|{bare}"
            rf"|(?P<iana>{edge}[A-Z][A-Za-z_]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?)"
            rf"|(?P<long>{edge}(?:[A-Z][\w.'’]*\s+){{1,3}}(?:(?i:standard|daylight|summer)\s+)?(?i:time)(?![a-z]))"
            r"|(?P<local>(?i:local\s+time|your\s+time))"
            + (r"|(?P<region>(?i:eastern|central|mountain|pacific|atlantic|newfoundland))(?![\w-])" if attached else "")
            + rf"|(?P<abbr>{edge}[A-Z]{{1,5}})(?![A-Za-z/])")
    # Anywhere: a match starts with a capital (an abbreviation, a zone name, UTC/GMT), "(" or local/your time.
    return re.compile(rf"\s*[(\[]?\s*(?:{body})(?:\s*[)\]])?" if attached else _starting(r"[A-Z(]|(?i:[ly])", body))


_ZONE_AFTER = _zone_pattern(attached=True)
_ZONE_ANYWHERE = _zone_pattern(attached=False)
_DECLARES_ZONE = re.compile(r"(?i)\b(?:times?|time\s*zone|timezone|tz|zone)\b")


def _normal_city(name: str) -> str:
    return re.sub(r"[^a-z ]", "", name.lower().replace("_", " ")).strip()


@functools.cache
def _cities() -> dict[str, str]:
    """City (last part of an IANA name, normalised: ``st johns``) → zone name."""
    out: dict[str, str] = {}
    for name in sorted(available_timezones()):
        if "/" in name and not name.startswith(("Etc/", "SystemV/", "US/")):
            out.setdefault(_normal_city(name.rsplit("/", 1)[1]), name)
    return out | {"new york": "America/New_York", "kathmandu": "Asia/Kathmandu", "st johns": "America/St_Johns"}


def _zone_key(m: re.Match[str]) -> tuple[str, ...] | None:
    """The candidate zones a zone match names (``("+05:45",)`` for offsets), or None when it names none."""
    g = m.group
    if g("off"):
        sign = -1 if g("sign") in "-−–" else 1
        return (f"{'+' if sign > 0 else '-'}{int(g('oh')):02d}:{int(g('om') or 0):02d}",)
    if g("bare"):
        return (f"{'-' if g('bsign') in '-−' else '+'}{g('bh')}:{g('bm')}",)
    if g("iana"):
        try:
            ZoneInfo(g("iana"))
        except (ZoneInfoNotFoundError, ValueError):
            return None
        return (g("iana"),)
    if g("local"):
        return ("local",)
    if region := m.groupdict().get("region"):  # "2 PM Eastern": the region's name right after a time
        return _LONG_NAMES[region.lower()]
    if g("long"):
        words = re.sub(r"(?i)\s+(?:standard|daylight|summer)?\s*time$", "", g("long").strip()).strip()
        key = _normal_city(words)
        if key in _LONG_NAMES:
            return _LONG_NAMES[key]
        parts = key.split()
        for k in range(len(parts)):
            city = " ".join(parts[k:])
            if city in _LONG_NAMES:
                return _LONG_NAMES[city]
            if city in _cities():
                return (_cities()[city],)
        return None
    return _ABBREVIATIONS.get(g("abbr"))


def _resolve_zone(candidates: tuple[str, ...], naive: datetime, tz: tzinfo) -> tzinfo:
    """The zone the answer meant: the scenario zone when one candidate has its offset at that time."""
    if candidates == ("local",):
        return tz
    zones: list[tzinfo] = []
    for name in candidates:
        if name[0] in "+-":
            sign = -1 if name[0] == "-" else 1
            zones.append(timezone(sign * timedelta(hours=int(name[1:3]), minutes=int(name[4:6]))))
        else:
            zones.append(ZoneInfo(name))
    own = naive.replace(tzinfo=tz).utcoffset()
    return next((tz for z in zones if naive.replace(tzinfo=z).utcoffset() == own), zones[0])


# -- times and slots -------------------------------------------------------------------------------------------

_CLOCK = re.compile(  # a time starts with a digit, or is noon or midday
    r"(?=(?i:[\dnm]))(?:(?<![\w:./+−$€£#])|(?<=\dT))"
    r"(?:(?P<h>\d{1,2})(?P<sep>[:.])(?P<m>[0-5]\d)(?::[0-5]\d(?:\.\d+)?)?"
    r"|(?P<hh>\d{2})h(?P<hm>[0-5]\d)"
    r"|(?P<bare>\d{1,2})(?=\s?(?i:[ap]\.?\s?m\.?)(?![A-Za-z])"
    r"|\s*(?:-|–|—|(?i:to|and|until|till))\s*\d{1,2}(?:[:.]\d{2})?\s?(?i:[ap]\.?\s?m\.?)(?![A-Za-z]))"
    r"|(?P<noon>(?i:noon|midday))(?![A-Za-z]))"
    r"(?:\s?(?P<ap>(?i:[ap]\.?\s?m\.?))(?![A-Za-z]))?"
    r"(?![\d%]|\.\d)"
)
_ISO_DATETIME = re.compile(r"(?P<d>\d{4}-\d{2}-\d{2})[T ](?=\d{2}:\d{2})")
_RANGE_GAP = re.compile(r"\s*(?:-|–|—|(?i:to|until|till|through|thru|and))\s*(?:\d{4}-\d{2}-\d{2}[T ])?")
_TABLE_GAP = re.compile(r"\s*\|\s*")
_BETWEEN_BEFORE = re.compile(r"(?i)between\s+$")
_DATE_ATTACHED = re.compile(r"[\s,(]*(?i:on\s+)?(?i:the\s+)?")
_DATE_AFTER_TIMES = re.compile(r"[\s,;:(\[–—-]*(?i:on|of|,|the)?\s*")
_LENGTH = (r"(?:(?P<lh>\d+)\s*(?i:h|hrs?|hours?)\s*(?:(?i:and)\s+)?(?P<lhm>\d+)\s*(?i:m|mins?|minutes?)"
           r"|(?P<n>\d+(?:\.\d+)?)\s*-?\s*(?P<u>(?i:minutes?|mins?|m|hours?|hrs?|h))"
           r"|(?P<half>(?i:half\s+an\s+hour))|(?P<hour>(?i:an\s+hour|one\s+hour|1\s+hour)))(?![A-Za-z])")
_LENGTH_AFTER = re.compile(r"\s*[,(\[–—-]?\s*(?i:for\s+)?(?i:(?:a|an|about|approx\.?)\s+)?" + _LENGTH)
_MEETING_LENGTH = re.compile(r"(?P<lead>(?i:duration|length)\s*[:=]?\s*(?:of\s+)?)?" + _LENGTH
                             + r"(?P<noun>[\s-]*(?i:long|each|meeting|sync|call|session|slot|duration|block"
                             r"|discussion|review|chat|huddle|check-?in)\b)?")

_CONTEXT_CUES = (r"busy|booked|blocked|occupied|unavailable|not\s+(?:available|free)|conflicts?|conflicting"
                 r"|clash(?:es)?|out\s+of\s+(?:the\s+)?office|ooo|lunch|(?:working|work|business|office|core)\s+hours"
                 r"|work\s*days?|working\s+days?|avoid(?:s|ing|ed)?|except|excluding|outside|existing|already"
                 r"|stand-?ups?|recurring|every|ha(?:s|ve)\s+an?|holds?|wrote|said|sent|posted|mentioned|asked"
                 r"|received|messages?|reference|now|currently|current\s+time|deadline|due|constraints?"
                 r"|can['’]?t|cannot|couldn['’]?t|not\s+possible|(?:is|are|['’]s|will\s+be)\s+(?:out|away|off)"
                 r"|on\s+leave|vacation|holiday|travel\w*|ends?|ending|finish(?:es)?|until|till|given|because"
                 r"|due\s+to|considering|rules?\s+out")
_STRONG_CUES = (r"options?|propos\w*|suggest\w*|recommend\w*|how\s+about|what\s+about|could|can|would\s+work"
                r"|works|slots?|alternatives?|alternatively|candidates?|best|preferred|choices?|pick|go\s+with"
                r"|book|schedule|let['’]s|invite")
_WEAK_CUES = r"available|availability|free|open"
_CUE = re.compile(rf"(?i)\b(?:(?P<context>{_CONTEXT_CUES})|(?P<strong>{_STRONG_CUES})|(?P<weak>{_WEAK_CUES}))\b")
_REJECTION = re.compile(
    r"(?i)\b(?:busy|booked|blocked|taken|occupied|unavailable|not\s+(?:available|free)|conflicts?|conflicting"
    r"|clash(?:es)?|doesn['’]?t\s+work|does\s+not\s+work|won['’]?t\s+work|will\s+not\s+work|ruled\s+out|excluded"
    r"|rejected|lunch|existing|already|(?:working|work|business|office|core)\s+hours)\b")
_NEGATION = re.compile(r"(?i)\b(?:no|without|avoid\w*|free\s+of|clear\s+of|outside|after|before|around|following"
                       r"|within|inside|during|in|respects?|between|not|zero|any)\b[\w\s'’-]{0,14}$")
_REACH = 300  # how far a clause, a label or a cue is looked for: keeps long answers linear
_CLAUSE_BREAK = re.compile(r"[.!?;](?=\s|$)|,\s*(?i:so|but|which|then|leaving|whereas|while)\b"
                           r"|\s(?i:but|so|whereas|while|then)\s")
_DATE_THEN_TIME = re.compile(r"[\s,:()@]*(?i:at|from|,)?\s*")
_KNOWN_EVENT = re.compile(
    r"(?i)\b(?:the|their|his|her|its|our|your|existing|[a-z]+['’]s)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:call|review|stand-?up|sync|meeting|1:1|one-on-one|interview|demo|training|appointment|check-in|retro"
    r"|all-hands|offsite|session|block)\s+(?:(?:is|are|runs|sits|happens|at|on|from)\s+)?$")
_EVENT_REFERENCE = re.compile(r"(?i)\b(?:the|their|his|her|its|our|your|[a-z]+['’]s)\s+$")
_EVENT_NOUN = re.compile(rf"\s*(?!(?i:{_STRONG_CUES}|{_WEAK_CUES}|time|window|meeting)\b)[A-Za-z][\w-]*")
_HEADING = re.compile(r"^\s*(?:#+\s*.*|\*\*[^*]+\*\*:?|__[^_]+__:?|[^|]*:\s*(?:\*\*|__)?)\s*$")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|>)\s*")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")


@dataclass(slots=True)
class _Clock:
    start: int
    end: int
    hour: int
    minute: int
    meridiem: str | None  # "am" | "pm" | None
    as_written: bool  # a 24-hour form (leading zero or hour above 12) or noon
    zone: tuple[str, ...] | None = None
    day: date | None = None  # ISO date-times carry their own date


@dataclass(frozen=True, slots=True)
class _Candidate:
    day: date
    start: time
    end: time
    zone: tuple[str, ...] | None
    length_stated: bool
    cue: str | None  # "strong" | "weak" | None
    text: str


def _clocks(text: str) -> list[_Clock]:
    """Every clock time in ``text`` with the zone written right after it (zone text included in the span)."""
    iso = {m.end(): (date.fromisoformat(m.group("d")), m.group(0)[-1] == "T") for m in _ISO_DATETIME.finditer(text)
           if _valid(*map(int, m.group("d").split("-")))}
    out: list[_Clock] = []
    for m in _CLOCK.finditer(text):
        checkpoint()
        if out and m.start() < out[-1].end:
            continue  # inside the zone written after the previous time ("11:00 (UTC-02:30)")
        g = m.group
        if g("noon"):
            hour, minute, written = 12, 0, True
        elif g("hh"):
            hour, minute, written = int(g("hh")), int(g("hm")), True
        else:
            raw = g("h") or g("bare")
            hour, minute = int(raw), int(g("m") or 0)
            written = raw.startswith("0") or hour > 12
        meridiem = g("ap").lower()[0] + "m" if g("ap") else None
        if (meridiem and not 1 <= hour <= 12) or hour > 23 or (g("sep") == "." and not meridiem and hour < 7):
            continue
        day, t_form = iso.get(m.start(), (None, False))
        clock = _Clock(m.start(), m.end(), hour, minute, meridiem, written, day=day)
        zone = _ZONE_AFTER.match(text, m.end())
        if zone and zone.group("bsign") == "-" and not t_form:
            zone = None  # "11:00-11:45" is a range; a bare "-hh:mm" offset follows only "…T11:00"
        if zone and (key := _zone_key(zone)):
            clock.zone, clock.end = key, zone.end()
        out.append(clock)
    return out


def _to_time(clock: _Clock, meridiem: str | None) -> time:
    hour = clock.hour
    if meridiem == "pm" and hour < 12:
        hour += 12
    elif meridiem == "am" and hour == 12:
        hour = 0
    elif meridiem is None and not clock.as_written and 1 <= hour <= 6:
        hour += 12
    return time(hour, clock.minute)


def _range_times(a: _Clock, b: _Clock) -> tuple[time, time]:
    """Both ends of a range, sharing a meridiem written once (``2:30–3:15pm``, ``11:30–12:15pm``)."""
    if a.meridiem or b.meridiem:
        start = _to_time(a, a.meridiem or b.meridiem)
        end = _to_time(b, b.meridiem or a.meridiem)
        if not a.meridiem and start >= end and not a.as_written:
            start = _to_time(a, "am" if b.meridiem == "pm" else "pm")
        if not b.meridiem and end <= start and not b.as_written:
            end = _to_time(b, "pm" if a.meridiem == "am" else "am")
        return start, end
    start, end = _to_time(a, None), _to_time(b, None)
    if end <= start and not b.as_written and b.hour < 12:
        end = time(b.hour + 12, b.minute)
    return start, end


def _length_minutes(m: re.Match[str]) -> int:
    g = m.group
    if g("lh"):
        return int(g("lh")) * 60 + int(g("lhm"))
    if g("half"):
        return 30
    if g("hour"):
        return 60
    value = float(g("n"))
    return round(value * 60 if g("u").lower().startswith("h") else value)


def _meeting_length(text: str) -> int | None:
    """The meeting length the answer states once for all its slots (``a 45-minute sync``, ``Suggested (45 min):``)."""
    for m in _MEETING_LENGTH.finditer(text):
        checkpoint()
        line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        if m.group("lead") or m.group("noun") or (_last_cue(line) in ("strong", "weak") and not _CLOCK.search(line)):
            return _length_minutes(m)
    return None


def _clause_start(text: str, line_start: int, pos: int) -> int:
    """Where the clause holding ``pos`` starts (looking back at most ``_REACH`` characters)."""
    line_start = max(line_start, pos - _REACH)
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(text, line_start, pos)]
    return breaks[-1] if breaks else line_start


def _clause_end(text: str, pos: int, line_end: int) -> int:
    m = _CLAUSE_BREAK.search(text, pos, min(line_end, pos + _REACH))
    return m.start() if m else min(line_end, pos + _REACH)


def _last_cue(segment: str) -> str | None:
    """``context``, ``strong`` (propose, option…) or ``weak`` (free, available): the last cue in ``segment``."""
    cue = None
    for m in _CUE.finditer(segment):
        if m.group("context") and not (m.group("context").lower() == "now" and _idiomatic_now(segment, m)):
            cue = "context"
        elif m.group("strong") or m.group("weak"):
            cue = "strong" if m.group("strong") else "weak"
    return cue


_IDIOM_BEFORE_NOW = re.compile(r"(?i)\b(?:for|right|by)\s+$")


def _idiomatic_now(segment: str, m: re.Match[str]) -> bool:
    """``for now`` / ``right now`` / ``by now`` are idioms, not a reference time."""
    return bool(_IDIOM_BEFORE_NOW.search(segment[:m.start()]))


def _rejected(segment: str) -> bool:
    """A rejection word after the time that is not negated just before it."""
    return any(not _NEGATION.search(segment[:m.start()]) for m in _REJECTION.finditer(segment))


def _heading_cue(line: str) -> str | None:
    """The class a heading line gives the lines under it (its first cue), or None when it is no heading."""
    if not _HEADING.match(line) or line.lstrip().startswith("|"):
        return None
    m = _CUE.search(line)
    if m is None:
        return "none"
    return "context" if m.group("context") else "strong" if m.group("strong") else "weak"


def _lines(text: str) -> list[tuple[int, int]]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def _declared_zones(text: str, clocks: list[_Clock]) -> list[tuple[int, tuple[str, ...]]]:
    """Zones declared for the answer (``All times in ET``, ``Time zone: Asia/Kathmandu``): (position, zone)."""
    attached = [(c.start, c.end) for c in clocks]
    out = []
    for start, end in _lines(text):
        checkpoint()
        line = text[start:end]
        if _DECLARES_ZONE.search(line) and not _TABLE_RULE.match(line):
            out += [(start + m.start(), key) for m in _ZONE_ANYWHERE.finditer(line)
                    if _free(attached, start + m.start(), start + m.end()) and (key := _zone_key(m))]
    return out


def _column_zones(header: str) -> list[tuple[str, ...] | None]:
    """The zone each column of a table header names (``| Date | Start (UTC) | Kathmandu (NPT) |``)."""
    zones = []
    for cell in header.strip().strip("|").split("|"):
        keys = [key for m in _ZONE_ANYWHERE.finditer(cell) if (key := _zone_key(m))]
        zones.append(keys[0] if keys else None)
    return zones


def _column(text: str, line_start: int, pos: int) -> int:
    """The table column (0-based) of position ``pos`` in a ``| … |`` row."""
    before = text[line_start:pos]
    return before.count("|") - (1 if before.lstrip().startswith("|") else 0)


def _pairs(text: str, clocks: list[_Clock], table: bool) -> Iterator[tuple[_Clock, _Clock | None]]:
    """The line's times as (start, end) ranges or lone starts (``between 2 and 3``; ``| 14:00 | 14:45 |``)."""
    j = 0
    while j < len(clocks):
        a = clocks[j]
        b = clocks[j + 1] if j + 1 < len(clocks) else None
        gap = text[a.end:b.start] if b else ""
        joined = b is not None and bool(
            (_RANGE_GAP.fullmatch(gap) and (gap.strip().lower() != "and"
                                            or _BETWEEN_BEFORE.search(text[max(0, a.start - 12):a.start])))
            or (table and _TABLE_GAP.fullmatch(gap) and len(clocks) == 2))
        yield (a, b) if joined else (a, None)
        j += 2 if joined else 1


def _times(text: str, first: _Clock, last: _Clock | None, meeting_length: int | None,
           default_minutes: int) -> tuple[time, time, bool, int] | None:
    """(start, end, length stated, where the reading ends) of a range or a start (with a length if written)."""
    if last is not None:
        start, end = _range_times(first, last)
        return (start, end, True, last.end) if end > start else None
    start = _to_time(first, first.meridiem)
    if length := _LENGTH_AFTER.match(text, first.end):
        minutes, stated, end_pos = _length_minutes(length), True, length.end()
    else:
        minutes, stated, end_pos = meeting_length or default_minutes, meeting_length is not None, first.end
    end = (datetime.combine(date.min, start) + timedelta(minutes=minutes)).time()
    return None if minutes and end <= start else (start, end, stated, end_pos)


def _governing_cue(text: str, line: tuple[int, int], first: _Clock, end_pos: int, line_dates: list[DateMention],
                   line_clocks: list[_Clock], section: str | None) -> str | None:
    """``context`` when the time is a mention (module docstring), else its proposal cue (strong, weak or None)."""
    line_start, line_end = line
    if text[line_start:line_end].lstrip().startswith(">"):
        return "context"
    clause_from = _clause_start(text, line_start, first.start)
    cue = _last_cue(text[clause_from:first.start])
    if (_EVENT_REFERENCE.search(text[clause_from:first.start]) and end_pos == first.end
            and _EVENT_NOUN.match(text, end_pos)):
        return "context"  # "the 09:30 standup", "Alice's 3pm call"
    if cue != "strong" and _names_known_event(text[clause_from:first.start], line_dates, clause_from):
        after = text[end_pos:_clause_end(text, end_pos, line_end)]
        if not any(m.group("strong") for m in _CUE.finditer(after)):
            return "context"  # "Taeyang's supplier call is Thu 09:30", "the design review Tue 13:00"
    attached = next((d for d in line_dates if d.start >= end_pos
                     and _DATE_ATTACHED.fullmatch(text[end_pos:d.start])), None)
    after_from = attached.end if attached else end_pos
    next_token = min([d.start for d in line_dates if d.start >= after_from]
                     + [c.start for c in line_clocks if c.start >= after_from] + [line_end])
    if _rejected(text[end_pos:min(_clause_end(text, end_pos, line_end), next_token)]):
        return "context"
    if cue is None and section not in (None, "none"):
        return section
    return cue


def _names_known_event(segment: str, line_dates: list[DateMention], offset: int) -> bool:
    """The clause names an existing event right before the time (a date between them is allowed)."""
    for d in line_dates:  # blank out dates so "the review Tue " ends in the event noun
        lo, hi = d.start - offset, d.end - offset
        if 0 <= lo < len(segment):
            segment = segment[:lo] + " " * (min(hi, len(segment)) - lo) + segment[hi:]
    return bool(_KNOWN_EVENT.search(segment.rstrip() + " "))


def clock_ranges(text: str) -> set[tuple[time, time]]:
    """Every range of clock times ``text`` writes (``between 10:00 and 16:00``, ``2–5pm``), dates and zones aside:
    the windows a request states, which an answer that only repeats them does not propose."""
    out, every = set(), _clocks(text)
    for start, end in _lines(text):
        checkpoint()
        clocks = [c for c in every if start <= c.start < end]
        out |= {_range_times(a, b) for a, b in _pairs(text, clocks, text[start:end].lstrip().startswith("|")) if b}
    return out


def find_slots(text: str, *, tz: tzinfo, anchor: date, window: tuple[date, date] | None = None,
               default_minutes: int = 0) -> list[Slot]:
    """The meeting slots ``text`` PROPOSES, in the scenario zone ``tz`` (rules in the module docstring)."""
    dates = find_dates(text, anchor=anchor, window=window)
    clocks = _clocks(text)
    declared = _declared_zones(text, clocks)
    meeting_length = _meeting_length(text)
    candidates: list[_Candidate] = []
    section: str | None = None
    carried: date | None = None
    columns: list[tuple[str, ...] | None] = []
    lines = _lines(text)
    for index, (line_start, line_end) in enumerate(lines):
        checkpoint()
        line = text[line_start:line_end]
        line_dates = [d for d in dates if line_start <= d.start < line_end]
        line_clocks = [c for c in clocks if line_start <= c.start < line_end]
        if not line_clocks and (heading := _heading_cue(line)) is not None:
            section = heading
        table = line.lstrip().startswith("|")
        if index + 1 < len(lines) and _TABLE_RULE.match(text[lines[index + 1][0]:lines[index + 1][1]]):
            columns = _column_zones(line)
        elif not table:
            columns = []
        for first, last in _pairs(text, line_clocks, table):
            checkpoint()
            read = _times(text, first, last, meeting_length, default_minutes)
            if read is None:
                continue
            start, end, stated, end_pos = read
            cue = _governing_cue(text, (line_start, line_end), first, end_pos, line_dates, line_clocks, section)
            day = first.day or _date_for(text, first.start, line_dates, (line_start, line_end), carried)
            if cue == "context" or day is None:
                continue
            column = _column(text, line_start, first.start) if table else -1
            zone = (first.zone or (last.zone if last else None)
                    or (columns[column] if 0 <= column < len(columns) else None)
                    or _declared_for(first.start, declared))
            candidates.append(_Candidate(day, start, end, zone, stated, cue, _snippet(text, line_start, line_end)))
        if line_dates:
            carried = line_dates[-1].value
    return _proposed(candidates, tz)


def _date_for(text: str, pos: int, line_dates: list[DateMention], line: tuple[int, int],
              carried: date | None) -> date | None:
    """The date a time belongs to: its sentence's (after it when the sentence opens with the time), else the line's."""
    line_start, line_end = line
    clause_from, sentence_end = _clause_start(text, line_start, pos), _clause_end(text, pos, line_end)
    in_sentence = [d for d in line_dates if clause_from <= d.start < sentence_end]
    before = [d for d in in_sentence if d.start < pos]
    after = [d for d in in_sentence if d.start > pos]
    if before and _DATE_THEN_TIME.fullmatch(text[before[-1].end:pos]):
        return before[-1].value  # "Mon 14:00–14:45, Wed 09:00": a date written just before the time is its date
    if after and (not before or _DATE_AFTER_TIMES.fullmatch(text[_end_of_times(text, pos):after[0].start])):
        return after[0].value
    if before:
        return before[-1].value
    earlier = [d for d in line_dates if d.start < pos]
    if earlier:
        return earlier[-1].value
    return line_dates[0].value if line_dates else carried


def _end_of_times(text: str, pos: int) -> int:
    """Where the run of times (and zones) starting at ``pos`` ends."""
    end = pos
    while True:
        gap = _RANGE_GAP.match(text, end)
        m = _CLOCK.match(text, end) or (gap if gap and _CLOCK.match(text, gap.end()) else None)
        if m is None or m.end() == end:
            zone = _ZONE_AFTER.match(text, end)
            if zone and zone.end() > end and _zone_key(zone):
                end = zone.end()
                continue
            return end
        end = m.end()


def _declared_for(pos: int, declared: list[tuple[int, tuple[str, ...]]]) -> tuple[str, ...] | None:
    before = [z for p, z in declared if p <= pos]
    if before:
        return before[-1]
    return declared[0][1] if declared else None


def _snippet(text: str, start: int, end: int) -> str:
    line = _BULLET.sub("", text[start:end]).strip().strip("|").strip()
    return line if len(line) <= 160 else line[:157] + "..."


def _proposed(candidates: list[_Candidate], tz: tzinfo) -> list[Slot]:
    """Aware slots in ``tz``, keeping only what is proposed (module docstring: cues, windows, duplicates)."""
    if any(c.cue == "strong" for c in candidates):
        candidates = [c for c in candidates if c.cue != "weak"]  # "free 12–18; I suggest 12–13": the window describes
    slots: list[Slot] = []
    for c in candidates:
        checkpoint()
        naive_start, naive_end = datetime.combine(c.day, c.start), datetime.combine(c.day, c.end)
        own = _resolve_zone(c.zone, naive_start, tz) if c.zone else tz
        start, end = naive_start.replace(tzinfo=own).astimezone(tz), naive_end.replace(tzinfo=own).astimezone(tz)
        if not any(s.start == start and s.end == end for s in slots):
            slots.append(Slot(start, end, c.text, c.length_stated))
    kept = []
    for s in slots:
        checkpoint()
        if not any(o is not s and o.start.date() == s.start.date() and s.start <= o.start and o.end <= s.end
                   and (o.start, o.end) != (s.start, s.end) and o.end > o.start for o in slots):
            kept.append(s)
    return kept


# -- quantities -----------------------------------------------------------------------------------------------

_NUMBER = re.compile(  # a match starts with its sign, a space before the number, its currency or its first digit
    r"(?=[\s\d+\-−↑↓▲▼$€£])(?<![\w.,/:#$€£%])(?<![A-Za-z]-)"
    r"(?P<sign>[+\-−]|↑|↓|▲|▼)?\s?(?P<cur>[$€£])?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s?(?P<pct>%|(?i:percent|per\s+cent|pct|percentage\s+points?|pp)(?![A-Za-z]))"
    r"|(?P<mult>[kKM]|bn)(?![A-Za-z])"
    r"|\s?(?P<unit>ms|s|secs?|mins?|h|hrs?|x|d)(?![A-Za-z]))?"
    r"(?![\w-]\d|\.\d|[A-Za-z])"
)
_DOWN = (r"down|dropped|drop|decreased?|declined?|fell|falling|reduced|reduction|cut|lowered|lower|shr[au]nk|slid"
         r"|decrease|declines?|drops?|less|fewer|faster|quicker|shorter")
_UP = (r"up|rose|risen|rising|increased?|increases|grew|grown|growth|gained?|gains|jumped|climbed|higher|more"
       r"|rise|rises|slower|longer")
_FILLER = r"(?:by|of|about|around|roughly|nearly|approximately|approx\.?|a|an|~)"
_DIRECTION_BEFORE = re.compile(rf"(?i)\b(?:(?P<down>{_DOWN})|(?P<up>{_UP}))\s+(?:{_FILLER}\s+)*~?$")
# Between a level and the change that qualifies it: "28, up 12%", "1.2M; down by 3%", "41 s, +5%".
_CHANGE_GAP = re.compile(rf"(?i)\s*(?:(?:[,;/]|\band\b)\s*\(?|[(\[])\s*(?:(?:{_DOWN}|{_UP})\s+(?:{_FILLER}\s+)*)?~?")
_ARROW = re.compile(r"(?i)\s*(?:→|->|⟶|➝|=>|to)\s*")  # "50,000 → 55,000", "from 47 to 41 min"
_LEVELS_TO_CHANGE = re.compile(r"(?i)(?:\s+[a-z/]+){0,3}?\s*[(\[,;:]?\s*(?:(?:a|an|or|i\.e\.?|about|roughly|~)\s*)?")
_CHANGE_COLUMN = re.compile(r"(?i)chang|delta|Δ|diff|\bvs\b|trend|w/?o/?w")
_DIRECTION_AFTER = re.compile(rf"^\s*(?:(?P<down>(?i:{_DOWN})\b|[↓▼])|(?P<up>(?i:{_UP})\b|[↑▲]))")
_NUMBER_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                            "thirteen fourteen fifteen sixteen seventeen eighteen nineteen "
                                            "twenty".split())} | {"thirty": 30, "forty": 40, "fifty": 50}
_NUMBER_WORD = re.compile(r"(?i)\b(?=[zotfsen][enwhoil])(?:" + "|".join(_NUMBER_WORDS) + r")\b(?![-‐])")
_LABEL_SEPARATOR = re.compile(r"[;|/]|(?<!\d),|,(?!\d{3}(?!\d))|\band\b")  # "55,000" groups thousands
_COMPARATIVE_AFTER = re.compile(r"(?i)\s*(?:lower|higher|faster|slower|shorter|longer|fewer|less|more|quicker)\b")
_LEVEL_BEFORE = re.compile(r"(?i)\b(?:to|at|of|reached|hit|is|was|now)\s+~?$")
_NOT_A_QUANTITY_BEFORE = re.compile(r"(?i)\b(?:option|step|sprint|week|wk|version|release|phase|item|no\.|number"
                                    r"|page|section|v|q|h|rank|priority|p|sev|round|day|batch|build|iteration)\s*$")
_ID = re.compile(r"\b[A-Za-z][A-Za-z0-9]*-\d+\b|#\d+|\b[vV]\d+(?:\.\d+)+\b|\b\d+(?:\.\d+){2,}\b")
_LIST_MARKER = re.compile(r"(?m)^\s*(?:[-*•]\s*)?\d{1,2}[.)](?=\s)")
_LABEL_STOP = frozenset("a an and are as at be by for from has have in is it its of on or that the this to was were "
                        "will with about into over than vs versus our we up down per".split())
_GENERIC = frozenset("change changes percent percentage pct week weekly wow total overall last this since avg "
                     "average mean median p50 p90 p95 p99 seconds second secs minutes minute mins hours hour ms "
                     "count number value metric metrics rate delta vs".split())
LABELS_CACHED = 8192
"""Texts whose folding and label readings are kept (a few hundred distinct labels per scenario)."""
_SYNONYMS = ({"bug", "bugs", "issue", "issues", "ticket", "tickets", "defect", "defects"},
             {"closed", "resolved", "fixed", "completed"})


_CLAUSE_STOP = re.compile(r"[.;!?](?=\s)|\s[–—-]\s")
_SENTENCE_STOP = re.compile(r"[.;!?](?=\s|$)")
_UNIT_AFTER = re.compile(r"\s*[A-Za-z]{0,7}\s*")
_CHANGE_KEY = re.compile(r"(?i)chang|delta")


def _clause_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The clause (or table row) around a number, at most ``_REACH`` characters either side."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if text[line_start:line_start + 4].lstrip().startswith("|"):
        return max(line_start, start - _REACH), min(line_end, end + _REACH)
    line_start, line_end = max(line_start, start - _REACH), min(line_end, end + _REACH)
    breaks = [m.end() for m in _CLAUSE_STOP.finditer(text[line_start:start])]
    after = _SENTENCE_STOP.search(text[end:line_end])
    return line_start + (breaks[-1] if breaks else 0), end + after.start() if after else line_end


def find_quantities(text: str) -> list[Quantity]:
    """Every percentage and number quoted in ``text`` (not those inside dates, times, ids or list markers)."""
    rows = csv_rows(text)
    excluded = [(d.start, d.end) for d in find_dates(text, anchor=date(2000, 1, 1))]
    excluded += [(c.start, c.end) for c in _clocks(text)]
    excluded += [m.span() for m in _ID.finditer(text)] + [m.span() for m in _LIST_MARKER.finditer(text)]
    excluded += [m.span() for m in _ZONE_ANYWHERE.finditer(text) if m.group("off") or m.group("bare")]
    excluded += [(row.start, row.end) for row in rows]  # a CSV row is read cell by cell (_row_quantities)
    found: list[tuple[int, int, float, str, int]] = []  # start, end, magnitude, kind, direction
    for m in _NUMBER.finditer(text):
        if not _free(excluded, m.start("num"), m.end("num")):
            continue
        before = text[max(0, m.start() - 30):m.start()]
        read = _number(m, before)
        if read is not None:
            found.append((m.start(), m.end(), *read, _direction(m.group("sign"), before, text[m.end():m.end() + 20])))
    for m in _NUMBER_WORD.finditer(text):
        if _free(excluded, *m.span()):
            before = text[max(0, m.start() - 30):m.start()]
            found.append((m.start(), m.end(), float(_NUMBER_WORDS[m.group(0).lower()]), "number",
                          _direction(None, before, text[m.end():m.end() + 20])))
    found.sort()
    out: list[Quantity] = []
    los: list[int] = []  # where each quantity's label starts
    for index, (start, end, value, kind, direction) in enumerate(found):
        checkpoint()
        lo, hi = _clause_bounds(text, start, end)
        header = ""
        if text[lo:hi].lstrip().startswith("|"):
            line_start = text.rfind("\n", 0, start) + 1
            cells = table_header(text, line_start)
            column = _column(text, line_start, start)
            header = cells[column] if 0 <= column < len(cells) else ""
            if not direction and kind == "percent" and _CHANGE_COLUMN.search(header):
                direction = _before_after(found[:index], line_start)
        else:
            if not direction and kind == "percent":
                direction = _before_after(found[:index], text.rfind("\n", 0, start) + 1, text, start)
            if direction and index and _CHANGE_GAP.fullmatch(text, found[index - 1][1], start):
                lo = max(lo, los[-1])  # the change of the level just before it names what that level names
            else:
                lo = max([lo, *(e for s_, e, *_ in found[max(0, index - 8):index]
                                if e > lo and _LABEL_SEPARATOR.search(text[e:start]))])
            hi = min([hi, *(s_ for s_, *_ in found[index + 1:index + 2] if s_ < hi)])
        los.append(lo)
        label = " ".join((text[lo:start] + " " + text[end:hi] + " " + header).split())
        out.append(Quantity(value=-value if direction < 0 else value, kind=kind, label=label, start=start, end=end,
                            direction=direction))
    for row in rows:
        checkpoint()
        out += _row_quantities(text, row)
    return sorted(out, key=lambda q: q.start)


def _number(m: re.Match[str], before: str, unit_given: bool = False) -> tuple[float, str] | None:
    """(magnitude, kind) of a ``_NUMBER`` match, or None for what only looks like a quantity (a year, Sprint 14)."""
    kind = "percent" if m.group("pct") else "number"
    value = float(m.group("num").replace(",", ""))
    if kind == "number" and (_NOT_A_QUANTITY_BEFORE.search(before)
                             or (not m.group("mult") and not m.group("unit") and not m.group("cur") and not unit_given
                                 and value.is_integer() and 1900 <= value <= 2100 and "," not in m.group("num"))):
        return None
    return value * {"k": 1e3, "K": 1e3, "M": 1e6, "bn": 1e9}.get(m.group("mult") or "", 1), kind


def _before_after(earlier: list[tuple[int, int, float, str, int]], line_start: int, text: str = "",
                  pos: int = -1) -> int:
    """The direction a before and an after level give an unsigned change: ``50,000 → 55,000 (10%)``, a table row
    ``| 1,200 | 1,028 | 14.3% |`` under a change column; 0 when there are no such two levels."""
    levels = [q for q in earlier[-2:] if q[3] == "number" and q[0] >= line_start]
    if len(levels) < 2 or levels[0][2] == levels[1][2]:
        return 0
    if pos >= 0 and not (_ARROW.fullmatch(text, levels[0][1], levels[1][0]) and _LEVELS_TO_CHANGE.fullmatch(
            text, levels[1][1], pos)):
        return 0
    return 1 if levels[1][2] > levels[0][2] else -1


def _row_quantities(text: str, row: Row) -> Iterator[Quantity]:
    """The quantities of a CSV row: one per bare-number cell, labelled by the row's other cells and its column's
    header; a percentage when written so or when the header or the row names one (``change_pct``). CSV values are
    data: in a change column or row an unsigned value is a rise, unless the two levels before it say otherwise."""
    cells: dict[int, tuple[re.Match[str], tuple[float, str], int]] = {}
    words = []
    for k, (s, e) in enumerate(row.cells):
        cell = text[s:e].strip().strip('"').strip()
        m = _NUMBER.match(cell)
        number = _number(m, "", unit_given=k < len(row.header)) if m and _UNIT_AFTER.fullmatch(cell[m.end():]) else None
        if m is None or number is None:
            words.append(cell)
        else:
            cells[k] = (m, number, text.find(cell, s))
    named = " ".join(words)
    read: dict[int, tuple[int, int, float, str, int]] = {}
    for k, (m, (value, kind), at) in cells.items():
        head = row.header[k] if k < len(row.header) else ""
        kind = "percent" if kind == "percent" or _PERCENT_FIELD.search(f"{head} {named}") else "number"
        direction = _direction(m.group("sign"), "", "")
        if not direction and _CHANGE_COLUMN.search(f"{head} {named}"):
            direction = _before_after([read[j] for j in (k - 2, k - 1) if j in read], row.start) or int(value > 0)
        read[k] = (at, at + m.end(), value, kind, direction)
    for k, (start, end, value, kind, direction) in read.items():
        head = row.header[k] if k < len(row.header) else ""
        yield Quantity(value=-value if direction < 0 else value, kind=kind, label=f"{named} {head}".strip(),
                       start=start, end=end, direction=direction)


def _direction(sign: str | None, before: str, after: str) -> int:
    """-1 / +1 when a sign, arrow or word beside the number gives the direction of a change; 0 for a level."""
    if sign in ("-", "−", "↓", "▼"):
        return -1
    if sign in ("+", "↑", "▲"):
        return 1
    if d := _DIRECTION_BEFORE.search(before):
        return -1 if d.group("down") else 1
    if _LEVEL_BEFORE.search(before) and not _COMPARATIVE_AFTER.match(after):
        return 0  # "rose to 99.2%" is a level; "is 15% slower" is a change
    if d := _DIRECTION_AFTER.match(after):
        return -1 if d.group("down") else 1
    return 0


@functools.lru_cache(maxsize=LABELS_CACHED)
def fold(text: str) -> str:
    """Lower case without accents (``Siobhán`` → ``siobhan``): names and labels compare as a reader compares them.

    Kept per text (as are the label readings below): a check compares every quoted quantity with every one the
    sources state, and the same few hundred labels and names come back in every run of a scenario."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).lower()


def _stem(word: str) -> str:
    """A crude stem: common suffixes and a final e off (``closed``, ``close`` → ``clos``; ``DAUs`` → ``dau``), then the
    first six letters."""
    for suffix, keep in (("ing", 4), ("ed", 3), ("es", 4), ("s", 3)):
        if len(word) >= len(suffix) + keep and word.endswith(suffix) and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    return (word[:-1] if len(word) > 3 and word.endswith("e") else word)[:6]  # active/actives, close/closed


@functools.lru_cache(maxsize=LABELS_CACHED)
def label_words(label: str) -> frozenset[str]:
    """The significant words of a label (metric key or text), stemmed; generic words (change, percent, avg) dropped."""
    words = re.findall(r"[a-z][a-z0-9]*", fold(label).replace("_", " "))
    out = {_stem(w) for w in words if len(w) >= 3 and w not in _LABEL_STOP and w not in _GENERIC}
    for group in _SYNONYMS:
        if out & {_stem(w) for w in group}:
            out |= {_stem(w) for w in group}
    return frozenset(out)


@functools.lru_cache(maxsize=LABELS_CACHED)
def _acronyms(label: str, shortest: int = 2) -> frozenset[str]:
    """Initials of runs of ``shortest`` or more words (``daily active users`` → ``dau``, ``au``…)."""
    words = [w for w in re.findall(r"[a-z]+", fold(label).replace("_", " ")) if w not in _LABEL_STOP]
    return frozenset("".join(w[0] for w in words[i:j])
                     for i in range(len(words)) for j in range(i + shortest, len(words) + 1))


def labels_match(a: str, b: str) -> bool:
    """Two labels name the same thing: a shared significant word, or an acronym of one written in the other —
    in capitals (``DAU``), or in lower case (``wau`` in a CSV header) for the initials of three or more words."""
    if label_words(a) & label_words(b):
        return True
    return bool(_capitals(a) & _acronyms(b) or _capitals(b) & _acronyms(a)
                or _short_words(a) & _acronyms(b, 3) or _short_words(b) & _acronyms(a, 3))


@functools.lru_cache(maxsize=LABELS_CACHED)
def _capitals(label: str) -> frozenset[str]:
    """Words written in capitals (``DAU``, ``DAUs``), lower-cased: candidate acronyms."""
    return frozenset(w.lower() for w in re.findall(r"\b([A-Z]{2,6})s?\b", label))


@functools.lru_cache(maxsize=LABELS_CACHED)
def _short_words(label: str) -> frozenset[str]:
    """Words of three to five letters in any case (``wau``, ``mau``): candidate acronyms of longer names."""
    return frozenset(w for w in re.findall(r"(?<![a-z])[a-z]{3,5}(?![a-z])", fold(label).replace("_", " "))
                     if w not in _LABEL_STOP)


def same_quantity(a: Quantity, b: Quantity) -> bool:
    """The same quantity as a reader would count it: kind, magnitude, no contradicting directions, matching labels."""
    return (a.kind == b.kind and abs(abs(a.value) - abs(b.value)) < 1e-9
            and not (a.direction and b.direction and a.direction != b.direction) and labels_match(a.label, b.label))


# -- quantities a JSON document states ---------------------------------------------------------------------

_PERCENT_FIELD = re.compile(r"(?i)percent(?!ile)|pct|_rate\b|ratio")
_PERCENT_TEXT = re.compile(r"(?i)%|percent|per\s+cent|pct")
_NAME_FIELDS = ("name", "metric", "label", "title", "kpi")
_DIRECTION_KEY = re.compile(r"(?i)\b(?:(?P<down>reduction|reduced|decrease|decreased|drop|decline|fall)"
                            r"|(?P<up>increase|increased|growth|gain|rise))\b")


@dataclass(frozen=True, slots=True)
class Stated:
    """A quantity a JSON document states, the string it was read from ("" for a numeric field), and the
    objects holding it, outermost first (so a reader can tell which message or file said it, and when)."""

    quantity: Quantity
    text: str
    holders: tuple[dict[str, Any], ...]


def _as_json(text: str) -> Any:
    """A string holding a JSON object or array decoded (a file whose content is an export); else ``None``."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "[") or stripped[-1:] not in ("}", "]"):
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _field(value: float, path: str, holders: tuple[dict[str, Any], ...], numbers: bool) -> Iterator[Stated]:
    """A numeric field: a percentage when its key path names one, else (with ``numbers``) a number."""
    percent = bool(_PERCENT_FIELD.search(path))
    if percent or numbers:
        owner = holders[-1] if holders else {}
        names = [str(owner[k]) for k in _NAME_FIELDS if isinstance(owner.get(k), str)]
        label = " ".join([*names, *path.replace("_", " ").split()])
        direction = key_direction(path, value)
        yield Stated(Quantity(value=-abs(value) if direction < 0 else float(value), kind="percent" if percent
                              else "number", label=label, start=0, end=0, direction=direction), "", holders)


def key_direction(key: str, value: float) -> int:
    """The direction a named value states: a reduction/increase word in its key (``cold_start_reduction_pct: 15``
    is down 15%), else its sign when negative or when the key names a change (``wau_change_percent: 10`` is up)."""
    words = key.replace("_", " ")
    if value and (named := _DIRECTION_KEY.search(words)):
        return (-1 if named.group("down") else 1) * (1 if value > 0 else -1)
    if value < 0:
        return -1
    return 1 if value > 0 and _CHANGE_KEY.search(words) else 0


def _walk(value: Any, numbers: bool, path: str, holders: tuple[dict[str, Any], ...]) -> Iterator[Stated]:
    if isinstance(value, str) and (decoded := _as_json(value)) is not None:
        value = decoded
    if isinstance(value, dict):
        inner = (*holders, value)
        for key, item in value.items():
            yield from _walk(item, numbers, f"{path} {key}", inner)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, numbers, path, holders)
    elif isinstance(value, str):
        if numbers or _PERCENT_TEXT.search(value):  # most texts hold no percentage: skip reading them
            yield from (Stated(q, value, holders) for q in find_quantities(value) if numbers or q.kind == "percent")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield from _field(value, path, holders, numbers)


def json_quantities(value: Any, *, numbers: bool = False) -> Iterator[Stated]:
    """The percentages (with ``numbers``: every quantity) a JSON value states, in its strings and numeric fields."""
    return _walk(value, numbers, "", ())
