"""The ``Suite`` protocol: what the ``Runner`` needs to drive a benchmark it knows nothing about.

In the spirit of Inspect AI's task/solver/scorer split, a suite turns its inputs
into keyed units, runs (and scores) one unit through the client into a record,
and, once its units are done, writes its report and says how it stands. The
``Runner`` does everything else the same way for every suite: one pool per
suite on the shared client (so each model's limits hold across suites),
resume by key from ``<name>.jsonl`` in the output directory, the directory
lock, signals, progress counters, and an error record for a unit whose run
raised (``failed``). MPCBench's two stages (agent runs feeding judges) keep
their own pipelined path (``Runner.sweep``); single-stage suites such as the
tariff pipeline (``TariffSuite``) come through ``Runner.run_suites``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from ..llm import LLMClient
from ..records import UnitRecord
from ..runtime import UnitFailure
from ._outcome import Outcome

__all__ = ["Suite", "Unit"]


class Unit(Protocol):
    """One piece of work: ``key`` identifies it across runs (resume), ``model`` is the model it calls."""

    @property
    def key(self) -> str: ...

    @property
    def model(self) -> str: ...


UnitT = TypeVar("UnitT", bound=Unit)
RecordT = TypeVar("RecordT", bound=UnitRecord)


class Suite(Protocol[UnitT, RecordT]):
    """A benchmark the ``Runner`` can drive (see the module docstring)."""

    @property
    def name(self) -> str:
        """Its results are ``<name>.jsonl`` in the output directory."""
        ...

    @property
    def record_type(self) -> type[RecordT]:
        """What those lines decode as."""
        ...

    @property
    def models(self) -> Sequence[str]:
        """Every model its units call, checked against the config before any call."""
        ...

    def units(self) -> Sequence[UnitT]:
        """Every unit of the suite, in report order; units whose key is finished on disk are skipped."""
        ...

    async def prepare(self) -> None:
        """Get ready before the first unit runs (warm indexes; heavy work goes to a thread)."""
        ...

    async def run(self, unit: UnitT, client: LLMClient) -> RecordT:
        """Run and score ``unit``: its record, ``ok`` or ``error`` (failures it understands)."""
        ...

    def failed(self, unit: UnitT, failure: UnitFailure) -> RecordT:
        """The error record of a unit whose ``run`` raised (the Runner logged it with the unit's key and model)."""
        ...

    def finish(self, records: list[RecordT], out_dir: Path) -> Outcome:
        """Write the suite's report from each unit's latest record (in unit order); say how the suite stands."""
        ...
