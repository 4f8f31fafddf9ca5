"""The generation pipeline with sim/generator: shipped data regenerates exactly, runs concurrently, resumes."""

from __future__ import annotations

import signal
import sys

import anyio
import orjson

from mpcbench_async.llm import ModelConfig
from mpcbench_async.mpcbench import GenerationSuite, list_scenarios, load_prompts, load_scenario, load_schemas
from mpcbench_async.runner import Runner
from mpcbench_async.sim import FaultSpec, SimServer
from tests.conftest import REPO

SOURCES = ("slack", "gmail", "calendar", "contacts", "jira", "drive")


class TestShippedData:
    async def test_regenerating_every_scenario_is_byte_identical_and_concurrent(self, tmp_path):
        """All 8 scenarios through the real pipeline reproduce data/ byte for byte, with overlapping calls."""
        scenarios = [load_scenario(p) for p in list_scenarios(REPO / "scenarios")]
        assert 8 <= len(scenarios)
        async with SimServer(seed=3, defaults=FaultSpec(latency_ms=20)) as sim:
            config = ModelConfig.from_dict({"defaults": {"base_url": sim.base_url}})
            suite = GenerationSuite(scenarios, model="sim/generator", config=config,
                                    schemas=load_schemas(str(REPO / "schemas")),
                                    prompts=load_prompts(REPO / "prompt_config.json"), data_dir=tmp_path)
            async with Runner(config, out_dir=tmp_path / "logs", concurrency=8) as runner:
                await runner.run_suites([suite])
        outcomes = [o for record in suite.records for o in record.outcomes]
        assert {"written"} == {o.status for o in outcomes}
        shipped = sorted(p.name for p in (REPO / "data").glob("*.json"))
        assert shipped == sorted(p.name for p in tmp_path.glob("*.json"))
        for name in shipped:
            assert (REPO / "data" / name).read_bytes() == (tmp_path / name).read_bytes(), name
        assert sim.stats.max_in_flight > 1
        assert 7 * len(scenarios) == sim.stats.total_completed

    def test_shipped_data_is_valid_and_consistent(self):
        """Every shipped file validates against its schema; calendar attendees and Slack users are contacts."""
        from mpcbench_async.mpcbench._consistency import cross_source_problems

        schemas = load_schemas(str(REPO / "schemas"))
        for path in list_scenarios(REPO / "scenarios"):
            docs = {}
            for name in ("world_state", *SOURCES):
                assert [] == schemas.check_file(REPO / "data" / f"{path.stem}_{name}.json", name)
                docs[name] = orjson.loads((REPO / "data" / f"{path.stem}_{name}.json").read_bytes())
            assert {} == cross_source_problems(docs)


GENERATE = "import sys; from mpcbench_async.cli import main; raise SystemExit(main(sys.argv[1:]))"


class TestResumeAfterKill:
    async def test_killed_after_three_sources_resumes_with_exactly_three_calls(self, tmp_path):
        """SIGKILL after three of six source files are written; the rerun makes exactly three source calls."""
        release = anyio.Event()
        admitted: list[str] = []

        async def gate(key: str) -> None:
            if "/world_state/" in key:
                return
            admitted.append(key)
            if len(admitted) > 3:
                await release.wait()  # hold the other three sources open until the client is gone

        async with SimServer(seed=1, gate=gate) as sim:
            config = tmp_path / "model_config.json"
            config.write_bytes(orjson.dumps({"data_generation_model": "sim/generator",
                                             "defaults": {"base_url": sim.base_url}}))
            cmd = [sys.executable, "-c", GENERATE, "generate", "sources", "--scenario-id", "sc01_berth_appointments",
                   "--config", str(config), "--prompts", str(REPO / "prompt_config.json"),
                   "--scenarios-dir", str(REPO / "scenarios"), "--schemas-dir", str(REPO / "schemas"),
                   "--data-dir", str(tmp_path / "data"), "--logs-dir", str(tmp_path / "logs")]
            async with await anyio.open_process(cmd) as proc:
                written = 0
                async for chunk in proc.stderr:  # one progress line per file as it is written
                    written += chunk.count(b": written (")
                    if written >= 4:  # the world state and three sources
                        proc.send_signal(signal.SIGKILL)
                        break
                assert -signal.SIGKILL == await proc.wait()
            present = sorted(p.name for p in (tmp_path / "data").glob("*.json"))
            assert 4 == len(present)
            before = dict(sim.stats.completed)
            sim.gate = None
            release.set()
            async with await anyio.open_process(cmd) as proc:
                assert 0 == await proc.wait()
        new_calls = {k: n for k, n in sim.stats.completed.items() if n > before.get(k, 0)}
        assert 3 == len(new_calls)
        assert all("/world_state/" not in k for k in new_calls)
        assert 7 == len(list((tmp_path / "data").glob("*.json")))
