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

from ..runtime import iter_jsonl, key_view
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


def _has_ok(path: Path, record_type: type[msgspec.Struct]) -> dict[str, bool]:
    """Each key with a record in ``path``: whether any of its records is ok (only keys and statuses are read)."""
    found: dict[str, bool] = {}
    for record in iter_jsonl(path, type_=key_view(record_type), warn=False):
        found[record.key] = found.get(record.key, False) or record.status == "ok"
    return found


def plan_outcome(out_dir: str | Path, plan: SweepPlan) -> Outcome:
    """The agent runs and judgements of ``plan`` as they stand in ``out_dir``."""
    runs = _has_ok(Path(out_dir) / "runs.jsonl", AgentRunRecord)
    judges = _has_ok(Path(out_dir) / "judgements.jsonl", JudgeRecord)
    outcome = Outcome()
    for unit in plan.agent_units():
        outcome.count(runs.get(unit.key))
        for judge in plan.judge_units(unit.key):
            outcome.count(judges.get(judge.key))
    return outcome


def tariff_outcome(cases: int, records: Sequence[TariffCaseRecord]) -> Outcome:
    """``cases`` tariff cases, of which ``records`` are the latest records (``tariff.run_cases``)."""
    ok = sum(r.status == "ok" for r in records)
    return Outcome(units=cases, ok=ok, failed=len(records) - ok, not_run=cases - len(records))
