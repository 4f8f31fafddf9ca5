"""``LLMClient``: chat with any configured model through a chain of layers around one transport send.

One client serves many models. Per model it keeps the resolved endpoint, a
``ModelLimiter``, a circuit breaker, a token estimator and running totals
(``_ModelState``). Per call, ``chat`` builds the request once (``_request``) and passes one
``Call`` down the chain the client linked at construction (``_layer``), outermost
first (``DEFAULT_LAYERS``), each layer a module of its own that says why it sits
where it does:

- ``cache`` (``_layer_cache``): a ``ResponseCache`` answers repeats, nothing sent;
- the provider start (``_layer_send.ProviderStart``): a model served by an in-process
  provider of the registry (``_providers``; the embedded sim for ``sim/...``) gets it
  started on its first call and stopped in ``aclose()``; each client owns its own;
- ``budget`` (``_layer_budget``): a ``Budget`` refuses calls whose worst case would pass its limits;
- ``records`` (``_layer_records``): the call priced (``_prices``; unknown: ``cost_usd`` null), counted in
  the model's totals and reported as one ``LLMCallRecord`` to ``call_sink`` (e.g. a JSONL writer);
- ``breaker`` (``_layer_breaker``): a dead endpoint fails fast;
- ``retry`` (``_layer_retry``): transient failures retried (tenacity, ``runtime.retrying``) within the
  call's deadline;
- ``limiter`` (``_layer_limiter``): each attempt waits for the model's limiter (TPM at the calibrated
  ``TokenEstimator``'s estimate);
- ``ledger`` (``_layer_ledger``): with a ``CallLedger``, each request's intent is durable before it is sent,
  and the call's record carries the same ``call_id``, which settles it;
- the send (``_layer_send.TransportSend``): one attempt through the model's transport, which comes from the
  registry (``_registry``) by the model's configured name, or from the client's ``transport=`` (a name for
  every model, or a ``Transport`` instance such as ``MockTransport(handler)``).

Usage::

    async with LLMClient(load_model_config("model_config.json")) as client:
        result = await client.chat("gpt-4o-mini", [Message(role="user", content="hi")])

    # offline, from replies recorded earlier with transport="record" and the same store
    async with LLMClient(config, transport="replay", store="calls_store.jsonl") as client: ...

    # another chain: no breaker, a layer of your own outside the retries
    async with LLMClient(config, layers=["cache", "records", MyLayer(), "retry", "limiter"]) as client: ...
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import anyio
import msgspec

from .._exceptions import ConfigError, MissingAPIKeyError
from .._redact import register_secret, register_secret_headers, register_secret_url
from ..records import ChatResult, LLMCallRecord, Message, ToolSchema
from ..runtime import Clock, Limiter, LimitSettings, ModelLimiter, MonotonicClock
from ._accounting import Accounting, ModelTotals
from ._batch import BatchJournal, BatchTransport
from ._batch_anthropic import AnthropicBatches
from ._batch_api import BatchView, OpenAIBatches
from ._breaker import CircuitBreaker
from ._budget import Budget
from ._cache import ResponseCache
from ._config import KEY_FALLBACKS, PROVIDER_BASE_URLS, ModelConfig, ModelSettings, Prices
from ._estimate import TokenEstimator
from ._layer import Call, Layer, link
from ._layer_breaker import BreakerLayer
from ._layer_budget import BudgetLayer
from ._layer_cache import CacheLayer
from ._layer_ledger import LedgerLayer
from ._layer_limiter import LimiterLayer
from ._layer_records import RecordsLayer
from ._layer_retry import RetryLayer, RetryListener
from ._layer_send import ProviderStart, TransportSend
from ._ledger import CallLedger
from ._prices import model_prices
from ._provider_protocol import Provider
from ._providers import create_provider, provider_prefix
from ._registry import TransportOptions, create_transport
from ._request import RequestBuilder
from ._transport import Endpoint, Transport
from ._waves import Member, WaveLog
from ._wire import to_chat_result

__all__ = ["DEFAULT_LAYERS", "LLMClient", "ModelTotals"]

DEFAULT_LAYERS: tuple[str, ...] = ("cache", "budget", "records", "breaker", "retry", "limiter", "ledger")
"""The built-in layers, outermost first: today's order (each layer's module says why it sits where it does)."""

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
        self.batch = settings.batch_settings is not None  # its calls have the batch's deadline (batch.deadline_s)
        self.batched = isinstance(transport, BatchTransport)  # its calls go through the client's batch chain
        prices = model_prices(name, settings)
        self.prices = prices.batched() if prices is not None and settings.batch_settings else prices
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
    """Chat with configured models: ``chat`` sends each call through a chain of layers around one transport send.

    ``transport`` overrides every model's configured transport: a registered name,
    or a ``Transport`` instance (which the client then owns and closes). ``store``
    overrides every model's ``store`` (the call store of ``record`` and ``replay``).
    ``cache`` answers repeated requests without sending them (``ResponseCache``; the
    client closes it); ``budget`` refuses calls whose worst case would pass its
    limits (``Budget``, which may be shared by several clients); ``ledger`` makes each request's intent durable
    before it is sent (``CallLedger``; the client does not close it). ``limiter_factory(model, limits)`` makes each
    model's limiter instead of a local ``ModelLimiter`` (a Ray worker's share of one global limit: a
    ``runtime.Limiter``). ``provider_urls`` points models of a registered provider prefix at a server already
    running (``{"sim": url}``; ``sim_base_url=url`` is short for that), so the client starts none. ``providers``
    hands the client providers already made for their prefixes (their start perhaps begun, as a sweep spawns the
    sim child before it plans): the client starts them on a first call and stops them in ``aclose`` as its own.

    ``layers`` lists the chain, outermost first (default ``DEFAULT_LAYERS``): names of the built-in layers
    (``"cache"``, ``"budget"``, ``"records"``, ``"breaker"``, ``"retry"``, ``"limiter"``, ``"ledger"``; those
    whose resource — cache, budget, ledger — is ``None`` are left out) and ``Layer`` instances of your own.
    Leave one out or reorder them to build another client; the provider start sits right inside the cache
    while a model waits for its provider, and the transport send is always innermost.
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
        provider_urls: Mapping[str, str] | None = None,
        providers: Mapping[str, Provider] | None = None,
        layers: Sequence[str | Layer] = DEFAULT_LAYERS,
        batch_journal: Path | None = None,
    ) -> None:
        self.config = config or ModelConfig()
        self._limiter_factory = limiter_factory
        self._transport_override = transport
        self._store = store
        self._clock = clock or MonotonicClock()
        self._transports: dict[tuple[str, Path | None, bool], Transport] = {}
        self._models: dict[str, _ModelState] = {}
        self._requests = RequestBuilder()  # keeps the encoded tools and messages an agent resends every turn
        self._providers: dict[str, Provider] = dict(providers or {})
        # URLs of providers, given (a server already running) or started by this client
        self._provider_urls: dict[str, str] = {**(provider_urls or {}), **({"sim": sim_base_url} if sim_base_url
                                                                           else {})}
        self._provider_lock: anyio.Lock | None = None
        self._accounting = Accounting(call_sink)
        self._cache, self._budget, self._ledger = cache, budget, ledger
        self._retry = RetryLayer(self._clock, rng or random.Random())
        self._ledger_layer = LedgerLayer(ledger) if ledger is not None else None
        self._provider_start = ProviderStart(self._attach_provider)
        self._waiting = 0  # models whose provider has not started yet: the chain holds the provider start
        self._send = TransportSend(self._clock)
        for item in layers:
            if isinstance(item, str) and item not in DEFAULT_LAYERS:
                raise ConfigError(f"unknown client layer {item!r}; the built-in layers are {', '.join(DEFAULT_LAYERS)}")
        self._layer_spec = tuple(layers)
        self._batch_journal = BatchJournal(batch_journal)
        self._relink()

    # -- the chain ---------------------------------------------------------
    def _builtin(self, name: str, *, fresh: bool = False) -> Layer | None:
        """The built-in layer ``name``, ``None`` when its resource (cache, budget, ledger) is not set (``fresh``: a
        new ledger layer rather than the client's one)."""
        if name == "cache":
            return CacheLayer(self._cache, self._accounting) if self._cache is not None else None
        if name == "budget":
            return BudgetLayer(self._budget, self.config.source) if self._budget is not None else None
        if name == "ledger":
            return LedgerLayer(self._ledger) if fresh and self._ledger is not None else self._ledger_layer
        if name == "records":
            return RecordsLayer(self._accounting)
        if name == "retry":
            return self._retry  # one per client: its count of retries outlives a relink
        return BreakerLayer() if name == "breaker" else LimiterLayer()

    def _relink(self) -> None:
        """Build the chain once (and again when a resource is set): no per-call allocation of layers.

        The provider start is in the chain only while a model waits for its provider (``_state`` relinks when
        one does, ``_attach_provider`` once none does): once started, calls skip it.
        """
        chain = [layer for item in self._layer_spec
                 if (layer := self._builtin(item) if isinstance(item, str) else item) is not None]
        inside_cache = max((i + 1 for i, layer in enumerate(chain) if isinstance(layer, CacheLayer)), default=0)
        if self._waiting:
            chain.insert(inside_cache, self._provider_start)
        self.layers: tuple[Layer, ...] = tuple(chain)
        # the retry layer counts attempts; without one, each call is its one attempt
        self._first_attempt = 0 if any(isinstance(layer, RetryLayer) for layer in chain) else 1
        self._head = link(chain, self._send)
        # A batch model's calls wait on their batch, which paces, retries and resubmits itself (``_batch``): its
        # chain has its own layer objects (linking sets each one's inner), without retry and limiter, and without
        # layers of the caller's own, which cannot be copied.
        batch_chain = [layer for item in self._layer_spec if isinstance(item, str) and item not in ("retry", "limiter")
                       and (layer := self._builtin(item, fresh=True)) is not None]
        if self._waiting:
            batch_chain.insert(int(bool(batch_chain) and isinstance(batch_chain[0], CacheLayer)),
                               ProviderStart(self._attach_provider))
        self._batch_head = link(batch_chain, self._send)

    @property
    def cache(self) -> ResponseCache | None:
        return self._cache

    @cache.setter
    def cache(self, cache: ResponseCache | None) -> None:
        self._cache = cache
        self._relink()

    @property
    def budget(self) -> Budget | None:
        return self._budget

    @budget.setter
    def budget(self, budget: Budget | None) -> None:
        self._budget = budget
        self._relink()

    @property
    def ledger(self) -> CallLedger | None:
        return self._ledger

    @property
    def call_sink(self) -> Callable[[LLMCallRecord], None] | None:
        return self._accounting.sink

    @call_sink.setter
    def call_sink(self, sink: Callable[[LLMCallRecord], None] | None) -> None:
        self._accounting.sink = sink

    def add_retry_listener(self, listener: RetryListener) -> None:
        """Call ``listener(event)`` before each retry's wait (``RetryEvent``: model, attempt, why, the wait), so a
        caller can say a call is being retried and why instead of sitting silent through the backoff."""
        self._retry.listeners.append(listener)

    @property
    def retries(self) -> int:
        """Retries made so far by the chain's retry layers."""
        return sum(layer.retries for layer in self.layers if isinstance(layer, RetryLayer))

    # -- set-up ------------------------------------------------------------
    def _transport(self, settings: ModelSettings) -> Transport:
        """The model's transport: the client's instance, else one per (registered name, store), shared by models."""
        override = self._transport_override
        if isinstance(override, Transport):
            return override
        batch = settings.batch_settings
        if batch is not None and override is None:  # one per model: each has its own gathering batch
            backend = OpenAIBatches() if batch.api == "openai" else AnthropicBatches()
            return BatchTransport(backend, batch, self._batch_journal)
        name = override or settings.transport
        store = self._store or settings.store
        ident = (name, Path(store) if store is not None else None, settings.prompt_cache)
        transport = self._transports.get(ident)
        if transport is None:
            transport = self._transports[ident] = create_transport(
                name, TransportOptions(store=ident[1], prompt_cache=settings.prompt_cache))
        return transport

    def _endpoint(self, name: str, settings: ModelSettings, *, offline: bool,
                  provider: str | None) -> Endpoint:
        """The model's endpoint; a provider-served one gets its URL when the provider has started (``chat``).

        Only models of no registered provider prefix are remote APIs: their base URL defaults to
        ``OPENAI_BASE_URL`` (else OpenAI's) and their key is required. A provider's model pointed at a
        running server by ``base_url`` needs neither.
        """
        base_url = settings.base_url
        api_key: str | None = None
        if provider is not None:  # "" until the first call starts the provider; offline, nothing is started
            base_url = f"{provider}://offline" if offline else self._provider_urls.get(provider, "")
        elif provider_prefix(name) is None:
            variable, default = PROVIDER_BASE_URLS[settings.provider]
            base_url = base_url or os.environ.get(variable) or default
            if settings.api_key_env and not offline:
                fallback = KEY_FALLBACKS.get(settings.api_key_env)
                api_key = os.environ.get(settings.api_key_env) or (os.environ.get(fallback) if fallback else None)
                if not api_key:
                    raise MissingAPIKeyError(
                        f"model {name!r} needs an API key: set the environment variable "
                        f"{settings.api_key_env}{f' (or {fallback})' if fallback else ''} "
                        f"(or set models.{name}.api_key_env in "
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
            if isinstance(transport, BatchTransport):
                self._transports[(f"batch:{name}", None, False)] = transport  # closed with the others
            provider = provider_prefix(name) if settings.base_url is None else None
            endpoint = self._endpoint(name, settings, offline=transport.offline, provider=provider)
            pending = provider if not endpoint.base_url else None
            cache_endpoint = f"{provider}://" if provider is not None else endpoint.base_url
            limiter = (self._limiter_factory(name, settings.limits) if self._limiter_factory is not None
                       else ModelLimiter(settings.limits, clock=self._clock))
            state = _ModelState(name, settings, endpoint, limiter, transport, pending, cache_endpoint)
            if pending is not None and pending not in self._providers:
                # created now, started by the first call: a provider that cannot be made fails check_models
                self._providers[pending] = create_provider(pending)
            self._models[name] = state
            if pending is not None:
                self._waiting += 1
                if self._waiting == 1:
                    self._relink()
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
            self._waiting -= 1
            if not self._waiting:
                self._relink()

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

    def batches(self) -> list[BatchView]:
        """The provider batches running now, as they stood at their last poll (for a progress line)."""
        return [view for state in self._models.values() if isinstance(state.transport, BatchTransport)
                for view in state.transport.running.values()]

    def wave_member(self, model: str) -> AbstractContextManager[Member | None]:
        """``with client.wave_member(model):`` around a loop that calls ``model`` again after each reply (an agent
        run): on a batch model, its calls' batches are sent as soon as every such loop waits on the model (``_waves``);
        elsewhere it does nothing."""
        transport = self._state(model).transport
        return transport.waves.member() if isinstance(transport, BatchTransport) else nullcontext()

    def wave_logs(self) -> list[WaveLog]:
        """The waves of each batch model that had members, its batches in the order they ended (the wave line)."""
        return [WaveLog(model=name, turns=waves.most_calls, reports=list(waves.reports))
                for name, state in self._models.items() if isinstance(state.transport, BatchTransport)
                and (waves := state.transport.waves).most_calls]

    def limiter(self, name: str) -> Limiter:
        return self._state(name).limiter

    def estimator(self, name: str) -> TokenEstimator:
        """The model's prompt-token estimator, calibrated by the replies so far (for plans and cost estimates)."""
        return self._state(name).estimator

    def prices(self, name: str) -> Prices | None:
        """What the model's calls cost per token (configured, else the shipped table), ``None`` when unknown."""
        return self._state(name).prices

    # -- the call ----------------------------------------------------------
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
        state = self._models.get(model)
        if state is None:  # the model's first call (``_state`` builds it); later ones skip the call
            state = self._state(model)
        request = self._requests.build(state.settings, state.endpoint.api_model, messages, tools, params, key)
        body = request.body
        call = Call(state=state, model=model, request=request, cache_extra=cache_extra, attempts=self._first_attempt,
                    estimated_prompt_tokens=state.estimator.estimate(len(request.payload)),
                    max_out=int(body.get("max_tokens") or body.get("max_completion_tokens") or 0))
        head = self._batch_head if state.batched else self._head
        completion = await head.send(call)
        result = call.result  # made by the records (or cache) layer; without either, the bare reply
        return result if result is not None else to_chat_result(completion, model=model)

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
        if self._cache is not None:
            self._cache.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
