"""The call ledger (issue 25 point 1): each request's intent is durable before it is sent; its record settles it.

Against the seeded sim over loopback HTTP: the sim's gate runs when a request has arrived, before it is
answered, and reads the ledger there — so "durable before the request left" is observed, not assumed.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import anyio
import msgspec
import orjson
import pytest

from mpcbench_async import LedgerError, Message, ModelConfig
from mpcbench_async.llm import Budget, CallLedger, LLMClient, SettledCalls, unsettled_calls
from mpcbench_async.llm import _ledger as ledger_module
from mpcbench_async.records import CallIntent, LLMCallRecord
from mpcbench_async.sim import FaultSpec, SimServer

PRICED = {"prices": {"input_per_1m": 1000.0, "output_per_1m": 4000.0}, "params": {"max_tokens": 20},
          "retry": {"initial_backoff": 0.001, "max_backoff": 0.002}}
CONFIG = ModelConfig.from_dict({"models": {"sim/echo": PRICED}})
MESSAGES = [Message(role="user", content="Summarise the status of project ALPHA in one line.")]


def lines(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def worst(client: LLMClient, key: str) -> float:
    """The worst case the client reserves for MESSAGES (estimated prompt tokens of the request, 20 output tokens)."""
    state = client._state("sim/echo")
    request = client._requests.build(state.settings, state.endpoint.api_model, MESSAGES, None, {}, key)
    prompt = client.estimator("sim/echo").estimate(len(request.payload))
    return (prompt * 1000.0 + 20 * 4000.0) / 1e6


def hold_first_commit(ledger: CallLedger, monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Hold the ledger's first commit on disk: ``hold`` is set once it is held, ``released`` lets it go on."""
    hold, released = threading.Event(), threading.Event()
    real_write = ledger._write

    def slow_write(batch: list[bytes]) -> None:
        if ledger.stats.commits == 0:
            hold.set()
            released.wait(10)
        real_write(batch)

    monkeypatch.setattr(ledger, "_write", slow_write)
    return hold, released

class TestIntentBeforeSend:
    async def test_the_intent_is_on_disk_when_the_request_arrives_and_the_record_settles_it(self, tmp_path):
        """When the sim holds the request, the ledger already has exactly its intent (key, attempt 1, model, the
        worst case a budget would reserve); the call record carries the same call_id, the sim's x-request-id and
        the completion's id; the reader finds nothing unsettled."""
        path = tmp_path / "ledger.jsonl"
        seen: list[list[dict]] = []

        async def gate(key: str) -> None:
            seen.append(lines(path))

        records: list[LLMCallRecord] = []
        async with SimServer(seed=3, gate=gate) as sim:
            ledger = CallLedger(path)
            async with LLMClient(CONFIG, sim_base_url=sim.base_url, ledger=ledger, call_sink=records.append) as client:
                expected_worst = worst(client, "unit-1/turn0")
                await client.chat("sim/echo", MESSAGES, key="unit-1/turn0")
            ledger.close()
        [intent] = lines(path)
        assert [[intent]] == seen
        assert ({"key": "unit-1/turn0", "attempt": 1, "model": "sim/echo", "worst_usd": pytest.approx(expected_worst)}
                == {k: intent[k] for k in ("key", "attempt", "model", "worst_usd")})
        prefix, _, number = intent["call_id"].rpartition("-")
        assert (12, "1") == (len(prefix), number)
        [record] = records
        assert (intent["call_id"], "ok", 1) == (record.call_id, record.status, record.attempts)
        assert record.request_id is not None and record.request_id.startswith("req_")
        assert "chatcmpl-unit-1/turn0" == record.response_id  # the sim's id: chatcmpl- and the key's first 16
        assert (1, 1, 1) == (ledger.stats.intents, ledger.stats.commits, ledger.stats.largest_commit)
        assert [] == unsettled_calls(path, SettledCalls([record.call_id]))

    async def test_each_attempt_of_a_retried_call_has_its_intent_and_one_record_settles_them(self, tmp_path):
        """A 500 then a reply: intents for attempt 1 and 2 under one call_id, both on disk before each request
        arrived; the one record (2 attempts) names that call_id."""
        path = tmp_path / "ledger.jsonl"
        records: list[LLMCallRecord] = []
        async with SimServer(seed=3, defaults=FaultSpec(fault="500", fail_first=1)) as sim:
            ledger = CallLedger(path)
            async with LLMClient(CONFIG, sim_base_url=sim.base_url, ledger=ledger, call_sink=records.append) as client:
                await client.chat("sim/echo", MESSAGES, key="unit-2/turn0")
            ledger.close()
        first, second = lines(path)
        [record] = records
        assert ([1, 2], {record.call_id}, 2, "ok") == (
            [first["attempt"], second["attempt"]], {first["call_id"], second["call_id"]}, record.attempts,
            record.status)
        assert [] == unsettled_calls(path, SettledCalls([record.call_id]))

    async def test_a_call_cancelled_in_flight_stays_unsettled_and_spent_at_its_worst_case(self, tmp_path):
        """The unit is cancelled while the sim holds its request: no call record, the intent is unsettled, and the
        client's budget keeps the call's worst case as spent (the provider may bill it)."""
        path = tmp_path / "ledger.jsonl"
        arrived = anyio.Event()

        async def gate(key: str) -> None:
            arrived.set()
            await anyio.sleep(30)

        records: list[LLMCallRecord] = []
        budget = Budget(10.0)
        async with SimServer(seed=3, gate=gate) as sim:
            ledger = CallLedger(path)
            async with LLMClient(CONFIG, sim_base_url=sim.base_url, ledger=ledger, budget=budget,
                                 call_sink=records.append) as client:
                expected_worst = worst(client, "unit-3/turn0")
                async with anyio.create_task_group() as tg:
                    tg.start_soon(lambda: client.chat("sim/echo", MESSAGES, key="unit-3/turn0"))
                    await arrived.wait()
                    tg.cancel_scope.cancel()
            ledger.close()
        [open_call] = unsettled_calls(path, SettledCalls(r.call_id for r in records))
        assert ([], "unit-3/turn0", pytest.approx(expected_worst)) == (records, open_call.key, open_call.worst_usd)
        assert (pytest.approx(expected_worst), 0.0, 1, pytest.approx(expected_worst)) == (
            budget.spent_usd, budget.reserved_usd, budget.unsettled_calls, budget.unsettled_usd)

    async def test_an_intent_that_cannot_be_written_sends_nothing(self, tmp_path):
        """The ledger's directory is a file: the call fails with LedgerError (retryable, naming the ledger), the
        sim receives nothing, and the error record has no call_id (no intent of it exists)."""
        (tmp_path / "blocked").write_bytes(b"")
        path = tmp_path / "blocked" / "ledger.jsonl"
        records: list[LLMCallRecord] = []
        async with SimServer(seed=3) as sim:
            async with LLMClient(CONFIG, sim_base_url=sim.base_url, ledger=CallLedger(path),
                                 call_sink=records.append) as client:
                with pytest.raises(LedgerError) as caught:
                    await client.chat("sim/echo", MESSAGES, key="unit-4/turn0")
            assert 0 == sim.stats.total_received
        assert caught.value.retryable
        assert (f"model 'sim/echo' at {sim.base_url}/chat/completions: not sent: its intent could not be written to "
                f"the call ledger {path} (FileExistsError: File exists)") == str(caught.value)
        [record] = records
        assert ("error", "LedgerError", None) == (record.status, record.error_class, record.call_id)

    async def test_calls_through_an_offline_transport_write_no_intent(self, tmp_path):
        """A replay or mock transport sends nothing, so nothing can be billed: no ledger file appears."""
        path = tmp_path / "ledger.jsonl"
        from mpcbench_async.llm import MockTransport

        mock = MockTransport(lambda endpoint, request: {"choices": [{"message": {"content": "hi"}}]})
        async with LLMClient(CONFIG, transport=mock, ledger=CallLedger(path)) as client:
            await client.chat("sim/echo", MESSAGES, key="unit-5/turn0")
        assert not path.exists()


def intent(call_id: str, key: str = "run-a/turn0", attempt: int = 1, worst: float | None = 0.5) -> CallIntent:
    return CallIntent(call_id=call_id, key=key, attempt=attempt, model="m", worst_usd=worst, at=1.0)


class TestGroupCommit:
    async def test_intents_handed_in_during_a_commit_share_the_next_one(self, tmp_path, monkeypatch):
        """The first intent's commit is held on disk; 49 more arrive meanwhile and go in one second commit: two
        writes and flushes for 50 intents, each caller returning only after its own commit, lines in order."""
        ledger = CallLedger(tmp_path / "ledger.jsonl")
        hold, released = hold_first_commit(ledger, monkeypatch)
        done: list[int] = []

        async def one(i: int) -> None:
            await ledger.intend(intent(f"p-{i}"))
            done.append(i)

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, 0)
            await anyio.to_thread.run_sync(hold.wait)
            for i in range(1, 50):
                tg.start_soon(one, i)
            await anyio.sleep(0.05)
            assert [] == done  # nobody returns before its intent is on disk
            released.set()
        ledger.close()
        assert (50, 2, 49) == (ledger.stats.intents, ledger.stats.commits, ledger.stats.largest_commit)
        assert [f"p-{i}" for i in range(50)] == [line["call_id"] for line in lines(tmp_path / "ledger.jsonl")]
        assert 0 == done[0]

    async def test_a_caller_cancelled_while_its_commit_waits_leaves_at_once_and_the_commit_still_holds_it(
            self, tmp_path, monkeypatch):
        """No caller drives the commits: one cancelled while waiting leaves without waiting for the disk, its intent
        is written with the others of its batch (its request is not sent either way), and they return."""
        ledger = CallLedger(tmp_path / "ledger.jsonl")
        hold, released = hold_first_commit(ledger, monkeypatch)
        done: list[str] = []

        async def one(call_id: str, scope: anyio.CancelScope | None = None) -> None:
            with scope or anyio.CancelScope():
                await ledger.intend(intent(call_id))
                done.append(call_id)

        cancelled = anyio.CancelScope()
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "p-0")
            await anyio.to_thread.run_sync(hold.wait)
            tg.start_soon(one, "p-1", cancelled)
            tg.start_soon(one, "p-2")
            await anyio.sleep(0.05)
            cancelled.cancel()
            await anyio.sleep(0.05)
            assert [] == done  # the first commit is still on disk's way
            released.set()
        ledger.close()
        assert ["p-0", "p-2"] == done
        assert (3, 2) == (ledger.stats.intents, ledger.stats.commits)
        assert ["p-0", "p-1", "p-2"] == [line["call_id"] for line in lines(tmp_path / "ledger.jsonl")]

    async def test_a_failed_write_is_cut_back_and_fails_every_intent_of_its_commit(self, tmp_path, monkeypatch):
        """The disk fills mid-write: the half line is cut off, the intent raises LedgerError; the next write works
        and the file holds whole lines only."""
        path = tmp_path / "ledger.jsonl"
        ledger = CallLedger(path)
        await ledger.intend(intent("p-1"))
        real = os.write

        def full(fd: int, data: bytes | memoryview) -> int:
            real(fd, bytes(data[:10]))
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(ledger_module.os, "write", full)
        with pytest.raises(LedgerError, match=r"\(OSError: No space left on device\)$"):
            await ledger.intend(intent("p-2"))
        monkeypatch.setattr(ledger_module.os, "write", real)
        await ledger.intend(intent("p-3"))
        ledger.close()
        assert ["p-1", "p-3"] == [line["call_id"] for line in lines(path)]

    async def test_flush_only_mode_writes_inline(self, tmp_path):
        ledger = CallLedger(tmp_path / "ledger.jsonl", fsync=False)
        for i in range(3):
            await ledger.intend(intent(f"p-{i}"))
        ledger.close()
        assert (3, 3) == (ledger.stats.intents, ledger.stats.commits)
        assert 3 == len(lines(tmp_path / "ledger.jsonl"))

    async def test_a_torn_last_line_is_trimmed_before_the_next_append(self, tmp_path):
        """A kill mid-write leaves half a line (that request was never sent): the reader skips it, the next ledger
        cuts it off before appending."""
        path = tmp_path / "ledger.jsonl"
        path.write_bytes(msgspec.json.encode(intent("p-1")) + b"\n" + b'{"call_id": "p-2", "ke')
        assert ["p-1"] == [i.call_id for i in unsettled_calls(path, SettledCalls())]
        ledger = CallLedger(path)
        await ledger.intend(intent("p-3"))
        ledger.close()
        assert ["p-1", "p-3"] == [line["call_id"] for line in lines(path)]


class TestReading:
    def test_unsettled_calls_are_the_last_intent_of_each_call_no_record_settles(self, tmp_path):
        path = tmp_path / "ledger.jsonl"
        intents = [intent("a1b2-1"), intent("a1b2-2", key="run-b/turn0"), intent("a1b2-2", key="run-b/turn0",
                   attempt=2), intent("c3d4-1", key="judge-c/attempt0", worst=None), intent("odd id", key="x")]
        path.write_bytes(b"".join(msgspec.json.encode(i) + b"\n" for i in intents))
        settled = SettledCalls(["a1b2-1", None, "zz-9"])
        assert [("a1b2-2", 2), ("c3d4-1", 1), ("odd id", 1)] == [
            (i.call_id, i.attempt) for i in unsettled_calls(path, settled)]
        assert [] == unsettled_calls(tmp_path / "absent.jsonl", settled)

    def test_settled_ids_are_a_bit_per_call(self):
        """Counters far apart, several prefixes, ids of other shapes: membership is exact."""
        settled = SettledCalls(["p-0", "p-7", "p-8", "p-100000", "q-3", "free-form", "x-12345678901"])
        present = ["p-0", "p-7", "p-8", "p-100000", "q-3", "free-form", "x-12345678901"]
        absent = ["p-1", "p-9", "p-99999", "p-100001", "p-10000000", "q-0", "r-3", "free", "-3", "", "p-"]
        assert ([True] * len(present), [False] * len(absent)) == (
            [c in settled for c in present], [c in settled for c in absent])
        assert len(settled._bits["p"]) < 2 * (100000 // 8 + 1)


class TestProviderIds:
    @pytest.mark.parametrize("transport", ["native", "openai"])
    @pytest.mark.parametrize("stream", [False, True])
    async def test_the_call_record_keeps_the_request_id_header_and_the_completion_id(self, transport, stream):
        """Both transports, plain and streamed: request_id from the reply's x-request-id, response_id from its id."""
        records: list[LLMCallRecord] = []
        async with SimServer(seed=3) as sim:
            async with LLMClient(CONFIG, transport=transport, sim_base_url=sim.base_url,
                                 call_sink=records.append) as client:
                await client.chat("sim/echo", MESSAGES, key="unit-6/turn0", stream=stream)
        [record] = records
        assert (True, "chatcmpl-unit-6/turn0", None) == (
            (record.request_id or "").startswith("req_") and len(record.request_id or "") == 28, record.response_id,
            record.call_id)
