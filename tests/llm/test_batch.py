"""Batch transport against the sim's Batch API: grouping, batch prices, resubmits, deadline, journal resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import orjson
import pytest

from mpcbench_async._exceptions import LLMError
from mpcbench_async.llm import LLMClient, ModelConfig
from mpcbench_async.records import LLMCallRecord, Message
from mpcbench_async.sim import FaultSpec, SimServer

FAST = {"max_wait_s": 0.05, "poll_s": 0, "poll_max_s": 0}


def config(model: str = "sim/echo", **batch: Any) -> ModelConfig:
    entry: dict[str, Any] = {"batch": {**FAST, **batch}, "prices": {"input_per_1m": 2.0, "output_per_1m": 8.0}}
    return ModelConfig.from_dict({"judge_models": [model], "models": {model: entry}})


def ask(n: int) -> list[list[Message]]:
    return [[Message(role="user", content=f"question {i}")] for i in range(n)]


async def chat_all(client: LLMClient, model: str, n: int, *, key: str = "k") -> list[str | LLMError]:
    out: list[str | LLMError] = [""] * n

    async def one(i: int, messages: list[Message]) -> None:
        try:
            out[i] = (await client.chat(model, messages, key=f"{key}{i}")).content or ""
        except LLMError as exc:
            out[i] = exc

    async with anyio.create_task_group() as tg:
        for i, messages in enumerate(ask(n)):
            tg.start_soon(one, i, messages)
    return out


async def test_calls_within_the_wait_go_in_one_batch_priced_at_the_batch_tier(sim: SimServer, tmp_path: Path):
    """Five concurrent calls: one upload, one batch, each answered once, each call record at half the price."""
    records: list[LLMCallRecord] = []
    async with LLMClient(config(), sim_base_url=sim.base_url, call_sink=records.append,
                         batch_journal=tmp_path / "batches.jsonl") as client:
        replies = await chat_all(client, "sim/echo", 5)
    assert [f"echo: question {i}" for i in range(5)] == replies
    stats = sim.stats
    assert ({"uploads": 1}, {"batches": 1}, {f"k{i}": 1 for i in range(5)}, {}) == (
        stats.batch_uploads, stats.batch_creates, stats.batch_billed, stats.completed)
    first = records[0]
    assert ("batch", first.cost_usd) == (first.transport, pytest.approx(
        (first.usage.prompt_tokens * 1.0 + first.usage.completion_tokens * 4.0) / 1e6))
    journal = [orjson.loads(line) for line in (tmp_path / "batches.jsonl").read_bytes().splitlines()]
    assert (["uploaded", "submitted", "completed"], sorted(journal[0]["keys"])) == (
        [line["state"] for line in journal], [f"k{i}" for i in range(5)])


async def test_failed_requests_alone_are_resubmitted(sim: SimServer, tmp_path: Path):
    """A request failing its first run (500) goes into a second batch alone; nobody is billed twice."""
    model = "sim/echo?fault=500&fail_first=1"
    async with LLMClient(config(model), sim_base_url=sim.base_url) as client:
        replies = await chat_all(client, model, 3)
    assert [f"echo: question {i}" for i in range(3)] == replies
    assert ({"batches": 2}, {"k0": 1, "k1": 1, "k2": 1}) == (sim.stats.batch_creates, sim.stats.batch_billed)


async def test_an_expired_batch_resubmits_only_what_it_did_not_finish(sim: SimServer):
    """Latency 100 s, window 50 s, four requests: two finish before expiry, only the other two are sent again."""
    sim.defaults = FaultSpec(batch_latency_s=100, batch_expiry_s=50)
    async with LLMClient(config(), sim_base_url=sim.base_url) as client:
        async with anyio.create_task_group() as tg:
            results: list[Any] = []

            async def run() -> None:
                results.extend(await chat_all(client, "sim/echo", 4))

            tg.start_soon(run)
            while not sim.stats.batch_creates:
                await anyio.lowlevel.checkpoint()
            while not client.batches():  # polled once: what the progress line shows
                await anyio.lowlevel.checkpoint()
            assert [(4, 0, "in_progress")] == [(v.total, v.done, v.status) for v in client.batches()]
            sim.defaults = FaultSpec()  # the resubmission finishes at once
            sim.batches.clock.advance(60)  # past the window: the first batch expires half done
    assert [f"echo: question {i}" for i in range(4)] == results
    batches = list(sim.batches.batches.values())
    assert (["expired", "completed"], [4, 2], {f"k{i}": 1 for i in range(4)}) == (
        [b.status for b in batches], [len(b.lines) for b in batches], sim.stats.batch_billed)


async def test_a_rejected_upload_fails_each_call_with_the_providers_message(sim: SimServer):
    """A refused upload: each call fails at once with the sim's reason, no batch created."""
    model = "sim/echo?batch_reject=true"
    async with LLMClient(config(model), sim_base_url=sim.base_url) as client:
        replies = await chat_all(client, model, 2)
    assert all(isinstance(r, LLMError) for r in replies)
    assert "HTTP 400: invalid batch file: simulated: the file was rejected (batch_reject)" in str(replies[0])
    assert ({}, {"uploads": 1}) == (sim.stats.batch_creates, sim.stats.batch_rejected)


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_batch_past_its_deadline_is_cancelled_and_its_calls_fail_retryably(sim: SimServer, api: str):
    """A provider that never finishes: after deadline_s the batch is cancelled; the error says what to do."""
    model = "sim/echo?batch_latency_s=1e9"
    async with LLMClient(config(model, deadline_s=0, api=api), sim_base_url=sim.base_url) as client:
        replies = await chat_all(client, model, 2)
    error = replies[0]
    assert isinstance(error, LLMError) and error.retryable
    assert "did not finish within batch.deadline_s=0 s and was cancelled; rerun to resubmit this request" in str(error)
    assert (["cancelled"], {}) == ([b.status for b in sim.batches.batches.values()], sim.stats.batch_billed)


async def test_a_rerun_joins_the_journalled_batch_instead_of_sending_again(sim: SimServer, tmp_path: Path):
    """An invocation that stopped while its batch ran: the next polls that batch; nothing uploaded or billed twice."""
    model = "sim/echo?batch_latency_s=10"
    journal = tmp_path / "batches.jsonl"
    async with LLMClient(config(model), sim_base_url=sim.base_url, batch_journal=journal) as client:
        async with anyio.create_task_group() as tg:  # the first invocation stops while its batch is running
            tg.start_soon(chat_all, client, model, 3)
            while not sim.stats.batch_creates:
                await anyio.lowlevel.checkpoint()
            tg.cancel_scope.cancel()
    sim.batches.clock.advance(20)
    async with LLMClient(config(model), sim_base_url=sim.base_url, batch_journal=journal) as client:
        replies = await chat_all(client, model, 3)
    assert [f"echo: question {i}" for i in range(3)] == replies
    assert ({"uploads": 1}, {"batches": 1}, {"k0": 1, "k1": 1, "k2": 1}) == (
        sim.stats.batch_uploads, sim.stats.batch_creates, sim.stats.batch_billed)


async def test_a_journalled_batch_the_provider_does_not_know_fails_its_calls_once(sim: SimServer, tmp_path: Path):
    """A batch id unknown on resume: one clear error per call, journalled unknown, so the next run sends anew."""
    journal = tmp_path / "batches.jsonl"
    journal.write_bytes(orjson.dumps({"file_id": "file-gone", "batch_id": "batch-gone", "model": "sim/echo",
                                      "state": "submitted", "keys": ["k0"]}) + b"\n")
    async with LLMClient(config(), sim_base_url=sim.base_url, batch_journal=journal) as client:
        replies = await chat_all(client, "sim/echo", 1)
    assert isinstance(replies[0], LLMError)
    assert ("batch batch-gone (in batches.jsonl) is unknown to the provider (No batch found with id 'batch-gone'.); "
            "its requests were not resent, as it may have been paid for: rerun to send them anew") in str(replies[0])
    async with LLMClient(config(), sim_base_url=sim.base_url, batch_journal=journal) as client:
        assert ["echo: question 0"] == await chat_all(client, "sim/echo", 1)
    assert {"k0": 1} == sim.stats.batch_billed


async def test_anthropic_message_batches_answer_resubmit_and_price_at_the_batch_tier(sim: SimServer, tmp_path: Path):
    """``batch.api: anthropic``: system and user messages go as Messages params to /v1/messages/batches, each
    result's text and usage come back as the call's reply; a request failing its first run is resubmitted alone."""
    model = "sim/echo?fault=500&fail_first=1"
    records: list[LLMCallRecord] = []
    async with LLMClient(config(model, api="anthropic"), sim_base_url=sim.base_url, call_sink=records.append,
                         batch_journal=tmp_path / "batches.jsonl") as client:
        replies = await chat_all(client, model, 3)
    assert [f"echo: question {i}" for i in range(3)] == replies
    batches = list(sim.batches.batches.values())
    assert ([3, 3], {"k0": 1, "k1": 1, "k2": 1}) == ([len(b.lines) for b in batches], sim.stats.batch_billed)
    assert all(b.ident.startswith("msgbatch-") for b in batches)
    first = records[0]
    assert first.cost_usd == pytest.approx(
        (first.usage.prompt_tokens * 1.0 + first.usage.completion_tokens * 4.0) / 1e6)


def test_the_anthropic_request_mapping_of_judge_and_agent_requests():
    """The Messages transport's mapping (``to_anthropic``), never streamed: system messages joined into ``system``,
    max_tokens defaulted (Anthropic requires it); an agent's tools, tool calls and results as ``tools``,
    ``tool_use`` and ``tool_result`` blocks."""
    from mpcbench_async.llm._batch_anthropic import messages_params

    body = {"model": "claude-haiku-4-5", "temperature": 0, "stream": True, "messages": [
        {"role": "system", "content": "You judge."}, {"role": "user", "content": "Score this."},
        {"role": "assistant", "content": "{}"}, {"role": "user", "content": "Fix: missing keys."}]}
    assert {"model": "claude-haiku-4-5", "max_tokens": 4096, "system": [{"type": "text", "text": "You judge."}],
            "temperature": 0, "messages": [{"role": "user", "content": "Score this."},
                                           {"role": "assistant", "content": "{}"},
                                           {"role": "user", "content": "Fix: missing keys."}]} == messages_params(body)
    call = {"id": "call_1", "type": "function", "function": {"name": "calendar", "arguments": '{"day": "mon"}'}}
    agent = {"model": "claude-haiku-4-5", "tools": [{"type": "function", "function": {
        "name": "calendar", "description": "Events.", "parameters": {"type": "object"}}}], "messages": [
        {"role": "user", "content": "When?"}, {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "[]"}]}
    assert {"model": "claude-haiku-4-5", "max_tokens": 4096, "messages": [
        {"role": "user", "content": "When?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "calendar",
                                           "input": {"day": "mon"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "[]"}]}],
        "tools": [{"name": "calendar", "description": "Events.", "input_schema": {"type": "object"}}]} == (
        messages_params(agent))


async def test_a_request_the_provider_refuses_in_a_batch_fails_alone_and_is_not_resubmitted(sim: SimServer):
    """A 400 for a batched request: that call fails with the provider's text, not resubmitted; others answered."""
    both = ModelConfig.from_dict({"defaults": {"batch": FAST}})
    async with LLMClient(both, sim_base_url=sim.base_url) as client:
        bad = "sim/echo?fault=400&fail_first=1"
        async with anyio.create_task_group() as tg:
            out: dict[str, Any] = {}

            async def one(model: str, key: str) -> None:
                try:
                    out[key] = (await client.chat(model, ask(1)[0], key=key)).content
                except LLMError as exc:
                    out[key] = exc

            tg.start_soon(one, "sim/echo", "good")
            tg.start_soon(one, bad, "bad")
    assert "echo: question 0" == out["good"]
    assert isinstance(out["bad"], LLMError) and not out["bad"].retryable
    assert "HTTP 400: simulated bad request" in str(out["bad"])
    assert ({"batches": 2}, {"good": 1}, {}) == (sim.stats.batch_creates, sim.stats.batch_billed, sim.stats.received)
