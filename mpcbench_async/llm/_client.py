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
call and stopped in ``aclose()``; each client owns its own. Usage::

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
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import anyio
import msgspec
import orjson

from .._exceptions import (
    ConfigError,
    LLMError,
    LLMTimeoutError,
    MissingAPIKeyError,
    RateLimitError,
    TransientLLMError,
)
from .._redact import register_secret, register_secret_headers
from ..records import ChatResult, LLMCallRecord, Message, ToolSchema, Usage
from ..runtime import Clock, Deadline, ModelLimiter, MonotonicClock, retrying
from ._breaker import CircuitBreaker
from ._config import DEFAULT_BASE_URL, ModelConfig, ModelSettings
from ._providers import Provider, create_provider, provider_prefix
from ._registry import TransportOptions, create_transport
from ._transport import ChatRequest, Endpoint, Transport
from ._wire import WireCompletion, to_chat_result

__all__ = ["LLMClient", "ModelTotals", "is_sim_model"]

_messages_encoder = msgspec.json.Encoder()


def is_sim_model(name: str) -> bool:
    """Models named ``sim/...`` are served by the embedded simulated provider."""
    return name.startswith("sim/")


class ModelTotals(msgspec.Struct, kw_only=True):
    """Running totals for one model within one client."""

    calls: int = 0
    errors: int = 0
    attempts: int = 0
    usage: Usage = msgspec.field(default_factory=Usage)
    cost_usd: float = 0.0


class _ModelState:
    """What the client keeps per model: settings, endpoint, limiter, transport, breaker, totals.

    ``provider`` names the in-process provider whose URL the endpoint still waits
    for (set by the first call, which starts it); ``None`` once the endpoint is final.
    """

    def __init__(self, settings: ModelSettings, endpoint: Endpoint, limiter: ModelLimiter,
                 transport: Transport, provider: str | None) -> None:
        self.settings = settings
        self.limiter = limiter
        self.transport = transport
        self.provider = provider
        self.set_endpoint(endpoint)
        self.totals = ModelTotals()

    def set_endpoint(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.breaker = CircuitBreaker(endpoint.model, endpoint.url, self.settings.breaker.failures)


def estimate_tokens(payload_bytes: int) -> int:
    """Rough prompt-token estimate (≈ 4 bytes per token), used only for TPM budgeting."""
    return max(1, payload_bytes // 4)


class LLMClient:
    """Chat with configured models; owns transports, limiters and accounting.

    ``transport`` overrides every model's configured transport: a registered name,
    or a ``Transport`` instance (which the client then owns and closes). ``store``
    overrides every model's ``store`` (the call store of ``record`` and ``replay``).
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
    ) -> None:
        self.config = config or ModelConfig()
        self.call_sink = call_sink
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
            state = _ModelState(settings, endpoint, ModelLimiter(settings.limits, clock=self._clock), transport,
                                pending)
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
            if url is None:
                provider = self._providers[prefix] = create_provider(prefix)  # aclose stops it even if start fails
                url = self._provider_urls[prefix] = await provider.start()
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

    def limiter(self, name: str) -> ModelLimiter:
        return self._state(name).limiter

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
        **params: Any,
    ) -> ChatResult:
        """Send one chat request to ``model`` and return its result.

        ``key`` identifies the call (sent as ``Idempotency-Key`` and logged); by
        default it is a hash of the request. ``params`` override the model's
        configured params for this call. Raises an ``LLMError`` when the call
        fails for good (after retries, or at once for permanent errors), a
        ``CallDeadlineError`` when ``timeouts.call_deadline_s`` passes, and a
        ``CircuitOpenError`` without sending anything once the model's breaker is open.
        """
        state = self._state(model)
        if state.provider is not None:
            await self._attach_provider(state)
        request = self._request(state, messages, tools, params, key)
        max_out = int(request.body.get("max_tokens") or request.body.get("max_completion_tokens") or 0)
        token_cost = estimate_tokens(len(request.payload)) + max_out
        started_at = time.time()
        attempts = 0
        queued = 0.0
        retry_wait = 0.0
        latency = 0.0

        def on_retry(_exc: BaseException, wait: float) -> None:
            nonlocal retry_wait
            retry_wait += wait
            self.retries += 1

        deadline: Deadline | None = None

        async def attempt_once() -> WireCompletion:
            nonlocal attempts, queued, latency, deadline
            state.breaker.check()
            attempts += 1
            async with state.limiter.slot(token_cost) as ticket:
                queued += ticket.queued_s
                if deadline is None:  # the deadline runs from the first send
                    deadline = Deadline(at=self._clock.now() + state.settings.timeouts.call_deadline_s,
                                        seconds=state.settings.timeouts.call_deadline_s)
                sent = time.perf_counter()
                try:
                    completion = await self._send(state, request, deadline, attempts)
                except RateLimitError:
                    state.limiter.on_rate_limited(ticket)
                    raise
                finally:
                    latency = time.perf_counter() - sent
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
            state.breaker.after_call(exc)
            self._record(state, model, request.key, "error", attempts, started_at, latency, queued,
                         retry_wait, Usage(), 0.0, exc)
            raise
        state.breaker.after_call(None)
        result = to_chat_result(completion, model=model)
        cost = state.settings.prices.cost(result.usage.prompt_tokens, result.usage.completion_tokens)
        result = msgspec.structs.replace(result, latency_s=latency, attempts=attempts, cost_usd=cost)
        self._record(state, model, request.key, "ok", attempts, started_at, latency, queued, retry_wait,
                     result.usage, cost, None)
        return result

    async def _send(self, state: _ModelState, request: ChatRequest, deadline: Deadline,
                    attempts: int) -> WireCompletion:
        """One attempt through the transport, cut at the call's deadline or the legacy ``timeout_s``."""
        remaining = deadline.remaining(self._clock)
        per_attempt = state.settings.timeout_s or math.inf
        try:
            with anyio.fail_after(min(remaining, per_attempt)):
                return await state.transport.complete(state.endpoint, request)
        except TimeoutError as exc:
            endpoint = state.endpoint
            if remaining <= per_attempt:
                raise deadline.error(attempts, model=endpoint.model, endpoint=endpoint.url, last=None) from exc
            raise LLMTimeoutError(f"no complete reply within timeout_s={per_attempt:g} s", model=endpoint.model,
                                  endpoint=endpoint.url) from exc

    def _record(self, state: _ModelState, model: str, key: str, status: str, attempts: int, started_at: float,
                latency: float, queued: float, retry_wait: float, usage: Usage, cost: float,
                error: LLMError | None) -> None:
        totals = state.totals
        totals.calls += 1
        totals.attempts += attempts
        totals.usage = totals.usage + usage
        totals.cost_usd += cost
        if error is not None:
            totals.errors += 1
        if self.call_sink is not None:
            self.call_sink(LLMCallRecord(
                model=model, key=key, status=status, attempts=attempts, started_at=started_at,  # type: ignore[arg-type]
                latency_s=latency, queued_s=queued, retry_wait_s=retry_wait, usage=usage, cost_usd=cost,
                error_class=type(error).__name__ if error else None,
                error_message=str(error) if error else None, transport=state.transport.name,
            ))

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

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
