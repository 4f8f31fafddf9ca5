"""Guards on the engine's own cost per unit that cannot drift with the machine: counts, not timings (issue 31).

Units that do nothing (each returns its record at once) go through a ``Pipeline`` at concurrency C, one stage
and two (every record of the first asks for one unit of the second); counted per unit at the margin — a run of N
units less one of N/4, after a warm-up run — so what a run pays once (the resume read's thread hop, an import
that a test run before made or not) cancels out. What is counted is the engine alone: the
pool's producer, workers and channels, the cancel scope around each unit, the record's line and done-index entry,
the events, the follow-up hand-off. Two counters, as in ``tests/llm/test_call_costs.py``:

- event-loop iterations per unit: the pool's producer hands one unit over per trip through the loop (every send
  and receive of the channels yields once, as anyio's memory streams do, so the order units start in and records
  are written is as it always was): one per unit, and a wait or thread hop per unit would make it two;
- Python function calls per unit under ``sys.setprofile`` (this thread; a coroutine resumed counts as a call).

Measured on the tree before the lean channel (anyio memory object streams, an ``anyio.Event`` as the stop flag,
the attempt's context manager around every unit): 202-204 calls per unit with one stage, 265-267 with two (whole
runs of 512-4,000 units); after: 111 and 146 at the margin (113-116 and 147-149 whole runs; see
bench/RESULTS.md). Lowering a count is welcome (lower the ceiling with it); raising one past its ceiling
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

N = 1024
C = 64


class NoOp(UnitRecord, kw_only=True):
    kind: Literal["noop"] = "noop"


async def _done(key: str, unit: Any) -> NoOp:
    return NoOp(key=key, status="ok")


def _failed(key: str, unit: Any, exc: Exception) -> NoOp:
    raise AssertionError(f"a no-op unit raised: {exc!r}")


def _stages(out: Path, name: str, two: bool) -> list[Stage]:
    if not two:
        return [Stage(out / f"{name}-a.jsonl", NoOp, _done, _failed)]
    return [Stage(out / f"{name}-a.jsonl", NoOp, _done, _failed, follow_up_keys=lambda key: [f"{key}/next"],
                  follow_ups=lambda record: [(f"{record.key}/next", None)]),
            Stage(out / f"{name}-b.jsonl", NoOp, _done, _failed)]


async def _count(out: Path, *, two: bool, profile: bool) -> tuple[float, float]:
    """(loop iterations, Python calls) per unit at the margin: a run of N units less one of N/4 (after a warm-up)."""
    await _run(out, "warm", N // 4, two=two, profile=profile)
    small = await _run(out, "small", N // 4, two=two, profile=profile)
    large = await _run(out, "large", N, two=two, profile=profile)
    units = (N - N // 4) * (2 if two else 1)
    return (large[0] - small[0]) / units, (large[1] - small[1]) / units


async def _run(out: Path, name: str, n: int, *, two: bool, profile: bool) -> tuple[int, int]:
    """(loop iterations, Python calls) of one pipeline run over ``n`` units, into ``out``'s ``name-*.jsonl``."""
    pipeline = Pipeline(_stages(out, name, two), concurrency=C)
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
        await pipeline.run(lambda: ((f"u{i}", i) for i in range(n)))
    finally:
        sys.setprofile(None)
        del loop._run_once  # type: ignore[attr-defined]
    assert pipeline.pools[0].finished == n
    return iterations, calls


@pytest.mark.parametrize(("two", "ceiling"), [(False, 120), (True, 155)], ids=["one stage", "two stages"])
async def test_python_calls_per_unit(tmp_path, two, ceiling):
    _, calls = await _count(tmp_path, two=two, profile=True)
    # 202-204 / 265-267 with anyio's memory streams (each send or receive ~14 calls), 111 / 146 since the lean channel
    assert calls <= ceiling, calls


@pytest.mark.parametrize("two", [False, True], ids=["one stage", "two stages"])
async def test_event_loop_iterations_per_unit(tmp_path, two):
    iterations, _ = await _count(tmp_path, two=two, profile=False)
    # 1.004-1.006: the producer hands one unit over per iteration; a wait or a thread hop per unit adds one
    assert iterations <= 1.1, iterations
