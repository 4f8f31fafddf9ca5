"""The tools and loader on real-world data shapes: Slack channels stored as ``#name``, ``name`` or only an id;
timestamps as epoch strings or numbers, ISO with ``Z`` or offsets, naive local times and e-mail dates; Jira
projects named by name; calendar rows that state availability rather than busy time."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpcbench_async.mpcbench import SOURCES
from mpcbench_async.mpcbench._data import load_scenario_data, parse_timestamp
from tests.mpcbench.tools.conftest import make_backend

NY = ZoneInfo("America/New_York")
NOW = datetime(2025, 11, 24, 10, 2, 15, tzinfo=NY)  # a Monday

SLACK = {
    "channels": [{"id": "C-main-product", "name": "#main-product"}, {"id": "C002", "name": "general"}],
    "users": [{"id": "U-alex", "name": "Alex Smith", "email": "alex@acme.io"}],
    "messages": [
        {"id": "M1", "channel_id": "C-main-product", "user_id": "U-alex", "text": "Planning sync next week",
         "timestamp": "1763993160.000200"},  # 09:06:00.0002 in New York
        {"id": "M2", "channel_id": "C-main-product", "user_id": "U-alex", "text": "Tuesday works",
         "timestamp": "2025-11-24T14:10:00Z", "thread_ts": "2025-11-24T14:06:00Z"},  # the root, without its fraction
        {"id": "M3", "channel_id": "C-ask-hr", "user_id": "U-hr", "text": "Benefits enrollment closes Friday",
         "timestamp": "2025-11-24T23:20:00+09:00"},  # a channel the channel list does not name
        {"id": "M4", "channel": "#random", "user": "U-alex", "text": "Lunch at noon?", "ts": 1763994600},
        {"id": "M5", "channel_id": "C002", "user_id": "U-alex", "text": "Morning all",
         "timestamp": "2025-11-24T08:45:00"},
        {"id": "M6", "channel_id": "C002", "user_id": "U-alex", "text": "Morning!", "timestamp": "2025-11-24T13:50:00Z",
         "thread_ts": "1763991900"},
    ],
}


def _slack(**arguments) -> dict:
    return make_backend(slack=SLACK, tz=NY, now=NOW).call("Slack_search_messages", {"query": "", "limit": 100,
                                                                                   **arguments})


class TestParseTimestamp:
    @pytest.mark.parametrize("value", [
        "1763993160", "1763993160.000000", 1763993160, 1763993160.0, 1763993160000, "1763993160000",
        "2025-11-24T14:06:00Z", "2025-11-24T14:06:00+00:00", "2025-11-24T23:06:00+09:00", "2025-11-24T23:06:00+0900",
        "2025-11-24T14:06:00.000+0000", "2025-11-24T09:06:00", "2025-11-24 09:06", "Mon, 24 Nov 2025 09:06:00 -0500",
    ])
    def test_every_form_gives_the_same_instant(self, value):
        """Epoch seconds/milliseconds, ISO with Z or any offset, naive local and e-mail dates name one instant."""
        assert "2025-11-24T09:06:00-05:00" == parse_timestamp(value, NY).astimezone(NY).isoformat()

    def test_epoch_fractions_are_exact(self):
        """Slack's six-digit fraction survives exactly (no float rounding)."""
        assert "2025-11-24T09:06:00.000200-05:00" == parse_timestamp("1763993160.000200", NY).astimezone(NY).isoformat()

    @pytest.mark.parametrize("value", [None, "", "soon", True, ["2025-11-24"], {"dateTime": "x"}, "2025"])
    def test_unreadable_values_give_none(self, value):
        """Values that are no timestamp give None rather than raising."""
        assert parse_timestamp(value, NY) is None


class TestSlackChannels:
    @pytest.mark.parametrize("channel", ["#main-product", "main-product", "MAIN-PRODUCT", " #Main-Product ",
                                         "C-main-product"])
    def test_a_channel_stored_as_hash_name_is_found_by_name_or_id(self, channel):
        """A channel whose name is stored with '#' is found by '#name', 'name' (any case) or its id."""
        assert ["M2", "M1"] == [m["id"] for m in _slack(channel=channel)["messages"]]

    @pytest.mark.parametrize(("channel", "expected"), [("C-ask-hr", ["M3"]), ("#C-ask-hr", ["M3"]),
                                                       ("random", ["M4"]), ("#random", ["M4"]),
                                                       ("general", ["M6", "M5"]), ("C002", ["M6", "M5"])])
    def test_unlisted_ids_and_names_on_messages_are_found(self, channel, expected):
        """A message whose channel id is not in the channel list, or which names its channel, is still found."""
        assert expected == [m["id"] for m in _slack(channel=channel)["messages"]]

    def test_labels_are_names_without_hash_or_the_id_when_unnamed(self):
        """The channel label is the name without '#' when known, else the id as written."""
        expected = {"M1": "main-product", "M2": "main-product", "M3": "C-ask-hr", "M4": "random", "M5": "general",
                    "M6": "general"}
        assert expected == {m["id"]: m["channel"] for m in _slack()["messages"]}

    def test_every_printed_label_finds_its_message(self):
        """Passing a printed label back as the channel filter always finds that message."""
        assert [] == [m["id"] for m in _slack()["messages"]
                      if m["id"] not in {x["id"] for x in _slack(channel=m["channel"])["messages"]}]

    def test_an_unknown_channel_names_the_channels(self):
        """A filter naming no channel finds nothing and lists the channel labels."""
        assert {"messages": [], "total_matches": 0,
                "note": "no channel matches '#nope'; channels: C-ask-hr, general, main-product, random"} == _slack(
            channel="#nope")

    @given(channels=st.lists(st.tuples(st.sampled_from(["C1", "C2", "c-x"]),
                                       st.sampled_from([None, "", "#", "dev", "#dev", "##Dev", " #ops ", "DM A-B"])),
                             max_size=4),
           refs=st.lists(st.tuples(st.sampled_from(["channel_id", "channel"]),
                                   st.sampled_from(["C1", "C2", "c-x", "C9", "#dev", "ops", "#Loose"])),
                         min_size=1, max_size=6))
    def test_label_round_trip_property(self, channels, refs):
        """On any mix of channel lists and message references, every printed label finds its message."""
        slack = {"channels": [{"id": i, **({"name": n} if n is not None else {})} for i, n in channels],
                 "messages": [{"id": f"m{k}", key: value, "text": "x", "timestamp": f"2025-11-24T09:{k:02d}:00Z"}
                              for k, (key, value) in enumerate(refs)]}
        backend = make_backend(slack=slack, tz=NY, now=NOW)
        printed = backend.call("Slack_search_messages", {"query": "", "limit": 100})["messages"]
        for message in printed:
            found = backend.call("Slack_search_messages", {"query": "", "limit": 100, "channel": message["channel"]})
            assert message["id"] in [m["id"] for m in found["messages"]]


class TestSlackTimestamps:
    def test_stamps_are_iso_in_the_scenario_zone_and_ordered_by_instant(self):
        """Epoch strings and numbers, Z, +09:00 and naive stamps print as New York ISO times, newest first."""
        expected = [("M4", "2025-11-24T09:30:00-05:00"), ("M3", "2025-11-24T09:20:00-05:00"),
                    ("M2", "2025-11-24T09:10:00-05:00"), ("M1", "2025-11-24T09:06:00.000200-05:00"),
                    ("M6", "2025-11-24T08:50:00-05:00"), ("M5", "2025-11-24T08:45:00-05:00")]
        assert expected == [(m["id"], m["timestamp"]) for m in _slack()["messages"]]

    def test_replies_link_to_their_root_across_stamp_forms(self):
        """A reply's thread_ts prints exactly as its root's timestamp, whichever forms the two are written in."""
        printed = {m["id"]: m for m in _slack()["messages"]}
        assert ((printed["M1"]["timestamp"], printed["M5"]["timestamp"]) ==
                (printed["M2"]["thread_ts"], printed["M6"]["thread_ts"]))

    def test_a_thread_stamp_without_a_root_is_normalised(self):
        """A thread_ts whose root is not in the data is still printed in the scenario zone."""
        slack = {"messages": [{"id": "r", "channel_id": "C1", "text": "late reply", "timestamp": "1763994600",
                               "thread_ts": "1763650800"}]}
        result = make_backend(slack=slack, tz=NY, now=NOW).call("Slack_search_messages", {"query": "reply"})
        assert "2025-11-20T10:00:00-05:00" == result["messages"][0]["thread_ts"]


GMAIL = {"threads": [
    {"id": "t1", "subject": "Planning", "messages": [
        {"from": "alex@acme.io", "to": ["bo@acme.io"], "date": "Fri, 21 Nov 2025 16:00:00 -0500", "body": "Next week?"},
        {"from": "bo@acme.io", "to": ["alex@acme.io"], "internalDate": "1764000000000", "body": "Tuesday."}]},
    {"id": "t2", "subject": "Benefits", "messages": [
        {"from": "hr@acme.io", "to": ["alex@acme.io"], "date": "2025-11-24T08:00:00", "body": "Enroll by Friday."}]},
    {"id": "t3", "subject": "Old", "messages": [
        {"from": "hr@acme.io", "to": ["alex@acme.io"], "date": "2025-11-20T15:00:00Z", "body": "Old news."}]},
]}


class TestGmailStamps:
    def test_threads_by_latest_instant_with_normalised_last_date(self):
        """E-mail dates, epoch milliseconds and naive stamps order threads by instant and print in the zone."""
        result = make_backend(gmail=GMAIL, tz=NY, now=NOW).call("Gmail_SearchThreads", {})
        assert [("t1", "2025-11-24T11:00:00-05:00"), ("t2", "2025-11-24T08:00:00-05:00"),
                ("t3", "2025-11-20T10:00:00-05:00")] == [(t["id"], t["last_date"]) for t in result["threads"]]

    @pytest.mark.parametrize(("arguments", "expected"), [({"after": "2025-11-22"}, ["t1", "t2"]),
                                                          ({"before": "2025-11-21"}, ["t1", "t3"])])
    def test_day_filters_read_every_form(self, arguments, expected):
        """after/before read each message's date whatever its form."""
        result = make_backend(gmail=GMAIL, tz=NY, now=NOW).call("Gmail_SearchThreads", arguments)
        assert expected == [t["id"] for t in result["threads"]]

    def test_get_thread_prints_dates_in_the_zone(self):
        """GetThread prints each message's date as ISO in the scenario zone."""
        result = make_backend(gmail=GMAIL, tz=NY, now=NOW).call("Gmail_GetThread", {"thread_id": "t1"})
        assert ["2025-11-21T16:00:00-05:00", "2025-11-24T11:00:00-05:00"] == [m["date"] for m in result["messages"]]


class TestDriveAndJiraStamps:
    def test_drive_modified_times_in_any_form(self):
        """Drive files order by instant and print modifiedTime in the zone whatever form it is stored in."""
        drive = {"files": [
            {"id": "f1", "name": "A", "content": "plan", "modifiedTime": 1763758800},
            {"id": "f2", "name": "B", "content": "plan", "modifiedTime": "2025-11-20T15:00:00.000Z"},
            {"id": "f3", "name": "C", "content": "plan", "modifiedTime": "2025-11-24T08:00:00"}]}
        result = make_backend(drive=drive, tz=NY, now=NOW).call("GoogleDrive_gdrive_search", {"query": "plan"})
        assert [("f3", "2025-11-24T08:00:00-05:00"), ("f1", "2025-11-21T16:00:00-05:00"),
                ("f2", "2025-11-20T10:00:00-05:00")] == [(f["id"], f["modifiedTime"]) for f in result["files"]]

    JIRA = {"projects": [{"key": "APP", "name": "API Launch"}, {"key": "MOB", "name": "Mobile App"}],
            "issues": [{"key": "APP-1", "summary": "Rollout", "status": "Done", "project": {"key": "APP"},
                        "updated": "2025-11-21T21:00:00.000+0000"},
                       {"key": "APP-2", "summary": "Feature X", "status": "In QA", "project": {"key": "APP"},
                        "updated": 1764000000000},
                       {"key": "MOB-1", "summary": "Login", "status": "To Do", "project": {"key": "MOB"},
                        "updated": "2025-11-24T08:00:00"}]}

    def _keys(self, jql: str) -> list[tuple[str, str]]:
        result = make_backend(jira=self.JIRA, tz=NY, now=NOW).call("Jira_SearchIssuesWithJql", {"jql": jql})
        return [(i["key"], i["updated"]) for i in result["issues"]]

    def test_jira_stamps_order_by_instant_and_print_in_the_zone(self):
        """Jira's +0000 form, epoch milliseconds and naive stamps sort by instant and print in the zone."""
        assert [("APP-2", "2025-11-24T11:00:00-05:00"), ("MOB-1", "2025-11-24T08:00:00-05:00"),
                ("APP-1", "2025-11-21T16:00:00-05:00")] == self._keys("ORDER BY updated DESC")

    @pytest.mark.parametrize(("jql", "expected"), [
        ('project = "API Launch"', ["APP-1", "APP-2"]),
        ("project = 'api launch'", ["APP-1", "APP-2"]),
        ("project = APP", ["APP-1", "APP-2"]),
        ('project IN ("Mobile App", APP)', ["APP-1", "APP-2", "MOB-1"]),
        ('project != "API Launch"', ["MOB-1"]),
        ('project not in ("mobile app")', ["APP-1", "APP-2"]),
    ])
    def test_project_by_name_when_issues_carry_only_the_key(self, jql, expected):
        """A project named by its name (quoted, any case) finds issues whose project object holds only the key."""
        assert expected == [key for key, _ in self._keys(jql)]


CALENDAR = {
    "calendars": [{"id": "cal_ann", "email": "ann@acme.io"}, {"id": "cal_bo", "email": "bo@acme.io"}],
    "events": [
        {"id": "e0", "title": "Planning", "start": "2025-12-01T10:00:00-05:00", "end": "2025-12-01T11:00:00-05:00",
         "attendees": [{"email": "ann@acme.io"}, {"email": "bo@acme.io"}]},
        {"id": "e1", "title": "Available", "start": "2025-12-01T13:00:00", "end": "2025-12-01T17:00:00",
         "calendar_id": "cal_ann"},
        {"id": "e2", "title": "Team sync", "transparency": "transparent", "start": "2025-12-02T14:00:00Z",
         "end": "2025-12-02T15:00:00Z", "attendees": ["bo@acme.io"]},
        {"id": "e3", "title": "Lunch - OOO", "transparency": "transparent", "start": "2025-12-02T12:00:00-05:00",
         "end": "2025-12-02T13:00:00-05:00", "attendees": ["ann@acme.io"]},
    ],
    "free_busy": [{"email": "bo@acme.io", "free_slots": [{"start": "2025-12-01T14:00:00-05:00",
                                                          "end": "2025-12-01T16:00:00-05:00"}]}],
}
PAIR = ["ann@acme.io", "bo@acme.io"]


def _span(start: str, end: str) -> dict:
    return {"start": f"2025-12-0{start}-05:00", "end": f"2025-12-0{end}-05:00"}


class TestAvailabilityInTheCalendarTools:
    def _call(self, name: str, arguments: dict) -> dict:
        return make_backend(calendar=CALENDAR, tz=NY, now=NOW).call(name, arguments)

    def test_free_slots_never_treat_availability_as_busy(self):
        """Availability rows leave time free; the unclear 'Lunch - OOO' row blocks it."""
        result = self._call("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
                            {"email_addresses": PAIR, "start_date": "2025-12-01", "end_date": "2025-12-02"})
        assert [("12-01T09:00", "10:00"), ("12-01T11:00", "18:00"), ("12-02T09:00", "12:00"),
                ("12-02T13:00", "18:00")] == [(s["start"][5:16], s["end"][11:16]) for s in result["slots"]]

    def test_free_slots_list_stated_availability_and_unclear_rows(self):
        """The stated availability, the free time kept to everyone's stated windows and the unclear rows are listed."""
        result = self._call("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
                            {"email_addresses": PAIR, "start_date": "2025-12-01", "end_date": "2025-12-02"})
        assert ([{"who": ["ann@acme.io"], **_span("1T13:00:00", "1T17:00:00"), "title": "Available"},
                 {"who": ["bo@acme.io"], **_span("2T09:00:00", "2T10:00:00"), "title": "Team sync"},
                 {"who": ["bo@acme.io"], **_span("1T14:00:00", "1T16:00:00"), "title": None}],
                [{**_span("1T14:00:00", "1T16:00:00"), "duration_minutes": 120}],
                [{"who": ["ann@acme.io"], **_span("2T12:00:00", "2T13:00:00"), "title": "Lunch - OOO",
                  "why": "transparency 'transparent', but the title says busy; counted as busy"}]) == (
            result["stated_availability"], result["slots_within_stated_availability"], result["unclear_rows"])

    def test_plain_calendars_add_no_availability_keys(self):
        """Without availability or unclear rows the result has only the usual keys."""
        result = self._call("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
                            {"email_addresses": PAIR, "start_date": "2025-12-03", "end_date": "2025-12-03"})
        assert ["date_range", "slots", "timezone", "weekends_included", "working_hours"] == sorted(result)

    def test_list_events_marks_availability_and_unclear_rows(self):
        """ListEvents shows availability rows (also free/busy free slots) with availability true and flags unclear
        ones."""
        result = self._call("GoogleCalendar_ListEvents", {"start_date": "2025-12-01", "end_date": "2025-12-02"})
        assert [("e0", "Planning", None), ("e1", "Available", True), (None, "Available", True),
                ("e2", "Team sync", True), ("e3", "Lunch - OOO", "transparency 'transparent', but the title says "
                                                                 "busy; counted as busy")] == [
            (e["id"], e["title"], e.get("availability", e.get("availability_unclear"))) for e in result["events"]]

    def test_list_events_attendee_filter_reads_free_busy_owners(self):
        """A free/busy free slot is listed for its owner only."""
        result = self._call("GoogleCalendar_ListEvents", {"start_date": "2025-12-01", "end_date": "2025-12-01",
                                                          "attendee_email": "bo@acme.io"})
        assert [("e0", ["ann@acme.io", "bo@acme.io"]), (None, ["bo@acme.io"])] == [
            (e["id"], e["attendees"]) for e in result["events"]]


class TestLoaderReportsCalendarRows:
    def test_each_availability_or_unclear_row_is_reported_once(self, tmp_path):
        """Loading warns once per availability or unclear row, naming the calendar file and the row."""
        world_state = {"scenario_id": "s1", "reference_now": "2025-11-24T10:02:15-05:00",
                       "global_settings": {"timezone": "America/New_York"}}
        for name in ("world_state", *SOURCES):
            doc = world_state if name == "world_state" else CALENDAR if name == "calendar" else {}
            (tmp_path / f"s1_{name}.json").write_bytes(orjson.dumps(doc))
        path = tmp_path / "s1_calendar.json"
        assert [f"{path}: $.events[1]: 'Available' read as availability, not busy time (the title offers time)",
                f"{path}: $.events[2]: 'Team sync' read as availability, not busy time (transparency 'transparent')",
                f"{path}: $.events[3]: 'Lunch - OOO' is unclear (transparency 'transparent', but the title says busy); "
                "counted as busy time",
                f"{path}: $.free_busy[0].free_slots: the slots of bo@acme.io read as availability, not busy time "
                "(listed under free_slots)"] == load_scenario_data(tmp_path, "s1").warnings
