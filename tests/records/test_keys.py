"""Unit keys: one helper for every suite, and every key byte-identical to what earlier versions wrote.

Resume skips a unit when its key is already on disk, so a key that changes silently reruns (and pays
for) every unit of an existing directory. The expected values below were computed before the suites
shared one helper; they must never change without a migration.
"""

from __future__ import annotations

import msgspec
import orjson
import pytest

from mpcbench_async._prompts import PromptTemplate
from mpcbench_async.llm import LLMClient, MockTransport, ModelConfig
from mpcbench_async.mpcbench import DataGenerator, PromptConfig, Scenario, build_plan, load_schemas
from mpcbench_async.mpcbench._generation import GenerationError
from mpcbench_async.records import unit_key
from mpcbench_async.tariff import Case
from mpcbench_async.tariff._runner import case_keys
from tests.conftest import REPO

CONFIG = ModelConfig.from_dict({"agent_models": ["sim/echo", "gpt-x"], "judge_models": ["sim/judge"],
                                "defaults": {"base_url": "http://127.0.0.1:9/v1"},
                                "models": {"gpt-x": {"params": {"temperature": 0.2}}}})
PROMPTS = PromptConfig(**{name: PromptTemplate(system=f"{name} system", user=f"{name} user")
                          for name in ("world_state", "source", "repair", "agent", "judge",
                                       "tariff_proposer", "tariff_critique")})
SOURCES = ("slack", "gmail", "calendar", "contacts", "jira", "drive")

RUNS = {("t0", "sim/echo", 0): "run-423ae61ea444d7c1", ("t0", "gpt-x", 0): "run-a73f2168c72b196c",
        ("t1", "sim/echo", 0): "run-486a18b3b20ec90e", ("t1", "gpt-x", 0): "run-32ad453408b285fa",
        ("t0", "sim/echo", 1): "run-74c202fc779b8ce6", ("t0", "gpt-x", 1): "run-e24bb119d8098d60",
        ("t1", "sim/echo", 1): "run-a81d2881d7e00a67", ("t1", "gpt-x", 1): "run-3e14d96f6f422f2d"}
JUDGES = {("t0", "sim/echo", 0): "judge-12701f02e3c67c47", ("t0", "gpt-x", 0): "judge-25b299d1903bee56",
          ("t1", "sim/echo", 0): "judge-677b3059c6e8a463", ("t1", "gpt-x", 0): "judge-b42877e64c3bbfed",
          ("t0", "sim/echo", 1): "judge-34bbc73c609197f4", ("t0", "gpt-x", 1): "judge-a6af9e781865f29c",
          ("t1", "sim/echo", 1): "judge-e084634d8ad0f260", ("t1", "gpt-x", 1): "judge-1cf5782357698769"}
# Tariff case keys changed once, deliberately (issue 24): the scoring mode, the versions of the gates and of the
# scoring rules and, in fixture mode, the fixture's content are part of the key, so that a changed rule or fixture
# re-verifies its cases instead of reusing records scored under other rules. Results files written before rerun
# their cases once (fixture mode: offline; live: through the response cache when one is used).
CASES = {"fixture": ["case-fcf9c95f61f9a4b2"], "live": ["case-3a6f7f2f9ef11c21"], "record": ["case-883464952d176f84"]}
GENERATION = ["gen/sc_a/world_state/c6b7ab535e931ff5/try0", "gen/sc_a/slack/e290bd0576cc5064/try0"]


class TestUnitKey:
    def test_sha256_of_nul_terminated_parts_cut_to_16_hex_digits(self):
        """Each part (str or bytes) is followed by a NUL, so ("ab", "c") and ("a", "bc") differ."""
        assert "8fb20ef63ced4145" == unit_key("a", b"b")
        assert "run-8fb20ef63ced4145" == unit_key("a", b"b", prefix="run-")
        assert unit_key("ab", "c") != unit_key("a", "bc")

    def test_without_a_nul_after_the_last_part(self):
        """The framing tariff case keys were first written with: NUL between parts only."""
        assert "59b271ae1bbcb1d3" == unit_key("a", b"b", nul_after_last=False)


def _write_workspace(root):
    """Two tasks on one scenario, every byte fixed here (not by a helper that may change)."""
    world = {"scenario_id": "sc_a", "reference_now": "2026-03-24T11:00:00+00:00",
             "global_settings": {"timezone": "Europe/London", "workday_start": "09:00", "workday_end": "18:00"}}
    (root / "data").mkdir()
    (root / "data" / "sc_a_world_state.json").write_bytes(orjson.dumps(world))
    for name in SOURCES:
        (root / "data" / f"sc_a_{name}.json").write_bytes(b"{}")
    (root / "tasks" / "planning").mkdir(parents=True)
    for i in range(2):
        task = {"task_id": f"t{i}", "scenario_id": "sc_a", "task_type": "planning",
                "user_prompt": f"Task number {i}: find the release review details.",
                "answer_requirements": ["Names the review and its length."]}
        (root / "tasks" / "planning" / f"t{i}.json").write_bytes(orjson.dumps(task))


class TestSuiteKeysAreUnchanged:
    def test_sweep_run_and_judge_keys(self, tmp_path):
        _write_workspace(tmp_path)
        plan = build_plan(config=CONFIG, prompts=PROMPTS, tasks_dir=tmp_path / "tasks", data_dir=tmp_path / "data",
                          scenarios_dir=tmp_path / "scenarios", trials=2)
        runs = {(u.task_id, u.model, u.trial): u.key for u in plan.agent_units()}
        judges = {run: plan.judge_units(key)[0].key for run, key in runs.items()}
        assert RUNS == runs
        assert JUDGES == judges

    def test_tariff_case_keys(self):
        case = msgspec.convert({"id": "c1", "pack_id": "p", "case_type": "positive", "difficulty": "easy",
                                "input": {"input": "cotton t-shirt"}, "expected": {"preferred_hts": ["6109.10"]}},
                               Case)
        keys = {mode: [*case_keys([case], mode=mode, model=model, config=CONFIG, prompts=PROMPTS)]
                for mode, model in (("fixture", "fixture"), ("live", "gpt-x"), ("record", "sim/echo"))}
        assert CASES == keys

    async def test_generation_keys(self, tmp_path):
        """The world-state and source keys reach the client as each call's key."""
        keys: list[str] = []

        def handler(endpoint, request):
            keys.append(request.key)
            return {"choices": [{"message": {"role": "assistant", "content": "not json"}, "finish_reason": "stop"}]}

        scenario = msgspec.convert({"scenario_id": "sc_a", "description": "d", "noise_level": 0.5, "depth": 0.5,
                                    "global_settings": {"timezone": "Europe/London", "workday_start": "09:00",
                                                        "workday_end": "18:00"},
                                    "people": []}, Scenario)
        async with LLMClient(CONFIG, transport=MockTransport(handler)) as client:
            generator = DataGenerator(client, model="gpt-x", schemas=load_schemas(str(REPO / "schemas")),
                                      prompts=PROMPTS, data_dir=tmp_path, max_repairs=0)
            with pytest.raises(GenerationError):
                await generator.world_state(scenario)
            await generator.source(scenario, {"scenario_id": "sc_a"}, "slack", {}, set())
        assert GENERATION == keys
