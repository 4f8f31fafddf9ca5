"""The transport registry: names → factories, so configs and callers choose a transport by name.

``native`` (aiohttp; the default), ``openai`` (the official SDK), ``record``
(``native`` plus every successful request/reply pair appended to the store) and
``replay`` (replies served from the store, offline) are registered here; the
HTTP libraries are imported only when a transport that needs them is created.
``register_transport`` adds more, e.g. a mock under a name a config can select::

    register_transport("canned", lambda options: MockTransport(handler))

A factory receives the ``TransportOptions`` the client resolved for the model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from .._exceptions import ConfigError
from ._record_replay import RecordTransport, ReplayTransport
from ._store import CallStore
from ._transport import Transport

__all__ = ["TransportFactory", "TransportOptions", "create_transport", "register_transport", "transport_names"]


class TransportOptions(msgspec.Struct, kw_only=True, frozen=True):
    """Settings a factory may need: ``store``, the call store file of ``record`` and ``replay``; ``prompt_cache``,
    whether the ``anthropic`` transport marks the stable prefix for the provider's prompt cache."""

    store: Path | None = None
    prompt_cache: bool = False

    def require_store(self, name: str) -> Path:
        """The store path, or a clear error saying how to give one."""
        if self.store is None:
            raise ConfigError(f"transport {name!r} needs a store file: set \"store\" beside \"transport\" in "
                              f"model_config.json, or pass LLMClient(store=PATH)")
        return self.store


TransportFactory = Callable[[TransportOptions], Transport]

_FACTORIES: dict[str, TransportFactory] = {}


def register_transport(name: str, factory: TransportFactory) -> None:
    """Make ``factory`` the transport called ``name`` (replacing any earlier one of that name)."""
    _FACTORIES[name] = factory


def transport_names() -> list[str]:
    """The registered names, sorted."""
    return sorted(_FACTORIES)


def create_transport(name: str, options: TransportOptions | None = None) -> Transport:
    """A new transport of the registered ``name``; an unknown name is a ``ConfigError`` listing the known ones."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ConfigError(f"unknown transport {name!r}; registered transports: {', '.join(transport_names())}")
    return factory(options or TransportOptions())


def _native(options: TransportOptions) -> Transport:
    from ._native import NativeTransport

    return NativeTransport()


def _openai(options: TransportOptions) -> Transport:
    from ._openai_sdk import OpenAISDKTransport  # imported on demand: the SDK takes ~0.5 s to load

    return OpenAISDKTransport()


def _record(options: TransportOptions) -> Transport:
    from ._native import NativeTransport

    return RecordTransport(NativeTransport(), CallStore(options.require_store("record")))


def _replay(options: TransportOptions) -> Transport:
    return ReplayTransport(CallStore(options.require_store("replay")))


def _anthropic(options: TransportOptions) -> Transport:
    from ._anthropic import AnthropicTransport

    return AnthropicTransport(prompt_cache=options.prompt_cache)


def _gemini(options: TransportOptions) -> Transport:
    from ._gemini import GeminiTransport

    return GeminiTransport()


register_transport("native", _native)
register_transport("gemini", _gemini)
register_transport("anthropic", _anthropic)
register_transport("openai", _openai)
register_transport("record", _record)
register_transport("replay", _replay)
