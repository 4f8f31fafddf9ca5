"""Tests for mpcbench.tools._dates: dates the model writes, resolved against the reference now."""

from __future__ import annotations

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from mpcbench_async.mpcbench.tools import DateError, resolve_date, resolve_range
from mpcbench_async.mpcbench.tools._dates import ACCEPTED, local_datetime

LONDON = ZoneInfo("Europe/London")
# Wednesday 2025-11-19, late evening in London.
NOW = datetime(2025, 11, 19, 22, 30, tzinfo=LONDON)


class TestResolveDate:
    @pytest.mark.parametrize(("expression", "expected"), [
        ("today", date(2025, 11, 19)),
        ("tomorrow", date(2025, 11, 20)),
        ("yesterday", date(2025, 11, 18)),
        ("this_week", date(2025, 11, 17)),
        ("next_week", date(2025, 11, 24)),
        ("last_week", date(2025, 11, 10)),
        ("+3d", date(2025, 11, 22)),
        ("-2d", date(2025, 11, 17)),
        ("+1w", date(2025, 11, 26)),
        ("-2weeks", date(2025, 11, 5)),
        ("+10days", date(2025, 11, 29)),
    ])
    def test_relative_forms(self, expression, expected):
        """Each relative form resolves against the reference now's date."""
        assert expected == resolve_date(expression, NOW)

    @pytest.mark.parametrize(("expression", "expected"), [
        ("Next Week", date(2025, 11, 24)),
        ("  TODAY ", date(2025, 11, 19)),
        ("+3 days", date(2025, 11, 22)),
        ("+3_days", date(2025, 11, 22)),
        ("- 1 week", date(2025, 11, 12)),
    ])
    def test_case_spaces_and_underscores_are_ignored(self, expression, expected):
        """Case, surrounding blanks and spaces or underscores inside relative forms do not matter."""
        assert expected == resolve_date(expression, NOW)

    def test_week_names_start_on_monday_when_now_is_monday_or_sunday(self):
        """this_week is the Monday of the reference week, for a Monday and for a Sunday reference day."""
        monday, sunday = datetime(2025, 11, 17, 9, tzinfo=LONDON), datetime(2025, 11, 23, 9, tzinfo=LONDON)
        expected = [date(2025, 11, 17), date(2025, 11, 24), date(2025, 11, 17), date(2025, 11, 24)]
        assert expected == [resolve_date("this_week", monday), resolve_date("next_week", monday),
                            resolve_date("this_week", sunday), resolve_date("next_week", sunday)]

    @pytest.mark.parametrize(("expression", "expected"), [
        ("2025-12-01", date(2025, 12, 1)),
        ("2025-12-01T15:30:00", date(2025, 12, 1)),
        ("2025-12-01T15:30:00Z", date(2025, 12, 1)),
        ("2025-12-01T23:30:00-05:00", date(2025, 12, 1)),
        (" 2024-02-29 ", date(2024, 2, 29)),
    ])
    def test_absolute_dates_and_iso_datetimes(self, expression, expected):
        """A YYYY-MM-DD date or an ISO datetime gives its calendar date as written."""
        assert expected == resolve_date(expression, NOW)

    @pytest.mark.parametrize("expression", ["soonish", "", "next_month", "+3 months", "11/20/2025"])
    def test_unreadable_expressions_raise_with_the_accepted_forms(self, expression):
        """An unreadable expression raises DateError naming it and listing the accepted forms."""
        with pytest.raises(DateError) as info:
            resolve_date(expression, NOW)
        assert f"cannot read the date {expression!r}; use {ACCEPTED}" == str(info.value)

    @pytest.mark.parametrize(("expression", "problem"), [
        ("2025-02-30", "is not a real date (February 2025 has 28 days)"),
        ("2025-13-01", "is not a real date (there is no month 13)"),
        ("2025-12-01T15:30:00+25:00", "has the UTC offset +25:00; offsets lie within ±14:00"),
        ("2025-12-01T15:30:00-15:00", "has the UTC offset -15:00; offsets lie within ±14:00"),
        ("2025-12-01T15:30+05:99", "has the UTC offset +05:99, whose minutes or seconds are past 59"),
        ("2025-12-01T25:00", "is not an ISO 8601 date or date-time (hour must be in 0..23)"),
    ])
    def test_dates_off_the_calendar_raise_saying_why(self, expression, problem):
        """An absolute date is checked whole: a day, an hour or an offset that cannot exist is named, never cut
        to its first ten characters."""
        with pytest.raises(DateError) as info:
            resolve_date(expression, NOW)
        assert f"the date {expression!r} {problem}; use {ACCEPTED}" == str(info.value)

    @pytest.mark.parametrize("expression", ["2025-12-01T15:30:00+14:00", "2025-12-01T15:30:00-12:00"])
    def test_the_edge_offsets_are_real(self, expression):
        """+14:00 and -12:00, the offsets furthest from UTC in use, resolve."""
        assert date(2025, 12, 1) == resolve_date(expression, NOW)

    def test_accepted_forms_text(self):
        """The accepted-forms text lists every form the resolver reads."""
        expected = ("YYYY-MM-DD, an ISO datetime, today, tomorrow, yesterday, this_week, next_week, last_week, "
                    "+Nd/-Nd (days from today)")
        assert expected == ACCEPTED


class TestResolveRange:
    def test_week_name_gives_monday_to_sunday(self):
        """next_week without an end spans Monday to Sunday of the following week."""
        assert (date(2025, 11, 24), date(2025, 11, 30)) == resolve_range("next_week", None, NOW)

    def test_no_start_means_today_for_seven_days(self):
        """Without a start the range is today and the six days after it."""
        assert (date(2025, 11, 19), date(2025, 11, 25)) == resolve_range(None, None, NOW)

    def test_explicit_end_is_inclusive(self):
        """An explicit end date is the last day of the range, relative or absolute."""
        expected = [(date(2025, 11, 20), date(2025, 11, 21)), (date(2025, 11, 19), date(2025, 11, 19))]
        assert expected == [resolve_range("tomorrow", "2025-11-21", NOW), resolve_range("today", "today", NOW)]

    def test_end_before_start_raises(self):
        """An end date before the start date raises DateError naming both."""
        with pytest.raises(DateError) as info:
            resolve_range("2025-11-20", "yesterday", NOW)
        assert "end date 2025-11-18 is before start date 2025-11-20" == str(info.value)

    def test_unreadable_end_raises(self):
        """An unreadable end date raises the same DateError as resolve_date."""
        with pytest.raises(DateError) as info:
            resolve_range("today", "whenever", NOW)
        assert f"cannot read the date 'whenever'; use {ACCEPTED}" == str(info.value)

    def test_date_error_is_a_value_error(self):
        """DateError is a ValueError, so callers catching ValueError see it."""
        assert issubclass(DateError, ValueError)


class TestLocalDatetime:
    def test_offset_follows_dst(self):
        """The same clock time gets the winter offset before the change and the summer offset after it."""
        expected = ["2026-03-28T09:00:00+00:00", "2026-03-29T09:00:00+01:00"]
        assert expected == [local_datetime(date(2026, 3, 28), time(9), LONDON).isoformat(),
                            local_datetime(date(2026, 3, 29), time(9), LONDON).isoformat()]
