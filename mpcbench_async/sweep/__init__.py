"""Sweeps: plan units, run agents and judges pipelined and resumably, summarise the results."""

from ._experiment import open_experiment, plan_fingerprint, record_experiment_keys, write_manifest
from ._plan import AgentUnit, JudgeUnit, SweepPlan, build_plan
from ._records import AgentRunRecord, Fingerprint, JudgeRecord, Manifest
from ._runner import Runner, SweepStats
from ._summary import AxisStats, ModelSummary, Summary, render_markdown, render_table, summarize

__all__ = [
    "AgentRunRecord",
    "AgentUnit",
    "AxisStats",
    "Fingerprint",
    "JudgeRecord",
    "JudgeUnit",
    "Manifest",
    "ModelSummary",
    "Runner",
    "SweepPlan",
    "Summary",
    "SweepStats",
    "build_plan",
    "open_experiment",
    "plan_fingerprint",
    "record_experiment_keys",
    "render_markdown",
    "render_table",
    "summarize",
    "write_manifest",
]
