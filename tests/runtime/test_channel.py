"""The lean channel behaves as anyio's memory object stream, step for step: the same pipeline run over either
gives the same order of unit starts, loop steps and records on disk (and the same errors at the ends)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest

from mpcbench_async.records import UnitRecord
from mpcbench_async.runtime import Pipeline, Stage, WorkerPool, _pool, _units
from mpcbench_async.runtime._channel import channel


class ToyRecord(UnitRecord, kw_only=True):
    steps: int = 0
    kind: Literal["toy"] = "toy"


class _AnyioChannel:
    """What the runtime used before the lean channel: anyio's memory object stream."""

    def __class_getitem__(cls, _item: Any) -> type[_AnyioChannel]:
        return cls

    @staticmethod
    def open(max_size: int) -> Any:
        return anyio.create_memory_object_stream[Any](max_size)


def _failed(key: str, unit: Any, exc: Exception) -> ToyRecord:
    return ToyRecord(key=key, status="error", error_class=type(exc).__name__)


async def _trace(tmp_path: Path, seed: int, concurrency: int) -> tuple[list[str], bytes, bytes]:
    """Two stages of units that take a seeded number of loop steps (some fail, some ask for 0-2 follow-ups);
    the trace of every start and step, and both files."""
    rng = random.Random(seed)
    steps = {f"u{i}": rng.randrange(4) for i in range(120)}
    trace: list[str] = []

    async def run(key: str, unit: int) -> ToyRecord:
        trace.append(f"start {key}")
        for step in range(steps.get(key, unit)):
            await anyio.lowlevel.checkpoint()
            trace.append(f"{key} step {step}")
        if steps.get(key, unit) == 3 and key.count("/") == 0 and len(key) % 2:
            raise ValueError(key)
        return ToyRecord(key=key, status="ok", steps=unit)

    def follow_up_keys(key: str) -> list[str]:
        return [f"{key}/{j}" for j in range(len(key) % 3)]

    stages = [Stage(tmp_path / "a.jsonl", ToyRecord, run, _failed, follow_up_keys=follow_up_keys,
                    follow_ups=lambda r: [(k, len(k) % 4) for k in follow_up_keys(r.key)]),
              Stage(tmp_path / "b.jsonl", ToyRecord, run, _failed)]
    await Pipeline(stages, concurrency=concurrency).run(lambda: [(key, n) for key, n in steps.items()])
    return trace, (tmp_path / "a.jsonl").read_bytes(), (tmp_path / "b.jsonl").read_bytes()


@pytest.mark.parametrize(("seed", "concurrency"), [(1, 1), (2, 3), (3, 16), (4, 64)])
async def test_a_pipeline_runs_step_for_step_as_over_anyio_streams(tmp_path, monkeypatch, seed, concurrency):
    (tmp_path / "lean").mkdir()
    (tmp_path / "anyio").mkdir()
    lean = await _trace(tmp_path / "lean", seed, concurrency)
    monkeypatch.setattr(_pool, "channel", _AnyioChannel)
    monkeypatch.setattr(_units, "channel", _AnyioChannel)
    before = await _trace(tmp_path / "anyio", seed, concurrency)
    assert lean[0] == before[0]
    assert len(lean[0]) > 300
    assert _no_times(lean[1]) == _no_times(before[1]) and _no_times(lean[2]) == _no_times(before[2])


def _no_times(data: bytes) -> list[bytes]:
    """The records without their clock readings (the only bytes two runs may differ in)."""
    return [line.split(b',"started_at"')[0] for line in data.splitlines()]


async def test_a_pool_stopped_early_leaves_as_over_anyio_streams(monkeypatch):
    """A consumer that leaves after a few results: the same results, the same units started."""

    async def once() -> tuple[list[int], list[int]]:
        started: list[int] = []

        async def fn(item: int) -> int:
            started.append(item)
            for _ in range(item % 3):
                await anyio.lowlevel.checkpoint()
            return item

        got = []
        async with WorkerPool(fn, concurrency=4).stream(range(100)) as results:
            async for result in results:
                got.append(result)
                if len(got) == 7:
                    break
        return got, started

    lean = await once()
    monkeypatch.setattr(_pool, "channel", _AnyioChannel)
    assert lean == await once()


class TestEnds:
    async def test_receivers_see_the_end_once_every_sender_closes(self):
        send, receive = channel[int].open(1)
        other = send.clone()
        async with anyio.create_task_group() as tg:
            got: list[int] = []

            async def read() -> None:
                async for item in receive:
                    got.append(item)

            tg.start_soon(read)
            await send.send(1)
            send.close()
            await other.send(2)
            other.close()
        assert got == [1, 2]

    async def test_a_send_with_no_receiver_left_is_broken(self):
        send, receive = channel[int].open(0)
        receive.close()
        with pytest.raises(anyio.BrokenResourceError):
            await send.send(1)

    async def test_a_full_channel_would_block_and_a_closed_end_refuses(self):
        send, receive = channel[int].open(1)
        send.send_nowait(1)
        with pytest.raises(anyio.WouldBlock):
            send.send_nowait(2)
        assert receive.receive_nowait() == 1
        with pytest.raises(anyio.WouldBlock):
            receive.receive_nowait()
        send.close()
        with pytest.raises(anyio.EndOfStream):
            await receive.receive()
        with pytest.raises(anyio.ClosedResourceError):
            await send.send(3)

    async def test_a_sender_waiting_on_a_full_channel_is_released_when_receivers_go(self):
        send, receive = channel[int].open(0)
        errors: list[type[BaseException]] = []

        async def blocked() -> None:
            try:
                await send.send(1)
            except anyio.BrokenResourceError as exc:
                errors.append(type(exc))

        async with anyio.create_task_group() as tg:
            tg.start_soon(blocked)
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()
            receive.close()
        assert errors == [anyio.BrokenResourceError]

    async def test_a_cancelled_receiver_does_not_take_the_item(self):
        send, receive = channel[int].open(0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(receive.receive)
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()
            tg.cancel_scope.cancel()
            with pytest.raises(anyio.WouldBlock):  # its turn is skipped, and a channel of size 0 holds nothing
                send.send_nowait(5)
