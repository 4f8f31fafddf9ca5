"""How a plan stands after a run, read from the records on disk: what a sweep's exit code reports.

The answer describes the plan, not the invocation: a unit counts as ok when any
run (this one or an earlier one) left an ok record for its key, and as failed
when its records are all errors — also errors kept from an earlier run that a
resume did not retry. So a rerun that changes nothing reports what the first
run reported.
"""

from __future__ import annotations

import msgspec

__all__ = ["Outcome"]


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
