"""LLM access: the client, its layers, its transports and their registry, model configuration and accounting."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._batch import BATCHES, BatchDeadlineError, BatchJournal, BatchTransport
    from ._batch_anthropic import AnthropicBatches
    from ._batch_api import BatchBackend, BatchView, OpenAIBatches, UnknownBatchError
    from ._budget import Budget, BudgetExceeded, Reservation, worst_case_usd
    from ._cache import (
        CACHE_MODES,
        CacheError,
        CacheMode,
        CacheStats,
        ModelCacheStats,
        ResponseCache,
        cache_digest,
        cache_path,
        cache_scope,
    )
    from ._client import DEFAULT_LAYERS, LLMClient, ModelTotals
    from ._config import BatchSettings, BreakerSettings, ModelConfig, ModelSettings, Prices, Timeouts, load_model_config
    from ._estimate import TokenEstimator
    from ._layer import Call, Layer
    from ._layer_retry import RetryEvent, RetryListener
    from ._ledger import LEDGER, CallLedger, LedgerStats, SettledCalls, unsettled_calls
    from ._mock import MockHandler, MockTransport
    from ._native import NativeTransport
    from ._openai_sdk import OpenAISDKTransport  # the SDK takes ~0.5 s to import: only on first use
    from ._prices import PRICE_TABLE, PRICES_AS_OF, model_prices, table_prices
    from ._provider_protocol import Provider, ProviderFactory
    from ._providers import is_sim_model, register_provider
    from ._record_replay import RecordTransport, ReplayTransport
    from ._registry import TransportFactory, TransportOptions, create_transport, register_transport, transport_names
    from ._store import CallStore, StoredCall, request_hash
    from ._transport import ChatRequest, Endpoint, Transport
    from ._waves import WaveLog, WaveReport
    from ._wire import StreamTiming, WireCompletion

__all__ = [
    "AnthropicBatches",
    "BATCHES",
    "BatchBackend",
    "BatchDeadlineError",
    "BatchJournal",
    "BatchSettings",
    "BatchTransport",
    "BatchView",
    "BreakerSettings",
    "Budget",
    "BudgetExceeded",
    "CACHE_MODES",
    "CacheError",
    "CacheMode",
    "CacheStats",
    "Call",
    "CallLedger",
    "CallStore",
    "ChatRequest",
    "DEFAULT_LAYERS",
    "Endpoint",
    "LEDGER",
    "LLMClient",
    "Layer",
    "LedgerStats",
    "MockHandler",
    "MockTransport",
    "ModelCacheStats",
    "ModelConfig",
    "ModelSettings",
    "ModelTotals",
    "OpenAIBatches",
    "UnknownBatchError",
    "NativeTransport",
    "OpenAISDKTransport",
    "PRICES_AS_OF",
    "PRICE_TABLE",
    "Prices",
    "Provider",
    "ProviderFactory",
    "RecordTransport",
    "ReplayTransport",
    "RetryEvent",
    "RetryListener",
    "Reservation",
    "ResponseCache",
    "SettledCalls",
    "StoredCall",
    "StreamTiming",
    "Timeouts",
    "TokenEstimator",
    "Transport",
    "TransportFactory",
    "TransportOptions",
    "WaveLog",
    "WaveReport",
    "WireCompletion",
    "cache_digest",
    "cache_path",
    "cache_scope",
    "create_transport",
    "is_sim_model",
    "load_model_config",
    "model_prices",
    "register_provider",
    "register_transport",
    "request_hash",
    "table_prices",
    "transport_names",
    "unsettled_calls",
    "worst_case_usd",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
