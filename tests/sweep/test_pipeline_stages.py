"""``runtime.Pipeline``, the one loop every suite runs through, with three stages: follow-ups, skips, resume.

Each unit ``k`` of a stage asks for ``k1`` and ``k2`` of the next, so ``x`` fans out to ``x1, x2`` and then to
``x11, x12, x21, x22``. Units in ``FAIL`` end in a retryable error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import anyio

from mpcbench_async.records import UnitRecord
from mpcbench_async.runtime import Pipeline, PipelineEvents, Stage, read_jsonl


class Toy(UnitRecord, kw_only=True):
    kind: Literal["toy"] = "toy"


class Heard(PipelineEvents):
    def __init__(self) -> None:
        self.planned_: list[tuple[int, int, int]] = []
        self.skips = [0, 0, 0]

    def planned(self, stage: int, total: int, skipped: int) -> None:
        self.planned_.append((stage, total, skipped))

    def skipped(self, stage: int, count: int) -> None:
        self.skips[stage] += count


async def run(out: Path, fail: set[str]) -> tuple[list[str], Heard]:
    """Run ``x`` and ``y`` through three stages; return the keys run (sorted) and what the events heard."""
    ran: list[str] = []

    async def one(key: str, unit: str) -> Toy:
        await anyio.lowlevel.checkpoint()
        ran.append(key)
        return Toy(key=key, status="error", retryable=True) if key in fail else Toy(key=key, status="ok")

    def stage(name: str) -> Stage:
        return Stage(out / f"{name}.jsonl", Toy, one, lambda key, unit, exc: Toy(key=key, status="error"),
                     follow_up_keys=lambda key: [key + "1", key + "2"],
                     follow_ups=lambda record: [(record.key + n, record.key + n) for n in "12"])

    heard = Heard()
    await Pipeline([stage("a"), stage("b"), stage("c")], concurrency=2, events=heard).run(
        lambda: [("x", "x"), ("y", "y")])
    return sorted(ran), heard


def keys(path: Path) -> list[tuple[str, str]]:
    return sorted((r.key, r.status) for r in read_jsonl(path, type_=Toy)[0])


async def test_every_ok_record_asks_for_its_follow_ups_and_an_error_for_none_down_the_line(tmp_path):
    """``y`` fails: its 2 stage-b and 4 stage-c descendants are skipped; ``x``'s whole tree runs."""
    ran, heard = await run(tmp_path, fail={"y"})
    assert (["x", "x1", "x11", "x12", "x2", "x21", "x22", "y"], [(0, 2, 0), (1, 4, 0), (2, 8, 0)], [0, 2, 4]) == (
        ran, heard.planned_, heard.skips)
    assert ([("x1", "ok"), ("x2", "ok")], ["x11", "x12", "x21", "x22"]) == (
        keys(tmp_path / "b.jsonl"), [k for k, _ in keys(tmp_path / "c.jsonl")])


async def test_resume_reruns_what_failed_and_feeds_stored_records_only_the_follow_ups_they_lack(tmp_path):
    """Run 1: ``x12`` (stage c) and ``y`` fail retryably. Run 2 reruns ``x12`` from the stored ``x1`` (no stage-a or
    stage-b unit of ``x`` runs again) and ``y`` with its whole tree, which is fresh."""
    await run(tmp_path, fail={"x12", "y"})
    ran, heard = await run(tmp_path, fail=set())
    assert (["x12", "y", "y1", "y11", "y12", "y2", "y21", "y22"], [(0, 2, 1), (1, 4, 2), (2, 8, 3)], [0, 0, 0]) == (
        ran, heard.planned_, heard.skips)
    assert [("x11", "ok"), ("x12", "error"), ("x12", "ok"), ("x21", "ok"), ("x22", "ok"), ("y11", "ok"),
            ("y12", "ok"), ("y21", "ok"), ("y22", "ok")] == keys(tmp_path / "c.jsonl")


async def test_stop_lets_the_unit_in_flight_finish_and_starts_nothing_more(tmp_path):
    """``stop()`` while ``x`` runs: ``x`` finishes and is written, ``y`` never starts, ``x1`` is never queued."""

    async def one(key: str, unit: None) -> Toy:
        if key == "x":
            pipeline.stop()
        await anyio.lowlevel.checkpoint()
        return Toy(key=key, status="ok")

    first = Stage(tmp_path / "a.jsonl", Toy, one, lambda key, unit, exc: Toy(key=key, status="error"),
                  follow_up_keys=lambda key: [key + "1"], follow_ups=lambda record: [(record.key + "1", None)])
    pipeline = Pipeline([first, Stage(tmp_path / "b.jsonl", Toy, one, first.failed)], concurrency=1)
    await pipeline.run(lambda: [("x", None), ("y", None)])
    assert ([("x", "ok")], [], True) == (keys(tmp_path / "a.jsonl"), keys(tmp_path / "b.jsonl"), pipeline.stopping)
