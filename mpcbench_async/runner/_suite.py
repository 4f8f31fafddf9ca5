"""The ``Suite`` protocols: what the ``Runner`` needs to drive a benchmark it knows nothing about.

In the spirit of Inspect AI's task/solver/scorer split, a suite turns its inputs
into keyed units, runs (and scores) one unit through the client into a record,
and, once its units are done, writes its report and says how it stands. The
``Runner`` does everything else the same way for every suite, through one loop
(``runtime.Pipeline``): one pool per stage on the shared client (so each
model's limits hold across suites), resume by key from each stage's
``<name>.jsonl`` in the output directory, the directory lock, signals,
progress counters, and an error record for a unit whose run raised
(``failed``).

A ``Suite`` has one stage: it is that stage (tariff, HSCodeComp, data
generation, a toy in a test). A ``StagedSuite`` has several (``stages``):
the first stage's units are ``units()``; every finished ``ok`` record of a
stage asks for units of the next one (``follow_ups``), which start as soon as
it is written, while an error record asks for none. MPCBench is the staged
suite of agent runs feeding judges (``mpcbench.MPCBenchSuite``).

A suite whose ``remote`` attribute is true (MPCBench's, levels') has its units
run on the ``Runner``'s executor (Ray workers) when it has one; without the
attribute, units run on the runner's own client. The protocols name no
benchmark: this package sits below them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from ..llm import LLMClient
from ..records import UnitRecord
from ..runtime import UnitFailure
from ._outcome import Outcome

__all__ = ["StagedSuite", "Suite", "SuiteStage", "Unit"]


class Unit(Protocol):
    """One piece of work: ``key`` identifies it across runs (resume), ``model`` is the model it calls."""

    @property
    def key(self) -> str: ...

    @property
    def model(self) -> str: ...


UnitT = TypeVar("UnitT", bound=Unit)
RecordT = TypeVar("RecordT", bound=UnitRecord)
UnitIn = TypeVar("UnitIn", bound=Unit, contravariant=True)
RecordOut = TypeVar("RecordOut", bound=UnitRecord, covariant=True)


class SuiteStage(Protocol[UnitIn, RecordOut]):
    """One stage of a suite: where its records go and how one of its units runs.

    Records count in the ``Runner``'s counters by their ``kind``: ``agent_run`` as runs, ``judge`` as judges,
    any other as cases.
    """

    @property
    def name(self) -> str:
        """Its results are ``<name>.jsonl`` in the output directory."""
        ...

    @property
    def record_type(self) -> type[RecordOut]:
        """What those lines decode as."""
        ...

    async def run(self, unit: UnitIn, client: LLMClient) -> RecordOut:
        """Run and score ``unit``: its record, ``ok`` or ``error`` (failures it understands)."""
        ...

    def failed(self, unit: UnitIn, failure: UnitFailure) -> RecordOut:
        """The error record of a unit whose ``run`` raised (the Runner logged it with the unit's key and model)."""
        ...


class Suite(SuiteStage[UnitT, RecordT], Protocol[UnitT, RecordT]):
    """A one-stage benchmark the ``Runner`` can drive (see the module docstring)."""

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

    def finish(self, records: list[RecordT], out_dir: Path) -> Outcome:
        """Write the suite's report from each unit's latest record (in unit order); say how the suite stands."""
        ...


@runtime_checkable
class StagedSuite(Protocol):
    """A benchmark of several stages, each record of one asking for units of the next (see the module docstring)."""

    @property
    def models(self) -> Sequence[str]:
        """Every model its units call, checked against the config before any call."""
        ...

    @property
    def stages(self) -> Sequence[SuiteStage[Any, Any]]:
        """Its stages, in order; each writes its own file."""
        ...

    def units(self) -> Iterable[Unit]:
        """The first stage's units, in order (called twice: the resume scan, then as the pool takes them)."""
        ...

    def follow_up_keys(self, stage: int, key: str) -> Sequence[str]:
        """The keys of the units of stage ``stage + 1`` that an ``ok`` record of ``stage`` with ``key`` asks for.

        Known from the key alone, so a resume reads back only the records that still lack some.
        """
        ...

    def follow_ups(self, stage: int, record: Any) -> Sequence[Unit]:
        """Those units, for the finished ``ok`` ``record`` of ``stage`` (the same keys, in the same order)."""
        ...

    async def prepare(self) -> None:
        """Get ready before the first unit runs."""
        ...

    def finish(self, out_dir: Path) -> Outcome:
        """Say how the suite stands, from its files in ``out_dir`` (and write its report, if it has one)."""
        ...
