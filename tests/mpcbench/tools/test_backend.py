"""Tests for mpcbench.tools._backend: the nine tools' surface, argument handling, free slots and events."""

from __future__ import annotations

import re
from datetime import datetime, time
from zoneinfo import ZoneInfo

import orjson
import pytest

from mpcbench_async.mpcbench.tools import TOOL_NAMES, ToolBackend, api_name, tool_name
from tests.mpcbench.tools.conftest import make_backend, make_data

FREE = "GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree"
LONDON = ZoneInfo("Europe/London")
NEW_YORK = ZoneInfo("America/New_York")

CALENDAR = {
    "calendars": [{"id": "cal-ann", "email": "ann@acme.io"}, {"id": "cal-bo", "email": "bo@acme.io"}],
    "events": [
        {"id": "e1", "title": "Planning", "start": "2025-11-24T10:00:00", "end": "2025-11-24T11:00:00",
         "attendees": [{"email": "ann@acme.io"}, {"email": "bo@acme.io"}], "description": "Quarterly planning"},
        {"id": "e2", "title": "Offsite", "start": "2025-11-25T12:00:00Z", "end": "2025-11-27T09:30:00Z",
         "calendar_id": "cal-ann"},
        {"id": "e3", "title": "Holiday", "start": "2025-11-28", "end": "2025-11-29", "attendees": ["bo@acme.io"]},
        {"id": "e4", "title": "Cancelled sync", "start": "2025-11-24T14:00:00Z", "end": "2025-11-24T15:00:00Z",
         "attendees": ["ann@acme.io"], "status": "cancelled"},
        {"id": "e5", "title": "Outsiders", "start": "2025-11-26T09:00:00Z", "end": "2025-11-26T18:00:00Z",
         "attendees": ["zed@other.org"]},
    ],
}
CONTACTS = {"contacts": [{"name": "Cy Contact", "email": "cy@acme.io"}]}
BOTH = ["ann@acme.io", "bo@acme.io"]


def _slot(start: str, end: str, minutes: int) -> dict:
    return {"start": start, "end": end, "duration_minutes": minutes}


def _backend(**kwargs) -> ToolBackend:
    return make_backend(**{"calendar": CALENDAR, "contacts": CONTACTS, **kwargs})


def _spans(result) -> list[tuple[str, str]]:
    return [(s["start"][5:16], s["end"][11:16]) for s in result["slots"]]


class TestNames:
    def test_api_name_replaces_dots(self):
        """A dotted tool name becomes an API name with underscores."""
        assert "Slack_search_messages" == api_name("Slack.search_messages")

    @pytest.mark.parametrize("name", ["Gmail.GetThread", "Gmail_GetThread"])
    def test_tool_name_accepts_both_forms(self, name):
        """Both the dotted and the underscored form give the dotted tool name."""
        assert "Gmail.GetThread" == tool_name(name)

    def test_tool_name_leaves_unknown_names(self):
        """An unknown name is returned unchanged."""
        assert "Gmail_Send" == tool_name("Gmail_Send")


class TestSchemas:
    REQUIRED = {
        "Slack_search_messages": ["query"],
        "GoogleContacts_SearchContactsByName": ["name"],
        "GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree": ["email_addresses"],
        "GoogleCalendar_ListEvents": [],
        "Gmail_SearchThreads": [],
        "Gmail_GetThread": ["thread_id"],
        "GoogleDrive_gdrive_search": ["query"],
        "GoogleDrive_gdrive_read_file": ["file_id"],
        "Jira_SearchIssuesWithJql": ["jql"],
    }

    def test_nine_tools_in_order(self):
        """The schemas list the nine tools under their API names, in TOOL_NAMES order."""
        names = [s.function.name for s in _backend().schemas()]
        assert (list(self.REQUIRED), [api_name(t) for t in TOOL_NAMES]) == (names, names)

    def test_names_are_valid_function_names(self):
        """Every API name matches ^[a-zA-Z0-9_-]+$, as function-calling APIs require."""
        names = [s.function.name for s in _backend().schemas()]
        assert [] == [n for n in names if not re.fullmatch(r"[a-zA-Z0-9_-]+", n)]

    def test_parameters_are_closed_objects_with_their_required_lists(self):
        """Each parameters object is type object, forbids extra properties and lists exactly its required fields."""
        actual = {s.function.name: (s.function.parameters["type"], s.function.parameters["additionalProperties"],
                                    s.function.parameters["required"]) for s in _backend().schemas()}
        assert {name: ("object", False, req) for name, req in self.REQUIRED.items()} == actual

    def test_required_fields_are_declared_properties(self):
        """Every required field is one of the schema's properties."""
        missing = {s.function.name: [f for f in s.function.parameters["required"]
                                     if f not in s.function.parameters["properties"]] for s in _backend().schemas()}
        assert {name: [] for name in self.REQUIRED} == missing

    def test_every_tool_and_property_is_described(self):
        """Each tool and each property has a description, on the property or on its non-null anyOf branch."""
        def described(body):
            return bool(body.get("description")) or any(b.get("description") for b in body.get("anyOf", ()))

        undescribed = [f"{s.function.name}.{prop}" for s in _backend().schemas()
                       for prop, body in s.function.parameters["properties"].items() if not described(body)]
        undescribed += [s.function.name for s in _backend().schemas() if not s.function.description]
        assert [] == undescribed

    def test_schemas_are_json_encodable(self):
        """The schemas encode to JSON (as they are sent to the model) and are shared between backends."""
        first, second = _backend().schemas(), make_backend().schemas()
        assert (9, True) == (len(orjson.loads(orjson.dumps([s.function.parameters for s in first]))), first is second)


class TestCallArguments:
    def test_unknown_tool_lists_the_available_tools(self):
        """An unknown tool name is an error that lists every available API name."""
        expected = {"error": "unknown tool 'Gmail_Send'; available tools: Slack_search_messages, "
                             "GoogleContacts_SearchContactsByName, GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree, "
                             "GoogleCalendar_ListEvents, Gmail_SearchThreads, Gmail_GetThread, "
                             "GoogleDrive_gdrive_search, GoogleDrive_gdrive_read_file, Jira_SearchIssuesWithJql"}
        assert expected == _backend().call("Gmail_Send", "{}")

    @pytest.mark.parametrize(("name", "arguments", "error"), [
        ("Slack_search_messages", '{"query": 3}',
         "invalid arguments for Slack.search_messages: Expected `str`, got `int` - at `$.query`"),
        ("Slack_search_messages", '{"query": "x", "limit": "5"}',
         "invalid arguments for Slack.search_messages: Expected `int`, got `str` - at `$.limit`"),
        ("Slack_search_messages", '{"query": "x", "limit": 0}',
         "invalid arguments for Slack.search_messages: Expected `int` >= 1 - at `$.limit`"),
        (FREE, '{"email_addresses": "ann@acme.io"}',
         "invalid arguments for GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree: Expected `array`, got `str` - at "
         "`$.email_addresses`"),
        (FREE, '{"email_addresses": ["ann@acme.io", 7]}',
         "invalid arguments for GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree: Expected `str`, got `int` - at "
         "`$.email_addresses[1]`"),
        (FREE, '{"email_addresses": []}',
         "invalid arguments for GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree: Expected `array` of length >= 1 - at "
         "`$.email_addresses`"),
        (FREE, '{"email_addresses": ["a@x.io"], "include_weekends": "yes"}',
         "invalid arguments for GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree: Expected `bool`, got `str` - at "
         "`$.include_weekends`"),
        ("Gmail_GetThread", "{}", "invalid arguments for Gmail.GetThread: Object missing required field `thread_id`"),
    ])
    def test_invalid_types_name_the_field_path(self, name, arguments, error):
        """A wrong type, range or missing field is an error naming the tool and the field path."""
        assert {"error": error} == _backend().call(name, arguments)

    def test_unknown_argument_is_named(self):
        """An argument the tool does not take is an error naming it."""
        expected = {"error": "invalid arguments for Gmail.GetThread: Object contains unknown field `threadId`"}
        assert expected == _backend().call("Gmail_GetThread", '{"thread_id": "t1", "threadId": "t1"}')

    @pytest.mark.parametrize(("arguments", "detail"), [
        ('{"query": ', "unexpected end of data: line 1 column 11 (char 10)"),
        ("query=x", "unexpected character, expected a JSON value: line 1 column 1 (char 0)"),
        ('["x"]', "arguments must be a JSON object, got list"),
        ('"x"', "arguments must be a JSON object, got str"),
    ])
    def test_non_json_or_non_object_arguments(self, arguments, detail):
        """Arguments that are not a JSON object are an error saying why."""
        expected = {"error": f"invalid arguments for Slack.search_messages: not a JSON object ({detail})"}
        assert expected == _backend().call("Slack_search_messages", arguments)

    def test_dict_and_json_string_arguments_agree(self):
        """Arguments given as a dict give the same result as the same arguments as a JSON string."""
        backend = _backend()
        args = {"email_addresses": BOTH, "start_date": "2025-11-24", "end_date": "2025-11-24"}
        assert backend.call(FREE, orjson.dumps(args).decode()) == backend.call(FREE, args)

    def test_empty_arguments_mean_no_arguments(self):
        """None or an empty string are read as {} (so tools without required fields run)."""
        backend = _backend()
        assert [backend.call("GoogleCalendar_ListEvents", {})] * 2 == [
            backend.call("GoogleCalendar_ListEvents", None), backend.call("GoogleCalendar_ListEvents", "")]

    def test_underscore_and_dotted_names_both_run(self):
        """A tool runs under its API name and its dotted name alike."""
        backend = _backend()
        args = {"email_addresses": BOTH, "start_date": "2025-11-24", "end_date": "2025-11-24"}
        assert backend.call("GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree", args) == backend.call(FREE, args)

    def test_a_failing_tool_returns_an_error(self):
        """An exception inside a tool (here malformed calendar data) comes back as an error, not raised."""
        backend = make_backend(calendar={"calendars": 5})
        expected = {"error": "GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree failed: TypeError: 'int' object is not "
                             "iterable"}
        assert expected == backend.call(FREE, {"email_addresses": ["a@x.io"]})


class TestFindFreeSlots:
    def test_next_week_from_a_wednesday_skips_the_weekend(self):
        """next_week from Wednesday 2025-11-19 is 24-30 Nov; busy, multi-day and all-day events and the weekend drop
        out."""
        expected = {
            "timezone": "Europe/London",
            "date_range": {"start": "2025-11-24", "end": "2025-11-30"},
            "working_hours": "09:00-18:00",
            "weekends_included": False,
            "slots": [_slot("2025-11-24T09:00:00+00:00", "2025-11-24T10:00:00+00:00", 60),
                      _slot("2025-11-24T11:00:00+00:00", "2025-11-24T18:00:00+00:00", 420),
                      _slot("2025-11-25T09:00:00+00:00", "2025-11-25T12:00:00+00:00", 180),
                      _slot("2025-11-27T09:30:00+00:00", "2025-11-27T18:00:00+00:00", 510)],
        }
        assert expected == _backend().call(FREE, {"email_addresses": BOTH, "start_date": "next_week"})

    def test_include_weekends_adds_saturday_and_sunday(self):
        """With include_weekends the Saturday and Sunday working hours are free slots too."""
        result = _backend().call(FREE, {"email_addresses": BOTH, "start_date": "next_week", "include_weekends": True})
        assert (True, [("11-24T09:00", "10:00"), ("11-24T11:00", "18:00"), ("11-25T09:00", "12:00"),
                       ("11-27T09:30", "18:00"), ("11-29T09:00", "18:00"), ("11-30T09:00", "18:00")]) == (
            result["weekends_included"], _spans(result))

    def test_only_the_people_asked_about_block_time(self):
        """Bo alone is free during Ann's offsite, and Bo's holiday blocks Friday."""
        result = _backend().call(FREE, {"email_addresses": ["bo@acme.io"], "start_date": "2025-11-25",
                                        "end_date": "2025-11-28"})
        assert [("11-25T09:00", "18:00"), ("11-26T09:00", "18:00"), ("11-27T09:00", "18:00")] == _spans(result)

    def test_multi_day_event_blocks_every_day_it_spans(self):
        """Ann's offsite from Tuesday 12:00 to Thursday 09:30 blocks Tuesday afternoon, Wednesday, Thursday morning."""
        result = _backend().call(FREE, {"email_addresses": ["ANN@acme.io"], "start_date": "2025-11-25",
                                        "end_date": "2025-11-27"})
        assert [("11-25T09:00", "12:00"), ("11-27T09:30", "18:00")] == _spans(result)

    def test_min_duration_filters_short_slots(self):
        """min_duration_minutes drops free time shorter than it."""
        result = _backend().call(FREE, {"email_addresses": BOTH, "start_date": "2025-11-24", "end_date": "2025-11-24",
                                        "min_duration_minutes": 61})
        assert [("11-24T11:00", "18:00")] == _spans(result)

    def test_slot_minutes_cuts_free_time_into_meetings(self):
        """slot_minutes cuts each long-enough free interval into consecutive meeting-length slots."""
        result = _backend().call(FREE, {"email_addresses": BOTH, "start_date": "2025-11-24", "end_date": "2025-11-25",
                                        "slot_minutes": 120})
        expected = [_slot("2025-11-24T11:00:00+00:00", "2025-11-24T13:00:00+00:00", 120),
                    _slot("2025-11-24T13:00:00+00:00", "2025-11-24T15:00:00+00:00", 120),
                    _slot("2025-11-24T15:00:00+00:00", "2025-11-24T17:00:00+00:00", 120),
                    _slot("2025-11-25T09:00:00+00:00", "2025-11-25T11:00:00+00:00", 120)]
        assert expected == result["slots"]

    def test_time_before_the_reference_now_is_gone(self):
        """Today's slots start at the quarter hour after the reference now (10:07 → 10:15)."""
        result = _backend().call(FREE, {"email_addresses": BOTH, "start_date": "today", "end_date": "today"})
        assert [_slot("2025-11-19T10:15:00+00:00", "2025-11-19T18:00:00+00:00", 465)] == result["slots"]

    def test_times_are_in_the_scenario_zone_with_offsets(self):
        """In a New York scenario, slots read in New York time with -05:00 after the DST change, -04:00 before."""
        calendar = {"events": [{"id": "x", "start": "2025-10-31T14:00:00Z", "end": "2025-10-31T16:00:00Z",
                                "attendees": ["ann@acme.io"]}]}
        backend = make_backend(calendar=calendar, tz=NEW_YORK, now=datetime(2025, 10, 29, 8, tzinfo=NEW_YORK))
        result = backend.call(FREE, {"email_addresses": ["ann@acme.io"], "start_date": "2025-10-31",
                                     "end_date": "2025-11-03", "workday_start": "09:00", "workday_end": "12:00"})
        assert ("America/New_York", [_slot("2025-10-31T09:00:00-04:00", "2025-10-31T10:00:00-04:00", 60),
                                     _slot("2025-11-03T09:00:00-05:00", "2025-11-03T12:00:00-05:00", 180)]) == (
            result["timezone"], result["slots"])

    def test_working_hours_can_be_overridden(self):
        """workday_start and workday_end replace the company's working hours."""
        result = _backend().call(FREE, {"email_addresses": BOTH, "start_date": "2025-11-24", "end_date": "2025-11-24",
                                        "workday_start": "08:30", "workday_end": "10:30"})
        assert ("08:30-10:30", [("11-24T08:30", "10:00")]) == (result["working_hours"], _spans(result))

    def test_company_working_hours_are_the_default(self):
        """Without overrides the scenario's working hours apply."""
        backend = make_backend(calendar=CALENDAR, workday=(time(7), time(10, 30)))
        result = backend.call(FREE, {"email_addresses": BOTH, "start_date": "2025-11-24", "end_date": "2025-11-24"})
        assert ("07:00-10:30", [("11-24T07:00", "10:00")]) == (result["working_hours"], _spans(result))

    def test_unknown_emails_are_reported(self):
        """Emails found in neither calendars nor contacts are listed, lower-cased; known ones are not."""
        result = _backend().call(FREE, {"email_addresses": ["ann@acme.io", "CY@acme.io", "Nobody@Else.org"],
                                        "start_date": "2025-11-24", "end_date": "2025-11-24"})
        assert ["nobody@else.org"] == result["unknown_emails"]

    def test_all_known_emails_give_no_unknown_key(self):
        """When every email is known the result has no unknown_emails key."""
        result = _backend().call(FREE, {"email_addresses": BOTH, "start_date": "2025-11-24", "end_date": "2025-11-24"})
        assert "unknown_emails" not in result

    def test_unreadable_date_is_an_error(self):
        """An unreadable date comes back as an error listing the accepted forms."""
        expected = {"error": "GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree: cannot read the date 'soonish'; use "
                             "YYYY-MM-DD, an ISO datetime, today, tomorrow, yesterday, this_week, next_week, "
                             "last_week, +Nd/-Nd (days from today)"}
        assert expected == _backend().call(FREE, {"email_addresses": BOTH, "start_date": "soonish"})

    @pytest.mark.parametrize(("start_date", "problem"), [
        ("2025-02-30", "is not a real date (February 2025 has 28 days)"),
        ("2025-11-24T09:00:00+25:00", "has the UTC offset +25:00; offsets lie within ±14:00"),
        ("2025-11-24T25:00", "is not an ISO 8601 date or date-time (hour must be in 0..23)"),
    ])
    def test_a_date_off_the_calendar_is_an_error_to_the_model(self, start_date, problem):
        """A day the calendar lacks, an offset beyond ±14:00 or an hour 25 is an error, not the first ten characters
        read as a date."""
        expected = {"error": f"GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree: the date {start_date!r} {problem}; "
                             "use YYYY-MM-DD, an ISO datetime, today, tomorrow, yesterday, this_week, next_week, "
                             "last_week, +Nd/-Nd (days from today)"}
        assert expected == _backend().call(FREE, {"email_addresses": BOTH, "start_date": start_date})

    @pytest.mark.parametrize(("args", "error"), [
        ({"start_date": "2025-11-24", "end_date": "2025-11-21"}, "end date 2025-11-21 is before start date 2025-11-24"),
        ({"workday_start": "9am"}, "cannot read the time '9am'; use HH:MM"),
        ({"workday_start": "10:00", "workday_end": "09:00"}, "workday_end 09:00 must be after workday_start 10:00"),
    ])
    def test_bad_range_or_hours_are_errors(self, args, error):
        """An end before the start, an unreadable time or an empty working day is an error."""
        expected = {"error": f"GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree: {error}"}
        assert expected == _backend().call(FREE, {"email_addresses": BOTH, **args})


class TestListEvents:
    def test_events_in_range_sorted_by_start(self):
        """Events overlapping the range come sorted by start, in local time (cancelled ones are left out)."""
        result = _backend().call("GoogleCalendar_ListEvents", {"start_date": "2025-11-24", "end_date": "2025-11-24"})
        expected = {"timezone": "Europe/London", "total": 1, "events": [
            {"id": "e1", "title": "Planning", "start": "2025-11-24T10:00:00+00:00", "end": "2025-11-24T11:00:00+00:00",
             "attendees": ["ann@acme.io", "bo@acme.io"], "description": "Quarterly planning"}]}
        assert expected == result

    def test_multi_day_event_is_listed_on_every_day_it_spans(self):
        """An event overlapping the range is listed even when it started earlier."""
        result = _backend().call("GoogleCalendar_ListEvents", {"start_date": "2025-11-26", "end_date": "2025-11-26"})
        assert ["e2", "e5"] == [e["id"] for e in result["events"]]

    def test_query_and_attendee_filters(self):
        """query keeps events with the words in title or description; attendee_email keeps that person's live events."""
        backend = _backend()
        by_query = backend.call("GoogleCalendar_ListEvents", {"start_date": "next_week", "query": "quarterly"})
        by_owner = backend.call("GoogleCalendar_ListEvents",
                                {"start_date": "next_week", "attendee_email": "ann@acme.io"})
        assert (["e1"], ["e1", "e2"]) == ([e["id"] for e in by_query["events"]],
                                                [e["id"] for e in by_owner["events"]])

    def test_limit_and_total(self):
        """limit caps the events while total counts them all."""
        result = _backend().call("GoogleCalendar_ListEvents", {"start_date": "next_week", "limit": 2})
        assert (["e1", "e2"], 4) == ([e["id"] for e in result["events"]], result["total"])

    def test_cancelled_events_are_not_listed(self):
        """A cancelled event is not listed, as in Google Calendar's events.list."""
        result = _backend().call("GoogleCalendar_ListEvents", {"start_date": "2025-11-24", "end_date": "2025-11-24"})
        assert ["e1"] == [e["id"] for e in result["events"]]

    def test_attendee_filter_ignores_other_peoples_events_at_the_same_time(self):
        """An event Bo alone attends is not listed for Ann even when it has the same times as Ann's event."""
        calendar = {"events": [
            {"id": "mine", "start": "2025-11-24T10:00:00Z", "end": "2025-11-24T11:00:00Z",
             "attendees": ["ann@acme.io"]},
            {"id": "theirs", "start": "2025-11-24T10:00:00Z", "end": "2025-11-24T11:00:00Z",
             "attendees": ["bo@acme.io"]},
        ]}
        result = make_backend(calendar=calendar).call("GoogleCalendar_ListEvents",
                                                      {"start_date": "2025-11-24", "attendee_email": "ann@acme.io"})
        assert ["mine"] == [e["id"] for e in result["events"]]


class TestScenarioData:
    def test_backend_reads_zone_and_now_from_the_data(self):
        """The backend takes its zone and reference now from the ScenarioData."""
        data = make_data(tz=NEW_YORK, now=datetime(2025, 11, 19, 8, tzinfo=NEW_YORK))
        backend = ToolBackend(data)
        assert (NEW_YORK, datetime(2025, 11, 19, 8, tzinfo=NEW_YORK), "America/New_York") == (
            backend.tz, backend.now, data.timezone_name)
