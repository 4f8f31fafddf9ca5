"""Task files that would crash or mislead a run are refused at load, naming the file and every bad field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mpcbench_async import InputError
from mpcbench_async.mpcbench import load_task
from tests.conftest import REPO, reference_dir

PLANNING = {"participants": ["ana@x.io"], "duration_minutes": 30, "window_start": "2025-12-08",
            "window_end": "2025-12-12"}


def write(tmp_path: Path, text: str | None = None, **fields: Any) -> Path:
    """A planning task file with ``fields`` over a valid base (``text``: the file's bytes as given)."""
    doc = {"task_id": "p1", "scenario_id": "sc_a", "user_prompt": "Find slots next week.",
           "answer_requirements": ["Proposes slots."], "facts": {"planning": dict(PLANNING)}} | fields
    path = tmp_path / "planning" / "p1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else json.dumps(doc))
    return path


def refusal(path: Path, **kwargs: Any) -> str:
    with pytest.raises(InputError) as caught:
        load_task(path, **kwargs)
    return str(caught.value)


class TestFactDates:
    def test_a_month_13_window_start_is_refused_naming_file_and_field(self, tmp_path):
        """The issue's poison task: window_start "2025-13-01" is one message naming the file and the field."""
        path = write(tmp_path, facts={"planning": PLANNING | {"window_start": "2025-13-01"}})
        assert f'{path}: $.facts.planning.window_start: "2025-13-01" is not a date (YYYY-MM-DD)' == refusal(path)

    def test_a_bad_target_date_is_refused(self, tmp_path):
        """An e-mail task's target_date that is no date is refused at load."""
        path = write(tmp_path, facts={"target_date": "end of Q4"})
        assert f'{path}: $.facts.target_date: "end of Q4" is not a date (YYYY-MM-DD)' == refusal(path)

    def test_a_window_that_ends_before_it_starts_is_refused(self, tmp_path):
        """window_end before window_start is refused with both values."""
        path = write(tmp_path,
                     facts={"planning": PLANNING | {"window_start": "2025-12-12", "window_end": "2025-12-08"}})
        assert f'{path}: $.facts.planning.window_end: "2025-12-08" is before window_start "2025-12-12"' == refusal(path)

    @pytest.mark.parametrize(("stamp", "problem"), [
        ("2025-12-08T09:00:00+25:00", "has the UTC offset +25:00; offsets lie within ±14:00"),
        ("2025-12-08T09:00:00+23:00", "has the UTC offset +23:00; offsets lie within ±14:00"),
        ("2025-12-08T09:00:00+05:99", "has the UTC offset +05:99, whose minutes or seconds are past 59"),
        ("2025-02-30", "is not a date (YYYY-MM-DD)"),
    ])
    def test_a_stamp_off_the_calendar_is_refused(self, tmp_path, stamp, problem):
        """An offset beyond ±14:00 (or with minutes past 59), or a day February lacks, is refused naming the field."""
        path = write(tmp_path, facts={"planning": PLANNING | {"window_start": stamp}})
        assert f'{path}: $.facts.planning.window_start: "{stamp}" {problem}' == refusal(path)

    @pytest.mark.parametrize("stamp", ["2025-12-08T00:00:00+01:00", "2025-12-08T09:00", "20251208",
                                       "2025-12-08T09:00:00+14:00", "2025-12-08T09:00:00-12:00"])
    def test_iso_forms_the_checks_read_still_load(self, tmp_path, stamp):
        """A timestamp with time and offset, or the basic ISO form, loads as it did before."""
        path = write(tmp_path, facts={"planning": PLANNING | {"window_start": stamp}})
        assert stamp == load_task(path).facts.planning.window_start


class TestPlanningFacts:
    def test_every_bad_field_of_one_file_is_listed(self, tmp_path):
        """A file with four problems reports all four, one line each, in field order."""
        path = write(tmp_path, task_id="../up", facts={"planning": {
            "participants": ["\x1b"], "duration_minutes": 0, "window_start": "2025-12-08", "window_end": "tomorrow"}})
        assert "\n".join([
            f'{path}: $.task_id: "../up" must not contain a path separator (/ or \\)',
            f'{path}: $.facts.planning.participants[0]: "\\u001b" names nobody (give a name or an e-mail)',
            f"{path}: $.facts.planning.duration_minutes: 0 is not a meeting length in minutes (1 to 1440)",
            f'{path}: $.facts.planning.window_end: "tomorrow" is not a date (YYYY-MM-DD)',
        ]) == refusal(path)

    def test_no_participants_is_refused(self, tmp_path):
        """A planning fact naming nobody cannot be checked and is refused."""
        path = write(tmp_path, facts={"planning": PLANNING | {"participants": []}})
        assert f"{path}: $.facts.planning.participants: must name at least one participant" == refusal(path)

    def test_a_name_in_another_script_is_a_participant(self, tmp_path):
        """A participant written in another script (李明) is a name and loads."""
        path = write(tmp_path, facts={"planning": PLANNING | {"participants": ["李明", "ana@x.io"]}})
        assert ["李明", "ana@x.io"] == load_task(path).facts.planning.participants

    def test_a_number_where_an_integer_is_expected_names_the_path(self, tmp_path):
        """duration_minutes given as a string is a type error naming the JSON path."""
        path = write(tmp_path, facts={"planning": PLANNING | {"duration_minutes": "30"}})
        assert f"{path}: Expected `int`, got `str` - at `$.facts.planning.duration_minutes`" == refusal(path)


class TestIds:
    @pytest.mark.parametrize(("task_id", "problem"), [
        ("../../etc/passwd", "must not contain a path separator (/ or \\)"),
        ("a\\b", "must not contain a path separator (/ or \\)"),
        ("..", "must not contain '..' or start with '.'"),
        (".hidden", "must not contain '..' or start with '.'"),
        ("tab\tid", "contains the control character U+0009"),
        ("", "must not be empty"),
    ])
    def test_unsafe_task_ids_are_refused(self, tmp_path, task_id, problem):
        """Ids that could leave a directory or break a file name are refused with the reason."""
        path = write(tmp_path, task_id=task_id)
        assert f"{path}: $.task_id: {json.dumps(task_id)} {problem}" == refusal(path)

    def test_a_1000_character_id_is_refused_and_shown_cut(self, tmp_path):
        """A 1,000-character id is refused; the message shows its start only."""
        path = write(tmp_path, task_id="x" * 1000)
        assert (f'{path}: $.task_id: "{"x" * 76}... is 1000 characters (1000 bytes) long; at most 200 bytes are '
                "allowed") == refusal(path)

    def test_a_unicode_id_within_200_bytes_loads(self, tmp_path):
        """Ids in any script load while they fit in 200 bytes of UTF-8."""
        path = write(tmp_path, task_id="計画_会議")
        assert "計画_会議" == load_task(path).task_id

    def test_a_scenario_id_with_dot_dot_is_refused(self, tmp_path):
        """The scenario id names data files, so '../' in it is refused naming the field it came from."""
        path = write(tmp_path, scenario_id="", data_dependencies={"scenario_id": "../../secrets"})
        assert (f'{path}: $.data_dependencies.scenario_id: "../../secrets" must not contain a path separator (/ or \\)'
                == refusal(path))

    def test_a_bad_default_scenario_names_the_flag(self, tmp_path):
        """A --scenario-id default used by a task naming none is checked too, naming the flag."""
        path = write(tmp_path, scenario_id="")
        assert f'{path}: --scenario-id: "a/b" must not contain a path separator (/ or \\)' == refusal(
            path, scenario_id="a/b")


class TestFreeFormFields:
    def test_deep_nesting_is_refused_with_its_path(self, tmp_path):
        """data_dependencies nested 40 levels deep is refused at the level where it passes the limit."""
        path = write(tmp_path, data_dependencies={"a": json.loads("[" * 40 + "]" * 40)})
        assert f"{path}: $.data_dependencies.a{'[0]' * 31}: nests deeper than 32 levels" == refusal(path)

    def test_nesting_too_deep_to_decode_is_one_message(self, tmp_path):
        """5,000 levels (beyond the decoder's recursion) are one error naming the file, not a RecursionError."""
        path = write(tmp_path, text='{"task_id": "p1", "data_dependencies": {"a": ' + "[" * 5000 + "]" * 5000 + "}}")
        assert f"{path}: nested too deeply to read" == refusal(path)

    def test_an_integer_beyond_64_bits_is_refused(self, tmp_path):
        """An integer the request encoder cannot write is refused at load."""
        path = write(tmp_path, expected_tool_sequence=[{"tool_name": "Jira.SearchIssuesWithJql", "limit": 2**70}])
        assert (f"{path}: $.expected_tool_sequence[0].limit: integer {2**70} does not fit in 64 bits"
                == refusal(path))

    def test_a_jira_issue_key_must_be_a_string(self, tmp_path):
        """data_dependencies.jira_issue_key, read by the e-mail check, must be a non-empty string."""
        path = write(tmp_path, data_dependencies={"jira_issue_key": ["APP-1"]})
        assert (f'{path}: $.data_dependencies.jira_issue_key: must be a non-empty string, got ["APP-1"]'
                == refusal(path))

    def test_an_empty_prompt_and_requirement_are_refused(self, tmp_path):
        """A blank user prompt and a blank requirement are both reported."""
        path = write(tmp_path, user_prompt="  ", answer_requirements=["ok", ""])
        assert (f"{path}: $.user_prompt: must not be empty\n{path}: $.answer_requirements[1]: must not be empty"
                == refusal(path))


class TestFactsThatCheckNothing:
    @pytest.mark.parametrize("facts", [{}, {"metrics": {}}, {"issue_key": "AB-1"}, {"planning": None}])
    def test_facts_giving_nothing_a_planning_check_reads_are_refused(self, tmp_path, facts):
        """``facts: {}`` (or facts only other task types read) is one message naming the file and $.facts."""
        path = write(tmp_path, facts=facts)
        assert (f"{path}: $.facts: gives nothing the planning checks verify (they read $.facts.planning); give "
                "those facts, or leave $.facts out for a task only the judge scores") == refusal(path)

    def test_empty_facts_of_an_email_task_name_what_it_reads(self, tmp_path):
        """An e-mail task's empty facts name the two fields its check reads."""
        path = write(tmp_path, task_type="email_reply", facts={"issue_key": "", "metrics": {"a": 1}})
        assert (f"{path}: $.facts: gives nothing the email_reply checks verify (they read $.facts.issue_key or "
                "$.facts.target_date); give those facts, or leave $.facts out for a task only the judge scores"
                == refusal(path))

    def test_a_task_without_facts_loads_for_the_judge(self, tmp_path):
        """No ``facts`` key at all is a judge-only task (as every original MPCBench task is) and loads."""
        path = write(tmp_path)
        doc = json.loads(path.read_text())
        del doc["facts"]
        path.write_text(json.dumps(doc))
        assert None is load_task(path).facts.planning


def test_every_reference_task_loads():
    """The original MPCBench tasks give no facts (the judge scores them) and load as they are."""
    paths = sorted(reference_dir("mpcbench_v1", "tasks").glob("*/*.json"))
    assert 8 == len([load_task(p, scenario_id="scenario_A") for p in paths])


def test_every_shipped_task_loads():
    """The validation refuses none of the shipped tasks."""
    paths = sorted((REPO / "tasks").glob("*/*.json"))
    assert 17 == len([load_task(p) for p in paths])
