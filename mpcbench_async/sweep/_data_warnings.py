"""The data warnings of a sweep's scenarios (``ScenarioData.warnings``), kept beside its records.

They are found when the plan loads the data, before any call; ``data_warnings.json`` keeps them in the
sweep directory so that every summary rebuilt from the directory (``sweep``, ``summarize``) lists them.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ..mpcbench import SweepPlan
from ..runtime import atomic_write_bytes

__all__ = ["DATA_WARNINGS", "plan_warnings", "read_data_warnings", "write_data_warnings"]

DATA_WARNINGS = "data_warnings.json"


def plan_warnings(plan: SweepPlan) -> list[str]:
    """Every scenario's warnings, once each, scenario by scenario in the plan's order."""
    return list(dict.fromkeys(w for data in plan.data.values() for w in data.warnings))


def write_data_warnings(out: Path, warnings: list[str]) -> None:
    """Keep this sweep's warnings; with none, no file (a rerun on repaired data drops the last one's)."""
    if warnings:
        atomic_write_bytes(out / DATA_WARNINGS, msgspec.json.format(msgspec.json.encode(warnings)) + b"\n",
                           fsync=False)
    else:
        (out / DATA_WARNINGS).unlink(missing_ok=True)


def read_data_warnings(out: Path) -> list[str]:
    """The warnings the last sweep into ``out`` wrote (none when it wrote none, or the file is not a list of texts)."""
    try:
        return msgspec.json.decode((out / DATA_WARNINGS).read_bytes(), type=list[str])
    except (OSError, msgspec.DecodeError):
        return []
