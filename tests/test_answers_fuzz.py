"""The answer reader never raises on what a model may write: extreme dates, odd zones, junk around them."""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from mpcbench_async._answers import find_dates, find_periods, find_quantities, find_slots

_PIECES = st.sampled_from([
    "week of 9999-12-27", "9999-12-31", "0001-01-01", "0000-01-01", "Dec 31 9999", "December 9999",
    "January 0001", "early Jan", "next month", "this week", "in two weeks", "within the next 2-3 weeks",
    "by Friday", "after Dec 31", "31/12", "12/31/99", "Mon 9:00-9:30 +14:00", "at 23:59 UTC-12",
    "from 10am to 2pm PT", "for 90 minutes", "24/7", "Q4", "the 31st", "Feb 29", "2024-02-29",
    "up 12%", "-3.5 pp", "1e309%", " ", "\n", "–", "to", "through", "Kathmandu", "IST",
])
_TEXT = st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=12).map(" ".join)
_ANCHORS = st.sampled_from([date(2026, 3, 24), date(1000, 1, 1), date(8999, 12, 31), date(2025, 12, 29)])


@given(text=_TEXT, anchor=_ANCHORS)
def test_reading_an_answer_never_raises(text: str, anchor: date) -> None:
    find_dates(text, anchor=anchor)
    find_periods(text, anchor=anchor)
    find_slots(text, tz=ZoneInfo("Asia/Kathmandu"), anchor=anchor)
    find_quantities(text)


def test_far_dates_are_not_read() -> None:
    assert find_periods("week of 9999-12-27", anchor=date(2026, 3, 24)) == []
    assert find_dates("on 0001-01-01", anchor=date(2026, 3, 24)) == []
