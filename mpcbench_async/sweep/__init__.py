"""Sweeps: plan units, run agents and judges pipelined and resumably, summarise the results."""

from ._plan import AgentUnit, JudgeUnit, SweepPlan, build_plan
from ._records import AgentRunRecord, JudgeRecord, Manifest
from ._runner import Runner, SweepStats

__all__ = [
    "AgentRunRecord",
    "AgentUnit",
    "JudgeRecord",
    "JudgeUnit",
    "Manifest",
    "Runner",
    "SweepPlan",
    "SweepStats",
    "build_plan",
]
