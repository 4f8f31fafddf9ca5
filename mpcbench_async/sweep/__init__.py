"""Sweeps: plan units, run agents and judges pipelined and resumably, drive other suites, summarise the results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ._errors import hint_for
    from ._experiment import open_experiment, plan_fingerprint, record_case_keys, record_experiment_keys, write_manifest
    from ._outcome import Outcome, plan_outcome, tariff_outcome
    from ._plan import AgentUnit, JudgeUnit, SweepPlan, build_plan, check_output_dir
    from ._records import AgentRunRecord, Fingerprint, JudgeRecord, Manifest
    from ._render import render_markdown, render_table
    from ._runner import Runner, SweepStats, SweepStream
    from ._suite import Suite, Unit
    from ._suites import CaseUnit, TariffSuite
    from ._summary import AxisStats, ModelSummary, Summary, summarize
    from ._table import RunRow, kept_runs

__all__ = [
    "AgentRunRecord",
    "AgentUnit",
    "AxisStats",
    "CaseUnit",
    "Fingerprint",
    "JudgeRecord",
    "JudgeUnit",
    "Manifest",
    "ModelSummary",
    "Outcome",
    "Runner",
    "RunRow",
    "SweepPlan",
    "Suite",
    "Summary",
    "SweepStats",
    "SweepStream",
    "TariffSuite",
    "Unit",
    "build_plan",
    "hint_for",
    "kept_runs",
    "check_output_dir",
    "open_experiment",
    "plan_fingerprint",
    "plan_outcome",
    "record_case_keys",
    "record_experiment_keys",
    "render_markdown",
    "render_table",
    "summarize",
    "tariff_outcome",
    "write_manifest",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
