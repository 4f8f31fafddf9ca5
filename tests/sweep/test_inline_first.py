"""A normal sweep hands no tool call and no answer's checks to a thread (issue 31): both run on the event loop
within their budget, and every record is what the threads alone would have written.

Budgets are counted on ``StepClock``s (time that moves only at checkpoints), so whether a call stays inline is the
code's doing, not the machine's.
"""

from __future__ import annotations

from pathlib import Path

from mpcbench_async.mpcbench import MPCBenchSuite
from mpcbench_async.mpcbench.tools import ToolPool, _execution
from mpcbench_async.runner import Runner
from tests.mpcbench.test_tool_execution import StepClock
from tests.sweep.test_tool_isolation import ORACLE, plan_for, units


async def sweep(out: Path, pool: ToolPool, check_step: float) -> tuple[int, int]:
    """A sweep of the oracle over 10 shipped tasks; (tool calls, checks) handed to threads."""
    config, prompts, plan = plan_for([ORACLE])
    suite = MPCBenchSuite(plan, prompts)
    agents = suite.stages[0]
    agents.clock = StepClock(check_step)
    async with Runner(config, out_dir=out) as runner:
        await runner.run(suite)
    return pool._threads.submitted, agents._checks.submitted


async def test_a_normal_sweep_runs_its_tools_and_checks_on_the_loop_with_the_same_records(tmp_path, monkeypatch):
    """With 2 ms budgets on clocks moving 1 µs per checkpoint, every tool call and every answer's checks finish
    inline: nothing reaches a thread. Sent to threads instead (no inline budget for the tools, a clock passing
    the checks' budget at their first checkpoint: each reading passes one), the same sweep hands all 82 tool calls
and 10 readings to threads and writes the same runs, checks and judgements."""
    inline_pool = ToolPool(clock=StepClock(1e-6), memo=False)  # every call runs: none answered from memory
    monkeypatch.setattr(_execution, "_default_pool", inline_pool)
    assert (0, 0) == await sweep(tmp_path / "inline", inline_pool, 1e-6)

    threaded_pool = ToolPool(inline_s=0, memo=False)
    monkeypatch.setattr(_execution, "_default_pool", threaded_pool)
    tools, checks = await sweep(tmp_path / "threads", threaded_pool, 1.0)

    inline = units(tmp_path / "inline", ORACLE)
    calls = sum(len(u["calls"]) for u in inline.values())
    assert (10, {"ok"}) == (len(inline), {u["status"] for u in inline.values()})
    assert (82, 82, 10) == (calls, tools, checks)
    assert inline == units(tmp_path / "threads", ORACLE)
