"""A sweep launches its embedded sim child before it plans (issue 31), and never leaves it behind.

The child's interpreter start-up and imports (0.3–1 s) used to begin on the sweep's first call, after the
plan, the checks and the manifest, so a sweep's wall time paid them in full. Asserted by order of events,
not by time: a suite's factory (called while the sweep plans) sees the child already running. The child is
found in ``/proc`` (this process's children running the sim child's program), the real process, not a mock.
The command line launches it even earlier, before it imports the sweep's modules.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mpcbench_async import InputError
from mpcbench_async.runner import SUITES, SuiteRequest, register_suite
from mpcbench_async.sweep import run_sweep
from mpcbench_async.testing import write_workspace
from tests.sweep_options import sweep_options


@pytest.fixture(autouse=True)
def process_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MPCBENCH_SIM", "process")  # the suite's default is inprocess (tests/conftest.py)


def sim_children() -> list[int]:
    """The pids of this process's children running the sim child (``/proc``: parent pid and command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat, cmdline = (entry / "stat").read_text(), (entry / "cmdline").read_bytes()
        except (OSError, ValueError):  # not a process, or gone meanwhile
            continue
        if int(stat.rpartition(")")[2].split()[1]) == os.getpid() and b"_sim_child" in cmdline:
            found.append(int(entry.name))
    return found


@pytest.fixture
def planning_sees() -> list[int]:
    """A suite ``probe`` whose factory notes how many sim children run while the sweep plans; it has no units."""
    seen: list[int] = []

    def factory(request: SuiteRequest) -> list[object]:
        seen.append(len(sim_children()))
        if request.run.trials == 2:
            raise InputError("probe: a bad input, found while planning")
        return []

    register_suite("probe", factory)
    yield seen
    SUITES.pop("probe")


async def test_the_sim_child_runs_while_the_sweep_plans_and_is_stopped_after(tmp_path, planning_sees):
    """The agents and judge are sim models without a ``base_url``: the child is launched before the suites are
    built, and stopped at the end although no call reached it."""
    root = write_workspace(tmp_path / "ws", agent_models=["sim/echo"], judge_models=["sim/judge"])
    await run_sweep(sweep_options(config=root / "model_config.json", out=tmp_path / "out", suites=["probe"],
                                  handle_signals=False))
    assert ([1], []) == (planning_sees, sim_children())


async def test_a_sweep_refused_while_planning_leaves_no_sim_child(tmp_path, planning_sees):
    root = write_workspace(tmp_path / "ws", agent_models=["sim/echo"], judge_models=["sim/judge"])
    with pytest.raises(InputError, match=r"^probe: a bad input, found while planning$"):
        await run_sweep(sweep_options(config=root / "model_config.json", out=tmp_path / "out", suites=["probe"],
                                      trials=2, handle_signals=False))
    assert ([1], [], False) == (planning_sees, sim_children(), (tmp_path / "out").exists())


async def test_a_sim_behind_a_base_url_launches_no_child(tmp_path, planning_sees):
    """Models pointed at a server already running (``base_url``) need no embedded sim."""
    root = write_workspace(tmp_path / "ws", base_url="http://127.0.0.1:9/v1", agent_models=["sim/echo"],
                           judge_models=["sim/judge"])
    await run_sweep(sweep_options(config=root / "model_config.json", out=tmp_path / "out", suites=["probe"],
                                  handle_signals=False))
    assert [0] == planning_sees


def test_the_command_launches_the_sim_child_before_it_imports_the_sweep(tmp_path):
    """In a new interpreter: when the child is launched, the sweep's job module is not imported yet. The sweep
    then fails on its inputs (no tasks there): exit 2."""
    root = write_workspace(tmp_path / "ws", agent_models=["sim/echo"], judge_models=["sim/judge"])
    code = textwrap.dedent("""
        import sys
        from mpcbench_async.sim._process import SimProcessProvider
        spawn, seen = SimProcessProvider.spawn, []
        async def noting(self):
            seen.append("mpcbench_async.sweep._job" in sys.modules)
            await spawn(self)
        SimProcessProvider.spawn = noting
        from mpcbench_async.cli import main
        code = main(sys.argv[1:])
        print(f"launched with the job module imported: {seen}; exit {code}")
    """)
    done = subprocess.run([sys.executable, "-c", code, "sweep", "--config", str(root / "model_config.json"),
                           "--prompts", str(root / "prompt_config.json"), "--tasks-dir", str(tmp_path / "none"),
                           "--data-dir", str(root / "data"), "--out", str(tmp_path / "out"), "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert "launched with the job module imported: [False]; exit 2\n" == done.stdout, done.stderr
