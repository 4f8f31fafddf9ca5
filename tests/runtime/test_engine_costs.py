"""Guards on the engine's own cost per unit that cannot drift with the machine: counts, not timings (issue 31).

N units that do nothing (each returns its record at once) go through a ``Pipeline`` at concurrency C, one stage
and two (every record of the first asks for one unit of the second). What is counted is the engine alone: the
pool's producer, workers and channels, the cancel scope around each unit, the record's line and done-index entry,
the events, the follow-up hand-off. Two counters, as in ``tests/llm/test_call_costs.py``:

- event-loop iterations per unit: the pool's producer hands one unit over per trip through the loop (every send
  and receive of the channels yields once, as anyio's memory streams do, so the order units start in and records
  are written is as it always was): one per unit, and a wait or thread hop per unit would make it two;
- Python function calls per unit under ``sys.setprofile`` (this thread; a coroutine resumed counts as a call).

Measured on the tree before the lean channel (anyio memory object streams, an ``anyio.Event`` as the stop flag,
the attempt's context manager around every unit): 204 calls per unit with one stage, 267 with two; after: 116
and 148 (bench/RESULTS.md). Lowering a count is welcome (lower the ceiling with it); raising one past its ceiling
needs a reason and a new figure in bench/RESULTS.md.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from pathlib import Path
from types import FrameType
from typing import Any, Literal

import pytest

from mpcbench_async.records import UnitRecord
from mpcbench_async.runtime import Pipeline, Stage

N = 512
C = 64


class NoOp(UnitRecord, kw_only=True):
    kind: Literal["noop"] = "noop"


async def _done(key: str, unit: Any) -> NoOp:
    return NoOp(key=key, status="ok")


def _failed(key: str, unit: Any, exc: Exception) -> NoOp:
    raise AssertionError(f"a no-op unit raised: {exc!r}")


def _stages(out: Path, two: bool) -> list[Stage]:
    if not two:
        return [Stage(out / "a.jsonl", NoOp, _done, _failed)]
    return [Stage(out / "a.jsonl", NoOp, _done, _failed, follow_up_keys=lambda key: [f"{key}/next"],
                  follow_ups=lambda record: [(f"{record.key}/next", None)]),
            Stage(out / "b.jsonl", NoOp, _done, _failed)]


async def _count(out: Path, *, two: bool, profile: bool) -> tuple[float, float]:
    """(loop iterations, Python calls) per unit of one pipeline run over N units."""
    pipeline = Pipeline(_stages(out, two), concurrency=C)
    iterations = calls = 0

    def on_call(_frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    loop = asyncio.get_running_loop()
    run_once = loop._run_once  # type: ignore[attr-defined]

    def counted() -> None:
        nonlocal iterations
        iterations += 1
        run_once()

    gc.collect()  # earlier tests' garbage: its finalizers would run, and count, inside the measured run
    loop._run_once = counted  # type: ignore[attr-defined]
    if profile:
        sys.setprofile(on_call)
    try:
        await pipeline.run(lambda: ((f"u{i}", i) for i in range(N)))
    finally:
        sys.setprofile(None)
        del loop._run_once  # type: ignore[attr-defined]
    units = N * (2 if two else 1)
    assert len((out / "a.jsonl").read_bytes().splitlines()) == N
    return iterations / units, calls / units


@pytest.mark.parametrize(("two", "ceiling"), [(False, 125), (True, 160)], ids=["one stage", "two stages"])
async def test_python_calls_per_unit(tmp_path, two, ceiling):
    _, calls = await _count(tmp_path, two=two, profile=True)
    # 204 / 267 with anyio's memory streams (each send or receive ~14 calls), 116 / 148 since the lean channel
    assert calls <= ceiling


@pytest.mark.parametrize("two", [False, True], ids=["one stage", "two stages"])
async def test_event_loop_iterations_per_unit(tmp_path, two):
    iterations, _ = await _count(tmp_path, two=two, profile=False)
    # 1.004-1.006: the producer hands one unit over per iteration; a wait or a thread hop per unit adds one
    assert iterations <= 1.1
