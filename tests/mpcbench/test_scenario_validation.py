"""Scenario files whose values the generator cannot use are refused at load, naming the file and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mpcbench_async import InputError
from mpcbench_async.mpcbench import list_scenarios, load_scenario
from tests.conftest import REPO


def write(tmp_path: Path, scenario_id: str = "sc_x", **fields: Any) -> Path:
    doc = {"scenario_id": scenario_id, "description": "d", "noise_level": 0, "depth": 0,
           "reference_now": "2026-03-24T11:00:00+00:00", "global_settings": {"timezone": "Europe/London"},
           "people": [{"id": "p1", "name": "Ana Ruiz", "email": "ana@x.io"}]} | fields
    path = tmp_path / f"{scenario_id[:100] or 'empty'}.json"
    path.write_text(json.dumps(doc))
    return path


def refusal(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        load_scenario(path)
    return str(caught.value)


def test_clock_times_that_are_not_times_of_day_are_refused(tmp_path):
    """workday_start 25:00 matches HH:MM but is no time of day; both workday problems are listed."""
    path = write(tmp_path, global_settings={"timezone": "Europe/London", "workday_start": "25:00",
                                            "workday_end": "08:61"})
    assert (f"{path}: $.global_settings.workday_start '25:00' is not a time of day (HH:MM)\n"
            f"{path}: $.global_settings.workday_end '08:61' is not a time of day (HH:MM)") == refusal(path)


def test_a_workday_that_ends_before_it_starts_is_refused(tmp_path):
    """workday_end before workday_start is refused with both values."""
    path = write(tmp_path, global_settings={"timezone": "Europe/London", "workday_start": "18:00",
                                            "workday_end": "09:00"})
    assert f"{path}: $.global_settings.workday_end '09:00' is not after workday_start '18:00'" == refusal(path)


def test_milestone_and_target_dates_must_be_dates(tmp_path):
    """A milestone date and a Jira seed's target date that are not YYYY-MM-DD are refused with their paths."""
    path = write(tmp_path, projects=[{"project_key": "AB", "name": "Alpha",
                                      "milestones": [{"name": "GA", "date": "2025-13-01"}],
                                      "jira_seeds": [{"issue_key": "AB-1", "summary": "s", "status": "Open",
                                                      "target_date": "soon"}]}])
    assert (f"{path}: $.projects[0].milestones[0].date '2025-13-01' is not a date (YYYY-MM-DD)\n"
            f"{path}: $.projects[0].jira_seeds[0].target_date 'soon' is not a date (YYYY-MM-DD)") == refusal(path)


def test_a_1000_character_scenario_id_is_refused(tmp_path):
    """A scenario id too long for a data file name is refused before its files are looked for."""
    path = write(tmp_path, scenario_id="s" * 1000)
    assert (f"{path}: $.scenario_id {'s' * 80!r} is 1000 characters (1000 bytes) long; at most 200 bytes are "
            "allowed") == refusal(path)


def test_every_shipped_scenario_loads():
    """The stricter checks refuse none of the shipped scenarios."""
    assert 8 == len([load_scenario(p) for p in list_scenarios(REPO / "scenarios")])


@pytest.mark.parametrize(("now", "problem"), [
    ("2026-02-30T11:00:00+00:00", "is not a real date (February 2026 has 28 days)"),
    ("2026-03-24T11:00:00+25:00", "has the UTC offset +25:00; offsets lie within ±14:00"),
    ("2026-03-24T11:00:00+15:00", "has the UTC offset +15:00; offsets lie within ±14:00"),
    ("2026-03-24T11:00:00+05:99", "has the UTC offset +05:99, whose minutes or seconds are past 59"),
])
def test_a_reference_now_the_calendar_lacks_is_refused(tmp_path, now, problem):
    """reference_now must be a real day with an offset a place can have: one message naming file and field."""
    path = write(tmp_path, reference_now=now)
    assert f"{path}: $.reference_now {now!r} {problem}" == refusal(path)


def test_a_reference_now_at_the_edge_offsets_loads(tmp_path):
    """+14:00 (Kiritimati) and -12:00 are real offsets."""
    for now in ("2026-03-24T11:00:00+14:00", "2026-03-24T11:00:00-12:00"):
        assert now == load_scenario(write(tmp_path, reference_now=now)).reference_now
