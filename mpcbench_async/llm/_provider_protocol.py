"""What an in-process provider is (``_providers`` holds their registry).

Apart from the registry because the package root imports the registry at every
start-up (``mpcbench_async/_wiring.py``), and a ``Protocol`` needs ``typing``,
which costs a few milliseconds of every ``mpcbench-async --help`` (issue 31).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["Provider", "ProviderFactory"]


class Provider(Protocol):
    """An in-process OpenAI-compatible server one client owns, from ``start`` to ``aclose``."""

    async def start(self) -> str:
        """Start serving without blocking the caller's event loop; return the base URL (``http://…/v1``)."""
        ...

    async def aclose(self) -> None:
        """Stop serving and release every thread and socket the provider holds."""
        ...


ProviderFactory = Callable[[], Provider]
