"""``LLMClient``: chat with any configured model through one retry loop and its limiter.

One client serves many models. Per model it keeps the resolved endpoint, a
``ModelLimiter`` and running totals; per call it builds the request once,
waits for the limiter, sends through the model's transport, retries transient
failures (tenacity, ``runtime.retrying``) within the call's deadline and reports
one ``LLMCallRecord`` to ``call_sink`` (e.g. a JSONL writer). A per-model circuit
breaker (``_breaker``) makes a dead endpoint fail fast. The transport comes from
the registry (``_registry``) by the model's configured name, or from the client's
``transport=`` (a name for every model, or a ``Transport`` instance such as
``MockTransport(handler)``). A model served by an in-process provider
(``_providers``; the embedded sim for ``sim/...``) gets it started on its first
call and stopped in ``aclose()``; each client owns its own. Calls are priced by
``_prices`` (unknown: ``cost_usd`` null), their TPM reservation uses the model's
calibrated ``TokenEstimator``, a ``ResponseCache`` answers repeats without sending
them and a ``Budget`` refuses calls whose worst case would pass its limits. With a
``CallLedger`` (``_ledger``), each request's intent — call id, key, attempt, model,
worst-case cost — is durable on disk before the request is sent, and the call's
record carries the same ``call_id``, which settles it. Usage::

    async with LLMClient(load_model_config("model_config.json")) as client:
        result = await client.chat("gpt-4o-mini", [Message(role="user", content="hi")])

    # offline, from replies recorded earlier with transport="record" and the same store
    async with LLMClient(config, transport="replay", store="calls_store.jsonl") as client: ...
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import msgspec
import orjson

from .._exceptions import (
    ConfigError,
    LedgerError,
    LLMError,
    LLMTimeoutError,
    MissingAPIKeyError,
    RateLimitError,
    TransientLLMError,
)
from .._redact import register_secret, register_secret_headers, register_secret_url
from ..records import CallIntent, ChatResult, LLMCallRecord, Message, ToolSchema, Usage
from ..runtime import Clock, Deadline, Limiter, LimitSettings, ModelLimiter, MonotonicClock, retrying
from ._breaker import CircuitBreaker
from ._budget import Budget, Reservation, worst_case_usd
from ._cache import ResponseCache, cache_digest
from ._config import DEFAULT_BASE_URL, ModelConfig, ModelSettings, Prices
from ._estimate import TokenEstimator
from ._ledger import CallLedger
from ._prices import model_prices
from ._provider_protocol import Provider
from ._providers import create_provider, provider_prefix
from ._registry import TransportOptions, create_transport
from ._transport import ChatRequest, Endpoint, Transport
from ._wire import StreamTiming, WireCompletion, to_chat_result

__all__ = ["LLMClient", "ModelTotals", "is_sim_model"]

_messages_encoder = msgspec.json.Encoder()


def is_sim_model(name: str) -> bool:
    """Models named ``sim/...`` are served by the embedded simulated provider."""
    return name.startswith("sim/")


class ModelTotals(msgspec.Struct, kw_only=True):
    """Running totals for one model within one client; ``cost_usd`` is ``None`` once a reply had no known price."""

    calls: int = 0
    errors: int = 0
    attempts: int = 0
    cached: int = 0
    usage: Usage = msgspec.field(default_factory=Usage)
    cost_usd: float | None = 0.0


class _Timing(msgspec.Struct, kw_only=True):
    """How one call went: when it started, its attempts and where its time went (for its call record)."""

    started_at: float
    estimated_prompt_tokens: int = 0
    attempts: int = 0
    queued_s: float = 0.0
    retry_wait_s: float = 0.0
    latency_s: float = 0.0
    call_id: str | None = None  # set once an intent of the call is in the ledger: its record settles it

    def record(self, model: str, key: str, *, transport: str, usage: Usage | None = None,
               cost_usd: float | None = 0.0, cached_tokens: int = 0, reasoning_tokens: int = 0,
               error: LLMError | None = None, stream: StreamTiming | None = None,
               completion: WireCompletion | None = None) -> LLMCallRecord:
        ttft = tpot = itl = None
        if stream is not None and stream.chunks:  # no token chunk at all: no first token to time
            # TPOT as vLLM defines it: the time after the first token per further token
            ttft, itl = stream.ttft_s, stream.itl_s
            tokens = usage.completion_tokens if usage is not None else 0
            tpot = (self.latency_s - ttft) / (tokens - 1) if tokens > 1 else None
        elif stream is not None:
            itl = []
        return LLMCallRecord(
            model=model, key=key, status="error" if error else "ok", attempts=self.attempts,
            started_at=self.started_at, latency_s=self.latency_s, queued_s=self.queued_s,
            retry_wait_s=self.retry_wait_s, ttft_s=ttft, tpot_s=tpot, itl_s=itl, usage=usage or Usage(),
            estimated_prompt_tokens=self.estimated_prompt_tokens, cost_usd=cost_usd, cached_tokens=cached_tokens,
            reasoning_tokens=reasoning_tokens, error_class=type(error).__name__ if error else None,
            error_message=str(error) if error else None, transport=transport, call_id=self.call_id,
            request_id=completion.request_id if completion is not None else None,
            response_id=(completion.id or None) if completion is not None else None)


class _ModelState:
    """What the client keeps per model: settings, prices, endpoint, limiter, transport, breaker, estimator, totals.

    ``provider`` names the in-process provider whose URL the endpoint still waits
    for (set by the first call, which starts it); ``None`` once the endpoint is final.
    ``cache_endpoint`` names the endpoint in response-cache keys: the configured
    base URL, or the provider (``sim://``), whose URL changes from run to run.
    """

    def __init__(self, name: str, settings: ModelSettings, endpoint: Endpoint, limiter: Limiter,
                 transport: Transport, provider: str | None, cache_endpoint: str) -> None:
        self.settings = settings
        self.prices = model_prices(name, settings)
        self.limiter = limiter
        self.transport = transport
        self.provider = provider
        self.set_endpoint(endpoint)
        self.cache_endpoint = cache_endpoint
        self.estimator = TokenEstimator()
        self.totals = ModelTotals()

    def set_endpoint(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.breaker = CircuitBreaker(endpoint.model, endpoint.url, self.settings.breaker.failures)


class LLMClient:
    """Chat with configured models; owns transports, limiters and accounting.

    ``transport`` overrides every model's configured transport: a registered name,
    or a ``Transport`` instance (which the client then owns and closes). ``store``
    overrides every model's ``store`` (the call store of ``record`` and ``replay``).
    ``cache`` answers repeated requests without sending them (``ResponseCache``; the
    client closes it); ``budget`` refuses calls whose worst case would pass its
    limits (``Budget``, which may be shared by several clients); ``ledger`` makes each request's intent durable
    before it is sent (``CallLedger``; the client does not close it). ``limiter_factory(model, limits)`` makes each
    model's limiter instead of a local ``ModelLimiter`` (a Ray worker's share of one global limit: a
    ``runtime.Limiter``).
    """

    def __init__(
        self,
        config: ModelConfig | None = None,
        *,
        transport: str | Transport | None = None,
        store: str | Path | None = None,
        call_sink: Callable[[LLMCallRecord], None] | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        sim_base_url: str | None = None,
        cache: ResponseCache | None = None,
        budget: Budget | None = None,
        ledger: CallLedger | None = None,
        limiter_factory: Callable[[str, LimitSettings], Limiter] | None = None,
    ) -> None:
        self.config = config or ModelConfig()
        self.ledger = ledger
        self._call_prefix = os.urandom(6).hex()  # call ids: unique across clients and invocations
        self._call_count = 0
        self._limiter_factory = limiter_factory
        self.call_sink = call_sink
        self.cache = cache
        self.budget = budget
        self._transport_override = transport
        self._store = store
        self._clock = clock or MonotonicClock()
        self._rng = rng or random.Random()
        self._sim_base_url = sim_base_url
        self._transports: dict[tuple[str, Path | None], Transport] = {}
        self._models: dict[str, _ModelState] = {}
        self._tools_cache: tuple[Sequence[ToolSchema], Any] | None = None
        self._providers: dict[str, Provider] = {}
        self._provider_urls: dict[str, str] = {}
        self._provider_lock: anyio.Lock | None = None
        self.retries = 0

    # -- set-up ------------------------------------------------------------
    def _transport(self, settings: ModelSettings) -> Transport:
        """The model's transport: the client's instance, else one per (registered name, store), shared by models."""
        override = self._transport_override
        if isinstance(override, Transport):
            return override
        name = override or settings.transport
        store = self._store or settings.store
        ident = (name, Path(store) if store is not None else None)
        transport = self._transports.get(ident)
        if transport is None:
            transport = self._transports[ident] = create_transport(name, TransportOptions(store=ident[1]))
        return transport

    def _endpoint(self, name: str, settings: ModelSettings, *, offline: bool,
                  provider: str | None) -> Endpoint:
        """The model's endpoint; a provider-served one gets its URL when the provider has started (``chat``)."""
        base_url = settings.base_url
        api_key: str | None = None
        if provider is not None and offline:
            base_url = f"{provider}://offline"  # an offline transport answers: nothing is started
        elif provider is not None and is_sim_model(name) and self._sim_base_url is not None:
            base_url = self._sim_base_url
        elif provider is not None:
            base_url = self._provider_urls.get(provider, "")  # "" until the first call starts the provider
        elif is_sim_model(name) and base_url is None:
            raise ConfigError(f"model {name!r}: no sim provider is registered in this process; "
                              f"set models.{name}.base_url in {self.config.source} to a running sim")
        elif not is_sim_model(name):
            base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
            if settings.api_key_env and not offline:
                api_key = os.environ.get(settings.api_key_env)
                if not api_key:
                    raise MissingAPIKeyError(
                        f"model {name!r} needs an API key: set the environment variable "
                        f"{settings.api_key_env} (or set models.{name}.api_key_env in "
                        f"{self.config.source}; null means the endpoint needs no key)"
                    )
                register_secret(api_key)  # from now on masked in every error text and log line
        register_secret_headers(settings.headers)
        register_secret_url(base_url)  # a key in the URL (``?key=…``) is masked in any shape too
        assert base_url is not None
        return Endpoint(model=name, api_model=settings.model or name, base_url=base_url, api_key=api_key,
                        headers=settings.headers, connect_s=settings.timeouts.connect_s,
                        read_s=settings.timeouts.read_s)

    def _state(self, name: str) -> _ModelState:
        state = self._models.get(name)
        if state is None:
            settings = self.config.settings_for(name)
            transport = self._transport(settings)
            provider = provider_prefix(name) if settings.base_url is None else None
            endpoint = self._endpoint(name, settings, offline=transport.offline, provider=provider)
            pending = provider if not endpoint.base_url else None
            served_here = provider is not None or (is_sim_model(name) and settings.base_url is None)
            cache_endpoint = f"{name.partition('/')[0]}://" if served_here else endpoint.base_url
            limiter = (self._limiter_factory(name, settings.limits) if self._limiter_factory is not None
                       else ModelLimiter(settings.limits, clock=self._clock))
            state = _ModelState(name, settings, endpoint, limiter, transport, pending, cache_endpoint)
            if pending is not None and pending not in self._providers:
                # created now, started by the first call: a provider that cannot be made fails check_models
                self._providers[pending] = create_provider(pending)
            self._models[name] = state
        return state

    async def _attach_provider(self, state: _ModelState) -> None:
        """Start the model's provider (once per client, off the caller's loop) and point the endpoint at it."""
        if self._provider_lock is None:
            self._provider_lock = anyio.Lock()
        async with self._provider_lock:
            prefix = state.provider
            if prefix is None:  # another call attached it while this one waited
                return
            url = self._provider_urls.get(prefix)
            if url is None:  # aclose stops the provider even if its start fails
                url = self._provider_urls[prefix] = await self._providers[prefix].start()
            state.set_endpoint(msgspec.structs.replace(state.endpoint, base_url=url))
            state.provider = None

    def check_models(self, names: Iterable[str]) -> None:
        """Resolve every model now, so a missing key fails before any call is made."""
        for name in names:
            self._state(name)

    def totals(self) -> dict[str, ModelTotals]:
        """Calls, attempts, tokens and cost per model so far."""
        return {name: state.totals for name, state in self._models.items()}

    def open_circuits(self) -> dict[str, str]:
        """Models whose circuit breaker opened, each with its one message (what happened, calls affected)."""
        return {name: f"model {name!r} at {state.endpoint.url}: {state.breaker.message()}"
                for name, state in self._models.items() if state.breaker.is_open}

    def limiter(self, name: str) -> Limiter:
        return self._state(name).limiter

    def estimator(self, name: str) -> TokenEstimator:
        """The model's prompt-token estimator, calibrated by the replies so far (for plans and cost estimates)."""
        return self._state(name).estimator

    def prices(self, name: str) -> Prices | None:
        """What the model's calls cost per token (configured, else the shipped table), ``None`` when unknown."""
        return self._state(name).prices

    # -- the call ----------------------------------------------------------
    def _tools_builtins(self, tools: Sequence[ToolSchema]) -> Any:
        """Tool schemas as plain JSON values, converted once per tools object (agents resend them every turn)."""
        cached = self._tools_cache
        if cached is None or cached[0] is not tools:
            cached = self._tools_cache = (tools, msgspec.to_builtins(tools))
        return cached[1]

    def _request(self, state: _ModelState, messages: Sequence[Message], tools: Sequence[ToolSchema] | None,
                 params: dict[str, Any], key: str | None) -> ChatRequest:
        merged = {**state.settings.params, **params}
        if merged.get("stream") is True and "stream_options" not in merged:
            merged["stream_options"] = {"include_usage": True}  # the usage comes in a final chunk only if asked
        if state.settings.reasoning:
            merged.pop("temperature", None)
            if "max_tokens" in merged:
                merged["max_completion_tokens"] = merged.pop("max_tokens")
        body: dict[str, Any] = {
            "model": state.endpoint.api_model,
            "messages": msgspec.to_builtins(messages),
        }
        if tools:
            body["tools"] = self._tools_builtins(tools)
        body.update(merged)
        payload = orjson.dumps(body)
        if key is None:
            key = hashlib.blake2b(payload, digest_size=12).hexdigest()
        return ChatRequest(body=body, payload=payload, key=key)

    async def chat(
        self,
        model: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] | None = None,
        *,
        key: str | None = None,
        cache_extra: Mapping[str, Any] | None = None,
        **params: Any,
    ) -> ChatResult:
        """Send one chat request to ``model`` and return its result.

        ``key`` identifies the call (sent as ``Idempotency-Key`` and logged); by
        default it is a hash of the request. ``params`` override the model's
        configured params for this call (``stream=True`` streams the reply, assembled into
        the same result, with its TTFT and TPOT recorded). ``cache_extra`` adds fields to the
        response-cache key (e.g. ``{"trial": 2}``; see ``cache_scope``). Raises an
        ``LLMError`` when the call fails for good (after retries, or at once for
        permanent errors), a ``CallDeadlineError`` when ``timeouts.call_deadline_s``
        passes, a ``CircuitOpenError`` without sending anything once the model's
        breaker is open, and ``BudgetExceeded`` without sending anything when the
        call's worst case would pass the client's budget.
        """
        state = self._state(model)
        request = self._request(state, messages, tools, params, key)
        cache, budget = self.cache, self.budget
        digest: str | None = None
        if cache is not None and cache.mode != "off":
            digest = cache_digest(state.cache_endpoint, request.body, cache_extra, headers=state.endpoint.headers)
            hit = await cache.get(digest)
            if hit is not None:
                return self._from_cache(state, model, request, hit)
        if state.provider is not None:
            await self._attach_provider(state)
        prompt_tokens = state.estimator.estimate(len(request.payload))
        max_out = int(request.body.get("max_tokens") or request.body.get("max_completion_tokens") or 0)
        reservation = (budget.reserve(model, state.prices, prompt_tokens, max_out, where=self.config.source)
                       if budget is not None else None)
        timing = _Timing(started_at=time.time(), estimated_prompt_tokens=prompt_tokens)
        try:
            completion = await self._fetch(state, model, request, timing, max_out, reservation)
            result, cost = self._accept(state, model, request, completion, timing)
            if budget is not None and reservation is not None:
                budget.settle(reservation, cost or 0.0)
        except BaseException as exc:
            if budget is not None and reservation is not None:
                if timing.call_id is not None and not isinstance(exc, LLMError):
                    budget.keep(reservation)  # sent, then cancelled: it may be billed, and its intent stays unsettled
                else:
                    budget.release(reservation)  # failed (not billed) or never sent
            raise
        if cache is not None and digest is not None:
            await cache.put(digest, model, completion)
        return result

    async def _fetch(self, state: _ModelState, model: str, request: ChatRequest, timing: _Timing,
                     max_out: int, reservation: Reservation | None) -> WireCompletion:
        """The reply, through the limiter (TPM cost: estimated prompt + max output tokens), breaker and retries.

        With a ledger, each request's intent is durable before it is sent. A failure is recorded and raised.
        """
        prompt_tokens = timing.estimated_prompt_tokens
        token_cost = prompt_tokens + max_out
        ledger = self.ledger if not state.transport.offline else None  # an offline transport sends nothing
        worst: float | None = None
        if ledger is not None:
            worst = (reservation.amount_usd if reservation is not None
                     else worst_case_usd(state.prices, prompt_tokens, max_out))

        def on_retry(_exc: BaseException, wait: float) -> None:
            timing.retry_wait_s += wait
            self.retries += 1

        deadline: Deadline | None = None

        async def attempt_once() -> WireCompletion:
            nonlocal deadline
            state.breaker.check()
            timing.attempts += 1
            async with state.limiter.slot(token_cost) as ticket:
                timing.queued_s += ticket.queued_s
                if ledger is not None:  # durable before the request leaves: a kill from here on cannot hide it
                    await self._intend(ledger, state, model, request, timing, worst)
                if deadline is None:  # the deadline runs from the first send
                    deadline = Deadline(at=self._clock.now() + state.settings.timeouts.call_deadline_s,
                                        seconds=state.settings.timeouts.call_deadline_s)
                sent = time.perf_counter()
                try:
                    completion = await self._send(state, request, deadline, timing.attempts)
                except RateLimitError as exc:
                    state.limiter.observe(exc.headers)
                    state.limiter.on_rate_limited(ticket)
                    raise
                finally:
                    timing.latency_s = time.perf_counter() - sent
                state.limiter.observe(completion.rate_limit_headers)
                await state.limiter.on_success()
                return completion

        try:
            try:
                completion = await attempt_once()  # the common case: no retry machinery at all
            except TransientLLMError as first_failure:
                # The tenacity loop replays the first failure as its attempt 1, so waits and
                # stop conditions are computed exactly as if it had made that attempt itself.
                pending: TransientLLMError | None = first_failure
                async for attempt in retrying(state.settings.retry, clock=self._clock, rng=self._rng,
                                              on_retry=on_retry, deadline=deadline):
                    with attempt:
                        if pending is not None:
                            failed, pending = pending, None
                            # The first failure itself, replayed: `raise ... from` would rewrite its cause.
                            raise failed  # noqa: B904
                        completion = await attempt_once()
        except LLMError as exc:
            if not isinstance(exc, LedgerError):  # the endpoint never saw it: no evidence either way
                state.breaker.after_call(exc)
            self._record(state, timing.record(model, request.key, transport=state.transport.name, error=exc))
            raise
        state.breaker.after_call(None)
        return completion

    async def _intend(self, ledger: CallLedger, state: _ModelState, model: str, request: ChatRequest,
                      timing: _Timing, worst: float | None) -> None:
        """Write the intent of the call's current attempt to the ledger and wait until it is durable."""
        if timing.call_id is None:
            self._call_count += 1
            call_id = f"{self._call_prefix}-{self._call_count}"
        else:
            call_id = timing.call_id
        try:
            await ledger.intend(CallIntent(call_id=call_id, key=request.key, attempt=timing.attempts, model=model,
                                           worst_usd=worst, at=time.time()))
        except LedgerError as exc:  # the same failure, naming the endpoint the request was not sent to
            raise LedgerError(exc.detail, model=model, endpoint=state.endpoint.url) from exc.__cause__
        timing.call_id = call_id  # from here on the call's record settles an intent

    def _accept(self, state: _ModelState, model: str, request: ChatRequest, completion: WireCompletion,
                timing: _Timing) -> tuple[ChatResult, float | None]:
        """The result of a fetched reply: priced, recorded, and the model's token estimate calibrated by it."""
        result, cost, cached_tokens, reasoning_tokens = self._priced(state, model, request, completion)
        record = timing.record(model, request.key, transport=state.transport.name, usage=result.usage,
                               cost_usd=cost, cached_tokens=cached_tokens, reasoning_tokens=reasoning_tokens,
                               stream=completion.stream, completion=completion)
        result = msgspec.structs.replace(result, latency_s=timing.latency_s, attempts=timing.attempts,
                                         cost_usd=cost, ttft_s=record.ttft_s, tpot_s=record.tpot_s)
        self._record(state, record)
        return result, cost

    def _from_cache(self, state: _ModelState, model: str, request: ChatRequest,
                    completion: WireCompletion) -> ChatResult:
        """A reply served by the response cache: nothing sent, $0 spent, its original cost kept as its value."""
        result, value, cached_tokens, reasoning_tokens = self._priced(state, model, request, completion)
        self._record(state, LLMCallRecord(
            model=model, key=request.key, status="ok", attempts=0, started_at=time.time(), usage=result.usage,
            cost_usd=0.0, cached_tokens=cached_tokens, reasoning_tokens=reasoning_tokens, cached=True,
            value_usd=value, transport=state.transport.name))
        return msgspec.structs.replace(result, latency_s=0.0, attempts=0, cost_usd=value or 0.0)

    def _priced(self, state: _ModelState, model: str, request: ChatRequest,
                completion: WireCompletion) -> tuple[ChatResult, float | None, int, int]:
        """The reply as a ``ChatResult``, its cost (``None``: price unknown) and its cached/reasoning token counts."""
        result = to_chat_result(completion, model=model)
        usage = result.usage
        cached_tokens, reasoning_tokens = completion.usage.cached_and_reasoning() if completion.usage else (0, 0)
        state.estimator.observe(len(request.payload), usage.prompt_tokens)
        cost = None if state.prices is None else state.prices.cost(
            usage.prompt_tokens, usage.completion_tokens, cached_tokens=cached_tokens,
            reasoning_tokens=reasoning_tokens)
        return result, cost, cached_tokens, reasoning_tokens

    async def _send(self, state: _ModelState, request: ChatRequest, deadline: Deadline,
                    attempts: int) -> WireCompletion:
        """One attempt through the transport, cut at the call's deadline or the legacy ``timeout_s``."""
        remaining = deadline.remaining(self._clock)
        per_attempt = state.settings.timeout_s or math.inf
        # A bare cancel scope, not ``anyio.fail_after``: two generator context managers fewer on every call.
        with anyio.CancelScope(deadline=anyio.current_time() + min(remaining, per_attempt)):
            return await state.transport.complete(state.endpoint, request)
        # Only reached when the scope's own deadline cancelled the attempt (any other cancellation propagates).
        endpoint = state.endpoint
        if remaining <= per_attempt:
            raise deadline.error(attempts, model=endpoint.model, endpoint=endpoint.url, last=None) from TimeoutError()
        raise LLMTimeoutError(f"no complete reply within timeout_s={per_attempt:g} s", model=endpoint.model,
                              endpoint=endpoint.url) from TimeoutError()

    def _record(self, state: _ModelState, record: LLMCallRecord) -> None:
        totals = state.totals
        totals.calls += 1
        totals.attempts += record.attempts
        totals.usage = totals.usage + record.usage
        totals.cached += record.cached
        totals.errors += record.status == "error"
        if totals.cost_usd is not None:
            totals.cost_usd = None if record.cost_usd is None else totals.cost_usd + record.cost_usd
        if self.call_sink is not None:
            self.call_sink(record)

    # -- lifecycle ---------------------------------------------------------
    async def aclose(self) -> None:
        """Close the transports, then stop the providers this client started (their threads joined)."""
        if isinstance(self._transport_override, Transport):
            await self._transport_override.aclose()
        for transport in self._transports.values():
            await transport.aclose()
        self._transports.clear()
        for prefix, provider in list(self._providers.items()):
            await provider.aclose()
            del self._providers[prefix]
            self._provider_urls.pop(prefix, None)
        if self.cache is not None:
            self.cache.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
