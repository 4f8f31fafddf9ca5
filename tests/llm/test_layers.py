"""The client's layers one by one, each around a scripted inner layer (its true edge), then chains built from lists.

A layer's unit test hands it a ``Call`` of a real client's model state and an inner ``Script`` layer that
answers or raises what the test says, so each test sees exactly what the layer does with a reply or a failure.
The chains at the end talk to the embedded sim over real HTTP.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import anyio
import msgspec
import orjson
import pytest

from mpcbench_async import (
    CircuitOpenError,
    ConfigError,
    LLMCallRecord,
    Message,
    ModelConfig,
    PermanentLLMError,
    RateLimitError,
    ServerError,
    Usage,
)
from mpcbench_async._exceptions import LedgerError
from mpcbench_async.llm import (
    DEFAULT_LAYERS,
    Budget,
    BudgetExceeded,
    Call,
    CallLedger,
    Layer,
    LLMClient,
    MockTransport,
    ResponseCache,
    WireCompletion,
)
from mpcbench_async.llm._layer_breaker import BreakerLayer
from mpcbench_async.llm._layer_budget import BudgetLayer
from mpcbench_async.llm._layer_cache import CacheLayer
from mpcbench_async.llm._layer_ledger import LedgerLayer
from mpcbench_async.llm._layer_limiter import LimiterLayer
from mpcbench_async.llm._layer_records import RecordsLayer
from mpcbench_async.llm._layer_retry import RetryLayer
from mpcbench_async.llm._layer_send import TransportSend
from mpcbench_async.llm._wire import StreamTiming, completion_from_builtins
from mpcbench_async.runtime import FakeClock

MODEL = "sim/echo"
MESSAGES = [Message(role="user", content="hi")]
CONFIG = ModelConfig.from_dict({"models": {MODEL: {
    "prices": {"input_per_1m": 1000.0, "output_per_1m": 4000.0}, "params": {"max_tokens": 20},
    "retry": {"max_attempts": 3, "initial_backoff": 0.5, "max_backoff": 0.5}, "breaker": {"failures": 2}}}})
REPLY = completion_from_builtins({"id": "r1", "choices": [{"message": {"content": "hello"}}],
                                  "usage": {"prompt_tokens": 100, "completion_tokens": 10}}, model=MODEL, endpoint="e")
COST = 100 * 1000.0 / 1e6 + 10 * 4000.0 / 1e6  # 0.14


def unreachable(*_args: object) -> dict:
    raise AssertionError("a layer's unit test sends nothing through the transport")


class Script(Layer):
    """The inner edge: answers each send with the next scripted reply or raises the next scripted error."""

    def __init__(self, *outcomes: WireCompletion | BaseException) -> None:
        self.outcomes = list(outcomes)
        self.seen: list[int] = []  # the call's attempt count at each send

    async def send(self, call: Call) -> WireCompletion:
        self.seen.append(call.attempts)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


@pytest.fixture
async def client():
    async with LLMClient(CONFIG, transport=MockTransport(unreachable)) as client:
        yield client


def new_call(client: LLMClient, key: str = "k1", attempts: int = 0) -> Call:
    state = client._state(MODEL)
    request = client._requests.build(state.settings, state.endpoint.api_model, MESSAGES, None, {}, key)
    return Call(state=state, model=MODEL, request=request,
                estimated_prompt_tokens=100, max_out=20, attempts=attempts)


def around(layer: Layer, inner: Layer) -> Layer:
    layer.inner = inner
    return layer


def server_error() -> ServerError:
    return ServerError("HTTP 500", status=500, model=MODEL, endpoint="e")


class TestCacheLayer:
    async def test_a_repeat_is_answered_from_the_cache_without_going_further(self, client, tmp_path: Path):
        records: list[LLMCallRecord] = []
        client.call_sink = records.append
        cache = ResponseCache(tmp_path / "c.sqlite3")
        inner = Script(REPLY)
        layer = around(CacheLayer(cache, client._accounting), inner)
        first, second = new_call(client), new_call(client)
        assert REPLY.choices == (await layer.send(first)).choices
        assert REPLY.choices == (await layer.send(second)).choices
        cache.close()
        assert ([0], None) == (inner.seen, first.result)  # the miss went on; its result is the inner layers' job
        assert ("hello", 0, pytest.approx(COST)) == (second.result.content, second.result.attempts,
                                                     second.result.cost_usd)
        assert [(True, 0, 0.0, pytest.approx(COST))] == [(r.cached, r.attempts, r.cost_usd, r.value_usd)
                                                         for r in records]

    async def test_mode_off_passes_every_call_on(self, client, tmp_path: Path):
        cache = ResponseCache(tmp_path / "c.sqlite3", mode="off")
        inner = Script(REPLY, REPLY)
        layer = around(CacheLayer(cache, client._accounting), inner)
        await layer.send(new_call(client))
        await layer.send(new_call(client))
        cache.close()
        assert [0, 0] == inner.seen


class TestBudgetLayer:
    async def test_the_worst_case_is_held_while_in_flight_and_settled_at_the_price(self, client):
        budget = Budget(1.0)
        held: list[float] = []

        class Peek(Script):
            async def send(self, call: Call) -> WireCompletion:
                held.append(budget.reserved_usd)
                return await super().send(call)

        await around(BudgetLayer(budget, "mc.json"), Peek(REPLY)).send(new_call(client))
        assert ([pytest.approx(0.18)], 0.0, pytest.approx(COST)) == (held, budget.reserved_usd, budget.spent_usd)

    async def test_a_failed_call_is_released_and_a_refused_one_sends_nothing(self, client):
        budget = Budget(0.3)
        inner = Script(server_error())
        layer = around(BudgetLayer(budget, "mc.json"), inner)
        with pytest.raises(ServerError):
            await layer.send(new_call(client))
        budget.add_spent(MODEL, 0.15)  # 0.15 + a worst case of 0.18 passes 0.3
        with pytest.raises(BudgetExceeded):
            await layer.send(new_call(client))
        assert ([0], 0.0, pytest.approx(0.15)) == (inner.seen, budget.reserved_usd, budget.spent_usd)

    async def test_a_call_cancelled_after_its_intent_keeps_its_worst_case(self, client):
        budget = Budget(1.0)

        class SentThenCancelled(Layer):
            async def send(self, call: Call) -> WireCompletion:
                call.call_id = "c-1"
                raise anyio.get_cancelled_exc_class()

        with pytest.raises(anyio.get_cancelled_exc_class()):
            await around(BudgetLayer(budget, "mc.json"), SentThenCancelled()).send(new_call(client))
        assert (pytest.approx(0.18), 1) == (budget.spent_usd, budget.unsettled_calls)


class TestRecordsLayer:
    async def test_an_answered_call_is_priced_recorded_and_counted(self, client):
        records: list[LLMCallRecord] = []
        client.call_sink = records.append
        call = new_call(client, attempts=2)
        await around(RecordsLayer(client._accounting), Script(REPLY)).send(call)
        [record] = records
        assert ("ok", 2, 110, pytest.approx(COST), "r1", "mock") == (
            record.status, record.attempts, record.usage.total_tokens, record.cost_usd, record.response_id,
            record.transport)
        assert ("hello", pytest.approx(COST), 2) == (call.result.content, call.result.cost_usd, call.result.attempts)
        assert (1, 0, 2) == (client.totals()[MODEL].calls, client.totals()[MODEL].errors,
                             client.totals()[MODEL].attempts)

    async def test_a_failed_call_is_one_error_record_and_the_error_goes_on(self, client):
        records: list[LLMCallRecord] = []
        client.call_sink = records.append
        with pytest.raises(ServerError):
            await around(RecordsLayer(client._accounting), Script(server_error())).send(new_call(client, attempts=1))
        assert [("error", "ServerError", str(server_error()))] == [
            (r.status, r.error_class, r.error_message) for r in records]


    @pytest.mark.parametrize("case", ["plain", "streamed", "streamed-without-tokens", "failed", "retried-in-ledger"])
    def test_a_record_has_the_bytes_of_one_given_every_field(self, client, case):
        """``Call.record`` gives only the fields a call changed to the constructor and sets the rest after: the
        record and its line in calls.jsonl are those of the record given every field at once, as it was made."""
        call = new_call(client, attempts=2)
        call.started_at, call.latency_s = 1764000000.25, 0.75
        usage, error, completion = Usage(prompt_tokens=100, completion_tokens=10, total_tokens=110), None, REPLY
        stream = None
        if case == "streamed":
            stream = StreamTiming(ttft_s=0.125, itl_s=[0.01, 0.02], chunks=3)
        elif case == "streamed-without-tokens":
            stream = StreamTiming(ttft_s=0.0, itl_s=[], chunks=0)
        elif case == "failed":
            usage, error, completion = None, server_error(), None
        elif case == "retried-in-ledger":
            call.queued_s, call.retry_wait_s, call.call_id = 0.5, 1.5, "c-1"
        record = call.record(transport="native", usage=usage, cost_usd=COST, cached_tokens=7 * (case == "plain"),
                             reasoning_tokens=3 * (case == "plain"), error=error, stream=stream, completion=completion)
        ttft, tpot, end, itl = (None, None, None, None)
        if case == "streamed":
            spent = math.fsum([0.01, 0.02])
            ttft, tpot, end, itl = 0.125, spent / 9, round(0.75 - 0.125 - spent, 6), [0.01, 0.02]
        elif case == "streamed-without-tokens":
            itl = []
        whole = LLMCallRecord(
            model=MODEL, key="k1", status="error" if error else "ok", attempts=2, started_at=call.started_at,
            latency_s=0.75, queued_s=call.queued_s, retry_wait_s=call.retry_wait_s, ttft_s=ttft, tpot_s=tpot,
            stream_end_s=end, itl_s=itl, usage=usage or Usage(), estimated_prompt_tokens=100, cost_usd=COST,
            cached_tokens=7 * (case == "plain"), reasoning_tokens=3 * (case == "plain"),
            error_class=type(error).__name__ if error else None, error_message=str(error) if error else None,
            transport="native", call_id=call.call_id, request_id=None,
            response_id="r1" if completion is not None else None)
        assert (whole, msgspec.json.encode(whole)) == (record, msgspec.json.encode(record))


class TestBreakerLayer:
    async def test_failed_calls_in_a_row_open_it_and_then_nothing_is_sent(self, client):
        inner = Script(PermanentLLMError("HTTP 501", status=501, model=MODEL, endpoint="e"),
                       PermanentLLMError("HTTP 501", status=501, model=MODEL, endpoint="e"))
        layer = around(BreakerLayer(), inner)
        for _ in range(2):
            with pytest.raises(PermanentLLMError):
                await layer.send(new_call(client))
        with pytest.raises(CircuitOpenError):
            await layer.send(new_call(client))
        assert ([0, 0], 3) == (inner.seen, client._state(MODEL).breaker.affected)

    async def test_a_ledger_failure_is_no_evidence_about_the_endpoint(self, client):
        inner = Script(*(LedgerError("disk full", model=MODEL, endpoint="e") for _ in range(3)))
        layer = around(BreakerLayer(), inner)
        for _ in range(3):
            with pytest.raises(LedgerError):
                await layer.send(new_call(client))
        assert (False, 0) == (client._state(MODEL).breaker.is_open, client._state(MODEL).breaker.consecutive)

    async def test_it_leaves_the_breaker_on_the_call_for_the_retries_below(self, client):
        call = new_call(client)
        await around(BreakerLayer(), Script(REPLY)).send(call)
        assert client._state(MODEL).breaker is call.breaker


class TestRetryLayer:
    async def test_transient_failures_are_retried_with_backoff_and_counted(self, client):
        clock = FakeClock()
        layer = RetryLayer(clock, random.Random(1))
        inner = Script(server_error(), RateLimitError("HTTP 429", status=429, model=MODEL, endpoint="e"), REPLY)
        call = new_call(client)
        assert REPLY == await around(layer, inner).send(call)
        assert ([1, 2, 3], 3, 2) == (inner.seen, call.attempts, layer.retries)
        assert call.retry_wait_s == pytest.approx(sum(clock.slept)) and len(clock.slept) == 2

    async def test_the_last_failure_goes_on_after_max_attempts(self, client):
        inner = Script(server_error(), server_error(), server_error())
        with pytest.raises(ServerError):
            await around(RetryLayer(FakeClock(), random.Random(1)), inner).send(new_call(client))
        assert [1, 2, 3] == inner.seen

    async def test_a_retry_is_refused_once_the_breaker_on_the_call_opened(self, client):
        call = new_call(client)
        call.breaker = breaker = client._state(MODEL).breaker
        breaker.cause = server_error()  # opened meanwhile by other calls
        inner = Script(server_error(), REPLY)
        with pytest.raises(CircuitOpenError):
            await around(RetryLayer(FakeClock(), random.Random(1)), inner).send(call)
        assert ([1], 1) == (inner.seen, call.attempts)


class RecordingLimiter:
    """The limiter edge: what the layer asks of it."""

    def __init__(self) -> None:
        self.events: list[object] = []

    def slot(self, tokens: int):
        limiter = self

        class Ticket:
            queued_s = 0.25

        class Slot:
            async def __aenter__(self) -> Ticket:
                limiter.events.append(("slot", tokens))
                return Ticket()

            async def __aexit__(self, *exc: object) -> None:
                limiter.events.append("free")

        return Slot()

    def observe(self, headers: object, _ticket: object = None) -> None:
        self.events.append(("observe", headers))

    def on_rate_limited(self, _ticket: object) -> None:
        self.events.append("rate-limited")

    async def on_success(self) -> None:
        self.events.append("success")


class TestLimiterLayer:
    async def test_each_attempt_holds_a_slot_and_the_limiter_learns_from_replies_and_429s(self):
        limiter = RecordingLimiter()
        async with LLMClient(CONFIG, transport=MockTransport(unreachable),
                             limiter_factory=lambda _m, _l: limiter) as client:  # type: ignore[arg-type,return-value]
            headers = {"x-ratelimit-remaining-requests": "3"}
            layer = around(LimiterLayer(), Script(RateLimitError("HTTP 429", status=429, model=MODEL, endpoint="e",
                                                                 headers=headers), REPLY))
            call = new_call(client)
            with pytest.raises(RateLimitError):
                await layer.send(call)
            await layer.send(call)
        assert [("slot", 120), ("observe", headers), "rate-limited", "free",
                ("slot", 120), ("observe", None), "success", "free"] == limiter.events
        assert call.queued_s == 0.5


class TestLedgerLayer:
    async def test_each_attempt_is_intended_under_one_call_id_before_it_goes_on(self, tmp_path: Path):
        ledger = CallLedger(tmp_path / "ledger.jsonl", fsync=False)
        async with LLMClient(CONFIG, sim_base_url="http://127.0.0.1:9/v1") as client:
            layer = around(LedgerLayer(ledger), Script(server_error(), REPLY))
            call = new_call(client, attempts=1)
            with pytest.raises(ServerError):
                await layer.send(call)
            call.attempts = 2
            await layer.send(call)
        ledger.close()
        intents = [orjson.loads(line) for line in (tmp_path / "ledger.jsonl").read_bytes().splitlines()]
        assert [(call.call_id, "k1", 1, MODEL), (call.call_id, "k1", 2, MODEL)] == [
            (i["call_id"], i["key"], i["attempt"], i["model"]) for i in intents]
        assert [pytest.approx(0.18)] * 2 == [i["worst_usd"] for i in intents]

    async def test_an_offline_transport_sends_nothing_so_nothing_is_intended(self, client, tmp_path: Path):
        ledger = CallLedger(tmp_path / "ledger.jsonl", fsync=False)
        call = new_call(client)
        await around(LedgerLayer(ledger), Script(REPLY)).send(call)
        ledger.close()
        path = tmp_path / "ledger.jsonl"
        assert (None, b"") == (call.call_id, path.read_bytes() if path.exists() else b"")


class TestTransportSend:
    async def test_one_attempt_reaches_the_sim_over_http_and_starts_the_deadline(self, sim):
        async with LLMClient(CONFIG, sim_base_url=sim.base_url) as client:
            call = new_call(client)
            reply = await TransportSend(client._clock).send(call)
        deadline_s = CONFIG.settings_for(MODEL).timeouts.call_deadline_s
        assert (1, 1, deadline_s) == (sim.stats.completed["k1"], len(reply.choices), call.deadline.seconds)
        assert call.latency_s > 0


class TestChains:
    async def test_the_default_chain_is_todays_order_with_the_provider_start_inside_the_cache(self, tmp_path: Path):
        """The provider start is linked in while a model waits for its provider, and out once it has started."""
        names: list[list[str]] = []
        async with LLMClient(CONFIG, cache=ResponseCache(tmp_path / "c.sqlite3"), budget=Budget(1.0)) as client:
            names.append([type(layer).__name__ for layer in client.layers])
            client.check_models([MODEL])
            names.append([type(layer).__name__ for layer in client.layers])
            await client.chat(MODEL, MESSAGES)
            names.append([type(layer).__name__ for layer in client.layers])
        layers = ["CacheLayer", "BudgetLayer", "RecordsLayer", "BreakerLayer", "RetryLayer", "LimiterLayer"]
        assert ("cache", "budget", "records", "breaker", "retry", "limiter", "ledger") == DEFAULT_LAYERS
        assert [layers, ["CacheLayer", "ProviderStart", *layers[1:]], layers] == names

    async def test_a_cache_hit_starts_no_provider(self, tmp_path: Path):
        async with LLMClient(CONFIG, cache=ResponseCache(tmp_path / "c.sqlite3")) as client:
            await client.chat(MODEL, MESSAGES, key="x")
        async with LLMClient(CONFIG, cache=ResponseCache(tmp_path / "c.sqlite3")) as client:
            result = await client.chat(MODEL, MESSAGES, key="x")
            assert ({}, 0) == (client._provider_urls, result.attempts)

    def test_an_unknown_layer_name_is_refused_naming_the_known_ones(self):
        with pytest.raises(ConfigError) as caught:
            LLMClient(CONFIG, layers=["records", "retries"])
        assert ("unknown client layer 'retries'; the built-in layers are cache, budget, records, breaker, retry, "
                "limiter, ledger") == str(caught.value)

    async def test_without_a_retry_layer_a_failure_is_final_after_one_attempt(self, sim):
        records: list[LLMCallRecord] = []
        async with LLMClient(sim_base_url=sim.base_url, call_sink=records.append,
                             layers=["records", "limiter"]) as client:
            with pytest.raises(ServerError):
                await client.chat("sim/echo?fault=500&fail_first=1", MESSAGES, key="a")
            result = await client.chat("sim/echo?fault=500&fail_first=1", MESSAGES, key="a")
        assert ([("error", 1), ("ok", 1)], 1, 0) == ([(r.status, r.attempts) for r in records], result.attempts,
                                                     client.retries)
        assert (2, 1) == (sim.stats.received["a"], sim.stats.completed["a"])
        assert ["RecordsLayer", "LimiterLayer"] == [type(layer).__name__ for layer in client.layers]

    async def test_a_layer_of_your_own_sees_every_attempt_where_it_is_put(self, sim):
        seen: list[tuple[str, int]] = []

        class Tag(Layer):
            async def send(self, call: Call) -> WireCompletion:
                seen.append((call.request.key, call.attempts))
                return await self.inner.send(call)

        async with LLMClient(CONFIG, sim_base_url=sim.base_url,
                             layers=["records", "breaker", "retry", Tag(), "limiter"]) as client:
            result = await client.chat(MODEL, MESSAGES, key="b")
        assert ([("b", 1)], 1) == (seen, sim.stats.completed["b"])
        assert result.content
