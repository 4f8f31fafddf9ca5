"""Scenario data with a value of the wrong JSON kind where an object or array belongs loads (read as empty), warning."""

from __future__ import annotations

import json
from datetime import UTC

from mpcbench_async.mpcbench import Task, run_checks
from mpcbench_async.mpcbench._data import load_scenario_data
from mpcbench_async.mpcbench._task import PlanningFacts, TaskFacts
from mpcbench_async.testing import write_workspace


def test_scalars_where_arrays_and_objects_belong_do_not_crash_the_loader_or_the_checks(tmp_path):
    """A string company and settings, numbers for the storyline and a calendar's events: loaded, checked, warned."""
    data_dir = write_workspace(tmp_path, tasks=0) / "data"
    (data_dir / "sc_a_world_state.json").write_text(json.dumps({
        "scenario_id": "sc_a", "reference_now": "2026-03-24T11:00:00+00:00", "global_settings": "Europe/London",
        "company": "Acme", "timeline_events": 3, "sub_scenarios_expanded": [{"events": 5}], "projects": "P"}))
    (data_dir / "sc_a_calendar.json").write_text(json.dumps({"events": 7, "calendars": True}))
    data = load_scenario_data(data_dir, "sc_a")
    calendar = data_dir / "sc_a_calendar.json"
    assert [f"{calendar}: $.calendars: true is not an array; read as empty",
            f"{calendar}: $.events: 7 is not an array; read as empty",
            f"{data_dir / 'sc_a_world_state.json'}: $.global_settings.timezone: missing; using the fixed offset UTC "
            "of the first timestamp in the sources"] == data.warnings
    assert ({"events": [], "calendars": []}, UTC) == (data.source("calendar"), data.tz)
    task = Task(task_id="p", user_prompt="Find slots.", answer_requirements=["x"], task_type="planning",
                facts=TaskFacts(planning=PlanningFacts(participants=["ana@x.io"], duration_minutes=30,
                                                       window_start="2026-03-30", window_end="2026-04-03")))
    checks = run_checks(task, "Wednesday 2026-04-01 10:00-10:30 with Ana Ruiz", data)
    assert {"planning.slots_found": "pass", "planning.slots_free": "pass", "planning.duration": "pass",
            "planning.participants": "pass"} == {c.name: c.status for c in checks}
