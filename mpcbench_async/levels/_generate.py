"""New three-level MPCBench sets: worlds, instances and oracle labels in the reference file shapes, from a seed.

The reference data is small (4–20 instances per level and split) and every world
is the same fixed week in Asia/Seoul, so a score on it has wide error bars and
says nothing about other weeks, zones or calendars. This module draws fresh sets
of any size that ``load_level_set`` reads and ``solve`` labels exactly as it
labels the reference:

- **worlds** — per seed: a people directory (``person_001``… at levels 1–2, ten
  named people at level 3), calendars of 0–4 busy events per person and working
  day, the four policies (one rule type each, as in the original: work hours,
  lunch block, buffer, two banned weekday windows) with values drawn per world,
  and at level 3 six to eight rooms with capacities and bookings. The week is the
  first five working days (Mon–Fri) on or after ``start_date``, in ``timezone``
  (any IANA zone, daylight-saving ones included). Level 1 writes instants without
  an offset (naive local times, as the reference does); levels 2–3 write them with
  the zone's offset of their own date (``format_instant``);
- **instances** — participants (2 at level 1, 3 at level 2, 3–6 names at level
  3), a window inside one working day, a duration of 15/30/60 minutes, 1–5 options
  (levels 1–2; level 3 always 3), a policy drawn uniformly like the original's; at
  level 2 a non-empty combination of ``deadline`` / ``ban_windows`` /
  ``required_windows`` with a message that states them; at level 3 a task thread
  (with ``sort_spec``) and a context thread of noise;
- **discard and resample**, as the original: each draw is solved; a draw with
  fewer feasible candidates than asked for is dropped and drawn again (counted in
  the report), so every written instance has a full gold answer, and its oracle
  line is ``solve(world, instance).line()``;
- **a validity report** per set: draws, discards, a histogram of feasible
  candidate counts, how many instances each constraint type applies to, and how
  many it *binds* (the gold top-N changes when that type alone is taken out, and
  per class: all policy rules, all communication tags — both through
  ``OracleSettings`` — and all room constraints, by lifting capacities and
  bookings, since ``rooms=False`` drops the room from the answer altogether and so
  would "bind" always). A set whose constraints never matter is visible before
  anyone runs a model on it. Note: where the gold is the earliest N, a
  ``deadline`` keeps a prefix of that order, so it can only discard a draw, never
  change a kept gold; its binding count is 0 by construction (as in the original).

Determinism: everything comes from ``random.Random`` seeded with a string of the
level and seed (the world and the instances from separate streams), never the
global generator or the clock; the same arguments give byte-identical files, and
the first k instances of a larger count are the k of a smaller one. The split name,
time zone and start date only relabel: the same seed draws the same local-time
schedule in any zone.

One deliberate improvement over the original: its level-2 instances never tell
the agent which policy applies (``policy_id`` sits only in the oracle-only
``slots``; neither the task text nor the thread names it), so no agent can know
and the level partly scores guessing. Here the level-2 thread names the policy
section, and the policy document maps ``POLICY_k`` to ``Section k`` with exact
values, at levels 2 and 3 alike.

The texts follow fixed sentence templates so that a rule-based reader can parse
them with regular expressions anchored on these sentences. The hedged noise
around them (decoy values included, as in the reference) never uses a template
sentence and writes its times in 12-hour form ("9:30 AM"), so it cannot be
mistaken for one; a section's noise is on the line after its header:

Policy document (levels 2–3, ``sources.policy_text``), one header line per section,
times ``HH:MM`` 24-hour local, weekdays in English::

    Section 1: Work Hours (POLICY_1) — Meetings must start and end between 09:00 and 18:00 on weekdays.
    Section 2: Lunch Break (POLICY_2) — No meetings from 12:00 to 13:00 on weekdays.
    Section 3: Buffer Time (POLICY_3) — Leave at least 10 minutes between the meeting and any other event \
of each participant.
    Section 4: Restricted Times (POLICY_4) — No meetings on Monday from 09:00 to 12:00. No meetings on Friday \
from 13:00 to 18:00.

Level-2 thread (``sources.comm_thread_text``), the sentences present for the tags
the instance has (windows as ``HH:MM-HH:MM`` joined by ", ", on the window's date)::

    Deadline: the meeting must start no later than 15:00 on 2026-01-20.
    Blocked: the meeting must not overlap any of these times on 2026-01-20: 10:00-11:00, 14:00-15:00.
    Required: the meeting must fit entirely inside one of these times on 2026-01-20: 09:00-11:00, 14:00-16:00.
    Per company policy, Section 2 (Lunch Break) applies to this meeting.
    All times are local (Asia/Seoul).

Level-3 task thread (the one whose tags carry ``sort_spec``)::

    Participants: Alice, Bob, Chloe. Time window: 2026-01-19T09:00:00+09:00 to 2026-01-19T17:00:00+09:00.
    Duration: 30 minutes. We must follow organizational rules POLICY_2 (Section 2 of the meeting policy document).
    Please provide 3 options, each a distinct (time slot, room) pair: ...
    Sort order: earliest start, then earliest end, then smallest room_id.
"""

from __future__ import annotations

import json
import os
import random
import re
import tempfile
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import msgspec

from .._exceptions import InputError
from ._data import instance_problems, world_problems
from ._oracle import COMM_TAGS, CONSTRAINT_TYPES, LEVEL3_OPTIONS, POLICY_RULES, OracleResult, OracleSettings, solve
from ._times import format_instant, zone

__all__ = [
    "COMM_SENTENCES",
    "POLICY_SENTENCES",
    "TASK_THREAD_TEMPLATE",
    "GeneratedSet",
    "ValidityReport",
    "generate_level",
    "render_validity",
    "write_generated",
]

# -- the sentence templates (public: a rule-based reader is written against them) --------------------------------------

POLICY_TITLES = {"work_hours": "Work Hours", "lunch_block": "Lunch Break", "buffer_min": "Buffer Time",
                 "ban_dow_time": "Restricted Times"}
POLICY_HEADER = "Section {k}: {title} (POLICY_{k}) — {rules}"
POLICY_SENTENCES = {
    "work_hours": "Meetings must start and end between {start} and {end} on weekdays.",
    "lunch_block": "No meetings from {start} to {end} on weekdays.",
    "buffer_min": "Leave at least {minutes} minutes between the meeting and any other event of each participant.",
    "ban_dow_time": "No meetings on {weekday} from {start} to {end}.",
}
COMM_SENTENCES = {
    "deadline": "Deadline: the meeting must start no later than {time} on {date}.",
    "ban_windows": "Blocked: the meeting must not overlap any of these times on {date}: {windows}.",
    "required_windows": "Required: the meeting must fit entirely inside one of these times on {date}: {windows}.",
    "policy": "Per company policy, Section {k} ({title}) applies to this meeting.",
    "timezone": "All times are local ({timezone}).",
}
TASK_THREAD_TEMPLATE = (
    "{opener} Please schedule a meeting. Participants: {names}. Time window: {start} to {end}. "
    "Duration: {duration} minutes. We must follow organizational rules {policy_id} "
    "(Section {k} of the meeting policy document). Please provide 3 options, each a distinct (time slot, room) pair: "
    "the room must seat every participant and be free for the whole slot. "
    "Sort order: earliest start, then earliest end, then smallest room_id."
)
SORT_KEYS = ["start", "end", "room_id"]

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
DURATIONS = (15, 30, 60)
MAX_OPTIONS = 5  # levels 1–2 ask for 1..5 candidates
PEOPLE_IDS = 8  # levels 1–2: person_001..person_008
PEOPLE_NAMED = 10  # level 3: a directory of ten names
# First names none of which contains another (the people search matches substrings).
NAME_POOL = ("Alice", "Bob", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Keiko", "Liam",
             "Mina", "Noah", "Olga", "Priya", "Quentin", "Rosa", "Sven", "Tariq", "Uma", "Victor", "Wen", "Ximena",
             "Yusuf", "Zara", "Marco", "Leila", "Tomas", "Nadia")
TEAMS = {"Engineering": ("Backend Engineer", "Frontend Engineer", "Tech Lead", "SRE"),
         "Product": ("Product Manager", "Product Analyst"), "Design": ("UX Designer", "Product Designer"),
         "Sales": ("Account Executive", "Sales Manager"), "Operations": ("Ops Manager", "Office Manager"),
         "Marketing": ("Marketing Lead", "Content Strategist")}
EVENT_TITLES = ("Team Standup", "1:1", "Design Review", "Client Call", "Sprint Planning", "Code Review", "Focus Time",
                "Interview", "Project Sync", "Budget Review", "Training", "Customer Demo", "All-hands Prep",
                "Retro", "Vendor Call", "Hiring Debrief")
EQUIPMENT = ("whiteboard", "projector", "video_conference", "whiteboard,projector", "projector,video_conference",
             "whiteboard,projector,video_conference", "display")
CLASSES = {"policy": POLICY_RULES, "comm": COMM_TAGS, "rooms": ("room_capacity", "room_availability")}
BUCKETS = ((1, 2), (3, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, 199), (200, None))
DRAW_LIMIT_FACTOR = 50  # a set needing more draws than this per instance is broken, not unlucky

_ALL_ON = OracleSettings()
_SPLIT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

Json = dict[str, Any]


class ValidityReport(msgspec.Struct, kw_only=True):
    """How a generated set was drawn and whether its constraints matter (see ``render_validity``)."""

    level: int
    instances: int
    attempts: int  # draws, the resampled ones included
    discarded: int  # draws dropped for having fewer feasible candidates than asked for
    solvable: float  # fraction of written instances whose gold has the full N candidates (1.0 by construction)
    candidate_counts: dict[str, int]  # histogram of all feasible candidates per instance, bucketed
    constraint_mix: dict[str, int]  # constraint type → instances it applies to
    binding: dict[str, int]  # constraint type (and class: policy, comm, rooms) → instances whose gold it changes
    split: str = ""
    seed: int = 0
    timezone: str = ""
    start_date: str = ""


class GeneratedSet(msgspec.Struct, kw_only=True):
    """One generated level × split: the world, the instances, their oracle lines (same order) and the report."""

    level: int
    split: str
    world: dict[str, Any]
    instances: list[dict[str, Any]]
    oracle: list[dict[str, Any]]
    report: ValidityReport


# -- small helpers -----------------------------------------------------------------------------------------------------


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _ampm(minutes: int) -> str:
    """Decoy times in the noise use this form, never ``HH:MM``, so template regexes cannot pick them up."""
    hour, minute = divmod(minutes, 60)
    return f"{hour % 12 or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def _steps(low: int, high: int, step: int = 30) -> list[int]:
    """``low``..``high`` inclusive in ``step``s (minutes); at least ``[low]``."""
    return list(range(low, high + 1, step)) or [low]


class _Week:
    """The world's five working days and how its instants are written (naive at level 1, with offset after)."""

    def __init__(self, start_date: str, timezone: str, naive: bool) -> None:
        try:
            first = date.fromisoformat(start_date)
        except (TypeError, ValueError):
            raise InputError(f"start_date {start_date!r} is not an ISO date (YYYY-MM-DD)") from None
        try:
            self.zone = zone(timezone)
        except ValueError:
            raise InputError(f"timezone {timezone!r} is not an IANA time zone (e.g. Asia/Seoul, "
                             "America/New_York)") from None
        self.tz, self.naive = timezone, naive
        days: list[date] = []
        day = first
        while len(days) < 5:
            if day.weekday() < 5:
                days.append(day)
            day += timedelta(days=1)
        self.days = days

    def at(self, day: int, minutes: int) -> str:
        """Day ``day`` (0–4) at ``minutes`` after local midnight, as the world writes instants."""
        d = self.days[day]
        if self.naive:
            return f"{d.isoformat()}T{_hhmm(minutes)}:00"
        hour, minute = divmod(minutes, 60)
        return format_instant(datetime.combine(d, time(hour, minute), tzinfo=self.zone), self.tz)

    def end_of_day(self, day: int) -> str:
        d = self.days[day]
        text = f"{d.isoformat()}T23:59:59"
        if self.naive:
            return text
        return format_instant(datetime.combine(d, time(23, 59, 59), tzinfo=self.zone), self.tz)


def _seeded(level: int, seed: int, stream: str) -> random.Random:
    """A generator of its own per (level, seed, stream); string seeds hash the same in every process."""
    return random.Random(f"mpcbench-levels/L{level}/seed={seed}/{stream}")


# -- worlds ------------------------------------------------------------------------------------------------------------


def _draw_policies(rng: random.Random) -> dict[str, Json]:
    """The four policies of the original (one rule type each), their values drawn per world."""
    work = (rng.choice(_steps(8 * 60, 10 * 60)), rng.choice(_steps(17 * 60, 19 * 60)))
    lunch_start = rng.choice(_steps(11 * 60 + 30, 12 * 60 + 30))
    lunch = (lunch_start, lunch_start + rng.choice((60, 60, 90)))
    bans = []
    for day in sorted(rng.sample(range(5), 2)):
        if rng.random() < 0.5:
            window = (rng.choice(_steps(8 * 60, 10 * 60)), rng.choice(_steps(11 * 60, 12 * 60)))
        else:
            window = (rng.choice(_steps(13 * 60, 15 * 60)), rng.choice(_steps(16 * 60, 18 * 60)))
        bans.append({"type": "ban_dow_time", "day_of_week": day, "start": _hhmm(window[0]), "end": _hhmm(window[1])})
    weekdays = [0, 1, 2, 3, 4]
    return {
        "POLICY_1": {"rules": [{"type": "work_hours", "start": _hhmm(work[0]), "end": _hhmm(work[1]),
                                "days_of_week": weekdays}]},
        "POLICY_2": {"rules": [{"type": "lunch_block", "start": _hhmm(lunch[0]), "end": _hhmm(lunch[1]),
                                "days_of_week": list(weekdays)}]},
        "POLICY_3": {"rules": [{"type": "buffer_min", "minutes": rng.choice((5, 10, 15, 20))}]},
        "POLICY_4": {"rules": bans},
    }


def _minutes(hhmm: str) -> int:
    hour, minute = hhmm.split(":")
    return int(hour) * 60 + int(minute)


def _rule_sentence(rule: Json) -> str:
    kind = rule["type"]
    if kind == "buffer_min":
        return POLICY_SENTENCES[kind].format(minutes=rule["minutes"])
    if kind == "ban_dow_time":
        return POLICY_SENTENCES[kind].format(weekday=WEEKDAYS[rule["day_of_week"]], start=rule["start"],
                                             end=rule["end"])
    return POLICY_SENTENCES[kind].format(start=rule["start"], end=rule["end"])


def _policy_noise(rng: random.Random, rules: list[Json]) -> str:
    """Hedged background prose for one section: plausible, with decoy values, never in the rule's own template."""
    rule = rules[0]
    kind = rule["type"]
    if kind == "work_hours":
        start, end = _minutes(rule["start"]), _minutes(rule["end"])
        shift = rng.choice((-60, -30, 30))
        city = rng.choice(("Berlin", "Singapore", "Toronto", "Lisbon"))
        return rng.choice((
            f"Some teams in the {city} office keep {_ampm(start + shift)} to {_ampm(end + shift)}, but that is a "
            "local arrangement and does not change the rule above. The canteen opens early if you want breakfast.",
            f"An older version of this page said {_ampm(start + shift)} to {_ampm(end + shift)}. I think it was "
            "replaced last year; the sentence above is what the calendar system checks.",
        ))
    if kind == "lunch_block":
        start = _minutes(rule["start"]) + rng.choice((-30, 30))
        return rng.choice((
            f"A few teams informally break from {_ampm(start)} to {_ampm(start + 60)}; that is a personal choice, "
            "not policy. The kitchen on the third floor gets crowded then anyway.",
            f"Someone asked whether lunch moved to {_ampm(start)}. As far as I know it did not, but do not quote me.",
        ))
    if kind == "buffer_min":
        other = rule["minutes"] + rng.choice((5, 10, 15))
        return rng.choice((
            f"This replaced an older {other}-minute rule that people found too strict. Please also leave rooms "
            "tidy for the next group.",
            f"I once heard {other} minutes mentioned at a team meeting, but the figure above is the current one. "
            "Probably.",
        ))
    banned = {r["day_of_week"] for r in rules}
    other_day = rng.choice([d for d in range(5) if d not in banned])
    start = rng.choice(_steps(9 * 60, 15 * 60, 60))
    return rng.choice((
        f"Someone suggested also blocking {WEEKDAYS[other_day]} from {_ampm(start)} to {_ampm(start + 120)} for "
        "focus time, but that was never adopted. The wellbeing team runs optional sessions in some of these blocks.",
        f"There was talk of a {WEEKDAYS[other_day]} {_ampm(start)} all-hands, which would not change anything "
        "above. Wait, or was it moved? Either way, the blocks above are what counts.",
    ))


def _policy_text(rng: random.Random, policies: dict[str, Json]) -> str:
    """The level 2–3 policy document: per section a header with the exact rule, then hedged prose."""
    version = f"v{rng.randint(2, 5)}.{rng.randint(0, 9)}"
    parts = [
        f"COMPANY MEETING POLICY DOCUMENT {version}",
        "",
        "This document collects the company's meeting rules. A meeting follows exactly one section: organizational "
        "rules POLICY_k are Section k below, and the other sections do not apply to it. Each section opens with its "
        "rule, stated exactly (times are 24-hour local times); the notes under it are background only. "
        + rng.choice(("I think there was a revision last month, but this should be the latest.",
                      "Someone should check whether this is the newest copy. It probably is.",
                      "HR says the wording may change; the values below are current.")),
    ]
    for k, policy in enumerate(policies.values(), 1):  # POLICY_1..POLICY_4, in order
        rules = policy["rules"]
        title = POLICY_TITLES[rules[0]["type"]]
        parts += ["", POLICY_HEADER.format(k=k, title=title, rules=" ".join(_rule_sentence(r) for r in rules)),
                  _policy_noise(rng, rules)]
    parts += ["", rng.choice(("Note: some of the background above might be outdated. Please verify with HR.",
                              "Note: if in doubt, the first sentence of each section is what counts.")),
              "", "END OF POLICY DOCUMENT"]
    return "\n".join(parts)


def _busy_events(rng: random.Random, week: _Week, weights: tuple[int, ...], titles: tuple[str, ...],
                 durations: tuple[int, ...], earliest: int, latest_end: int) -> list[Json]:
    """Non-overlapping busy events over the week: per day a count drawn with ``weights`` (0, 1, 2, …)."""
    events: list[tuple[int, int, int, str]] = []
    for day in range(5):
        taken: list[tuple[int, int]] = []
        for _ in range(rng.choices(range(len(weights)), weights=weights)[0]):
            for _try in range(8):
                duration = rng.choice(durations)
                step = 30 if rng.random() < 0.8 else 15
                start = rng.choice(_steps(earliest, latest_end - duration, step))
                if all(start >= e or start + duration <= s for s, e in taken):
                    taken.append((start, start + duration))
                    events.append((day, start, start + duration, rng.choice(titles)))
                    break
    events.sort()
    return [{"start": week.at(day, s), "end": week.at(day, e), "title": title} for day, s, e, title in events]


def _people(rng: random.Random) -> Json:
    names = rng.sample(NAME_POOL, PEOPLE_NAMED)
    rows = []
    for n, name in enumerate(names, 1):
        team = rng.choice(sorted(TEAMS))
        rows.append({"person_id": f"person_{n:03d}", "person_name": name, "team": team,
                     "email": f"{name.lower()}@company.example", "notes": rng.choice(TEAMS[team])})
    return {"primary_key": "person_id", "columns": ["person_id", "person_name", "team", "email", "notes"],
            "rows": rows, "meta": {"version": "1.0", "source": "generated"}}


def _rooms(rng: random.Random, week: _Week) -> tuple[Json, Json]:
    """Rooms (capacities shuffled over the ids, at least three seating six) and their bookings."""
    small = rng.sample((2, 3, 4, 4, 5), rng.randint(2, 3))
    large = rng.sample((6, 6, 8, 10, 12, 16), rng.randint(4, 5))
    capacities = small + large
    rng.shuffle(capacities)
    rows, bookings = [], {}
    for n, capacity in enumerate(capacities, 1):
        room_id = f"room_{n:03d}"
        size = "Small" if capacity <= 4 else "Medium" if capacity <= 8 else "Large"
        rows.append({"room_id": room_id, "capacity": capacity, "floor": str(rng.randint(1, 4)),
                     "equipment": rng.choice(EQUIPMENT), "notes": f"{size} room"})
        bookings[room_id] = _busy_events(rng, week, (3, 4, 3, 1), ("Booked",), (30, 60, 60, 90, 120),
                                         8 * 60, 18 * 60)
    table = {"primary_key": "room_id", "columns": ["room_id", "capacity", "floor", "equipment", "notes"],
             "rows": rows, "meta": {"version": "1.0", "source": "generated"}}
    return table, bookings


def _world(level: int, split: str, rng: random.Random, week: _Week) -> Json:
    policies = _draw_policies(rng)
    people = _people(rng) if level == 3 else None
    ids = [r["person_id"] for r in people["rows"]] if people else [f"person_{n:03d}" for n in range(1, PEOPLE_IDS + 1)]
    calendar = {pid: _busy_events(rng, week, (2, 4, 4, 2, 1), EVENT_TITLES, (15, 30, 30, 45, 60, 60, 90, 120),
                                  8 * 60, 19 * 60) for pid in ids}
    sources: Json = {"calendar_json": calendar}
    if level == 1:
        sources["policy_json"] = policies
    else:
        sources["policy_text"] = _policy_text(rng, policies)
        sources["policy_tags"] = policies
    if people is not None:
        rooms, bookings = _rooms(rng, week)
        sources.update(people_table=people, rooms_table=rooms, room_availability_json=bookings)
    return {"world_id": f"world_level{level}_{split}", "level": level, "timezone": week.tz,
            "world_start": week.at(0, 0), "world_end": week.end_of_day(4), "sources": sources}


# -- instances ---------------------------------------------------------------------------------------------------------


def _window(rng: random.Random, level: int) -> tuple[int, int, int]:
    """(day, start, end) in local minutes: level 1 like its original (08–14 h start, 3–8 h long, till 20 h), else
    08–12 h start (the original: 09–12 h, which left a work-hours rule little to exclude), 4–8 h long, till 18 h."""
    day = rng.randrange(5)
    if level == 1:
        start = rng.choice(_steps(8 * 60, 14 * 60))
        return day, start, min(start + rng.choice(_steps(3 * 60, 8 * 60)), 20 * 60)
    start = rng.choice(_steps(8 * 60, 12 * 60))
    return day, start, min(start + rng.choice(_steps(4 * 60, 8 * 60)), 18 * 60)


def _windows_text(windows: list[tuple[int, int]]) -> str:
    return ", ".join(f"{_hhmm(s)}-{_hhmm(e)}" for s, e in windows)


COMM_NOISE = (
    "I might have some details slightly wrong, so double-check anything that looks odd.",
    "Someone mentioned 4:00 PM as a cutoff last week, but that was for a different project.",
    "Ignore the old invite still floating around; its times are out of date.",
    "If it helps, most of us prefer mornings, but that is not a requirement.",
    "Not sure everyone has seen the policy page; it is on the intranet somewhere.",
    "Let me know if anything clashes. I'm still catching up on email, or was that yesterday?",
    "Actually, wait, I thought we had agreed on 10:30 AM? No, scratch that, go with what is written here.",
)
GREETINGS = ("Hi team,", "Hey all,", "Morning everyone,", "Quick scheduling note:", "Hello folks,")


def _comm(rng: random.Random, week: _Week, day: int, start: int, end: int, k: int, title: str) -> tuple[str, Json]:
    """Level-2 tags (a non-empty combination of the three) and the message that states each one exactly."""
    kinds = rng.choice([c for c in ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, 0, 1), (0, 1, 1), (1, 1, 1))])
    tags: Json = {}
    sentences: list[str] = []
    when = week.days[day].isoformat()
    if kinds[0]:
        deadline = rng.choice(_steps(min(start + 120, end - 30), end - 30))
        tags["deadline"] = week.at(day, deadline)
        sentences.append(COMM_SENTENCES["deadline"].format(time=_hhmm(deadline), date=when))
    if kinds[1]:
        bans: list[tuple[int, int]] = []
        for _ in range(rng.randint(1, 2)):
            length = rng.choice((30, 60, 90))
            s = rng.choice(_steps(start, max(start, end - length)))
            if all(s != b[0] for b in bans):
                bans.append((s, s + length))
        bans.sort()
        tags["ban_windows"] = [{"start": week.at(day, s), "end": week.at(day, e)} for s, e in bans]
        sentences.append(COMM_SENTENCES["ban_windows"].format(date=when, windows=_windows_text(bans)))
    if kinds[2]:
        required: list[tuple[int, int]] = []
        for _ in range(rng.randint(1, 2)):
            length = rng.choice((90, 120, 150, 180))
            s = rng.choice(_steps(start, max(start, end - length)))
            if all(s + length <= r[0] or s >= r[1] for r in required):
                required.append((s, s + length))
        required.sort()
        tags["required_windows"] = [{"start": week.at(day, s), "end": week.at(day, e)} for s, e in required]
        sentences.append(COMM_SENTENCES["required_windows"].format(date=when, windows=_windows_text(required)))
    rng.shuffle(sentences)
    noise = rng.sample(COMM_NOISE, rng.randint(1, 2))
    text = " ".join([rng.choice(GREETINGS), "we need to find a slot for this meeting.", *sentences,
                     COMM_SENTENCES["policy"].format(k=k, title=title),
                     COMM_SENTENCES["timezone"].format(timezone=week.tz), *noise])
    return text, tags


CONTEXT_THREADS = (
    "Has anyone seen the updated project timeline? I think the launch might slip a week.",
    "Reminder: some rooms get double-booked, so check the booking system before sending invites.",
    "Can we keep meetings short this week? My afternoons are packed. Someone also brought up buffers again.",
    "FYI the projector in one of the rooms is flaky; not sure which one. Maybe bring an adapter.",
    "We should probably loop in {name} at some point, but not for this one.",
    "I heard the policy page was being rewritten. Not sure if anything changed yet.",
)
OPENERS = ("Hi all.", "Hello team.", "Following up on yesterday.", "Quick one.")


def _policy_k(policy_id: str) -> int:
    return int(policy_id.rsplit("_", 1)[1])


def _instance(level: int, split: str, index: int, width: int, rng: random.Random, world: Json,
              week: _Week) -> Json:
    """One draw of an instance (the id is the next free one; a discarded draw's id is drawn again)."""
    sources = world["sources"]
    policies = sources["policy_json" if level == 1 else "policy_tags"]
    duration = rng.choice(DURATIONS)
    policy_id = rng.choice(sorted(policies))
    day, start, end = _window(rng, level)
    window = {"start": week.at(day, start), "end": week.at(day, end)}
    instance_id = f"instance_level{level}_{split}_{index:0{width}d}"
    base: Json = {"instance_id": instance_id, "level": level}
    if level == 1:
        people = rng.sample(sorted(sources["calendar_json"]), 2)
        options = rng.randint(1, MAX_OPTIONS)
        task = (f"Schedule a {duration}-minute meeting for {people[0]} and {people[1]} within {window['start']} to "
                f"{window['end']}. Follow company meeting policy {policy_id}. Provide {options} feasible time "
                f"candidate{'s' if options > 1 else ''}, sorted by earliest start time.")
        extra: Json = {}
    elif level == 2:
        people = rng.sample(sorted(sources["calendar_json"]), 3)
        options = rng.randint(1, MAX_OPTIONS)
        title = POLICY_TITLES[policies[policy_id]["rules"][0]["type"]]
        text, tags = _comm(rng, week, day, start, end, _policy_k(policy_id), title)
        task = (f"Schedule a {duration}-minute meeting for {', '.join(people)}. Time window: {window['start']} to "
                f"{window['end']}. The remaining requirements are spread over 3 internal sources; consult all of "
                f"them. Provide {options} feasible option{'s' if options > 1 else ''} sorted by earliest start time.")
        extra = {"sources": {"comm_thread_text": text, "comm_tags": tags}}
    else:
        names = [r["person_name"] for r in sources["people_table"]["rows"]]
        people = rng.sample(names, rng.randint(3, 6))
        options = LEVEL3_OPTIONS
        task_id, context_id = rng.sample(range(100, 1000), 2)
        outsider = rng.choice([n for n in names if n not in people])
        task_thread = {"thread_id": f"thread_task_{task_id}", "thread_text": TASK_THREAD_TEMPLATE.format(
            opener=rng.choice(OPENERS), names=", ".join(people), start=window["start"], end=window["end"],
            duration=duration, policy_id=policy_id, k=_policy_k(policy_id)),
            "thread_tags": {"sort_spec": {"keys": list(SORT_KEYS)}}}
        context_thread = {"thread_id": f"thread_context_{context_id}",
                          "thread_text": rng.choice(CONTEXT_THREADS).format(name=outsider), "thread_tags": {}}
        threads = [context_thread, task_thread] if rng.random() < 0.5 else [task_thread, context_thread]
        task = ("Schedule a meeting for the team. The requirements (time window, duration, number of options, "
                "policy, room needs) are spread over internal records; find and consult every relevant source "
                "before scheduling.")
        extra = {"sources": {"comm_threads": threads}}
    return {**base, "task_text": task,
            "slots": {"time_window": window, "participants": people, "duration_min": duration,
                      "num_options": options, "policy_id": policy_id},
            "sources_ref": {"world_id": world["world_id"]}, **extra}


# -- the validity report -----------------------------------------------------------------------------------------------


def _bucket(count: int) -> str:
    for low, high in BUCKETS:
        if high is None or count <= high:
            return f"{low}+" if high is None else f"{low}-{high}"
    raise AssertionError("unreachable")


def _comm_tags_of(level: int, instance: Json) -> list[str]:
    sources = instance.get("sources") or {}
    if level == 2:
        return [t for t in COMM_TAGS if t in sources.get("comm_tags", {})]
    if level == 3:
        found = {t for thread in sources.get("comm_threads", []) for t in COMM_TAGS if t in thread.get("thread_tags",
                                                                                                       {})}
        return [t for t in COMM_TAGS if t in found]
    return []


def _without_tag(level: int, instance: Json, tag: str) -> Json:
    sources = dict(instance["sources"])
    if level == 2:
        sources["comm_tags"] = {k: v for k, v in sources["comm_tags"].items() if k != tag}
    else:
        sources["comm_threads"] = [{**t, "thread_tags": {k: v for k, v in t.get("thread_tags", {}).items() if k != tag}}
                                   for t in sources["comm_threads"]]
    return {**instance, "sources": sources}


class _Variants:
    """Worlds with one constraint type taken out, built once per set (shallow copies: cheap)."""

    def __init__(self, level: int, world: Json) -> None:
        self.level, self.world = level, world
        self.key = "policy_json" if level == 1 else "policy_tags"
        self._policy: dict[tuple[str, str], Json] = {}
        self.rooms: dict[str, Json] = {}
        if level == 3:
            sources = world["sources"]
            rows = [{**r, "capacity": 10**6} for r in sources["rooms_table"]["rows"]]
            roomy = {**sources["rooms_table"], "rows": rows}
            free: dict[str, list[Json]] = {room: [] for room in sources["room_availability_json"]}
            self.rooms = {"room_capacity": self._with(rooms_table=roomy),
                          "room_availability": self._with(room_availability_json=free),
                          "rooms": self._with(rooms_table=roomy, room_availability_json=free)}

    def _with(self, **sources: Any) -> Json:
        return {**self.world, "sources": {**self.world["sources"], **sources}}

    def without_rule(self, policy_id: str, kind: str) -> Json:
        if (policy_id, kind) not in self._policy:
            policies = self.world["sources"][self.key]
            kept = [r for r in policies[policy_id]["rules"] if r["type"] != kind]
            self._policy[policy_id, kind] = self._with(**{self.key: {**policies, policy_id: {"rules": kept}}})
        return self._policy[policy_id, kind]


def _effects(variants: _Variants, instance: Json, gold: OracleResult) -> tuple[list[str], list[str]]:
    """(the constraint types that apply to ``instance``, those of them and of the classes that change its gold)."""
    level, world = variants.level, variants.world
    rules = world["sources"][variants.key][instance["slots"]["policy_id"]]["rules"]
    kinds = sorted({r["type"] for r in rules})
    tags = _comm_tags_of(level, instance)
    applies = kinds + tags + (["room_capacity", "room_availability"] if level == 3 else [])
    changed = gold.feasible_candidates

    def differs(w: Json, i: Json, settings: OracleSettings = _ALL_ON) -> bool:
        return solve(w, i, settings).feasible_candidates != changed

    binding = [k for k in kinds if differs(variants.without_rule(instance["slots"]["policy_id"], k), instance)]
    binding += [t for t in tags if differs(world, _without_tag(level, instance, t))]
    if level == 3:
        binding += [k for k in ("room_capacity", "room_availability") if differs(variants.rooms[k], instance)]
    if differs(world, instance, OracleSettings(policy=False)):
        binding.append("policy")
    if tags and differs(world, instance, OracleSettings(comm=False)):
        binding.append("comm")
    if level == 3 and differs(variants.rooms["rooms"], instance):
        binding.append("rooms")
    return applies, binding


def _report(level: int, world: Json, instances: list[Json], results: list[OracleResult], attempts: int,
            **provenance: Any) -> ValidityReport:
    variants = _Variants(level, world)
    counts = {f"{low}+" if high is None else f"{low}-{high}": 0 for low, high in BUCKETS}
    mix = dict.fromkeys(CONSTRAINT_TYPES, 0)
    binding = dict.fromkeys((*CONSTRAINT_TYPES, *CLASSES), 0)
    full = 0
    for instance, result in zip(instances, results, strict=True):
        counts[_bucket(result.all_feasible)] += 1
        wanted = LEVEL3_OPTIONS if level == 3 else int(instance["slots"]["num_options"])
        full += len(result.feasible_candidates) >= wanted
        applies, binds = _effects(variants, instance, result)
        for name in applies:
            mix[name] += 1
        for name in binds:
            binding[name] += 1
    return ValidityReport(level=level, instances=len(instances), attempts=attempts,
                          discarded=attempts - len(instances), solvable=full / len(instances) if instances else 0.0,
                          candidate_counts=counts, constraint_mix=mix, binding=binding, **provenance)


# -- the API -----------------------------------------------------------------------------------------------------------


def generate_level(level: int, count: int, seed: int, *, split: str | None = None, timezone: str = "Asia/Seoul",
                   start_date: str = "2026-01-19") -> GeneratedSet:
    """``count`` new solvable instances of ``level`` over a new world, their oracle lines and the validity report.

    Same arguments, same set (byte for byte once written); ``split`` defaults to ``gen_s{seed}``.
    ``InputError`` for an unknown level, a count below 1, a split name the file names cannot carry, an unknown
    time zone or a start date that is not ``YYYY-MM-DD``.
    """
    if level not in (1, 2, 3):
        raise InputError(f"level must be 1, 2 or 3, got {level!r}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise InputError(f"count must be a whole number of instances, at least 1, got {count!r}")
    split = f"gen_s{seed}" if split is None else split
    if not _SPLIT.match(split):
        raise InputError(f"split {split!r}: use letters, digits, '_', '.' or '-', starting with a letter or digit "
                         "(it becomes part of the file names)")
    week = _Week(start_date, timezone, naive=level == 1)
    world = _world(level, split, _seeded(level, seed, "world"), week)
    if problems := world_problems(world, level):  # a generator bug, not the caller's
        raise AssertionError(f"generated world is invalid: {problems[0]}")
    rng = _seeded(level, seed, "instances")
    width = max(3, len(str(count - 1)))
    instances: list[Json] = []
    results: list[OracleResult] = []
    attempts = 0
    while len(instances) < count:
        if attempts >= DRAW_LIMIT_FACTOR * count + 100:
            raise InputError(f"level {level}, seed {seed}: only {len(instances)} of {count} solvable instances in "
                             f"{attempts} draws; try another seed")
        attempts += 1
        instance = _instance(level, split, len(instances), width, rng, world, week)
        result = solve(world, instance)
        if result.discarded:
            continue
        if problems := instance_problems(instance, world, level):
            raise AssertionError(f"generated instance is invalid: {problems[0]}")
        instances.append(instance)
        results.append(result)
    report = _report(level, world, instances, results, attempts, split=split, seed=seed, timezone=timezone,
                     start_date=start_date)
    return GeneratedSet(level=level, split=split, world=world, instances=instances,
                        oracle=[r.line() for r in results], report=report)


def _file_names(level: int, split: str) -> list[str]:
    return [f"world_level{level}_{split}.json", f"instances_level{level}_{split}.jsonl",
            f"oracle_level{level}_{split}.jsonl", f"validity_level{level}_{split}.json"]


def _documents(gs: GeneratedSet) -> list[str]:
    """The four files' texts, in ``_file_names`` order, as the reference writes them (UTF-8, not ASCII-escaped)."""
    def jsonl(lines: list[Json]) -> str:
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)

    return [json.dumps(gs.world, indent=2, ensure_ascii=False) + "\n", jsonl(gs.instances), jsonl(gs.oracle),
            json.dumps(msgspec.to_builtins(gs.report), indent=2, ensure_ascii=False) + "\n"]


def write_generated(gs: GeneratedSet, out_dir: Path) -> list[Path]:
    """Write the set's four files into ``out_dir`` (created if missing) and return their paths.

    Each file is written to a temporary name and moved into place, so a reader never sees half a file; the world
    goes last, because a world file is what makes a set discoverable (``discover``). Existing files of these names
    are never overwritten (``InputError`` naming them): a generated set is evidence and a rerun should not silently
    replace one that runs were scored against.
    """
    out = Path(out_dir)
    names = _file_names(gs.level, gs.split)
    paths = [out / name for name in names]
    existing = [p for p in paths if p.exists()]
    if existing:
        raise InputError(f"{out}: refusing to overwrite {', '.join(p.name for p in existing)} (choose another split "
                         "or directory, or remove them first)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{out}: cannot create the directory ({exc.strerror})") from exc
    order = [1, 2, 3, 0]  # world last
    texts = _documents(gs)
    for n in order:
        fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{names[n]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(texts[n])
            if paths[n].exists():
                raise InputError(f"{paths[n]}: appeared while writing; refusing to overwrite it")
            os.replace(tmp, paths[n])
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return paths


def _row(name: str, applies: int | None, binds: int, total: int) -> str:
    if applies is None:
        return f"| {name} | — | {binds} |"
    share = f" ({applies / total:.0%})" if total else ""
    return f"| {name} | {applies}{share} | {binds} |"


def render_validity(reports: list[ValidityReport]) -> str:
    """Markdown: per report a heading, the draw counts, and a table of each constraint's reach and binding."""
    out: list[str] = []
    for r in sorted(reports, key=lambda r: (r.level, r.split)):
        rate = f"{r.discarded / r.attempts:.1%}" if r.attempts else "n/a"
        histogram = ", ".join(f"{k}: {v}" for k, v in r.candidate_counts.items() if v) or "none"
        out += [f"### Level {r.level} · {r.split}", "",
                f"{r.instances} instances from {r.attempts} draws ({r.discarded} discarded and resampled, {rate}); "
                f"solvable {r.solvable:.3f}. Seed {r.seed}, {r.timezone}, week of {r.start_date}.", "",
                f"Feasible candidates per instance: {histogram}.", "",
                "| constraint | applies to | binding (changes the gold) |", "|---|---:|---:|"]
        out += [_row(name, r.constraint_mix.get(name, 0), r.binding.get(name, 0), r.instances)
                for name in CONSTRAINT_TYPES if r.constraint_mix.get(name, 0) or r.binding.get(name, 0)]
        for cls, members in CLASSES.items():
            if any(r.constraint_mix.get(n, 0) for n in members):
                out.append(_row(f"*all {cls} constraints*", None, r.binding.get(cls, 0), r.instances))
        out.append("")
    return "\n".join(out)
