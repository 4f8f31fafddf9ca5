"""Property: the free-slot computation agrees with a brute-force minute-grid oracle, across zones and DST."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpcbench_async.mpcbench.tools import busy_intervals, common_free_slots

ZONES = ["Europe/London", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "America/St_Johns",
         "Pacific/Chatham", "UTC"]
# Windows that contain a DST change in several of the zones above.
WINDOW_STARTS = [date(2026, 3, 23), date(2025, 10, 27), date(2026, 3, 30), date(2025, 11, 3), date(2026, 4, 1)]
PEOPLE = ["a@x.io", "b@x.io", "c@x.io", "d@x.io"]
OUTSIDER = "z@y.io"


@st.composite
def calendars(draw):
    zone = ZoneInfo(draw(st.sampled_from(ZONES)))
    first = draw(st.sampled_from(WINDOW_STARTS))
    days = draw(st.integers(1, 8))
    start_hour = draw(st.integers(6, 11))
    end_hour = draw(st.integers(start_hour + 2, min(22, start_hour + 11)))
    people = PEOPLE[: draw(st.integers(1, 4))]
    events = []
    for i in range(draw(st.integers(0, 25))):
        day = first + timedelta(days=draw(st.integers(-1, days + 1)))
        if draw(st.booleans()) and draw(st.integers(0, 9)) == 0:  # all-day event (date-only)
            span = draw(st.integers(1, 2))
            start_s, end_s = day.isoformat(), (day + timedelta(days=span)).isoformat()
        else:
            start = datetime.combine(day, time(0), tzinfo=zone) + timedelta(minutes=draw(st.integers(0, 24 * 60 - 1)))
            length = draw(st.one_of(st.integers(5, 240), st.integers(600, 3000)))  # some multi-day
            end = start + timedelta(minutes=length)
            offset_zone = draw(st.sampled_from([zone, UTC]))  # mixed offsets, as real data has
            start_s, end_s = start.astimezone(offset_zone).isoformat(), end.astimezone(offset_zone).isoformat()
        attendees = draw(st.lists(st.sampled_from(PEOPLE + [OUTSIDER]), min_size=1, max_size=3, unique=True))
        event = {"id": f"e{i}", "title": "x", "start": start_s, "end": end_s,
                 "attendees": [{"email": a} for a in attendees]}
        if draw(st.integers(0, 4)) == 0:  # on someone's own calendar only
            event["attendees"] = [{"email": OUTSIDER}]
            event["calendar_id"] = f"cal_{draw(st.sampled_from(PEOPLE))}"
        events.append(event)
    calendar = {"calendars": [{"id": f"cal_{p}", "email": p} for p in PEOPLE], "events": events}
    return (calendar, zone, first, first + timedelta(days=days - 1), time(start_hour), time(end_hour), people,
            draw(st.sampled_from([1, 15, 30, 45, 90])), draw(st.booleans()))


def _busy_minutes(calendar, people, zone):
    """Instants (UTC, minute resolution) when any of ``people`` is busy, computed independently."""
    owners = {c["id"]: c["email"] for c in calendar["calendars"]}
    spans = []
    for event in calendar["events"]:
        owner = {owners[event["calendar_id"]]} if "calendar_id" in event else set()
        who = {a["email"] for a in event["attendees"]} | owner
        if not who & set(people):
            continue
        if len(event["start"]) == 10:
            s = datetime.combine(date.fromisoformat(event["start"]), time(0), tzinfo=zone)
            e = datetime.combine(date.fromisoformat(event["end"]), time(0), tzinfo=zone)
        else:
            s, e = datetime.fromisoformat(event["start"]), datetime.fromisoformat(event["end"])
        spans.append((s, e))
    return spans


def oracle(calendar, zone, first, last, start_clock, end_clock, people, minimum, weekends):
    """Walk every minute of every working day in local wall time; group free minutes into intervals."""
    spans = _busy_minutes(calendar, people, zone)
    slots = []
    day = first
    while day <= last:
        if weekends or day.weekday() < 5:
            lo = datetime.combine(day, start_clock, tzinfo=zone)
            hi = datetime.combine(day, end_clock, tzinfo=zone)
            run_start = None
            t = lo
            while t < hi:
                nxt = t + timedelta(minutes=1)
                free = not any(s < nxt and t < e for s, e in spans)
                if free and run_start is None:
                    run_start = t
                if not free and run_start is not None:
                    slots.append((run_start, t))
                    run_start = None
                t = nxt
            if run_start is not None:
                slots.append((run_start, hi))
        day += timedelta(days=1)
    return [(s.astimezone(UTC), e.astimezone(UTC)) for s, e in slots
            if e - s >= timedelta(minutes=minimum)]


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(calendars())
def test_free_slots_match_the_minute_grid_oracle(case):
    """common_free_slots equals the brute-force answer on random calendars across zones and DST changes."""
    calendar, zone, first, last, start_clock, end_clock, people, minimum, weekends = case
    got = common_free_slots(busy_intervals(calendar, people, zone), first, last, zone, start_clock, end_clock,
                            min_minutes=minimum, include_weekends=weekends)
    expected = oracle(calendar, zone, first, last, start_clock, end_clock, people, minimum, weekends)
    assert expected == [(s.astimezone(UTC), e.astimezone(UTC)) for s, e in got]
