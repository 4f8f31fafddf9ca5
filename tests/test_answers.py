"""Reading real model answers: dates, proposed slots, date windows and quantities (``mpcbench_async._answers``)."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from mpcbench_async._answers import (
    Quantity,
    find_dates,
    find_periods,
    find_quantities,
    find_slots,
    json_quantities,
    labels_match,
    same_quantity,
)

ANCHOR = date(2025, 11, 19)  # a Wednesday
WINDOW = (date(2025, 11, 24), date(2025, 11, 28))  # Monday to Friday of the next week
SEOUL = ZoneInfo("Asia/Seoul")
KATHMANDU = ZoneInfo("Asia/Kathmandu")


def _dates(text: str, window=WINDOW) -> list[tuple[str, date]]:
    return [(text[d.start:d.end], d.value) for d in find_dates(text, anchor=ANCHOR, window=window)]


def _slots(text: str, tz=SEOUL, default_minutes: int = 0) -> list[tuple[str, str, bool]]:
    return [(f"{s.start:%Y-%m-%d %H:%M}", f"{s.end:%H:%M}", s.length_stated)
            for s in find_slots(text, tz=tz, anchor=ANCHOR, window=WINDOW, default_minutes=default_minutes)]


class TestFindDates:
    @pytest.mark.parametrize("text, expected", [
        ("11/25", date(2025, 11, 25)),
        ("11/25/2025", date(2025, 11, 25)),
        ("25/11/2025", date(2025, 11, 25)),
        ("2025-11-25", date(2025, 11, 25)),
        ("25.11.2025", date(2025, 11, 25)),
        ("25 Nov", date(2025, 11, 25)),
        ("Nov 25th", date(2025, 11, 25)),
        ("Nov. 25", date(2025, 11, 25)),
        ("November 25, 2025", date(2025, 11, 25)),
        ("the 25th of November", date(2025, 11, 25)),
        ("Tuesday the 25th", date(2025, 11, 25)),
        ("Tue 25th", date(2025, 11, 25)),
        ("Tuesday", date(2025, 11, 25)),
        ("next Tuesday", date(2025, 11, 25)),
        ("this Friday", date(2025, 11, 21)),
        ("tomorrow", date(2025, 11, 20)),
        ("on the 27th", date(2025, 11, 27)),
    ])
    def test_one_form(self, text, expected):
        """Each written form names the expected day (US month/day first; missing years nearest the window)."""
        assert [expected] == [value for _, value in _dates(text)]

    def test_weekday_decides_between_month_day_and_day_month(self):
        """``Tue 02/12`` is 2 December (a Tuesday), not 12 February; the weekday joins the mention."""
        assert [("Tue 02/12", date(2025, 12, 2))] == _dates("Tue 02/12", window=None)

    def test_window_decides_between_month_day_and_day_month(self):
        """``03/12`` reads day/month when only that reading falls in the window."""
        assert [date(2025, 12, 3)] == [v for _, v in _dates("03/12", window=(date(2025, 12, 1), date(2025, 12, 5)))]

    @pytest.mark.parametrize("text", ["Mon–Fri", "Monday to Friday", "we may 5 times", "on Mondays", "24/7 support",
                                      "10:30 standup", "45 min"])
    def test_not_dates(self, text):
        """Weekday ranges, plurals, ``may`` the verb, ``24/7`` and clock times are not dates."""
        assert [] == _dates(text)


class TestFindSlots:
    @pytest.mark.parametrize("text, expected", [
        ("Tue Nov 25, 2:30–3:15pm", [("2025-11-25 14:30", "15:15", True)]),
        ("Tue Nov 25, 11:30–12:15pm", [("2025-11-25 11:30", "12:15", True)]),
        ("Option 1: Tuesday 11/25 2:30 PM - 3:15 PM", [("2025-11-25 14:30", "15:15", True)]),
        ("from 2:30 to 3:15 PM on Wed Nov 26", [("2025-11-26 14:30", "15:15", True)]),
        ("Wed Nov 26 2:30 PM for 45 minutes", [("2025-11-26 14:30", "15:15", True)]),
        ("Thu 27 Nov 14h30 (45 min)", [("2025-11-27 14:30", "15:15", True)]),
        ("Wed 26/11 14.00-14.45", [("2025-11-26 14:00", "14:45", True)]),
        ("Mon 24 Nov 2:00-3:00", [("2025-11-24 14:00", "15:00", True)]),
        ("Fri Nov 28, noon–12:45", [("2025-11-28 12:00", "12:45", True)]),
        ("10:00–10:45 on Tue Nov 25 or 14:00–14:45 on Wed Nov 26",
         [("2025-11-25 10:00", "10:45", True), ("2025-11-26 14:00", "14:45", True)]),
        ("**Tuesday, Nov 25**\n- 10:00–10:45\n- 14:00–14:45", [("2025-11-25 10:00", "10:45", True),
                                                                ("2025-11-25 14:00", "14:45", True)]),
        ("| Date | Start | End |\n|---|---|---|\n| Thu 27 Nov | 13:00 | 13:45 |",
         [("2025-11-27 13:00", "13:45", True)]),
    ])
    def test_layouts_and_formats(self, text, expected):
        """Ranges, shared meridiems, starts with lengths, 24-hour forms, headings and tables all read."""
        assert expected == _slots(text)

    @pytest.mark.parametrize("text, expected", [
        ("Tue Nov 25, 10:00–10:45 UTC", [("2025-11-25 19:00", "19:45", True)]),
        ("Monday Nov 24, 8:00–8:45 PM ET", [("2025-11-25 10:00", "10:45", True)]),
        ("Monday Nov 24, 8:00–8:45 PM Eastern", [("2025-11-25 10:00", "10:45", True)]),
        ("Monday Nov 24, 5–5:45 PM Pacific", [("2025-11-25 10:00", "10:45", True)]),
        ("Tue Nov 25 06:00–06:45 CET", [("2025-11-25 14:00", "14:45", True)]),
        ("Tue Nov 25, 10:00–10:45 (Asia/Kathmandu)", [("2025-11-25 13:15", "14:00", True)]),
        ("Tue Nov 25, 10:00 UTC+5:45 – 10:45 UTC+5:45", [("2025-11-25 13:15", "14:00", True)]),
        ("2025-11-25T10:00:00+05:45 – 2025-11-25T10:45:00+05:45", [("2025-11-25 13:15", "14:00", True)]),
        ("Tue Nov 25, 10:00–10:45 KST", [("2025-11-25 10:00", "10:45", True)]),
        ("Tue Nov 25, 10:00–10:45 JST", [("2025-11-25 10:00", "10:45", True)]),
        ("Tue Nov 25, 10:00–10:45 Seoul time", [("2025-11-25 10:00", "10:45", True)]),
        ("All times below are in UTC.\n- Tue Nov 25 01:00–01:45", [("2025-11-25 10:00", "10:45", True)]),
        ("| Day | Time (ET) |\n|---|---|\n| Mon Nov 24 | 8:00–8:45 PM |", [("2025-11-25 10:00", "10:45", True)]),
    ])
    def test_zones_convert_into_the_scenario_zone(self, text, expected):
        """A zone or offset written in the answer (or declared for it) is converted into Asia/Seoul."""
        assert expected == _slots(text)

    def test_ambiguous_abbreviation_prefers_the_scenario_zone(self):
        """``IST`` is India time in a Kathmandu scenario (offsets differ: converted), Irish time in a Dublin one."""
        assert [("2025-11-25 10:15", "11:00", True)] == _slots("Tue Nov 25 10:00–10:45 IST", tz=KATHMANDU)
        dublin = ZoneInfo("Europe/Dublin")
        assert [("2025-11-25 10:00", "10:45", True)] == _slots("Tue Nov 25 10:00–10:45 IST", tz=dublin)

    @pytest.mark.parametrize("text", [
        "Working hours are 09:00–18:00.",
        "Alice is busy Tue Nov 25 10:00–11:00.",
        "Avoid Tue Nov 25 12:00-13:00 (lunch).",
        "The existing sync on Wed Nov 26 15:00–15:45 stays.",
        "Tom wrote on Nov 17 at 10:12 asking to meet.",
        "Let's meet on Monday Nov 24 after the standup at 9:30.",
        "Tue Nov 25 10:00–10:45 doesn't work (Alice is busy).",
        "Busy times:\n- Alice: Tue Nov 25 10:00–11:00",
        "> Tom: how about Tue Nov 25 10:00?",
        "Tom is out Friday Nov 28 from 1 PM.",
    ])
    def test_mentions_are_not_proposals(self, text):
        """Working hours, busy times, existing events, quoted messages and rejected times are not proposed."""
        assert [] == _slots(text)

    def test_window_a_slot_was_picked_from_is_dropped(self):
        """``free 12:00–18:00; I suggest 12:00–12:45``: only the suggested slot is proposed."""
        text = "Everyone is free Tue Nov 25 from 12:00 to 18:00; I suggest 12:00–12:45."
        assert [("2025-11-25 12:00", "12:45", True)] == _slots(text)

    def test_proposal_cue_after_a_context_cue_wins(self):
        """``Alice is busy until 10:30, so 10:30–11:15 works``: the last cue before each time decides."""
        text = "Tue Nov 25: Alice is busy until 10:30, so 10:30–11:15 works."
        assert [("2025-11-25 10:30", "11:15", True)] == _slots(text)

    def test_negated_rejection_keeps_the_slot(self):
        """``(after lunch)`` and ``(no conflicts)`` do not reject the slot before them."""
        text = "Tue Nov 25 13:00–13:45 (after lunch)\nWed Nov 26 10:00–10:45 (no conflicts)"
        assert [("2025-11-25 13:00", "13:45", True), ("2025-11-26 10:00", "10:45", True)] == _slots(text)

    def test_start_alone_takes_the_stated_meeting_length(self):
        """A start without an end lasts the length the answer states for the meeting."""
        assert [("2025-11-26 14:00", "14:45", True)] == _slots("For the 45-minute sync: Wed Nov 26 at 2 PM.")

    def test_start_alone_without_any_length(self):
        """Without any stated length the slot takes ``default_minutes`` and says its length was not stated."""
        assert [("2025-11-26 14:00", "15:00", False)] == _slots("How about Wed Nov 26 at 2 PM?", default_minutes=60)

    def test_weekday_alone_resolves_inside_the_window(self):
        """``Monday`` and ``Friday`` name the days of the window."""
        text = "Monday 11:00–11:45 or Friday 10:00–10:45"
        assert [("2025-11-24 11:00", "11:45", True), ("2025-11-28 10:00", "10:45", True)] == _slots(text)

    def test_slot_text_is_the_line_read(self):
        """``Slot.text`` is the line the slot was read from, without its bullet."""
        slots = find_slots("- Tue Nov 25 10:00–10:45 (best)", tz=SEOUL, anchor=ANCHOR, window=WINDOW)
        assert ["Tue Nov 25 10:00–10:45 (best)"] == [s.text for s in slots]
        assert datetime(2025, 11, 25, 10, tzinfo=SEOUL) == slots[0].start


    @pytest.mark.parametrize("text, expected", [
        ("Wed Nov 26 09:00–09:45 and Fri Nov 28 13:00–13:45",
         [("2025-11-26 09:00", "09:45", True), ("2025-11-28 13:00", "13:45", True)]),
        ("Nov 25 (Tue) 10:00-10:45 and Nov 28 (Fri) 13:00-13:45",
         [("2025-11-25 10:00", "10:45", True), ("2025-11-28 13:00", "13:45", True)]),
        ("Suggested: Mon 14:00–14:45, Wed 09:00–09:45",
         [("2025-11-24 14:00", "14:45", True), ("2025-11-26 09:00", "09:45", True)]),
    ])
    def test_a_date_just_before_a_time_is_its_date(self, text, expected):
        """Two dated slots in one sentence each keep the date written just before them, not the next one."""
        assert expected == _slots(text)

    def test_an_existing_event_named_before_its_time_is_a_mention(self):
        """``Taeyang's supplier call is Thu 09:30–11:00`` and ``the design review Tue 13:00–14:30`` are not
        proposals."""
        text = ("Options: Tue 10:00-10:45 (everyone free; Taeyang's supplier call is Thu 09:30–11:00, "
                "the design review Tue 13:00–14:30)")
        assert [("2025-11-25 10:00", "10:45", True)] == _slots(text)

    def test_the_meeting_being_planned_that_works_is_a_proposal(self):
        """``The planning sync on Tue 10:00–10:45 works for everyone``: a proposal cue after the time wins."""
        assert [("2025-11-25 10:00", "10:45", True)] == _slots(
            "The planning sync on Tue 10:00–10:45 works for everyone.")

class TestFindPeriods:
    @pytest.mark.parametrize("text, first, last", [
        ("on December 18", date(2025, 12, 18), date(2025, 12, 18)),
        ("the week of Dec 15", date(2025, 12, 15), date(2025, 12, 21)),
        ("the week of Wednesday Dec 17", date(2025, 12, 15), date(2025, 12, 21)),
        ("by December 18", ANCHOR, date(2025, 12, 18)),
        ("before Dec 18", ANCHOR, date(2025, 12, 17)),
        ("mid-December", date(2025, 12, 11), date(2025, 12, 20)),
        ("early December", date(2025, 12, 1), date(2025, 12, 10)),
        ("the end of December", date(2025, 12, 21), date(2025, 12, 31)),
        ("by the end of December", ANCHOR, date(2025, 12, 31)),
        ("the second half of December", date(2025, 12, 16), date(2025, 12, 31)),
        ("in December", date(2025, 12, 1), date(2025, 12, 31)),
        ("January 2026", date(2026, 1, 1), date(2026, 1, 31)),
        ("Dec 15–19", date(2025, 12, 15), date(2025, 12, 19)),
        ("15-19 December", date(2025, 12, 15), date(2025, 12, 19)),
        ("between Dec 15 and Dec 19", date(2025, 12, 15), date(2025, 12, 19)),
        ("next week", date(2025, 11, 24), date(2025, 11, 30)),
        ("later this month", ANCHOR, date(2025, 11, 30)),
        ("in two weeks", date(2025, 11, 30), date(2025, 12, 6)),
        ("within the next 2-3 weeks", ANCHOR, date(2025, 12, 10)),
    ])
    def test_windows(self, text, first, last):
        """Each phrase names the expected window of days."""
        periods = find_periods(text, anchor=ANCHOR)
        assert [(first, last)] == [(p.first, p.last) for p in periods]

    def test_deadline_flag(self):
        """``by <date>`` is a deadline; an exact date is not."""
        assert [True, False] == [p.deadline for p in find_periods("by Dec 18, or Dec 19", anchor=ANCHOR)]


class TestFindQuantities:
    @pytest.mark.parametrize("text, expected", [
        ("Latency down 12%", [(-12.0, "percent", -1)]),
        ("latency dropped by 12%", [(-12.0, "percent", -1)]),
        ("latency −12%", [(-12.0, "percent", -1)]),
        ("a 12% decrease in latency", [(-12.0, "percent", -1)]),
        ("latency 12% ↓", [(-12.0, "percent", -1)]),
        ("API calls +34% WoW", [(34.0, "percent", 1)]),
        ("API calls increased 34 percent", [(34.0, "percent", 1)]),
        ("crash-free sessions rose to 99.2%", [(99.2, "percent", 0)]),
        ("turnaround improved 12%", [(12.0, "percent", 0)]),
        ("Bugs closed: 17", [(17.0, "number", 0)]),
        ("seventeen bugs closed", [(17.0, "number", 0)]),
        ("1,204 calls", [(1204.0, "number", 0)]),
        ("1.2k calls", [(1200.0, "number", 0)]),
    ])
    def test_values_kinds_and_directions(self, text, expected):
        """Values are signed by a written direction; percentages and plain numbers are told apart."""
        assert expected == [(q.value, q.kind, q.direction) for q in find_quantities(text)]

    @pytest.mark.parametrize("text", ["APP-412", "#412", "v2.12", "1.2.3", "p95", "Q4", "Nov 17", "12/18",
                                      "at 10:30", "UTC+9", "Option 2", "Sprint 14", "in 2025", "1. First item"])
    def test_identifiers_dates_and_times_are_not_quantities(self, text):
        """Ids, versions, dates, times, offsets, list markers, labels like ``Option 2`` and years are skipped."""
        assert [] == find_quantities(text)

    def test_label_is_the_clause_around(self):
        """The label holds the words of the clause; a table row is the label of its cells' numbers."""
        assert ["Avg gate turnaround: 41 min ( vs last week)"] == [
            q.label for q in find_quantities("Avg gate turnaround: 41 min (−12% vs last week)") if q.kind == "percent"]
        assert ["| Partner API calls | |"] == [q.label for q in find_quantities("| Partner API calls | +34% |")]

    @pytest.mark.parametrize("text, label", [
        ("Pilot sites onboarded: 28, up 12% from 25", "Pilot sites onboarded: 28, up from"),
        ("Errors 17, down by 3% WoW", "Errors 17, down by WoW"),
        ("DAU 1,204, -3% WoW", "DAU 1,204, WoW"),
    ])
    def test_change_after_a_level_keeps_its_label(self, text, label):
        """A change written just after a level names the same metric as that level, across the comma."""
        assert [label] == [q.label for q in find_quantities(text) if q.kind == "percent"]

    def test_separator_still_cuts_another_metric(self):
        """A number after a separator that is not a change of the one before keeps only its own words."""
        assert ", bugs down" == find_quantities("Tickets closed: 23, bugs down 5%")[1].label


class TestSameQuantity:
    def _q(self, value: float, label: str, kind: str = "percent", direction: int = 0) -> Quantity:
        return Quantity(value=value, kind=kind, label=label, start=0, end=0, direction=direction)

    def test_same_kind_value_and_label(self):
        """12% latency in an answer is the source's ``latency … 12%``, whatever the direction words."""
        assert same_quantity(self._q(-12, "latency down", direction=-1), self._q(12, "p95 latency improved"))

    def test_other_label_kind_or_direction_differs(self):
        """A different label, kind or contradicting direction is another quantity."""
        source = self._q(-12, "latency down", direction=-1)
        assert [False, False, False] == [same_quantity(other, source) for other in (
            self._q(12, "bugs closed rose"), self._q(12, "latency", kind="number"),
            self._q(12, "latency up", direction=1))]

    def test_acronym_matches_its_words(self):
        """``DAU`` names ``daily active users``; synonyms bug/issue and closed/resolved match."""
        assert [True, True] == [labels_match("Beta DAU", "beta_daily_active_users"),
                                labels_match("17 issues resolved", "bugs_closed")]


class TestJsonQuantities:
    DOC = {"service": "ingest", "uptime_percent": 99.2, "error_rate": 0.4, "p95_percentile_ms": 340,
           "metrics": [{"name": "false alarms", "change_pct": -18}],
           "posts": [{"ts": "2026-03-10", "text": "Alert volume 1,930, down 12%"}],
           "export": "{\"conversion_ratio\": 3.1}"}

    def test_percentage_fields_and_texts(self):
        """Fields whose key names a percentage (not ``percentile``), a row's name, texts and JSON inside strings."""
        assert [(99.2, "uptime percent"), (0.4, "error rate"), (-18.0, "false alarms metrics change pct"),
                (-12.0, "Alert volume 1,930, down"), (3.1, "export conversion ratio")] == [
            (s.quantity.value, s.quantity.label) for s in json_quantities(self.DOC)]

    def test_with_numbers_every_quantity_and_its_holders(self):
        """``numbers`` adds plain numbers; each quantity keeps the objects holding it, innermost last."""
        found = [(s.quantity.value, s.quantity.kind, s.holders[-1].get("ts")) for s in json_quantities(
            self.DOC, numbers=True) if s.quantity.kind == "number"]
        assert [(340.0, "number", None), (1930.0, "number", "2026-03-10")] == found


def _read(text: str) -> list[tuple[float, str, int, str]]:
    return [(q.value, q.kind, q.direction, q.label) for q in find_quantities(text)]


class TestRowsArrowsAndDirections:
    """Issue 26: labels kept through arrows, thousands commas and CSV rows; directions read as a reader reads them."""

    def test_a_change_after_an_arrow_keeps_the_metric_label(self):
        assert _read("WAU 50,000 → 55,000 (+10%)")[-1] == (10.0, "percent", 1, "WAU 50,000 → 55,000 ( )")

    def test_an_unsigned_change_takes_the_direction_of_its_levels(self):
        assert _read("Support tickets: 212 → 180 this week (15%)")[-1][:3] == (-15.0, "percent", -1)
        assert _read("turnaround went from 47 to 41 min (a 12% cut)")[-1][:3] == (-12.0, "percent", -1)
        assert _read("API calls 1,000 -> 1,340 (34%)")[-1][:3] == (34.0, "percent", 1)

    def test_a_csv_block_is_read_cell_by_cell_with_its_header(self):
        text = "metric,last_week,this_week,change\nweekly active users,\"50,000\",\"55,000\",+10%\n" \
               "cold start p95 (ms), 1200, 1028, -14.3%"
        assert _read(text) == [
            (50000.0, "number", 0, "weekly active users last_week"),
            (55000.0, "number", 0, "weekly active users this_week"),
            (10.0, "percent", 1, "weekly active users change"),
            (1200.0, "number", 0, "cold start p95 (ms) last_week"),
            (1028.0, "number", 0, "cold start p95 (ms) this_week"),
            (-14.3, "percent", -1, "cold start p95 (ms) change")]

    def test_a_csv_row_naming_a_percentage_is_signed_data(self):
        assert _read("metric,change_pct\nwau,10\ncold start,-14.3") == [
            (10.0, "percent", 1, "wau change_pct"), (-14.3, "percent", -1, "cold start change_pct")]

    def test_prose_with_commas_is_not_csv(self):
        assert [q[:3] for q in _read("Turnaround -12%, partner API calls +34%, 17 bugs closed")] == [
            (-12.0, "percent", -1), (34.0, "percent", 1), (17.0, "number", 0)]
        assert _read("Revenue 1,204,000 this week")[0][:2] == (1204000.0, "number")
        bullets = "- Closed: 17 bugs, 3 epics, 2 spikes\n- Opened: 5 bugs, 1 epic, 0 spikes"
        assert [q[0] for q in _read(bullets)] == [17.0, 3.0, 2.0, 5.0, 1.0, 0.0]  # read as prose: 17 is kept
        assert _read("week,wau\n2025-W48,55000")[0] == (55000.0, "number", 0, "2025-W48 wau")

    def test_a_table_number_is_labelled_by_its_column_header_and_levels_sign_a_change_column(self):
        text = "| Metric | Before | After | Change |\n|---|---|---|---|\n| Cold start | 1,200 ms | 1,028 ms | 14.3% |"
        assert _read(text)[-1] == (-14.3, "percent", -1, "| Cold start | 1,200 ms | 1,028 ms | | Change")

    def test_comparatives_are_directions_even_after_a_level_word(self):
        assert _read("Android cold start is 15% slower")[0][:3] == (15.0, "percent", 1)
        assert _read("p95 alert latency 41% faster")[0][:3] == (-41.0, "percent", -1)
        assert _read("crash-free sessions rose to 99.2%")[0][:3] == (99.2, "percent", 0)

    def test_a_field_name_gives_the_direction(self):
        stated = [s.quantity for s in json_quantities({"metrics": {"api_error_reduction_pct": 22,
                                                                    "wau_change_percent": 10, "uptime_pct": 99.9}})]
        assert [(q.value, q.direction) for q in stated] == [(-22.0, -1), (10.0, 1), (99.9, 0)]

    def test_a_lower_case_acronym_matches_three_or_more_words_only(self):
        assert labels_match("wau change_pct", "weekly_active_users_change_percent")
        assert not labels_match("the pis", "page impressions")  # the initials of two words need capitals
        assert labels_match("the PIs", "page impressions")


class TestClockRanges:
    def test_the_ranges_a_request_writes(self):
        from datetime import time

        from mpcbench_async._answers import clock_ranges
        assert clock_ranges("any time between 10:00 and 16:00, or 2–5pm on Friday; the 9:30 standup") == {
            (time(10), time(16)), (time(14), time(17))}


class TestExplicitPeriods:
    def test_written_ranges_are_explicit_named_windows_are_not(self):
        read = {p.text: p.explicit for p in find_periods("between Nov 10 and Nov 30; mid-November; week of Nov 17; "
                                                         "Dec 15–19", anchor=date(2025, 11, 3))}
        assert read == {"Nov 10 and Nov 30": True, "mid-November": False, "week of Nov 17": False,
                        "Dec 15–19": True}
