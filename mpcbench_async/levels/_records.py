"""What a levels run writes: one ``LevelsRecord`` per instance × model × trial (``levels.jsonl`` of a sweep)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ..records import UnitRecord, Usage
from ._answer import Metrics

__all__ = ["LevelsRecord"]


class LevelsRecord(UnitRecord, kw_only=True):  # key, status, retryable, error, times: records.UnitRecord
    """One instance run by one model: the original's result-line fields (``metrics``, ``pred``, ``gold``,
    ``trace``) plus where it came from and how the loop ended."""

    instance_id: str
    level: int
    split: str
    model: str
    trial: int = 0
    metrics: Metrics | None = None
    pred: list[list[str]] | None = None
    gold: list[list[str]] | None = None
    trace: list[dict[str, Any]] = msgspec.field(default_factory=list)
    stop_reason: str | None = None
    turns: int = 0
    usage: Usage = msgspec.field(default_factory=Usage)
    cost_usd: float | None = 0.0
    elapsed_s: float = 0.0
    kind: Literal["levels_run"] = "levels_run"
