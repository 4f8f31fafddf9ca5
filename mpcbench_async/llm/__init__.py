"""LLM access: the client, its transports, model configuration and accounting."""

from ._client import LLMClient, ModelTotals, is_sim_model
from ._config import BreakerSettings, ModelConfig, ModelSettings, Prices, Timeouts, load_model_config
from ._native import NativeTransport
from ._transport import ChatRequest, Endpoint, Transport

__all__ = [
    "BreakerSettings",
    "ChatRequest",
    "Endpoint",
    "LLMClient",
    "ModelConfig",
    "ModelSettings",
    "ModelTotals",
    "NativeTransport",
    "OpenAISDKTransport",
    "Prices",
    "Timeouts",
    "Transport",
    "is_sim_model",
    "load_model_config",
]


def __getattr__(name: str) -> object:
    # The openai SDK takes ~0.5 s to import; load it only when asked for.
    if name == "OpenAISDKTransport":
        from ._openai_sdk import OpenAISDKTransport

        return OpenAISDKTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
