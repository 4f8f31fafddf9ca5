"""The levels sim baselines over loopback: what ``sim/oracle-agent`` and its blind variants score, and why.

Every instance runs through ``run_levels_agent`` with an ``LLMClient`` on the seeded ``sim`` fixture: the policy
sees only the messages and the tools (the task, the participants, the tool results), never a data file. Gold is
this project's oracle on the instance. Generated sets come from ``levels.generate_level`` (deterministic by seed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mpcbench_async import levels
from mpcbench_async.levels import OracleSettings
from mpcbench_async.levels._agent import LevelsRun
from mpcbench_async.levels._answer import candidate_tuples
from mpcbench_async.levels._generate import GeneratedSet
from mpcbench_async.llm import LLMClient
from mpcbench_async.mpcbench import PromptConfig, load_prompts
from tests.conftest import REPO

SEED, COUNT = 5, 20


class Outcome:
    """One instance run by one model: its prediction, trace, gold and exact match."""

    def __init__(self, instance: dict[str, Any], run: LevelsRun, gold: list[tuple[str, ...]]) -> None:
        self.instance, self.run, self.gold = instance, run, gold
        self.exact = levels.score(gold, [tuple(p) for p in run.pred]).exact_match

    @property
    def iid(self) -> str:
        return self.instance["instance_id"]


@pytest.fixture(scope="module")
def prompts() -> PromptConfig:
    return load_prompts(REPO / "prompt_config.json")


@pytest.fixture(scope="module")
def generated() -> dict[int, GeneratedSet]:
    """20 generated instances per level, seed 5 (Asia/Seoul, week of 2026-01-19)."""
    return {level: levels.generate_level(level, COUNT, SEED) for level in (1, 2, 3)}


@pytest.fixture
def agent(make_client: Callable[..., LLMClient], prompts: PromptConfig):
    """``agent(model, world, instances)``: each instance run by ``model`` through the sim, in order."""
    client = make_client()

    async def run_all(model: str, world: dict[str, Any], instances: list[dict[str, Any]]) -> list[Outcome]:
        async def reply(messages, tools):
            return await client.chat(model, messages, tools)

        out = []
        for instance in instances:
            run = await levels.run_levels_agent(reply, world, instance, prompts)
            gold = candidate_tuples(levels.solve(world, instance).feasible_candidates, world["level"])
            out.append(Outcome(instance, run, gold))
        return out

    return run_all


def reference(upstream: Path, level: int, split: str) -> levels.LevelSet:
    return levels.load_level_set(upstream / "generate" / "output", level, split)


class TestOracleAgent:
    @pytest.mark.parametrize(("level", "split", "count"), [(1, "test", 4), (1, "exp1", 20), (3, "test", 5),
                                                           (3, "exp1", 10)])
    async def test_exact_match_on_every_reference_instance_of_levels_1_and_3(self, upstream, agent, level, split,
                                                                             count):
        """Levels 1 and 3 of the reference data state everything the oracle needs (window, duration, count,
        policy, rooms): the oracle agent answers each instance with exactly the gold, in one final answer."""
        level_set = reference(upstream, level, split)
        outcomes = await agent("sim/oracle-agent", level_set.world, level_set.instances)
        assert count == len(outcomes)
        assert [(o.iid, True, "final") for o in outcomes] == [(o.iid, o.exact, o.run.stop_reason) for o in outcomes]

    @pytest.mark.parametrize("level", [1, 2, 3])
    async def test_exact_match_on_every_generated_instance(self, generated, agent, level):
        """Generated sets say in their text what they need: 20 of 20 exact matches at each level."""
        gs = generated[level]
        outcomes = await agent("sim/oracle-agent", gs.world, gs.instances)
        assert [True] * COUNT == [o.exact for o in outcomes]

    async def test_exact_match_on_a_generated_level_2_set_across_a_dst_change(self, agent):
        """Level 2 in America/New_York, the week of 2026-03-09 (the day after the US switch to daylight time):
        20 of 20 exact matches, so offsets are read and written per date."""
        gs = levels.generate_level(2, COUNT, SEED, timezone="America/New_York", start_date="2026-03-09")
        outcomes = await agent("sim/oracle-agent", gs.world, gs.instances)
        assert [True] * COUNT == [o.exact for o in outcomes]
        assert all(c[0].endswith("-04:00") for o in outcomes for c in o.run.pred)

    async def test_reference_level_2_cannot_be_perfect(self, upstream, agent):
        """Reference level 2: 13 of 20 exact matches. The misses are exactly test B-E and exp1 005, 010, 012:
        the test tasks state no window, duration or count (and E has no feasible label: its gold is empty), and
        the exp1 misses need a policy nothing the agent reads names."""
        outcomes = []
        for split in ("test", "exp1"):
            level_set = reference(upstream, 2, split)
            outcomes += await agent("sim/oracle-agent", level_set.world, level_set.instances)
        assert 20 == len(outcomes)
        assert 13 == sum(o.exact for o in outcomes)
        assert ["instance_level2_test_B", "instance_level2_test_C", "instance_level2_test_D",
                "instance_level2_test_E", "instance_level2_exp1_005", "instance_level2_exp1_010",
                "instance_level2_exp1_012"] == [o.iid for o in outcomes if not o.exact]
        by_id = {o.iid: o for o in outcomes}
        for iid in ("instance_level2_test_B", "instance_level2_test_C", "instance_level2_test_D",
                    "instance_level2_test_E"):
            assert not any(ch.isdigit() for ch in by_id[iid].instance["task_text"])  # no time, length or count
        assert [] == by_id["instance_level2_test_E"].gold
        assert (2, 3) == (by_id["instance_level2_test_B"].instance["slots"]["num_options"],
                          len(by_id["instance_level2_test_B"].run.pred))  # the unstated count defaults to 3

    async def test_instance_012_needs_policy_4_which_nothing_the_agent_reads_names(self, upstream, agent):
        """instance_level2_exp1_012's label applies POLICY_4, yet neither the prompt nor any tool result names it
        (list_policy_ids is empty at level 2, the thread cites no section): the agent applies no policy, and its
        answer is exactly the oracle's without policy rules, which differs from the gold."""
        level_set = reference(upstream, 2, "exp1")
        [instance] = [i for i in level_set.instances if i["instance_id"] == "instance_level2_exp1_012"]
        [outcome] = await agent("sim/oracle-agent", level_set.world, [instance])
        assert "POLICY_4" == instance["slots"]["policy_id"]
        assert "POLICY_4" not in json.dumps(outcome.run.trace)
        assert {"policy_ids": []} in [json.loads(m["content"]) for m in outcome.run.trace if m["role"] == "tool"]
        blind = levels.solve(level_set.world, instance, OracleSettings(policy=False))
        assert candidate_tuples(blind.feasible_candidates, 2) == [tuple(p) for p in outcome.run.pred]
        assert not outcome.exact


class TestWeakBaselines:
    @pytest.mark.parametrize("level", [1, 2, 3])
    async def test_lazy_agent_scores_no_exact_match(self, generated, agent, level):
        """``sim/lazy-agent`` (the first N grid slots of the window, no lookups): 0 of 20 exact matches."""
        gs = generated[level]
        outcomes = await agent("sim/lazy-agent", gs.world, gs.instances)
        assert (COUNT, 0) == (len(outcomes), sum(o.exact for o in outcomes))
        assert all(o.run.stop_reason == "final" for o in outcomes)

    @pytest.mark.parametrize(("model", "level", "exact"), [
        ("sim/levels-ignore-rooms", 1, 20),
        ("sim/levels-ignore-rooms", 3, 0),
        ("sim/levels-ignore-policy", 1, 18),
        ("sim/levels-ignore-comm", 1, 20),
        ("sim/levels-ignore-comm", 2, 14),
    ])
    async def test_a_blind_variant_loses_exact_matches_where_its_constraint_class_binds(self, generated, agent,
                                                                                        model, level, exact):
        """The oracle agent blind to one constraint class, on the 20 generated instances of a level: rooms matter
        only at level 3 (all lost there, none at level 1), policies bind on 2 level-1 instances, communication
        threads on 6 level-2 instances and on none at level 1 (which has no threads)."""
        gs = generated[level]
        outcomes = await agent(model, gs.world, gs.instances)
        assert exact == sum(o.exact for o in outcomes)
