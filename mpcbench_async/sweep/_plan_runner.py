"""``sweep.Runner``: the generic ``runner.Runner`` plus the MPCBench plan, for library users who run a plan.

``runner.Runner`` knows no benchmark; a sweep plan needs the agent and judge
prompts and the judge's attempts, which belong to ``MPCBenchSuite``. This class
keeps them here so ``Runner(config, prompts=..., out_dir=...)`` and
``runner.sweep(plan)`` / ``await runner.run(plan)`` read as they always have::

    async with Runner(config, prompts=prompts, out_dir="reports/sweeps/x") as runner:
        async with runner.sweep(plan) as records:
            async for record in records:
                print(record.kind, record.key, record.status)
"""

from __future__ import annotations

from typing import Any

from .._exceptions import BenchError
from ..llm import ModelConfig
from ..mpcbench import PromptConfig
from ..runner import Runner as SuiteRunner
from ..runner import SweepStats, SweepStream
from ._mpcbench_suite import MPCBenchSuite
from ._plan import SweepPlan

__all__ = ["Runner"]


class Runner(SuiteRunner):
    """``runner.Runner`` (every setting of it) with ``prompts`` and ``judge_attempts`` for ``MPCBenchSuite``."""

    def __init__(self, config: ModelConfig, *, prompts: PromptConfig | None = None, judge_attempts: int = 3,
                 **settings: Any) -> None:
        super().__init__(config, **settings)
        self.prompts, self.judge_attempts = prompts, judge_attempts

    def mpcbench_suite(self, plan: SweepPlan) -> MPCBenchSuite:
        """``plan`` as a suite for ``run_suites``, with this runner's prompts and judge attempts."""
        if self.prompts is None:
            raise BenchError("Runner.sweep() needs the agent and judge prompts: Runner(config, prompts=...)")
        return MPCBenchSuite(plan, self.prompts, judge_attempts=self.judge_attempts)

    def sweep(self, plan: SweepPlan) -> SweepStream:
        """Start ``plan``; return the stream of its records as units finish (``runner.Runner.stream``)."""
        if self._tg is None or self.client is None:
            raise BenchError("Runner.sweep() needs `async with Runner(...) as runner:` first")
        return self.stream(self.mpcbench_suite(plan))

    async def run(self, plan: SweepPlan) -> SweepStats:
        """Run ``plan`` to the end (or to an interrupt) and return the counters."""
        async with self.sweep(plan) as records:
            async for _ in records:
                pass
        if self.executor_error is not None:
            raise self.executor_error
        return self.stats
