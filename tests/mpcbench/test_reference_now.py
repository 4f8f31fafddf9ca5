"""Tests for the reference-now rule of mpcbench._data: which event a scenario's "now" is taken from.

Every fixture puts some other event — a noise e-mail, an early calendar block, an earlier message in the
sources — in a different week than the one the rule picks, so taking the earliest event anywhere would fail.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from mpcbench_async._exceptions import InputError
from mpcbench_async.mpcbench import SOURCES, Scenario
from mpcbench_async.mpcbench._data import load_scenario_data
from mpcbench_async.mpcbench._scenario import GlobalSettings
from tests.conftest import reference_dir

BASE = {"scenario_id": "s1", "global_settings": {"timezone": "America/New_York"}}
# Noise a week before the storyline: never the reference now.
NOISE = [{"id": "noise_hr", "events": [
    {"id": "n1", "source": "email", "timestamp": "2025-03-03T08:45:00-05:00", "from": "hr@acme.io",
     "to": ["ann@acme.io"], "subject": "Training", "body": "Please complete the training."}]}]
# An earlier Slack message and calendar block in the sources, also a week before.
SLACK = {"channels": [{"id": "C1", "name": "general"}], "users": [{"id": "U1", "name": "Ann"}],
         "messages": [{"id": "m1", "channel_id": "C1", "user_id": "U1", "text": "Morning!",
                       "timestamp": "2025-03-04T09:00:00-05:00"}]}
CALENDAR = {"events": [{"id": "e1", "title": "Dentist", "start": "2025-03-05T08:00:00-05:00",
                        "end": "2025-03-05T09:00:00-05:00", "attendees": ["ann@acme.io"]}]}


def _write(directory: Path, world_state: dict, **sources: dict) -> Path:
    """The seven files of scenario s1 in ``directory``; sources not given are empty documents."""
    for name in ("world_state", *SOURCES):
        doc = world_state if name == "world_state" else sources.get(name, {})
        (directory / f"s1_{name}.json").write_bytes(orjson.dumps(doc))
    return directory


def _load(directory: Path, world_state: dict, scenario: Scenario | None = None, **sources: dict):
    return load_scenario_data(_write(directory, world_state, **sources), "s1", scenario=scenario)


def _now_warnings(data) -> list[str]:
    return [w for w in data.warnings if "$.reference_now" in w]


class TestRuleOneStatedNow:
    STORY = {"sub_scenarios_expanded": [{"id": "plan", "events": [
        {"id": "ev1", "source": "email", "timestamp": "2025-03-10T09:18:00-04:00", "from": "ann@acme.io",
         "to": ["bo@acme.io"], "subject": "Sync next week", "body": "Can we meet next week?"}]}]}

    def test_world_state_reference_now_wins(self, tmp_path):
        """reference_now in the world state is used as is, whatever the storyline says, with no warning."""
        ws = {**BASE, **self.STORY, "noise_scenarios": NOISE, "reference_now": "2025-03-19T14:30:00Z"}
        data = _load(tmp_path, ws, slack=SLACK, calendar=CALENDAR)
        assert ("2025-03-19T10:30:00-04:00", []) == (data.reference_now.isoformat(), data.warnings)

    def test_scenario_file_reference_now_is_next(self, tmp_path):
        """Without one in the world state, the scenario file's reference_now is used and the warning says so."""
        scenario = Scenario(scenario_id="s1", description="", noise_level=0.0, depth=0.0,
                            global_settings=GlobalSettings(timezone="America/New_York"), people=[],
                            reference_now="2025-03-19T15:30:00+01:00")
        data = _load(tmp_path, {**BASE, **self.STORY, "noise_scenarios": NOISE}, scenario, slack=SLACK)
        assert ("2025-03-19T10:30:00-04:00",
                [f"{tmp_path / 's1_world_state.json'}: $.reference_now: missing; taken from the scenario file "
                 "(2025-03-19T10:30:00-04:00)"]) == (data.reference_now.isoformat(), _now_warnings(data))


class TestRuleTwoStorylineRequest:
    def test_first_message_of_the_storyline_not_the_calendar_block_before_it(self, tmp_path):
        """The request (an e-mail whose sender and body sit under data) wins over an earlier calendar block with
        an actor and a description, over noise and over earlier messages in the sources."""
        events = [
            {"id": "ev1", "source": "calendar", "type": "calendar_availability_block", "actor": "person_ann",
             "timestamp": "2025-03-07T15:02:00-05:00", "description": "Ann blocks lunch next week",
             "data": {"title": "Lunch", "start": "2025-03-11T12:00:00-04:00", "end": "2025-03-11T13:00:00-04:00"}},
            {"id": "ev2", "source": "email", "type": "email_thread_start", "actor": "person_ann",
             "timestamp": "2025-03-10T09:18:12-04:00", "description": "Ann asks for a slot",
             "data": {"from": "ann@acme.io", "to": ["bo@acme.io"], "subject": "Planning next week",
                      "body": "Could you share your availability next week?"}},
            {"id": "ev3", "source": "chat", "timestamp": "2025-03-10T11:00:00-04:00",
             "data": {"sender": "bo@acme.io", "text": "Replied by mail"}},
        ]
        ws = {**BASE, "sub_scenarios_expanded": [{"id": "plan", "events": events}], "noise_scenarios": NOISE}
        data = _load(tmp_path, ws, slack=SLACK, calendar=CALENDAR)
        assert ("2025-03-10T09:18:12-04:00",
                [f"{tmp_path / 's1_world_state.json'}: $.reference_now: missing; derived from the request that "
                 "starts the storyline, $.sub_scenarios_expanded[0].events[1] (2025-03-10T09:18:12-04:00)"]) == (
            data.reference_now.isoformat(), _now_warnings(data))

    def test_timeline_events_skip_noise_and_read_naive_stamps_in_the_zone(self, tmp_path):
        """In the timeline_events layout an earlier is_noise message and an earlier meeting are passed over; the
        request's naive stamp is read in the scenario's zone."""
        timeline = [
            {"id": "evt_001", "timestamp": "2025-03-03T10:00:00", "source": "slack", "type": "message",
             "text": "Lunch?", "details": {"user": "person_bo"}, "is_noise": True},
            {"id": "evt_002", "timestamp": "2025-03-06T11:00:00", "source": "calendar", "type": "meeting",
             "text": "Standup", "details": {"title": "Standup", "organizer": "ann@acme.io"}, "is_noise": False},
            {"id": "evt_003", "timestamp": "2025-03-10T15:09:00", "source": "slack", "type": "message",
             "text": "Can someone find a 45 minute slot next week?", "details": {"user": "person_ann"},
             "is_noise": False},
        ]
        data = _load(tmp_path, {**BASE, "timeline_events": timeline}, slack=SLACK)
        assert ("2025-03-10T15:09:00-04:00",
                [f"{tmp_path / 's1_world_state.json'}: $.reference_now: missing; derived from the request that "
                 "starts the storyline, $.timeline_events[2] (2025-03-10T15:09:00-04:00)"]) == (
            data.reference_now.isoformat(), _now_warnings(data))


class TestRuleThreeEarliestStorylineEvent:
    def test_without_a_storyline_message_the_earliest_storyline_event_is_used(self, tmp_path):
        """With no message in the storyline (a calendar invite with a sender and body is no message), the earliest
        storyline event is used, not the earlier noise e-mail or source messages."""
        events = [
            {"id": "ev1", "channel": "calendar", "timestamp": "2025-03-10T11:00:00-04:00", "from": "person_ann",
             "subject": "Planning", "body": "Agenda: review"},
            {"id": "ev2", "source": "docs", "timestamp": "2025-03-11T10:05:00-04:00", "title": "Plan draft"},
        ]
        ws = {**BASE, "sub_scenarios_expanded": [{"id": "plan", "events": events}], "noise_scenarios": NOISE}
        data = _load(tmp_path, ws, slack=SLACK, calendar=CALENDAR)
        assert ("2025-03-10T11:00:00-04:00",
                [f"{tmp_path / 's1_world_state.json'}: $.reference_now: missing; derived from the earliest "
                 "storyline event (no storyline event is a message), $.sub_scenarios_expanded[0].events[0] "
                 "(2025-03-10T11:00:00-04:00)"]) == (data.reference_now.isoformat(), _now_warnings(data))


class TestRuleFourEarliestMessage:
    def test_without_storyline_events_the_earliest_slack_or_gmail_message_is_used(self, tmp_path):
        """The earliest Slack/Gmail message in any stamp form (epoch, e-mail date, naive) is used; noise, calendar
        events and Drive files do not count."""
        slack = {"channels": [], "messages": [
            {"id": "m1", "channel_id": "C1", "text": "Hi", "ts": "1741616280.000200"},  # 10:18 New York
            {"id": "m2", "channel_id": "C1", "text": "Hi", "timestamp": "2025-03-10T10:30:00"},
        ]}
        gmail = {"threads": [{"id": "t1", "messages": [
            {"from": "ann@acme.io", "date": "Mon, 10 Mar 2025 10:05:00 -0400", "body": "Next week?"}]}]}
        drive = {"files": [{"id": "f1", "name": "Old", "modifiedTime": "2025-02-20T10:00:00Z"}]}
        data = _load(tmp_path, {**BASE, "noise_scenarios": NOISE}, slack=slack, gmail=gmail, drive=drive,
                     calendar=CALENDAR)
        assert ("2025-03-10T10:05:00-04:00",
                [f"{tmp_path / 's1_world_state.json'}: $.reference_now: missing; derived from the earliest "
                 "Slack/Gmail message (the world state has no dated storyline events), s1_gmail.json "
                 "$.threads[0].messages[0] (2025-03-10T10:05:00-04:00)"]) == (
            data.reference_now.isoformat(), _now_warnings(data))

    def test_no_timestamp_anywhere_is_an_error_naming_file_and_field(self, tmp_path):
        """With nothing to derive it from, loading fails naming the world state and $.reference_now."""
        with pytest.raises(InputError) as info:
            _load(tmp_path, {**BASE, "noise_scenarios": NOISE}, calendar=CALENDAR)
        assert (f"{tmp_path / 's1_world_state.json'}: $.reference_now is missing and no timestamp in the data to "
                "derive it from") == str(info.value)


class TestPlanningWindow:
    STORY = {"sub_scenarios_expanded": [{"id": "plan", "events": [
        {"id": "ev1", "source": "slack", "timestamp": "2025-02-24T10:12:34-05:00", "from": "person_ann",
         "message": "We need a planning session next week"}]}]}

    @pytest.mark.parametrize(("holder", "field_name", "value"), [
        ("time_window", "week_of", "2025-03-03"),
        ("planning_window", "week_of", "2025-03-07"),
        ("timeline", "planning_window_start", "2025-03-03T00:00:00-05:00"),
    ])
    def test_a_window_in_the_next_week_is_accepted(self, tmp_path, holder, field_name, value):
        """A stated window inside the week after the reference now's week gives no warning."""
        story = {"sub_scenarios_expanded": [{**self.STORY["sub_scenarios_expanded"][0], holder: {field_name: value}}]}
        data = _load(tmp_path, {**BASE, **story})
        assert [] == [w for w in data.warnings if "week after" in w]

    @pytest.mark.parametrize(("holder", "field_name", "value", "day"), [
        ("time_window", "week_of", "2025-03-10", "2025-03-10"),
        ("planning_window", "week_of", "2025-02-28", "2025-02-28"),
        ("timeline", "planning_window_start", "2025-03-10T00:00:00-04:00", "2025-03-10"),
    ])
    def test_a_window_in_another_week_is_reported_with_file_and_field(self, tmp_path, holder, field_name, value, day):
        """A stated window outside the week after the reference now's week is named with file and field."""
        story = {"sub_scenarios_expanded": [{**self.STORY["sub_scenarios_expanded"][0], holder: {field_name: value}}]}
        data = _load(tmp_path, {**BASE, **story})
        assert [f"{tmp_path / 's1_world_state.json'}: $.sub_scenarios_expanded[0].{holder}.{field_name}: {day} is "
                "not in the week after the reference now (2025-02-24T10:12:34-05:00), 2025-03-03 to 2025-03-09"] == [
            w for w in data.warnings if "week after" in w]


REFERENCE_NOW = {
    "scenario_A": ("2025-11-17T10:12:00+09:00", "Asia/Seoul"),
    "scenario_noise05_depth05": ("2025-11-25T15:05:12-05:00", "America/New_York"),
    "scenario_noise0_depth0": ("2025-01-06T10:02:00-05:00", "America/New_York"),
    "scenario_noise0_depth1": ("2025-02-04T09:18:12-05:00", "America/New_York"),
    "scenario_noise1_depth0": ("2025-11-24T10:02:15-05:00", "America/New_York"),
    "scenario_noise1_depth1": ("2025-02-24T10:12:34-05:00", "America/New_York"),
}


class TestReferenceScenarios:
    @pytest.mark.parametrize("scenario_id", sorted(REFERENCE_NOW))
    def test_reference_now_of_the_original_scenarios(self, scenario_id):
        """The six original scenarios get the contract's reference now, and their planning windows agree with it."""
        data = load_scenario_data(reference_dir("mpcbench_v1", "data"), scenario_id)
        assert (REFERENCE_NOW[scenario_id], []) == ((data.reference_now.isoformat(), data.timezone_name),
                                                    [w for w in data.warnings if "week after" in w])
