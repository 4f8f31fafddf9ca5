"""Tests for mpcbench.tools._calendar: event intervals, busy time, and the free time everyone shares."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpcbench_async.mpcbench.tools import busy_intervals, common_free_slots
from mpcbench_async.mpcbench.tools._calendar import event_interval, intersect, merge

UTC = UTC
LONDON = ZoneInfo("Europe/London")
NEW_YORK = ZoneInfo("America/New_York")
LORD_HOWE = ZoneInfo("Australia/Lord_Howe")


def _utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def _as_utc(intervals):
    return [(s.astimezone(UTC), e.astimezone(UTC)) for s, e in intervals]


# ---------------------------------------------------------------------------
# The property: common_free_slots agrees with a brute-force minute-grid oracle.
# ---------------------------------------------------------------------------

ZONES = ["Europe/London", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "America/St_Johns",
         "Pacific/Chatham", "UTC"]
# Date windows, each containing a DST change in at least one of the zones above:
# London 2026-03-29, New York / St John's 2025-11-02 and 2026-03-08, Lord Howe / Chatham 2026-04-05,
# Chatham 2025-09-28, Lord Howe 2025-10-05.
WINDOWS = [(date(2026, 3, 23), date(2026, 4, 3)), (date(2025, 10, 27), date(2025, 11, 7)),
           (date(2026, 3, 30), date(2026, 4, 10)), (date(2026, 3, 2), date(2026, 3, 13)),
           (date(2025, 9, 24), date(2025, 10, 8))]
PEOPLE = ["ann@acme.io", "bo@acme.io", "cy@acme.io", "di@acme.io"]
OUTSIDERS = ["zed@other.org", "yan@other.org"]
FIXED_OFFSETS = [timezone(timedelta(hours=h, minutes=m)) for h, m in ((-10, 0), (-3, -30), (5, 45), (9, 0), (13, 45))]


# One event's random choices, drawn from fixed strategies (cheap to draw) and shaped by _build_event.
_EVENT_CHOICES = st.fixed_dictionaries({
    "day": st.integers(0, 60),
    "all_day": st.integers(0, 7),  # 0: a date-only all-day event
    "all_day_span": st.integers(1, 3),
    "minute": st.integers(0, 24 * 60 - 1),
    "length": st.one_of(st.integers(5, 240), st.integers(5, 240), st.integers(600, 3000), st.just(0)),
    "style": st.sampled_from(["naive", "zone", "z", "fixed"]),
    "offset": st.sampled_from(FIXED_OFFSETS),
    "google_shape": st.integers(0, 5),  # 0: {"dateTime": …} / {"date": …}
    "others": st.lists(st.integers(0, 5), max_size=3, unique=True),
    "owner_via": st.integers(0, 7),  # 0-1: only on the owner's calendar, 2: organizer, else attendee
    "shapes": st.integers(0, 255),  # per attendee: dict or string, upper-case or not
    "cancelled": st.integers(0, 12),
})


def _stamps(c, zone: ZoneInfo, day: date) -> tuple[str, str]:
    """A (start, end) pair of timed stamps in one of the formats real data uses."""
    local_start = datetime.combine(day, time(0)) + timedelta(minutes=c["minute"])
    start = local_start.replace(tzinfo=zone)
    end = start.astimezone(UTC) + timedelta(minutes=c["length"])
    if c["style"] == "naive":  # no offset: read in the scenario's zone
        return local_start.isoformat(), end.astimezone(zone).replace(tzinfo=None).isoformat()
    if c["style"] == "zone":
        return start.isoformat(), end.astimezone(zone).isoformat()
    if c["style"] == "z":
        return start.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), end.strftime("%Y-%m-%dT%H:%M:%SZ")
    return start.astimezone(c["offset"]).isoformat(), end.astimezone(c["offset"]).isoformat()


def _build_event(c, zone: ZoneInfo, first: date, last: date, owner: str | None, people: list[str], index: int):
    day = first - timedelta(days=2) + timedelta(days=c["day"] % ((last - first).days + 5))
    if c["all_day"] == 0:  # all-day, date-only, end exclusive
        start_s, end_s = day.isoformat(), (day + timedelta(days=c["all_day_span"])).isoformat()
        shape = "date"
    else:
        start_s, end_s = _stamps(c, zone, day)
        shape = "dateTime"
    event = {"id": f"ev{index}", "title": "meeting", "start": start_s, "end": end_s}
    if c["google_shape"] == 0:
        event["start"], event["end"] = {shape: start_s}, {shape: end_s}
    pool = people + OUTSIDERS
    attendees = list(dict.fromkeys(pool[i % len(pool)] for i in c["others"]))
    if owner is not None:
        if c["owner_via"] <= 1:
            event["calendar_id"] = f"cal-{owner}"
            attendees = [a for a in attendees if a in OUTSIDERS]
        elif c["owner_via"] == 2:
            event["organizer"] = {"email": owner.upper()}
        elif owner not in attendees:
            attendees.append(owner)
    shaped = []
    for i, email in enumerate(attendees):
        bits = c["shapes"] >> (2 * i)
        email = email.upper() if bits & 2 else email
        shaped.append({"email": email, "responseStatus": "accepted"} if bits & 1 else email)
    event["attendees"] = shaped
    if c["cancelled"] == 0:
        event["status"] = "cancelled"
    return event


@st.composite
def free_slot_cases(draw):
    zone = ZoneInfo(draw(st.sampled_from(ZONES)))
    window_first, window_last = draw(st.sampled_from(WINDOWS))
    span = (window_last - window_first).days
    first = window_first + timedelta(days=draw(st.integers(0, 3)))
    last = first + timedelta(days=draw(st.integers(0, span - 3)))
    start_minute = draw(st.integers(6 * 60, 12 * 60))
    end_minute = draw(st.integers(start_minute + 30, 22 * 60))
    workday_start = time(start_minute // 60, start_minute % 60)
    workday_end = time(end_minute // 60, end_minute % 60)
    people = PEOPLE[: draw(st.integers(1, 4))]
    events = []
    for person in people:
        for choices in draw(st.lists(_EVENT_CHOICES, max_size=12)):
            events.append(_build_event(choices, zone, first, last, person, people, len(events)))
    for choices in draw(st.lists(_EVENT_CHOICES, max_size=3)):  # outsiders only: never blocks anyone
        events.append(_build_event(choices, zone, first, last, None, [], len(events)))
    calendar = {"calendars": [{"id": f"cal-{p}", "email": p} for p in people], "events": events}
    asked = draw(st.lists(st.sampled_from(people), min_size=1, unique=True))
    min_minutes = draw(st.sampled_from([1, 15, 30, 45, 60, 90, 240]))
    weekends = draw(st.booleans())
    return calendar, asked, zone, first, last, workday_start, workday_end, min_minutes, weekends


def _oracle_stamp(raw, zone: ZoneInfo) -> datetime:
    """One stamp as a UTC instant, read independently of the code under test."""
    text = raw.get("dateTime") or raw.get("date") if isinstance(raw, dict) else raw
    if len(text) == 10:
        return datetime(*map(int, text.split("-")), tzinfo=zone).astimezone(UTC)
    parsed = datetime.strptime(text.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S%z") if text[-1:] == "Z" \
        else datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone)  # fold=0: the earlier reading of an ambiguous wall time
    return parsed.astimezone(UTC)


def _oracle_busy(calendar, asked, zone) -> list[tuple[datetime, datetime]]:
    owners = {c["id"]: c["email"] for c in calendar["calendars"]}
    wanted = set(asked)
    spans = []
    for event in calendar["events"]:
        if event.get("status") == "cancelled":
            continue
        who = {(a["email"] if isinstance(a, dict) else a).lower() for a in event["attendees"]}
        if "organizer" in event:
            who.add(event["organizer"]["email"].lower())
        if "calendar_id" in event:
            who.add(owners[event["calendar_id"]])
        if not who & wanted:
            continue
        start, end = _oracle_stamp(event["start"], zone), _oracle_stamp(event["end"], zone)
        if end > start:
            spans.append((start, end))
    return spans


def oracle(calendar, asked, zone, first, last, workday_start, workday_end, min_minutes, weekends):
    """Walk every local wall-clock minute of every working day, mark it busy or free, group the free runs."""
    base = int(datetime.combine(first - timedelta(days=3), time(0), tzinfo=UTC).timestamp()) // 60
    busy = bytearray((last - first).days * 1440 + 7 * 1440)
    for start, end in _oracle_busy(calendar, asked, zone):
        lo = max(0, int(start.timestamp()) // 60 - base)
        hi = min(len(busy), int(end.timestamp()) // 60 - base)
        if hi > lo:
            busy[lo:hi] = b"\x01" * (hi - lo)
    wall_minutes = (workday_end.hour * 60 + workday_end.minute) - (workday_start.hour * 60 + workday_start.minute)
    runs: list[list[int]] = []  # [first free minute, last free minute] as UTC epoch minutes
    day = first
    while day <= last:
        if weekends or day.weekday() < 5:
            previous = None
            for k in range(wall_minutes):
                wall = datetime.combine(day, workday_start) + timedelta(minutes=k)
                instant = int(wall.replace(tzinfo=zone).timestamp()) // 60
                if busy[instant - base]:
                    previous = None
                    continue
                if previous is not None and instant == previous + 1:
                    runs[-1][1] = instant
                else:
                    runs.append([instant, instant])
                previous = instant
        day += timedelta(days=1)
    return [(datetime.fromtimestamp(a * 60, UTC), datetime.fromtimestamp((b + 1) * 60, UTC))
            for a, b in runs if b + 1 - a >= min_minutes]


class TestCommonFreeSlotsProperty:
    @settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(free_slot_cases())
    def test_agrees_with_the_minute_grid_oracle(self, case):
        """Free slots equal the brute-force minute grid on random calendars across zones and DST changes."""
        calendar, asked, zone, first, last, workday_start, workday_end, min_minutes, weekends = case
        expected = oracle(calendar, asked, zone, first, last, workday_start, workday_end, min_minutes, weekends)
        actual = common_free_slots(busy_intervals(calendar, asked, zone), first, last, zone, workday_start,
                                   workday_end, min_minutes=min_minutes, include_weekends=weekends)
        assert expected == _as_utc(actual)


# ---------------------------------------------------------------------------
# Examples, one class per unit.
# ---------------------------------------------------------------------------


class TestEventInterval:
    def test_naive_stamps_are_read_in_the_scenario_zone(self):
        """A stamp without an offset is local time in the given zone."""
        expected = [(_utc(2025, 11, 20, 15), _utc(2025, 11, 20, 16))]
        actual = _as_utc([event_interval({"start": "2025-11-20T10:00:00", "end": "2025-11-20T11:00:00"}, NEW_YORK)])
        assert expected == actual

    def test_z_and_offset_stamps_keep_their_instant(self):
        """A stamp with Z or an explicit offset keeps its own instant whatever the zone."""
        expected = [(_utc(2025, 11, 20, 10), _utc(2025, 11, 20, 10, 30))]
        actual = _as_utc([event_interval({"start": "2025-11-20T10:00:00Z", "end": "2025-11-20T19:30:00+09:00"},
                                         LONDON)])
        assert expected == actual

    def test_all_day_dates_span_whole_local_days_end_exclusive(self):
        """Date-only start and end cover local midnight to local midnight, the end date excluded."""
        expected = (datetime(2025, 11, 20, tzinfo=NEW_YORK), datetime(2025, 11, 22, tzinfo=NEW_YORK))
        assert expected == event_interval({"start": "2025-11-20", "end": "2025-11-22"}, NEW_YORK)

    def test_all_day_event_ending_on_its_start_day_lasts_one_day(self):
        """An all-day event whose end date equals its start date still covers that one day."""
        expected = (datetime(2025, 11, 20, tzinfo=LONDON), datetime(2025, 11, 21, tzinfo=LONDON))
        assert expected == event_interval({"start": "2025-11-20", "end": "2025-11-20"}, LONDON)

    def test_google_date_time_shapes_are_read(self):
        """Google's {"dateTime": …} and {"date": …} shapes are unwrapped."""
        expected = [(_utc(2025, 11, 20, 9), _utc(2025, 11, 20, 10)),
                    (_utc(2025, 11, 20), _utc(2025, 11, 21))]
        actual = _as_utc([
            event_interval({"start": {"dateTime": "2025-11-20T09:00:00Z"}, "end": {"dateTime": "2025-11-20T10:00:00Z"}},
                           LONDON),
            event_interval({"start": {"date": "2025-11-20"}, "end": {"date": "2025-11-21"}}, LONDON)])
        assert expected == actual

    def test_google_time_zone_reads_naive_date_times(self):
        """A naive dateTime with Google's timeZone is read in that zone, not the scenario's."""
        event = {"start": {"dateTime": "2025-11-20T09:00:00", "timeZone": "Asia/Seoul"},
                 "end": {"dateTime": "2025-11-20T10:00:00", "timeZone": "Asia/Seoul"}}
        assert [(_utc(2025, 11, 20, 0), _utc(2025, 11, 20, 1))] == _as_utc([event_interval(event, LONDON)])

    def test_epoch_stamps_are_instants_not_dates(self):
        """Ten-digit epoch seconds (as strings or numbers) are instants, never mistaken for all-day dates."""
        actual = [event_interval({"start": "1763629200", "end": 1763632800}, LONDON)]
        assert [(_utc(2025, 11, 20, 9), _utc(2025, 11, 20, 10))] == _as_utc(actual)

    def test_unreadable_or_empty_events_have_no_interval(self):
        """Missing stamps, bad dates and end-before-start give None."""
        events = [{"start": "2025-11-20T10:00:00"}, {"start": "soon", "end": "later"},
                  {"start": "2025-13-40", "end": "2025-13-41"},
                  {"start": "2025-11-20T10:00:00", "end": "2025-11-20T10:00:00"},
                  {"start": "2025-11-20T10:00:00", "end": "2025-11-20T09:00:00"}]
        assert [None] * 5 == [event_interval(e, LONDON) for e in events]


class TestBusyIntervals:
    CALENDAR = {
        "calendars": [{"id": "cal-ann", "email": "Ann@acme.io"}],
        "events": [
            {"id": "a", "start": "2025-11-20T09:00:00Z", "end": "2025-11-20T10:00:00Z",
             "attendees": [{"email": "ANN@acme.io"}, "zed@other.org"]},
            {"id": "b", "start": "2025-11-20T11:00:00Z", "end": "2025-11-20T12:00:00Z", "calendar_id": "cal-ann"},
            {"id": "c", "start": "2025-11-20T13:00:00Z", "end": "2025-11-20T14:00:00Z",
             "organizer": {"email": "ann@acme.io"}},
            {"id": "d", "start": "2025-11-20T15:00:00Z", "end": "2025-11-20T16:00:00Z",
             "attendees": ["ann@acme.io"], "status": "Cancelled"},
            {"id": "e", "start": "2025-11-20T17:00:00Z", "end": "2025-11-20T18:00:00Z", "attendees": ["zed@other.org"]},
        ],
        "free_busy": [{"email": "ann@acme.io", "time_slots": [{"start": "2025-11-21T09:00:00Z",
                                                               "end": "2025-11-21T09:30:00Z"}]},
                      {"email": "zed@other.org", "time_slots": [{"start": "2025-11-21T10:00:00Z",
                                                                 "end": "2025-11-21T11:00:00Z"}]}],
    }

    def test_attendee_calendar_owner_organizer_and_free_busy_all_count(self):
        """A person is busy in events they attend, own or organise and in their free_busy blocks, case-insensitively."""
        expected = [(_utc(2025, 11, 20, 9), _utc(2025, 11, 20, 10)), (_utc(2025, 11, 20, 11), _utc(2025, 11, 20, 12)),
                    (_utc(2025, 11, 20, 13), _utc(2025, 11, 20, 14)),
                    (_utc(2025, 11, 21, 9), _utc(2025, 11, 21, 9, 30))]
        assert expected == _as_utc(busy_intervals(self.CALENDAR, ["ann@ACME.io"], LONDON))

    def test_cancelled_and_other_peoples_events_do_not_count(self):
        """Cancelled events and events of people not asked about are left out."""
        expected = [(_utc(2025, 11, 20, 9), _utc(2025, 11, 20, 10)),
                    (_utc(2025, 11, 20, 17), _utc(2025, 11, 20, 18)),
                    (_utc(2025, 11, 21, 10), _utc(2025, 11, 21, 11))]
        assert expected == _as_utc(busy_intervals(self.CALENDAR, ["zed@other.org"], LONDON))

    def test_availability_rows_never_count_and_unclear_rows_do(self):
        """An 'Available' event and free slots leave time free; an OOO row marked transparent still blocks it."""
        calendar = {"events": [
            {"title": "Available", "start": "2025-11-20T09:00:00Z", "end": "2025-11-20T10:00:00Z",
             "attendees": ["ann@acme.io"]},
            {"title": "OOO", "transparency": "transparent", "start": "2025-11-20T11:00:00Z",
             "end": "2025-11-20T12:00:00Z", "attendees": ["ann@acme.io"]}],
            "free_busy": [{"email": "ann@acme.io", "free_slots": [{"start": "2025-11-21T09:00:00Z",
                                                                   "end": "2025-11-21T17:00:00Z"}]}]}
        assert [(_utc(2025, 11, 20, 11), _utc(2025, 11, 20, 12))] == _as_utc(busy_intervals(calendar, ["ann@acme.io"],
                                                                                             LONDON))

    def test_nobody_asked_means_nobody_busy(self):
        """An empty list of people has no busy time."""
        assert [] == busy_intervals(self.CALENDAR, [], LONDON)


class TestMerge:
    def test_overlapping_and_touching_intervals_join(self):
        """Overlapping or touching intervals become one; disjoint ones stay apart, sorted."""
        intervals = [(_utc(2025, 1, 1, 12), _utc(2025, 1, 1, 13)), (_utc(2025, 1, 1, 9), _utc(2025, 1, 1, 10)),
                     (_utc(2025, 1, 1, 10), _utc(2025, 1, 1, 11)), (_utc(2025, 1, 1, 12, 30), _utc(2025, 1, 1, 12, 45))]
        expected = [(_utc(2025, 1, 1, 9), _utc(2025, 1, 1, 11)), (_utc(2025, 1, 1, 12), _utc(2025, 1, 1, 13))]
        assert expected == merge(intervals)

    def test_instants_in_different_offsets_compare_as_instants(self):
        """Intervals given in different offsets merge by their real instants."""
        tokyo = timezone(timedelta(hours=9))
        intervals = [(_utc(2025, 1, 1, 9), _utc(2025, 1, 1, 10)),
                     (datetime(2025, 1, 1, 18, 30, tzinfo=tokyo), datetime(2025, 1, 1, 20, tzinfo=tokyo))]
        expected = [(_utc(2025, 1, 1, 9), _utc(2025, 1, 1, 11))]
        assert expected == _as_utc(merge(intervals))


class TestIntersect:
    def test_keeps_the_parts_inside_the_windows(self):
        """Each interval is cut to the windows it overlaps; intervals outside every window vanish."""
        intervals = [(_utc(2025, 1, 1, 9), _utc(2025, 1, 1, 12)), (_utc(2025, 1, 1, 14), _utc(2025, 1, 1, 15))]
        windows = [(_utc(2025, 1, 1, 8), _utc(2025, 1, 1, 10)), (_utc(2025, 1, 1, 11), _utc(2025, 1, 1, 13))]
        assert [(_utc(2025, 1, 1, 9), _utc(2025, 1, 1, 10)), (_utc(2025, 1, 1, 11), _utc(2025, 1, 1, 12))] == intersect(
            intervals, windows)


class TestCommonFreeSlots:
    def test_weekends_are_skipped_unless_asked(self):
        """Saturday and Sunday give no slots by default and whole working days with include_weekends."""
        kwargs = {"first_day": date(2025, 11, 22), "last_day": date(2025, 11, 23), "tz": LONDON,
                  "workday_start": time(9), "workday_end": time(17)}
        expected = [(datetime(2025, 11, 22, 9, tzinfo=LONDON), datetime(2025, 11, 22, 17, tzinfo=LONDON)),
                    (datetime(2025, 11, 23, 9, tzinfo=LONDON), datetime(2025, 11, 23, 17, tzinfo=LONDON))]
        assert ([], expected) == (common_free_slots([], **kwargs),
                                  common_free_slots([], **kwargs, include_weekends=True))

    def test_working_hours_follow_the_local_clock_across_dst(self):
        """09:00-17:00 in London is 09:00Z on the Friday before the change and 08:00Z on the Monday after it."""
        expected = [(_utc(2026, 3, 27, 9), _utc(2026, 3, 27, 17)), (_utc(2026, 3, 30, 8), _utc(2026, 3, 30, 16))]
        actual = common_free_slots([], date(2026, 3, 27), date(2026, 3, 30), LONDON, time(9), time(17))
        assert expected == _as_utc(actual)

    def test_a_multi_day_event_blocks_every_day_it_spans(self):
        """An event from Monday noon to Wednesday 10:00 leaves Monday morning and Wednesday from 10:00 free."""
        busy = [(datetime(2025, 11, 17, 12, tzinfo=LONDON), datetime(2025, 11, 19, 10, tzinfo=LONDON))]
        expected = [(datetime(2025, 11, 17, 9, tzinfo=LONDON), datetime(2025, 11, 17, 12, tzinfo=LONDON)),
                    (datetime(2025, 11, 19, 10, tzinfo=LONDON), datetime(2025, 11, 19, 17, tzinfo=LONDON))]
        assert expected == common_free_slots(busy, date(2025, 11, 17), date(2025, 11, 19), LONDON, time(9), time(17))

    def test_min_minutes_drops_shorter_gaps(self):
        """A 20-minute gap is kept with min_minutes=20 and dropped with min_minutes=21."""
        busy = [(datetime(2025, 11, 17, 9, tzinfo=LONDON), datetime(2025, 11, 17, 12, tzinfo=LONDON)),
                (datetime(2025, 11, 17, 12, 20, tzinfo=LONDON), datetime(2025, 11, 17, 17, tzinfo=LONDON))]
        gap = (datetime(2025, 11, 17, 12, tzinfo=LONDON), datetime(2025, 11, 17, 12, 20, tzinfo=LONDON))
        day = date(2025, 11, 17)
        actual = [common_free_slots(busy, day, day, LONDON, time(9), time(17), min_minutes=m) for m in (20, 21)]
        assert [[gap], []] == actual

    def test_lord_howe_half_hour_dst_change(self):
        """Lord Howe moves from +11:00 to +10:30 on 2026-04-05, so 09:00 local is 22:00Z then 22:30Z."""
        expected = [(_utc(2026, 4, 2, 22), _utc(2026, 4, 3, 6)), (_utc(2026, 4, 5, 22, 30), _utc(2026, 4, 6, 6, 30))]
        actual = common_free_slots([], date(2026, 4, 3), date(2026, 4, 6), LORD_HOWE, time(9), time(17))
        assert expected == _as_utc(actual)


# ---------------------------------------------------------------------------
# The scenario's blocks are read once per data: every run's tools and checks share them (issue 31).
# ---------------------------------------------------------------------------

def test_scenario_blocks_are_read_once_per_data_and_afresh_for_a_replaced_one():
    import dataclasses
    import pickle

    from mpcbench_async.mpcbench.tools._calendar import busy_in, calendar_blocks, scenario_blocks
    from tests.mpcbench.tools.conftest import make_data

    event = {"title": "Sync", "start": "2025-11-20T10:00:00+00:00", "end": "2025-11-20T11:00:00+00:00",
             "attendees": [{"email": "Ann@x.io"}]}
    data = make_data(calendar={"events": [event]})
    blocks = scenario_blocks(data)
    assert blocks is scenario_blocks(data)
    assert list(blocks) == calendar_blocks(data.source("calendar"), data.tz)
    assert [(_utc(2025, 11, 20, 10), _utc(2025, 11, 20, 11))] == _as_utc(busy_in(blocks, ["ann@x.io"]))
    assert busy_in(blocks, ["ann@x.io"]) == busy_intervals(data.source("calendar"), ["ANN@x.io"], data.tz)
    moved = dataclasses.replace(data, sources={**data.sources, "calendar": {"events": []}})
    assert () == scenario_blocks(moved)
    assert {} == pickle.loads(pickle.dumps(data))._derived
