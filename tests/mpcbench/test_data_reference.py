"""The loader accepts data written by the original MPCBench (real gpt-5.1 output)."""

from __future__ import annotations

import pytest

from mpcbench_async.mpcbench import SOURCES, load_schemas
from mpcbench_async.mpcbench._data import load_scenario_data
from tests.conftest import REPO, reference_dir

SCENARIOS = ["scenario_A", "scenario_noise05_depth05", "scenario_noise0_depth0", "scenario_noise0_depth1",
             "scenario_noise1_depth0", "scenario_noise1_depth1"]


@pytest.fixture(scope="module")
def data_dir():
    return reference_dir("mpcbench_v1", "data")


class TestReferenceData:
    def test_all_42_files_are_present(self, data_dir):
        """The reference holds 6 scenarios × 7 files."""
        assert 42 == len(list(data_dir.glob("*.json")))

    @pytest.mark.parametrize("scenario_id", SCENARIOS)
    def test_every_file_loads_without_dropping_records(self, data_dir, scenario_id):
        """Each scenario's 7 files load; every source record is kept exactly as written."""
        import orjson

        data = load_scenario_data(data_dir, scenario_id, schemas=load_schemas(str(REPO / "schemas")))
        for name in SOURCES:
            on_disk = orjson.loads((data_dir / f"{scenario_id}_{name}.json").read_bytes())
            assert on_disk == data.sources[name]
        assert data.reference_now.tzinfo is not None
        assert "America/New_York" == data.timezone_name or "Asia/Seoul" == data.timezone_name

    def test_missing_fields_are_derived_with_one_warning_each(self, data_dir):
        """An integer seed, a missing project_key and reference now are normalised, one warning each naming file
        and field."""
        data = load_scenario_data(data_dir, "scenario_noise0_depth0")
        path = data_dir / "scenario_noise0_depth0_world_state.json"
        assert [
            f"{path}: $.sub_scenarios_expanded[0].seed: int 12345 converted to a string",
            f"{path}: $.projects[0].project_key: missing; derived 'MP' from the Jira projects",
            f"{path}: $.reference_now: missing; derived from the request that starts the storyline, "
            "$.sub_scenarios_expanded[0].events[0] (2025-01-06T10:02:00-05:00)",
        ] == data.warnings
        assert "MP" == data.world_state["projects"][0]["project_key"]

    def test_integer_seed_becomes_a_string(self, data_dir):
        """An integer seed inside the expanded sub-scenarios is normalised to a string, with a warning."""
        data = load_scenario_data(data_dir, "scenario_noise1_depth1")
        assert "847291" == data.world_state["sub_scenarios_expanded"][0]["seed"]
        assert any("$.sub_scenarios_expanded[0].seed: int 847291 converted to a string" in w for w in data.warnings)
