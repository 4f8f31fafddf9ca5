"""Data generation as a suite through the Runner: resume by record and by file, --force, poison scenarios.

Every run goes through ``Runner.run_suites([GenerationSuite(...)])`` against an in-process sim, so model
calls are counted where they arrive.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import orjson
import pytest

from mpcbench_async.llm import ModelConfig
from mpcbench_async.mpcbench import (
    GenerationRecord,
    GenerationSuite,
    Scenario,
    load_prompts,
    load_scenario,
    load_schemas,
)
from mpcbench_async.records import UnitRecord
from mpcbench_async.runner import Outcome, Runner
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from tests.conftest import REPO

SCHEMAS = load_schemas(str(REPO / "schemas"))
PROMPTS = load_prompts(REPO / "prompt_config.json")
NAMES = ("world_state", "slack", "gmail", "calendar", "contacts", "jira", "drive")
SC01, SC02 = (load_scenario(REPO / "scenarios" / f"{name}.json")
              for name in ("sc01_berth_appointments", "sc02_clinic_intake"))


async def generate(sim: SimServer, tmp_path: Path, scenarios: list[Scenario], **options) -> tuple[
        GenerationSuite, Runner, list[Outcome], int]:
    """One run into tmp_path/data (records in tmp_path/logs): the suite, the runner, outcomes and sim calls made."""
    config = ModelConfig.from_dict({"defaults": {"base_url": sim.base_url}})
    suite = GenerationSuite(scenarios, model="sim/generator", config=config, schemas=SCHEMAS, prompts=PROMPTS,
                            data_dir=tmp_path / "data", **options)
    before = sim.stats.total_completed
    async with Runner(config, out_dir=tmp_path / "logs") as runner:
        outcomes = await runner.run_suites([suite])
    return suite, runner, outcomes, sim.stats.total_completed - before


def statuses(suite: GenerationSuite) -> list[tuple[str, str, list[str]]]:
    """Each scenario's latest record: its id, status and the status of each file."""
    return [(r.scenario_id, r.status, [f"{o.name}:{o.status}" for o in r.outcomes]) for r in suite.records]


def records(tmp_path: Path) -> list[GenerationRecord]:
    return read_jsonl(tmp_path / "logs" / "generation.jsonl", type_=GenerationRecord)[0]


def written(*scenario_ids: str) -> list[str]:
    return sorted(f"{s}_{name}.json" for s in scenario_ids for name in NAMES)


def on_disk(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "data").glob("*.json"))


class TestResume:
    async def test_a_second_run_makes_no_call_and_a_third_is_skipped_by_the_runner(self, sim, tmp_path):
        """Run 1 writes 14 files (14 calls); run 2 finds them all valid (0 calls); run 3 skips both units whole."""
        suite, runner, outcomes, calls = await generate(sim, tmp_path, [SC01, SC02])
        assert (14, [Outcome(units=2, ok=2)], written(SC01.scenario_id, SC02.scenario_id)) == (
            calls, outcomes, on_disk(tmp_path))
        assert [(s.scenario_id, "ok", [f"{n}:written" for n in NAMES]) for s in (SC01, SC02)] == statuses(suite)
        assert [7, 7] == [r.calls for r in suite.records]
        shipped = {name: (REPO / "data" / name).read_bytes() for name in on_disk(tmp_path)}
        assert shipped == {name: (tmp_path / "data" / name).read_bytes() for name in on_disk(tmp_path)}

        suite, runner, outcomes, calls = await generate(sim, tmp_path, [SC01, SC02])
        assert (0, [Outcome(units=2, ok=2)], 0) == (calls, outcomes, runner.stats.cases_skipped)
        assert [(s.scenario_id, "ok", [f"{n}:skipped" for n in NAMES]) for s in (SC01, SC02)] == statuses(suite)

        third, runner, outcomes, calls = await generate(sim, tmp_path, [SC01, SC02])
        assert (0, [Outcome(units=2, ok=2)], 2, 0) == (calls, outcomes, runner.stats.cases_skipped,
                                                       runner.stats.calls)
        assert statuses(suite) == statuses(third)  # the latest records are the second run's
        assert 4 == len(records(tmp_path))
        assert shipped == {name: (tmp_path / "data" / name).read_bytes() for name in on_disk(tmp_path)}

    async def test_a_deleted_file_is_generated_again_alone(self, sim, tmp_path):
        """After a complete run (and one the Runner skipped), deleting one source costs exactly its one call."""
        for _ in range(3):
            await generate(sim, tmp_path, [SC01])
        (tmp_path / "data" / f"{SC01.scenario_id}_jira.json").unlink()
        suite, runner, _, calls = await generate(sim, tmp_path, [SC01])
        assert (1, 0) == (calls, runner.stats.cases_skipped)
        assert ["world_state:skipped", "jira:written"] == [f"{o.name}:{o.status}" for o in suite.records[0].outcomes
                                                           if o.name in ("world_state", "jira")]
        assert (REPO / "data" / f"{SC01.scenario_id}_jira.json").read_bytes() == (
            tmp_path / "data" / f"{SC01.scenario_id}_jira.json").read_bytes()

    async def test_a_changed_file_reruns_its_scenario_and_is_reported(self, sim, tmp_path):
        """A file broken by hand after the runs is checked again (the key hashes the files): an error naming it."""
        for _ in range(2):
            await generate(sim, tmp_path, [SC01])
        path = tmp_path / "data" / f"{SC01.scenario_id}_contacts.json"
        path.write_bytes(b'{"contacts": []}')
        suite, runner, outcomes, calls = await generate(sim, tmp_path, [SC01])
        assert (0, 0, [Outcome(units=1, failed=1)]) == (calls, runner.stats.cases_skipped, outcomes)
        record = suite.records[0]
        assert ("error", "GenerationError") == (record.status, record.error_class)
        assert f"{path}: existing file is invalid ($.contacts: [] should be non-empty); rerun with --force to " \
               "regenerate" == record.error_message
        assert b'{"contacts": []}' == path.read_bytes()


class TestForce:
    async def test_force_regenerates_every_file_on_every_run(self, sim, tmp_path):
        """--force is never skipped by its record: each forced run makes all seven calls again."""
        _, _, _, first = await generate(sim, tmp_path, [SC01])
        calls = [first]
        for _ in range(2):
            suite, runner, outcomes, made = await generate(sim, tmp_path, [SC01], force=True)
            calls.append(made)
            assert (0, [Outcome(units=1, ok=1)]) == (runner.stats.cases_skipped, outcomes)
            assert [f"{n}:written" for n in NAMES] == statuses(suite)[0][2]
        assert [7, 7, 7] == calls
        assert 3 == len({r.key for r in records(tmp_path)})


class TestPoison:
    async def test_a_scenario_the_model_cannot_do_fails_alone_with_a_record_naming_it(self, sim, tmp_path):
        """A description that breaks the prompt's JSON block: that scenario's record is an error, the other is ok."""
        poison = msgspec.structs.replace(SC02, scenario_id="sc_poison", description="see ``` below")
        suite, runner, outcomes, calls = await generate(sim, tmp_path, [poison, SC01], max_repairs=0)
        assert ([Outcome(units=2, ok=1, failed=1)], 8) == (outcomes, calls)
        assert [("sc_poison", "error", ["world_state:error"]), (SC01.scenario_id, "ok", [f"{n}:written" for n in NAMES])
                ] == statuses(suite)
        assert ("GenerationError", "sc_poison world_state: model 'sim/generator' gave invalid data after 0 repair "
                "attempts: the reply is not a JSON object (unexpected character, expected a JSON value: line 1 "
                "column 1 (char 0))") == (
            suite.records[0].error_class, suite.records[0].error_message)
        assert written(SC01.scenario_id) == on_disk(tmp_path)

    async def test_a_scenario_whose_unit_crashes_fails_alone_with_the_suites_error_record(self, sim, tmp_path):
        """A directory where the world state is to be written: the unit raises; the Runner makes its error record."""
        (tmp_path / "data" / f"{SC02.scenario_id}_world_state.json").mkdir(parents=True)
        suite, runner, outcomes, _ = await generate(sim, tmp_path, [SC02, SC01], force=True)
        assert [Outcome(units=2, ok=1, failed=1)] == outcomes
        crashed = suite.records[0]
        assert (SC02.scenario_id, "error", "IsADirectoryError", []) == (
            crashed.scenario_id, crashed.status, crashed.error_class, crashed.outcomes)
        assert (crashed.error_message or "").startswith("[Errno 21] Is a directory")
        assert (SC01.scenario_id, "ok") == (suite.records[1].scenario_id, suite.records[1].status)


class TestKeys:
    def test_a_key_hashes_what_determines_the_output_and_the_files(self, tmp_path):
        """Same inputs and files: same key; another max_repairs, prompt, model setting or source list: another."""
        for name in NAMES:
            (tmp_path / f"{SC01.scenario_id}_{name}.json").write_bytes((REPO / "data" / f"{SC01.scenario_id}_"
                                                                        f"{name}.json").read_bytes())
        config = ModelConfig.from_dict({"defaults": {"base_url": "http://127.0.0.1:9/v1"}})

        def key(config: ModelConfig = config, **options) -> str:
            options = {"max_repairs": 3, "prompts": PROMPTS, **options}
            suite = GenerationSuite([SC01], model="sim/generator", config=config, schemas=SCHEMAS,
                                    data_dir=tmp_path, **options)
            return suite.units()[0].key

        base = key()
        hotter = ModelConfig.from_dict({"defaults": {"base_url": "http://127.0.0.1:9/v1",
                                                     "params": {"temperature": 0.5}}})
        other_prompts = msgspec.structs.replace(PROMPTS, repair=msgspec.structs.replace(PROMPTS.repair, user="fix"))
        others = [key(max_repairs=2), key(prompts=other_prompts), key(hotter), key(sources=["slack"])]
        assert base == key() and base.startswith("gen-")
        assert 4 == len(set(others) - {base})
        (tmp_path / f"{SC01.scenario_id}_drive.json").write_bytes(b"{}")
        assert base != key()

    def test_a_missing_file_or_force_makes_a_fresh_key_each_time(self, tmp_path):
        config = ModelConfig.from_dict({})
        suites = [GenerationSuite([SC01], model="sim/generator", config=config, schemas=SCHEMAS, prompts=PROMPTS,
                                  data_dir=tmp_path) for _ in range(2)]
        assert suites[0].units()[0].key != suites[1].units()[0].key

    def test_unknown_sources_are_refused(self):
        with pytest.raises(ValueError, match="unknown source"):
            GenerationSuite([SC01], model="m", config=ModelConfig.from_dict({}), schemas=SCHEMAS, prompts=PROMPTS,
                            data_dir="data", sources=["fax"])


def test_the_generation_record_shares_the_unit_fields():
    fields = GenerationRecord.__struct_fields__[:8]
    kind = next(f.default for f in msgspec.structs.fields(GenerationRecord) if f.name == "kind")
    assert (True, ("key", "status", "retryable", "error_class", "error_message", "started_at", "finished_at",
                   "kind"), "generate") == (issubclass(GenerationRecord, UnitRecord), fields, kind)
    assert orjson.loads(msgspec.json.encode(GenerationRecord(key="k", status="ok", scenario_id="s", model="m")))[
        "kind"] == "generate"
