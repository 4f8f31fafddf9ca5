"""Data warnings of the loader (issue 26 point 4): a reference now or a file a month or more away from the rest of
the data, and timestamps that do not parse — each naming the file and the row.

The scenario is Lisbon's (UTC+0 in winter) and unlike the shipped ones: the storyline events carry no time, so the
now is derived from the sources, and the Slack export's epochs were written a year early (2024) while Gmail, the
calendar and Jira say November 2025.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from mpcbench_async.mpcbench import SOURCES
from mpcbench_async.mpcbench._data import load_scenario_data

WORLD = {"scenario_id": "s9", "global_settings": {"timezone": "Europe/Lisbon"},
         "sub_scenarios_expanded": [{"id": "plan", "events": [{"id": "ev1", "source": "email",
                                                               "from": "rui@tejo.example", "body": "Sync?"}]}]}
SLACK = {"channels": [{"id": "C1", "name": "ops"}],
         "messages": [{"id": "m1", "channel": "ops", "user": "rui", "text": "Can we sync next week?",
                       "ts": "1732366021.003000"},  # 2024-11-23
                      {"id": "m2", "channel": "ops", "user": "ana", "text": "Sure", "ts": "1732452421.000100"}]}
GMAIL = {"threads": [{"id": "t1", "messages": [
    {"from": "rui@tejo.example", "to": ["ana@tejo.example"], "date": "Mon, 24 Nov 2025 10:02:15 +0000",
     "body": "Agenda attached."},
    {"from": "ana@tejo.example", "to": ["rui@tejo.example"], "date": "Tue, 25 Nov 2025 08:00:00 +0000",
     "body": "Thanks."}]}]}
CALENDAR = {"events": [
    {"id": "e1", "title": "Ops review", "start": "2025-11-27T10:00:00Z", "end": "2025-11-27T11:00:00Z"},
    {"id": "e2", "title": "Planning", "start": "next Tuesday 10am", "end": "next Tuesday 11am"},
    {"id": "e3", "title": "Open office hours - book me", "start": "2025-11-28T14:00:00Z",
     "end": "2025-11-28T16:00:00Z"}]}
JIRA = {"issues": [{"key": "OPS-1", "summary": "Alerting", "updated": "2025-11-24T16:00:00Z",
                    "created": "2024-06-01T09:00:00Z"}]}


def _load(directory: Path, world: dict, **sources: dict):
    for name in ("world_state", *SOURCES):
        doc = world if name == "world_state" else sources.get(name, {})
        (directory / f"s9_{name}.json").write_bytes(orjson.dumps(doc))
    return load_scenario_data(directory, "s9")


def _relative(data, directory: Path) -> list[str]:
    return [w.replace(f"{directory}/", "") for w in data.warnings]


class TestReferenceNowAgreesWithTheData:
    def test_a_year_off_slack_epoch_is_not_the_now_and_the_file_is_named(self, tmp_path):
        """The now comes from the earliest message that agrees with the rest (Gmail), not the 2024 Slack epoch."""
        data = _load(tmp_path, WORLD, slack=SLACK, gmail=GMAIL, calendar=CALENDAR, jira=JIRA)
        assert data.reference_now.isoformat() == "2025-11-24T10:02:15+00:00"
        assert _relative(data, tmp_path) == [
            "s9_calendar.json: $.events[2]: 'Open office hours - book me' read as availability, not busy time "
            "(the title offers time)",
            "s9_calendar.json: $.events[1].start: timestamp 'next Tuesday 10am' does not parse; the row is undated "
            "for the tools",
            "s9_calendar.json: $.events[1].end: timestamp 'next Tuesday 11am' does not parse; the row is undated "
            "for the tools",
            "s9_world_state.json: $.reference_now: missing; derived from the earliest Slack/Gmail message (the world "
            "state has no dated storyline events), s9_gmail.json $.threads[0].messages[0] (2025-11-24T10:02:15+00:00)",
            "s9_slack.json: $.messages[0].ts: the timestamps of this file centre on 2024-11-23, 365 days from the "
            "reference now 2025-11-24"]

    def test_a_stated_now_a_year_off_is_warned_and_kept(self, tmp_path):
        """A stated reference_now is the author's: kept, but a month or more from the data is a warning."""
        data = _load(tmp_path, {**WORLD, "reference_now": "2024-11-24T09:00:00Z"}, gmail=GMAIL,
                     calendar=CALENDAR, jira=JIRA)
        assert data.reference_now.isoformat() == "2024-11-24T09:00:00+00:00"
        assert [w for w in _relative(data, tmp_path) if "does not parse" not in w and "availability" not in w] == [
            "s9_world_state.json: $.reference_now: 2024-11-24T09:00:00+00:00 is 365 days from the rest of the data, "
            "whose timestamps centre on 2025-11-24; the agent is told it is 2024-11-24",
            "s9_gmail.json: $.threads[0].messages[0].date: the timestamps of this file centre on 2025-11-24, 365 days "
            "from the reference now 2024-11-24",
            "s9_calendar.json: $.events[0].start: the timestamps of this file centre on 2025-11-27, 368 days from the "
            "reference now 2024-11-24",
            "s9_jira.json: $.issues[0].updated: the timestamps of this file centre on 2025-11-24, 365 days from the "
            "reference now 2024-11-24"]

    def test_data_that_agrees_raises_no_warning(self, tmp_path):
        """Stamps within a month of each other (and an old Jira creation date) are not reported."""
        data = _load(tmp_path, {**WORLD, "reference_now": "2025-11-24T09:00:00Z"}, gmail=GMAIL,
                     calendar={"events": CALENDAR["events"][:1]}, jira=JIRA)
        assert data.warnings == []


class TestUnparsableTimestamps:
    def test_the_first_five_are_named_then_counted(self, tmp_path):
        messages = [{"id": f"m{i}", "channel": "ops", "user": "rui", "text": "hi", "ts": f"yesterday {i}"}
                    for i in range(7)]
        data = _load(tmp_path, {**WORLD, "reference_now": "2025-11-24T09:00:00Z"},
                     slack={"channels": [], "messages": messages})
        assert _relative(data, tmp_path) == [
            *(f"s9_slack.json: $.messages[{i}].ts: timestamp 'yesterday {i}' does not parse; the row is undated for "
              "the tools" for i in range(5)),
            "s9_slack.json: $.messages[5].ts: and 2 more timestamp(s) in this file that do not parse"]


class TestSweepShowsThem:
    def test_printed_on_stderr_and_listed_in_both_summaries(self, tmp_path, capsys):
        """A sweep over the shipped sc05 report with one Slack stamp broken: the warning, with file and row, is on
        stderr as `data warning: …`, in summary.md under `## Data warnings` and in summary.json's `warnings`."""
        import shutil

        from mpcbench_async.cli import main
        from tests.conftest import REPO
        from tests.sweep.test_sweep_v1_tasks import write_config

        data = tmp_path / "data"
        shutil.copytree(REPO / "data", data)
        slack = orjson.loads((data / "sc05_carbon_forecast_slack.json").read_bytes())
        slack["messages"][0]["ts"] = "Tuesday morning"
        (data / "sc05_carbon_forecast_slack.json").write_bytes(orjson.dumps(slack))
        out = tmp_path / "out"
        code = main(["sweep", "--config", str(write_config(tmp_path)), "--prompts", str(REPO / "prompt_config.json"),
                     "--models", "sim/oracle-agent", "--tasks", "sc05_weekly_report", "--tasks-dir",
                     str(REPO / "tasks"), "--data-dir", str(data), "--scenarios-dir", str(REPO / "scenarios"),
                     "--out", str(out), "--quiet"])
        warning = (f"{data}/sc05_carbon_forecast_slack.json: $.messages[0].ts: timestamp 'Tuesday morning' does not "
                   "parse; the row is undated for the tools")
        assert 0 == code
        assert f"data warning: {warning}\n" in capsys.readouterr().err
        assert f"## Data warnings\n\n- {warning}\n" in (out / "summary.md").read_text(encoding="utf-8")
        assert [warning] == orjson.loads((out / "summary.json").read_bytes())["warnings"]
        assert [warning] == orjson.loads((out / "data_warnings.json").read_bytes())
