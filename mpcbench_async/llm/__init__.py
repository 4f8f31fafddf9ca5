"""LLM access: the client, its layers, its transports and their registry, model configuration and accounting."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._batch import BATCHES, BatchTransport
    from ._batch_anthropic import AnthropicBatches
    from ._batch_api import BatchBackend, BatchView, OpenAIBatches
    from ._budget import Budget, BudgetExceeded
    from ._cache import CACHE_MODES, CacheMode, CacheStats, ModelCacheStats, ResponseCache, cache_path, cache_scope
    from ._client import DEFAULT_LAYERS, LLMClient, ModelTotals
    from ._config import BatchSettings, BreakerSettings, ModelConfig, ModelSettings, Prices, Timeouts, load_model_config
    from ._estimate import TokenEstimator
    from ._layer import Call, Layer
    from ._layer_retry import RetryEvent, RetryListener
    from ._ledger import LEDGER, CallLedger, LedgerStats, SettledCalls, unsettled_calls
    from ._mock import MockHandler, MockTransport
    from ._native import NativeTransport
    from ._openai_sdk import OpenAISDKTransport  # the SDK takes ~0.5 s to import: only on first use
    from ._prices import model_prices
    from ._provider_protocol import Provider, ProviderFactory
    from ._providers import create_provider, is_sim_model, provider_prefix, register_provider
    from ._record_replay import RecordTransport, ReplayTransport
    from ._registry import TransportFactory, TransportOptions, register_transport, transport_names
    from ._store import request_hash
    from ._transport import ChatRequest, Endpoint, Transport
    from ._waves import WaveLog, WaveReport
    from ._wire import StreamTiming, WireCompletion

__all__ = ["AnthropicBatches", "BatchBackend", "BatchSettings", "BatchTransport", "BatchView", "BreakerSettings",
           "Budget", "CACHE_MODES", "CacheMode", "CacheStats", "Call", "CallLedger", "ChatRequest", "DEFAULT_LAYERS",
           "Endpoint", "LLMClient", "Layer", "LedgerStats", "MockHandler", "MockTransport", "ModelCacheStats",
           "ModelConfig", "ModelSettings", "ModelTotals", "NativeTransport", "OpenAIBatches", "OpenAISDKTransport",
           "Prices", "Provider", "ProviderFactory", "RecordTransport", "ReplayTransport", "ResponseCache",
           "RetryEvent", "RetryListener", "StreamTiming", "Timeouts", "Transport", "TransportFactory",
           "TransportOptions", "WaveLog", "WaveReport", "WireCompletion", "load_model_config", "register_provider",
           "register_transport", "request_hash", "transport_names"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["BATCHES", "BudgetExceeded", "LEDGER", "SettledCalls", "TokenEstimator", "cache_path", "cache_scope",
             "create_provider", "is_sim_model", "model_prices", "provider_prefix", "unsettled_calls"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
