"""``sim/generator`` storyline ``planning_meeting``: a meeting request and the calendars behind it.

The request is a Slack thread whose clues (participants by full name, the
duration as ``<D> minutes``, the window phrase) are spread over more messages
as ``depth`` grows. The participants' calendars are then filled so that the
answer needs computing: one to three weekdays of the window keep exactly one
common free slot of at least D minutes inside working hours, every other
weekday has none. The kept slots are promised to the world, whose booking
guard keeps them free from everything generated later.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from ._generator_world import Span, World, join_names

__all__ = ["WINDOW_PHRASES", "plan_meeting"]

WINDOW_PHRASES = {"next_week_working_hours": "next week", "this_week_working_hours": "this week",
                  "next_3_working_days": "in the next 3 working days"}
_MEETING_TITLES = ["Design review", "Standup", "Customer call", "Sprint planning", "Interview", "Roadmap sync",
                   "Incident review", "Vendor call", "Budget review", "Hiring panel", "Architecture review",
                   "Partner check-in", "Backlog refinement", "Release readiness"]
_BLOCK_TITLES = ["Focus time", "Customer workshop", "Training", "Deep work (no meetings)", "Quarterly business review",
                 "Site visit", "Planning workshop"]
_LENGTHS = [30, 45, 60, 60, 90, 120]
_FILL_LENGTHS = [30, 45, 60, 90, 120, 150, 180]


def _duration_and_window(sub: dict[str, Any]) -> tuple[int, str]:
    """The requested length and window; a free-text hint (or the description) is read for both."""
    hint = sub.get("constraints_hint")
    text = str(sub.get("abstract_description", ""))
    duration: Any = None
    window: Any = None
    if isinstance(hint, dict):
        duration, window = hint.get("approx_duration_minutes"), hint.get("time_window")
    elif isinstance(hint, str):
        text = f"{hint} {text}"
    if not isinstance(duration, (int, float)) or isinstance(duration, bool) or duration <= 0:
        found = re.search(r"(\d+)\s*-?\s*min", text)
        duration = int(found.group(1)) if found else 45
    if window not in WINDOW_PHRASES:
        lowered = text.lower()
        if re.search(r"next (?:3|three) working days", lowered):
            window = "next_3_working_days"
        elif "this week" in lowered:
            window = "this_week_working_hours"
        else:
            window = "next_week_working_hours"
    return int(duration), window


def _window(world: World, kind: str) -> tuple[str, list[date], datetime]:
    """The window's kind (this week falls back to next week when < 2 working days are left),
    its weekdays, and the earliest instant a meeting may start."""
    if kind == "next_3_working_days":
        days: list[date] = []
        day = world.today
        while len(days) < 3:
            day += timedelta(days=1)
            if day.weekday() < 5:
                days.append(day)
        return kind, days, world.local(days[0], world.work_start)
    if kind == "this_week_working_hours":
        next_hour = (world.minute_of_day(world.now) // 60 + 1) * 60
        friday = world.week_monday() + timedelta(days=4)
        days = [world.today + timedelta(days=i) for i in range((friday - world.today).days + 1)]
        days = [d for d in days if d.weekday() < 5 and (d != world.today or next_hour < world.work_end)]
        if len(days) >= 2:
            earliest = max(world.local(world.today, next_hour), world.local(days[0], world.work_start))
            return kind, days, earliest
    monday = world.week_monday() + timedelta(days=7)
    days = [monday + timedelta(days=i) for i in range(5)]
    return "next_week_working_hours", days, world.local(monday, world.work_start)


def _participants(world: World, sub: dict[str, Any]) -> list[dict[str, Any]]:
    """Hinted people in order (the first asks); padded from the staff so there are at least two."""
    people: list[dict[str, Any]] = []
    for hint in sub.get("participants_hint") or ():
        person = world.person(str(hint))
        if person is not None and person not in people:
            people.append(person)
    for person in world.staff:
        if len(people) >= 2:
            break
        if person not in people:
            people.append(person)
    return people


def _meeting_words(description: str, project: str) -> tuple[str, str]:
    """What kind of meeting (``sync``, ``working session``…) and what for (``to agree the plan``)."""
    noun = re.search(r"\d+[- ]minutes? (\w[\w/ -]*?) (?:next week|this week|within|before|in the next|with)\b",
                     description)
    purpose = re.search(r"\bwith\b[^.]*?\b(to|about|on)\s+([^.]+)", description)
    if purpose:
        words = f"{purpose.group(1)} {purpose.group(2)}".split()
        text = " ".join(words[:24])
    else:
        text = f"about {project}" if project else "about the project"
    return (noun.group(1) if noun else "sync"), text


def _request_thread(world: World, sub: dict[str, Any], people: list[dict[str, Any]], duration: int,
                    phrase: str, channel: str) -> dict[str, Any]:
    """The Slack request; depth decides how many messages the clues are spread over."""
    requester, others = people[0], people[1:]
    project = next((p["name"] for p in world.projects if f"{p['project_key'].lower()}-team" == channel), "")
    noun, purpose = _meeting_words(str(sub.get("abstract_description", "")), project)
    names = [p["name"] for p in others]
    sid = sub["id"]
    asked = world.past(3, 48)
    reply_at = asked + timedelta(minutes=world.rng.randint(6, 40))
    if world.depth < 0.34:
        return world.slack(sid, channel, requester, asked,
                           f"Hi all, I'd like to set up a {noun} {phrase} with {join_names(names)} {purpose}. It "
                           f"should take {duration} minutes. Could someone find a time when everyone is free?",
                           kind="meeting_request")
    if world.depth < 0.67:
        root = world.slack(sid, channel, requester, asked,
                           f"Can we find {duration} minutes {phrase} for a {noun} {purpose}? "
                           f"{names[0] if names else 'The team'} should join.", kind="meeting_request")
        follow = f"Sounds good. Please include {join_names(names[1:])} too." if names[1:] else "Sounds good, count me in."
        world.slack(sid, channel, others[0] if others else requester, reply_at, follow, parent=root,
                    kind="meeting_request_reply")
        return root
    root = world.slack(sid, channel, requester, asked, f"We need to sync {phrase} {purpose}.", kind="meeting_request")
    world.slack(sid, channel, others[0] if others else requester, reply_at,
                f"Happy to join. {duration} minutes should be enough for that.", parent=root,
                kind="meeting_request_reply")
    world.slack(sid, channel, requester, reply_at + timedelta(minutes=world.rng.randint(5, 30)),
                f"Great, let's loop in {join_names(names) or 'the team'} then.", parent=root,
                kind="meeting_request_reply")
    return root


def _gaps(blocked: list[Span], lo: datetime, hi: datetime) -> list[Span]:
    """The parts of [lo, hi) not covered by ``blocked``."""
    gaps, cursor = [], lo
    for start, end in sorted(blocked):
        if end <= cursor or start >= hi:
            continue
        if start > cursor:
            gaps.append((cursor, start))
        cursor = max(cursor, end)
    if cursor < hi:
        gaps.append((cursor, hi))
    return gaps


def _keep_slot(world: World, people: list[dict[str, Any]], day: date, earliest: datetime,
               duration: int) -> Span | None:
    """Choose (and promise) a free slot of ``duration`` (+0–30 min) inside working hours on ``day``."""
    length = duration + world.rng.choice([0, 15, 30])
    first = max(world.minute_of_day(max(earliest, world.local(day, world.work_start))), world.work_start)
    first = -(-first // 15) * 15
    starts = list(range(first, world.work_end - length + 1, 15))
    world.rng.shuffle(starts)
    for minute in starts:
        span = (world.local(day, minute), world.local(day, minute + length))
        if world.is_free(people, span) and all(world.bookable(p, span) for p in people):
            world.keep_free(people, span)
            return span
    return None


def _daily_meetings(world: World, sid: str, person: dict[str, Any], people: list[dict[str, Any]],
                    day: date) -> None:
    """One to three ordinary meetings for ``person`` on ``day``, some shared, some just outside hours."""
    for _ in range(world.rng.randint(1, 3)):
        for _attempt in range(4):
            length = world.rng.choice(_LENGTHS)
            lo = world.work_start - 60
            minute = lo + 15 * world.rng.randint(0, (world.work_end + 30 - length - lo) // 15)
            span = (world.local(day, minute), world.local(day, minute + length))
            if not world.bookable(person, span) or not world.is_free([person], span):
                continue
            guests = [p for p in people + world.staff if p is not person and world.bookable(p, span)]
            attendees = [person]
            if guests and world.rng.random() < 0.35:
                attendees += world.rng.sample(list({p["id"]: p for p in guests}.values()),
                                              k=min(len(guests), world.rng.randint(1, 2)))
            title = world.rng.choice(_MEETING_TITLES)
            if len(attendees) == 2 and world.rng.random() < 0.4:
                title = f"1:1 {attendees[0]['name'].split()[0]} / {attendees[1]['name'].split()[0]}"
            world.meeting(sid, title, span, attendees)
            break


def _long_blocks(world: World, sid: str, people: list[dict[str, Any]], closed: list[date]) -> None:
    """An all-morning block for someone; from depth 0.5 also an all-day conference or a two-day offsite."""
    day = world.rng.choice(closed)
    person = world.rng.choice(people)
    morning = (world.local(day, world.work_start), world.local(day, max(12 * 60, world.work_start + 150)))
    world.meeting(sid, "Quarterly planning workshop", morning, [person], description="All morning, on site.")
    if world.depth < 0.5:
        return
    pairs = [d for d in closed if d + timedelta(days=1) in closed]
    if pairs and world.rng.random() < 0.5:
        first = world.rng.choice(pairs)
        away = world.rng.sample(people, k=min(len(people), world.rng.randint(1, 2)))
        world.meeting(sid, f"Offsite: {away[0].get('team') or 'team'} strategy days",
                      (world.local(first, 0), world.local(first, 2 * 1440)), away,
                      description="Two days away from the office; not available for meetings.", kind="away")
    else:
        day = world.rng.choice(closed)
        world.meeting(sid, "Industry conference (all day)", (world.local(day, 0), world.local(day, 1440)),
                      [world.rng.choice(people)], description="Attending the conference all day.", kind="away")


def _close_gaps(world: World, sid: str, people: list[dict[str, Any]], day: date, kept: Span | None,
                duration: int) -> None:
    """Book every common gap of at least ``duration`` on ``day`` except the kept slot."""
    blocked = world.busy(people) + ([kept] if kept else [])
    lo, hi = world.local(day, world.work_start), world.local(day, world.work_end)
    for start, end in _gaps(blocked, lo, hi):
        if end - start < timedelta(minutes=duration):
            continue
        cursor = start
        while cursor < end:
            stop = min(cursor + timedelta(minutes=world.rng.choice(_FILL_LENGTHS)), end)
            if end - stop < timedelta(minutes=30):
                stop = end
            span = (cursor, stop)
            free = [p for p in people if world.bookable(p, span)]
            if free:
                attendees = [world.rng.choice(free)]
                if len(free) > 1 and world.rng.random() < 0.25:
                    attendees.append(world.rng.choice([p for p in free if p is not attendees[0]]))
                title = world.rng.choice(_BLOCK_TITLES + _MEETING_TITLES)
                world.meeting(sid, title, span, attendees)
            cursor = stop


def _calendars(world: World, sid: str, people: list[dict[str, Any]], days: list[date], earliest: datetime,
               duration: int) -> None:
    """Busy calendars for the participants with one to three kept common slots and closed days."""
    count = world.rng.randint(1, max(1, min(3, len(days) - 1)))
    candidates = days[:]
    world.rng.shuffle(candidates)
    kept: dict[date, Span] = {}
    for day in candidates:
        if len(kept) == count:
            break
        slot = _keep_slot(world, people, day, earliest, duration)
        if slot is not None:
            kept[day] = slot
    closed = [d for d in days if d not in kept] or days
    _long_blocks(world, sid, people, closed)
    for day in days:
        for person in people:
            _daily_meetings(world, sid, person, people, day)
    for day in days:
        _close_gaps(world, sid, people, day, kept.get(day), duration)


def plan_meeting(world: World, sub: dict[str, Any]) -> dict[str, Any]:
    """Generate the storyline; return what noise needs to imitate it (channel, people, duration)."""
    duration, kind = _duration_and_window(sub)
    kind, days, earliest = _window(world, kind)
    people = _participants(world, sub)
    channel = world.channel(str(sub.get("abstract_description", "")))
    root = _request_thread(world, sub, people, duration, WINDOW_PHRASES[kind], channel)
    _calendars(world, sub["id"], people, days, earliest, duration)
    root["details"].update(duration_minutes=duration, window=kind, window_start=world.stamp(earliest),
                           window_end=world.stamp(world.local(days[-1], world.work_end)),
                           participant_emails=[p["email"] for p in people])
    return {"type": "planning_meeting", "channel": channel, "people": people, "duration": duration,
            "days": days}
