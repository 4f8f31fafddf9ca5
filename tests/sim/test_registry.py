"""The sim's policy registry: generic policies here, benchmark policies beside their benchmark, loaded lazily."""

from __future__ import annotations

import subprocess
import sys

import orjson

from mpcbench_async.sim import _registry, has_policy, policy_names
from mpcbench_async.sim._registry import get_policy


class TestPolicyRegistry:
    def test_every_policy_is_registered_from_its_home(self):
        """Generic policies come from the sim; judge, agents, generator from mpcbench; tariff from tariff; the levels
        baselines from levels (whose variants of the agents serve only scheduling requests)."""
        homes = {name: get_policy(name).__module__ for name in policy_names()}
        assert {
            "sim/echo": "mpcbench_async.sim._policies",
            "sim/scripted": "mpcbench_async.sim._policies",
            "sim/judge": "mpcbench_async.mpcbench._sim._judge_policy",
            "sim/lazy-agent": "mpcbench_async.mpcbench._sim._judge_policy",
            "sim/oracle-agent": "mpcbench_async.mpcbench._sim._oracle",
            "sim/generator": "mpcbench_async.mpcbench._sim._procgen",
            "sim/tariff": "mpcbench_async.tariff._sim_policy",
            "sim/levels-ignore-policy": "mpcbench_async.levels._sim_policy",
            "sim/levels-ignore-comm": "mpcbench_async.levels._sim_policy",
            "sim/levels-ignore-rooms": "mpcbench_async.levels._sim_policy",
        } == homes

    def test_the_names_the_loaders_declare_are_the_names_they_register(self):
        """``has_policy`` trusts the declared names without loading (issue 31): they must be exactly the registered
        ones, or a run would pass its check for a model nobody serves (or fail it for one that exists)."""
        assert sorted(_registry._DECLARED) == policy_names()
        assert all(has_policy(name) for name in policy_names())
        assert not has_policy("sim/nobody")

    def test_checking_a_declared_name_imports_no_policy(self):
        code = ("import sys\nfrom mpcbench_async.sim import has_policy\n"
                "assert has_policy('sim/judge') and has_policy('sim/oracle-agent')\n"
                "print(sorted(m for m in sys.modules if m.endswith(('_sim', '_sim_policy', '_policies'))))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
        assert "[]" == out.stdout.strip()

    def test_a_loader_runs_once_at_the_next_lookup(self, monkeypatch):
        """A loader added by a higher layer runs before the next lookup, and only once."""
        monkeypatch.setattr(_registry, "POLICIES", dict(_registry.POLICIES))
        runs = []

        def loader() -> None:
            runs.append(1)
            _registry.register_policy("extra")(lambda request: None)

        _registry.add_policy_loader(loader)
        assert [] == runs
        assert "sim/extra" in policy_names()
        assert get_policy("sim/extra") is not None
        assert [1] == runs

    def test_looking_a_benchmark_policy_up_imports_none_of_its_modules(self):
        """A sweep checks that ``sim/judge`` and ``sim/oracle-agent`` exist (``runner.sim_model_problem``) in the
        runner's process; their modules (the judge's answer-reading rules: ~50 ms of start-up) are imported by the
        first request they serve, in the sim's process (issue 31)."""
        code = ("import sys; from mpcbench_async.runner import sim_model_problem; "
                "assert [None, None] == [sim_model_problem('sim/judge'), sim_model_problem('sim/oracle-agent')]; "
                "print(sorted(m for m in sys.modules if m.startswith('mpcbench_async.mpcbench._sim.')))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert "[]\n" == done.stdout
        policy = get_policy("sim/lazy-agent")
        assert "lazy_agent" == policy.__name__
        reply = policy({"messages": [{"role": "user", "content": "Where is the Q3 report?"}]})
        assert "(Request: Where is the Q3 report?)" in orjson.loads(reply.content)["final_answer"]
