"""LLM access: the client, its transports and their registry, model configuration and accounting."""

from ._client import LLMClient, ModelTotals, is_sim_model
from ._config import BreakerSettings, ModelConfig, ModelSettings, Prices, Timeouts, load_model_config
from ._mock import MockHandler, MockTransport
from ._native import NativeTransport
from ._record_replay import RecordTransport, ReplayTransport
from ._registry import TransportFactory, TransportOptions, create_transport, register_transport, transport_names
from ._store import CallStore, StoredCall, request_hash
from ._transport import ChatRequest, Endpoint, Transport
from ._wire import WireCompletion

__all__ = [
    "BreakerSettings",
    "CallStore",
    "ChatRequest",
    "Endpoint",
    "LLMClient",
    "MockHandler",
    "MockTransport",
    "ModelConfig",
    "ModelSettings",
    "ModelTotals",
    "NativeTransport",
    "OpenAISDKTransport",
    "Prices",
    "RecordTransport",
    "ReplayTransport",
    "StoredCall",
    "Timeouts",
    "Transport",
    "TransportFactory",
    "TransportOptions",
    "WireCompletion",
    "create_transport",
    "is_sim_model",
    "load_model_config",
    "register_transport",
    "request_hash",
    "transport_names",
]


def __getattr__(name: str) -> object:
    # The openai SDK takes ~0.5 s to import; load it only when asked for.
    if name == "OpenAISDKTransport":
        from ._openai_sdk import OpenAISDKTransport

        return OpenAISDKTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
