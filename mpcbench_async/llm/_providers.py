"""The provider registry: model-name prefixes served by an in-process provider the client starts.

A model named ``<prefix>/...`` whose prefix is registered here, and that has no
configured ``base_url``, is served by a provider the client creates from the
registered factory on the first call to such a model, and stops in
``LLMClient.aclose()``. The embedded sim is the one such provider
(``sim/...``); ``llm`` does not import it: the package root's wiring
(``mpcbench_async/_wiring.py``) registers a factory that imports the sim only
when called, so ``llm`` stays below ``sim`` in the import graph (DESIGN.md §3).
What a provider is (``Provider``, ``ProviderFactory``) lives in ``_provider_protocol``.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING

if TYPE_CHECKING:  # the package root imports this module at start-up: no typing (``_provider_protocol``) until used
    from ._provider_protocol import Provider, ProviderFactory

__all__ = ["create_provider", "is_sim_model", "provider_prefix", "register_provider"]

_FACTORIES: dict[str, ProviderFactory] = {}


def register_provider(prefix: str, factory: ProviderFactory) -> None:
    """Serve models named ``<prefix>/...`` (without a ``base_url``) by a provider made by ``factory``."""
    _FACTORIES[prefix] = factory


def provider_prefix(model: str) -> str | None:
    """The registered prefix of ``model``'s name, or ``None`` when no provider serves it."""
    prefix, slash, _ = model.partition("/")
    return prefix if slash and prefix in _FACTORIES else None


def is_sim_model(name: str) -> bool:
    """Models named ``sim/...`` are the embedded sim's (for the sweep's checks of sim policies; the client asks
    the registry, ``provider_prefix``)."""
    return name.startswith("sim/")


def create_provider(prefix: str) -> Provider:
    """A new, not yet started provider of the registered ``prefix``."""
    return _FACTORIES[prefix]()
