"""How a plan stands after a run, read from the records on disk: what a sweep's exit code reports.

The answer describes the plan, not the invocation: a unit counts as ok when any
run (this one or an earlier one) left an ok record for its key, and as failed
when its records are all errors — also errors kept from an earlier run that a
resume did not retry. So a rerun that changes nothing reports what the first
run reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from ..runtime import done_keys
from ..tariff import TariffCaseRecord
from ._plan import SweepPlan
from ._records import AgentRunRecord, JudgeRecord

__all__ = ["Outcome", "plan_outcome", "tariff_outcome"]


class Outcome(msgspec.Struct, kw_only=True):
    """Units of a plan by how they stand: ok, failed (error records only) or not run (no record)."""

    units: int = 0
    ok: int = 0
    failed: int = 0
    not_run: int = 0  # no record: the sweep stopped first, or the unit's agent run failed so it was never judged

    @property
    def complete(self) -> bool:
        """Every unit of the plan has an ok record."""
        return self.ok == self.units

    def __add__(self, other: Outcome) -> Outcome:
        return Outcome(units=self.units + other.units, ok=self.ok + other.ok, failed=self.failed + other.failed,
                       not_run=self.not_run + other.not_run)

    def count(self, ok: bool | None) -> None:
        """Add one unit: ``True`` ok, ``False`` failed, ``None`` no record."""
        self.units += 1
        if ok is None:
            self.not_run += 1
        elif ok:
            self.ok += 1
        else:
            self.failed += 1


def _keys(path: Path, record_type: type[msgspec.Struct]) -> tuple[set[str], set[str]]:
    """The keys with an ok record in ``path``, and those with any record (from the done-index when trusted)."""
    entries = done_keys(path, record_type, warn=False)
    return {e.key for e in entries if e.code == "o"}, {e.key for e in entries}


def plan_outcome(out_dir: str | Path, plan: SweepPlan) -> Outcome:
    """The agent runs and judgements of ``plan`` as they stand in ``out_dir``."""
    runs_ok, runs = _keys(Path(out_dir) / "runs.jsonl", AgentRunRecord)
    judges_ok, judges = _keys(Path(out_dir) / "judgements.jsonl", JudgeRecord)
    outcome = Outcome()
    for unit in plan.agent_units():
        outcome.count(True if unit.key in runs_ok else False if unit.key in runs else None)
        for key in plan.judge_keys(unit.key):
            outcome.count(True if key in judges_ok else False if key in judges else None)
    return outcome


def tariff_outcome(cases: int, records: Sequence[TariffCaseRecord]) -> Outcome:
    """``cases`` tariff cases, of which ``records`` are the latest records (``tariff.run_cases``)."""
    ok = sum(r.status == "ok" for r in records)
    return Outcome(units=cases, ok=ok, failed=len(records) - ok, not_run=cases - len(records))
