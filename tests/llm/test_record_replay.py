"""Record and replay: calls recorded through native against the sim are served back offline, identically."""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

import msgspec
import orjson
import pytest

from mpcbench_async import (
    ChatResult,
    ConfigError,
    FunctionSchema,
    LLMCallRecord,
    Message,
    ModelConfig,
    ReplayMissError,
    ReplyStoreError,
    ToolSchema,
    Usage,
)
from mpcbench_async.llm import (
    ChatRequest,
    Endpoint,
    LLMClient,
    MockTransport,
    RecordTransport,
    ReplayTransport,
    request_hash,
)
from mpcbench_async.llm._store import CallStore
from mpcbench_async.mpcbench import MPCBenchSuite, build_plan, load_prompts
from mpcbench_async.runner import Runner
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from mpcbench_async.testing import write_workspace

SCRIPT = [{"tool_calls": [{"name": "Search", "arguments": {"q": "launch"}}]}, {"content": "done"}]
TOOLS = [ToolSchema(function=FunctionSchema(name="Search"))]


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


def unused_base_url() -> str:
    """A loopback URL nothing listens on: a replayed call that touched the network would fail."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def config_for(base_url: str, **settings: object) -> ModelConfig:
    return ModelConfig.from_dict({"defaults": {"base_url": base_url, **settings}})


CALLS = [
    ("sim/echo", user("hello"), None, "k1"),
    ("sim/echo", user("a second, different question"), None, "k2"),
    ("sim/scripted", [Message(role="system", content="SIM_SCRIPT:" + orjson.dumps(SCRIPT).decode()),
                      Message(role="user", content="go")], TOOLS, "k3"),
]


async def run_calls(client: LLMClient) -> list[ChatResult]:
    return [msgspec.structs.replace(await client.chat(model, messages, tools, key=key), latency_s=0.0)
            for model, messages, tools, key in CALLS]


def comparable(records: list[LLMCallRecord]) -> list[LLMCallRecord]:
    """Call records without what differs between two runs of the same calls (wall-clock times, and the provider's
    request id: a header of the live reply, which a store keeps no more than it keeps the timing)."""
    return [msgspec.structs.replace(r, started_at=0.0, latency_s=0.0, request_id=None) for r in records]


@pytest.fixture
async def recorded(sim, fake_clock, tmp_path) -> tuple[Path, list[ChatResult], list[LLMCallRecord]]:
    """CALLS recorded through native against the sim into a fresh store: (store, results, call records)."""
    store = tmp_path / "store.jsonl"
    records: list[LLMCallRecord] = []
    async with LLMClient(config_for(sim.base_url), transport="record", store=store, clock=fake_clock,
                         call_sink=records.append) as client:
        results = await run_calls(client)
    return store, results, records


class TestRequestHash:
    def test_is_sha256_of_the_canonical_json(self):
        """The hash is sha256 over the body's JSON with sorted keys and no whitespace (reproducible anywhere)."""
        body = {"model": "m", "messages": [{"role": "user", "content": "é"}], "temperature": 0}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        assert hashlib.sha256(canonical).hexdigest() == request_hash(body)

    def test_key_order_and_reply_neutral_fields_do_not_count(self):
        """Key order, user, metadata, store and service_tier leave the hash unchanged."""
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        tagged = {"messages": [{"content": "x", "role": "user"}], "model": "m", "user": "u-1",
                  "metadata": {"run": "7"}, "store": True, "service_tier": "flex"}
        assert request_hash(body) == request_hash(tagged)

    def test_params_messages_and_model_count(self):
        """A different param, message or API model is a different request."""
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        variants = [{**body, "temperature": 0.5}, {**body, "model": "n"},
                    {**body, "messages": [{"role": "user", "content": "y"}]}]
        assert 4 == len({request_hash(b) for b in [body, *variants]})


class TestRecord:
    async def test_store_lines_hold_hash_key_request_and_response(self, recorded):
        """Each successful call is one line: hash, call key, the body sent and the reply as a completion body."""
        store, _, _ = recorded
        lines = [orjson.loads(line) for line in store.read_bytes().splitlines()]
        first = lines[0]
        request = {"model": "sim/echo", "messages": [{"role": "user", "content": "hello"}]}
        assert (["hash", "key", "request", "response"], request_hash(request), "k1", request) == (
            list(first), first["hash"], first["key"], first["request"])
        assert ("echo: hello", "stop") == (first["response"]["choices"][0]["message"]["content"],
                                           first["response"]["choices"][0]["finish_reason"])
        assert ["k1", "k2", "k3"] == [line["key"] for line in lines]
        assert [{"function": {"name": "Search", "parameters": {"type": "object", "properties": {}}}}] == (
            lines[2]["request"]["tools"])

    async def test_call_records_are_marked_record(self, recorded):
        """Calls made through the record transport say so in their call records."""
        _, _, records = recorded
        assert [("ok", "record")] * 3 == [(r.status, r.transport) for r in records]

    async def test_failed_attempts_are_not_recorded(self, sim, fake_clock, tmp_path):
        """A call that failed once with 503 and then succeeded leaves one line: the reply."""
        store = tmp_path / "store.jsonl"
        async with LLMClient(config_for(sim.base_url), transport="record", store=store, clock=fake_clock) as client:
            result = await client.chat("sim/echo?fault=503&fail_first=1", user("flaky"), key="f")
        lines = [orjson.loads(line) for line in store.read_bytes().splitlines()]
        assert (2, ["echo: flaky"]) == (result.attempts,
                                        [line["response"]["choices"][0]["message"]["content"] for line in lines])


class TestReplay:
    async def test_replay_without_the_sim_gives_identical_results(self, recorded, fake_clock):
        """Replayed with nothing listening at the model's URL: the same ChatResults and call records."""
        store, results, records = recorded
        replayed: list[LLMCallRecord] = []
        async with LLMClient(config_for(unused_base_url()), transport="replay", store=store, clock=fake_clock,
                             call_sink=replayed.append) as client:
            assert results == await run_calls(client)
        expected = [msgspec.structs.replace(r, transport="replay") for r in comparable(records)]
        assert expected == comparable(replayed)

    async def test_selected_by_the_model_config(self, recorded, fake_clock):
        """transport and store set in model_config.json select replay with no client arguments."""
        store, results, _ = recorded
        async with LLMClient(config_for(unused_base_url(), transport="replay", store=str(store)),
                             clock=fake_clock) as client:
            assert results == await run_calls(client)

    async def test_miss_names_model_request_and_store_and_is_not_retried(self, recorded, fake_clock):
        """An unrecorded request fails at once with the model, request hash, first user message and store."""
        store, _, _ = recorded
        records: list[LLMCallRecord] = []
        question = "what was never asked before, in a sentence longer than sixty characters"
        async with LLMClient(config_for(unused_base_url()), transport="replay", store=store, clock=fake_clock,
                             call_sink=records.append) as client:
            with pytest.raises(ReplayMissError) as caught:
                await client.chat("sim/echo", [Message(role="system", content="be brief"), *user(question)])
        digest = request_hash({"model": "sim/echo", "messages": [{"role": "system", "content": "be brief"},
                                                                  {"role": "user", "content": question}]})
        expected = (f"model 'sim/echo' at replay store {store}: no recorded reply for request {digest} (first "
                    f"user message: 'what was never asked before, in a sentence longer than sixty…'); record "
                    f"it into this store with the 'record' transport")
        assert expected == str(caught.value)
        assert [] == fake_clock.slept
        assert [("error", 1, "ReplayMissError", expected, "replay")] == [
            (r.status, r.attempts, r.error_class, r.error_message, r.transport) for r in records]

    async def test_changed_params_miss(self, recorded, fake_clock):
        """The same messages with another temperature are another request: a miss."""
        store, _, _ = recorded
        async with LLMClient(config_for(unused_base_url()), transport="replay", store=store,
                             clock=fake_clock) as client:
            with pytest.raises(ReplayMissError):
                await client.chat("sim/echo", user("hello"), temperature=0.7)

    async def test_limits_and_accounting_apply(self, recorded, fake_clock):
        """Replayed calls wait on the model's RPM limit and count tokens and cost from the recorded usage."""
        store, results, _ = recorded
        config = config_for(unused_base_url(), limits={"rpm": 1},
                            prices={"input_per_1m": 1.0, "output_per_1m": 2.0})
        async with LLMClient(config, transport="replay", store=store, clock=fake_clock) as client:
            await client.chat("sim/echo", user("hello"), key="k1")
            await client.chat("sim/echo", user("a second, different question"), key="k2")
            totals = client.totals()["sim/echo"]
        usage = results[0].usage + results[1].usage
        assert [60.0] == fake_clock.slept
        assert (2, usage) == (totals.calls, totals.usage)
        assert pytest.approx((usage.prompt_tokens + 2 * usage.completion_tokens) / 1e6) == totals.cost_usd

    async def test_missing_store_is_a_config_error_before_any_call(self, tmp_path):
        """Replaying from a store that does not exist fails when the model is resolved."""
        client = LLMClient(config_for(unused_base_url()), transport="replay", store=tmp_path / "none.jsonl")
        with pytest.raises(ConfigError) as caught:
            client.check_models(["sim/echo"])
        assert (f"{tmp_path / 'none.jsonl'}: replay store not found (record one with the 'record' transport)"
                == str(caught.value))


def reply_for(endpoint: Endpoint, request: ChatRequest) -> dict:
    return {"choices": [{"message": {"content": f"reply to {request.key}"}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1}}


class TestStore:
    async def test_same_request_under_several_keys(self, tmp_path):
        """Identical requests recorded under two keys replay by key; an unknown key gets the last one recorded."""
        store = tmp_path / "store.jsonl"
        async with LLMClient(transport=RecordTransport(MockTransport(reply_for), CallStore(store))) as client:
            for key in ("trial-0", "trial-1"):
                await client.chat("gpt-x", user("same"), key=key)
        async with LLMClient(transport=ReplayTransport(CallStore(store))) as client:
            served = [(await client.chat("gpt-x", user("same"), key=key)).content
                      for key in ("trial-1", "trial-0", "trial-9")]
        assert ["reply to trial-1", "reply to trial-0", "reply to trial-1"] == served

    async def test_hand_written_lines_need_only_request_and_response(self, tmp_path):
        """A line with just request and response (e.g. a converted fixture) is served."""
        store = tmp_path / "store.jsonl"
        line = {"request": {"model": "gpt-x", "messages": [{"role": "user", "content": "q"}]},
                "response": {"choices": [{"message": {"content": "a"}}]}}
        store.write_bytes(orjson.dumps(line) + b"\n")
        async with LLMClient(transport="replay", store=store) as client:
            assert "a" == (await client.chat("gpt-x", user("q"))).content

    async def test_torn_tail_is_skipped_on_replay_and_trimmed_on_record(self, recorded, fake_clock):
        """A half-written last line is ignored by replay and cut off before the next recording appends."""
        store, results, _ = recorded
        with store.open("ab") as fh:
            fh.write(b'{"hash": "to')
        async with LLMClient(config_for(unused_base_url()), transport="replay", store=store,
                             clock=fake_clock) as client:
            assert results == await run_calls(client)
        async with LLMClient(transport=RecordTransport(MockTransport(reply_for), CallStore(store))) as client:
            await client.chat("gpt-x", user("new"), key="n")
        lines, report = read_jsonl(store)
        assert (4, False, []) == (len(lines), report.torn_tail, report.bad_lines)

    async def test_recorded_reply_without_choices_names_the_store(self, tmp_path):
        """A store line whose reply has no choices fails the call naming the store and the request; retryable (the
        store's failure, not the unit's result: once the store is repaired a rerun runs the unit again)."""
        store = tmp_path / "store.jsonl"
        request = {"model": "gpt-x", "messages": [{"role": "user", "content": "q"}]}
        store.write_bytes(orjson.dumps({"request": request, "response": {"choices": []}}) + b"\n")
        async with LLMClient(transport="replay", store=store) as client:
            with pytest.raises(ReplyStoreError) as caught:
                await client.chat("gpt-x", user("q"))
        assert (f"{store}: the recorded reply to request {request_hash(request)} has no choices; repair or re-record "
                "the replay store, then rerun") == str(caught.value)
        assert caught.value.retryable


TIMING_FIELDS = {"started_at", "finished_at", "latency_s", "duration_s", "queued_s", "timings"}


class TestThroughTheRunner:
    async def test_a_recorded_sweep_replays_offline_with_the_same_records(self, tmp_path):
        """A sweep recorded against the sim replays with the sim stopped: same runs, judgements and tokens."""
        store = tmp_path / "store.jsonl"

        async def sweep(root: Path, transport: str, out: Path) -> list[list[dict]]:
            raw = orjson.loads((root / "model_config.json").read_bytes())
            raw["defaults"].update(transport=transport, store=str(store))
            config = ModelConfig.from_dict(raw)
            prompts = load_prompts(root / "prompt_config.json")
            plan = build_plan(config=config, prompts=prompts, tasks_dir=root / "tasks", data_dir=root / "data",
                              scenarios_dir=root / "scenarios", trials=1)
            async with Runner(config, out_dir=out, concurrency=2) as runner:
                await runner.run(MPCBenchSuite(plan, prompts))
            return [read_jsonl(out / name)[0] for name in ("runs.jsonl", "judgements.jsonl", "calls.jsonl")]

        async with SimServer(seed=3) as sim:
            root = write_workspace(tmp_path / "ws", base_url=sim.base_url, tasks=3)
            runs, judgements, calls = await sweep(root, "record", tmp_path / "out-record")
        replayed_runs, replayed_judgements, replayed_calls = await sweep(root, "replay", tmp_path / "out-replay")

        def untimed(value: object) -> object:
            if isinstance(value, dict):
                return {k: untimed(v) for k, v in value.items() if k not in TIMING_FIELDS}
            return [untimed(v) for v in value] if isinstance(value, list) else value

        def stable(records: list[dict]) -> list[bytes]:
            return sorted(orjson.dumps(untimed(r), option=orjson.OPT_SORT_KEYS) for r in records)

        def tokens(records: list[dict]) -> Usage:
            return sum((msgspec.convert(c["usage"], Usage) for c in records), Usage())

        assert (6, 6) == (len(runs), len(judgements))
        assert {"ok"} == {r["status"] for r in runs + judgements}
        assert (stable(runs), stable(judgements)) == (stable(replayed_runs), stable(replayed_judgements))
        assert ({"record"}, {"replay"}) == ({c["transport"] for c in calls}, {c["transport"] for c in replayed_calls})
        assert tokens(calls) == tokens(replayed_calls) != Usage()
