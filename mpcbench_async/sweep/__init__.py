"""Sweeps: plan units, run agents and judges pipelined and resumably, summarise the results."""

from ._plan import AgentUnit, JudgeUnit, SweepPlan, build_plan
from ._records import AgentRunRecord, JudgeRecord, Manifest
from ._runner import Runner, SweepStats
from ._summary import AxisStats, ModelSummary, Summary, render_markdown, render_table, summarize

__all__ = [
    "AgentRunRecord",
    "AgentUnit",
    "AxisStats",
    "JudgeRecord",
    "JudgeUnit",
    "Manifest",
    "ModelSummary",
    "Runner",
    "SweepPlan",
    "Summary",
    "SweepStats",
    "build_plan",
    "render_markdown",
    "render_table",
    "summarize",
]
