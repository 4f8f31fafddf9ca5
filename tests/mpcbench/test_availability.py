"""Tests for mpcbench._availability: which calendar rows state availability instead of busy time."""

from __future__ import annotations

import pytest

from mpcbench_async.mpcbench._availability import Reading, calendar_rows, read_row


class TestReadRowFields:
    @pytest.mark.parametrize(("row", "expected"), [
        ({"title": "Team sync", "transparency": "transparent"}, Reading("available", "transparency 'transparent'")),
        ({"title": "Hold", "status": "free"}, Reading("available", "status 'free'")),
        ({"title": "x", "type": "availability"}, Reading("available", "type 'availability'")),
        ({"title": "x", "busy_status": "Available"}, Reading("available", "busy_status 'Available'")),
        ({"title": "x", "showAs": "free"}, Reading("available", "showAs 'free'")),
        ({"title": "x", "availability": True}, Reading("available", "availability true")),
        ({"title": "x", "busy": False}, Reading("available", "busy false")),
    ])
    def test_a_field_saying_free_makes_an_availability_row(self, row, expected):
        """transparency, status, type, busy_status, showAs and boolean flags that say free read as availability."""
        assert expected == read_row(row)

    @pytest.mark.parametrize(("row", "expected"), [
        ({"title": "Available", "transparency": "opaque"}, Reading("busy", "transparency 'opaque'")),
        ({"title": "Free for meetings", "show_as": "busy"}, Reading("busy", "show_as 'busy'")),
        ({"title": "Available", "status": "tentative"}, Reading("busy", "status 'tentative'")),
        ({"title": "Open slot", "busy": True}, Reading("busy", "busy true")),
    ])
    def test_a_field_saying_busy_settles_it_whatever_the_title(self, row, expected):
        """A busy field wins over a title that offers time."""
        assert expected == read_row(row)

    @pytest.mark.parametrize(("row", "why"), [
        ({"title": "Lunch - OOO", "transparency": "transparent"},
         "transparency 'transparent', but the title says busy"),
        ({"title": "Not available", "status": "free"}, "status 'free', but the title says busy"),
    ])
    def test_a_free_field_under_a_busy_title_is_unclear(self, row, why):
        """A free field contradicted by a busy title is unclear (counted busy)."""
        assert Reading("unclear", why) == read_row(row)


class TestReadRowTitles:
    @pytest.mark.parametrize("title", ["Available", "Availability", "Free", "open", "Free for meetings",
                                       "Available for calls", "Alex - availability", "Open office hours - book me",
                                       "Bookable", "Free slot", "Open slots (Tue)"])
    def test_titles_that_offer_time_are_availability(self, title):
        """A title that plainly offers time reads as availability."""
        assert Reading("available", "the title offers time") == read_row({"title": title})

    @pytest.mark.parametrize("title", ["OOO", "Lunch - OOO", "Out of office", "Unavailable", "Not available",
                                       "No availability", "Focus time", "Free lunch talk", "Code freeze",
                                       "Open enrollment webinar", "Team standup", ""])
    def test_other_titles_are_busy(self, title):
        """OOO, negations and ordinary meetings are busy; 'free' or 'open' inside another phrase offers nothing."""
        assert "busy" == read_row({"title": title}).kind

    @pytest.mark.parametrize(("title", "why"), [
        ("Tentatively available", "the title offers time but also says busy or hedges"),
        ("Free?", "the title offers time but also says busy or hedges"),
        ("Available for emergencies only", "the title offers time but also says busy or hedges"),
        ("Blocked - available", "the title offers time but also says busy or hedges"),
        ("API availability review", "the title may offer time or block it"),
        ("Office hours", "the title may offer time or block it"),
    ])
    def test_hedged_or_ambiguous_titles_are_unclear(self, title, why):
        """Titles that offer time with a hedge or a busy word, or only mention availability, are unclear."""
        assert Reading("unclear", why) == read_row({"title": title})

    def test_summary_and_subject_are_titles_too(self):
        """Google's summary and Outlook's subject are read like title."""
        assert ["available", "available"] == [read_row(r).kind for r in ({"summary": "Available"},
                                                                         {"subject": "Free for meetings"})]


class TestCalendarRows:
    CALENDAR = {
        "events": [{"id": "e0", "title": "Sync"}, {"id": "e1", "title": "Gone", "status": "cancelled"},
                   {"id": "e2", "title": "Available"}],
        "free_busy": [
            {"email": "Ann@acme.io", "time_slots": [{"start": "a", "end": "b"}, {"start": "c", "end": "d",
                                                                                  "status": "free"}]},
            {"email": "bo@acme.io", "free_slots": [{"start": "a", "end": "b"}, {"start": "c", "end": "d"}]},
            {"email": "cy@acme.io", "type": "availability", "time_slots": [{"start": "a", "end": "b"}]},
            {"email": "di@acme.io", "availability": [{"start": "a", "end": "b", "title": "OOO"}]},
        ],
    }

    def test_paths_readings_owners_and_report_paths(self):
        """Every non-cancelled event and every free/busy slot is a row; a free-slot list is reported once."""
        expected = [
            ("$.events[0]", "busy", "", "$.events[0]"),
            ("$.events[2]", "available", "", "$.events[2]"),
            ("$.free_busy[0].time_slots[0]", "busy", "ann@acme.io", "$.free_busy[0].time_slots[0]"),
            ("$.free_busy[0].time_slots[1]", "available", "ann@acme.io", "$.free_busy[0].time_slots[1]"),
            ("$.free_busy[1].free_slots[0]", "available", "bo@acme.io", "$.free_busy[1].free_slots"),
            ("$.free_busy[1].free_slots[1]", "available", "bo@acme.io", "$.free_busy[1].free_slots"),
            ("$.free_busy[2].time_slots[0]", "available", "cy@acme.io", "$.free_busy[2].time_slots[0]"),
            ("$.free_busy[3].availability[0]", "unclear", "di@acme.io", "$.free_busy[3].availability"),
        ]
        assert expected == [(r.path, r.reading.kind, r.owner, r.report_path) for r in calendar_rows(self.CALENDAR)]

    def test_why_a_listed_slot_is_availability(self):
        """A slot under free_slots says where it was listed; a block-level type applies to its time_slots."""
        rows = {r.path: r.reading.why for r in calendar_rows(self.CALENDAR)}
        assert ("listed under free_slots", "type 'availability'",
                "listed under availability, but the title says busy") == (
            rows["$.free_busy[1].free_slots[0]"], rows["$.free_busy[2].time_slots[0]"],
            rows["$.free_busy[3].availability[0]"])
