"""Loading task files: the project's format and the original MPCBench's, with their scenario rules."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from mpcbench_async._exceptions import InputError
from mpcbench_async.mpcbench import list_tasks, load_task
from tests.conftest import reference_dir

REQUIREMENTS = ["The answer proposes concrete options."]


def write_task(tmp_path: Path, folder: str = "planning", **fields) -> Path:
    """A task file ``<folder>/t1.json`` holding ``fields`` plus an id, a prompt and one requirement."""
    path = tmp_path / folder / "t1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps({"task_id": "t1", "user_prompt": "Find a slot.",
                                   "answer_requirements": REQUIREMENTS} | fields))
    return path


class TestScenario:
    def test_scenario_id_field_wins_over_the_default(self, tmp_path):
        """A task's own scenario_id is used even when the caller gives a default."""
        path = write_task(tmp_path, scenario_id="sc_own")
        assert "sc_own" == load_task(path, scenario_id="sc_default").scenario_id

    def test_data_dependencies_scenario_id_is_read(self, tmp_path):
        """The original layout's data_dependencies.scenario_id names the scenario, before any default."""
        path = write_task(tmp_path, data_dependencies={"scenario_id": "scenario_noise0_depth0"})
        assert "scenario_noise0_depth0" == load_task(path, scenario_id="scenario_A").scenario_id

    def test_default_applies_to_a_task_naming_none(self, tmp_path):
        """A task naming no scenario takes the caller's default (--scenario-id)."""
        path = write_task(tmp_path, data_dependencies={"jira_issue_key": "APP-412"})
        assert "scenario_A" == load_task(path, scenario_id="scenario_A").scenario_id

    def test_no_scenario_anywhere_is_one_error_naming_file_and_both_fields(self, tmp_path):
        """Without any scenario the error names the file, both places looked at and the flag."""
        path = write_task(tmp_path)
        with pytest.raises(InputError) as caught:
            load_task(path)
        assert (f"{path}: the task names no scenario (neither $.scenario_id nor $.data_dependencies.scenario_id "
                "is set); pass --scenario-id, the scenario for tasks that name none") == str(caught.value)

    def test_two_different_scenarios_in_one_file_are_an_error(self, tmp_path):
        """scenario_id and data_dependencies.scenario_id that disagree are reported with both values."""
        path = write_task(tmp_path, scenario_id="a", data_dependencies={"scenario_id": "b"})
        with pytest.raises(InputError) as caught:
            load_task(path)
        assert (f"{path}: $.scenario_id is 'a' but $.data_dependencies.scenario_id is 'b'; keep one"
                == str(caught.value))

    def test_a_non_string_nested_scenario_is_an_error(self, tmp_path):
        """data_dependencies.scenario_id must be a non-empty string."""
        path = write_task(tmp_path, data_dependencies={"scenario_id": 7})
        with pytest.raises(InputError) as caught:
            load_task(path, scenario_id="x")
        assert f"{path}: $.data_dependencies.scenario_id must be a non-empty string, got 7" == str(caught.value)


class TestOriginalFields:
    def test_task_type_comes_from_the_folder(self, tmp_path):
        """A task without task_type takes its folder's name."""
        path = write_task(tmp_path, "email_reply", scenario_id="s")
        assert "email_reply" == load_task(path).task_type

    def test_tool_and_reason_steps_read_as_tool_name_and_description(self, tmp_path):
        """Both spellings of expected_tool_sequence items load into one shape; other keys are kept."""
        path = write_task(tmp_path, scenario_id="s", expected_tool_sequence=[
            {"tool": "GoogleContacts.SearchContactsByName", "reason": "Get email address for Alex Smith"},
            {"tool_name": "GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree", "description": "Common free time",
             "arguments": {"min_duration_minutes": 45}}])
        assert [{"tool_name": "GoogleContacts.SearchContactsByName", "description": "Get email address for Alex Smith"},
                {"tool_name": "GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree", "description": "Common free time",
                 "arguments": {"min_duration_minutes": 45}}] == load_task(path).expected_tool_sequence

    def test_a_step_naming_no_tool_is_an_error(self, tmp_path):
        """A step with neither tool_name nor tool is reported by its index."""
        path = write_task(tmp_path, scenario_id="s", expected_tool_sequence=[{"reason": "look around"}])
        with pytest.raises(InputError) as caught:
            load_task(path)
        assert f"{path}: $.expected_tool_sequence[0] names no tool (tool_name or tool)" == str(caught.value)


class TestReferenceTasks:
    def test_every_original_task_loads_with_its_scenario(self):
        """The eight original files load as they are; the three scenario_A ones take the default."""
        tasks = [load_task(p, scenario_id="scenario_A") for p in list_tasks(reference_dir("mpcbench_v1", "tasks"))]
        assert {
            ("companyA_weekly_report_v1", "document_generation", "scenario_A"),
            ("companyA_email_reply_v1", "email_reply", "scenario_A"),
            ("companyA_planning_v1", "planning", "scenario_A"),
            ("scenario_noise05_depth05_planning_task", "planning", "scenario_noise05_depth05"),
            ("scenario_noise0_depth0_planning_task", "planning", "scenario_noise0_depth0"),
            ("scenario_noise0_depth1_planning_task", "planning", "scenario_noise0_depth1"),
            ("scenario_noise1_depth0_planning_task", "planning", "scenario_noise1_depth0"),
            ("scenario_noise1_depth1_planning_task", "planning", "scenario_noise1_depth1"),
        } == {(t.task_id, t.task_type, t.scenario_id) for t in tasks}
        assert all(set(step) == {"tool_name", "description"} for t in tasks for step in t.expected_tool_sequence)
