"""A sweep's embedded providers (the sim child), launched before the sweep plans — or before it is even imported.

Why: the sim child's interpreter start-up and imports (0.3–1 s) used to begin on the sweep's first call, after
the imports, the plan, the checks and the manifest, so every sweep with the embedded sim paid them in full
(issue 31). Launched first, they run on another core meanwhile. ``launch_providers`` picks the providers the
sweep's agents and judges will call: a registered prefix (``sim/...``), no ``base_url``, the native transport, no
batch; a provider that cannot be launched apart (the in-process sim: no ``spawn``) is left to the first call as
before. The runner's client takes them over (``LLMClient(providers=...)``) and stops them with itself.

Light on purpose (the model config and the provider registry only): the CLI calls ``launch_for_config`` before
it imports the sweep's modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._exceptions import BenchError
from .._lazy import TYPE_CHECKING
from ..llm import ModelConfig, create_provider, load_model_config, provider_prefix

if TYPE_CHECKING:
    from ..llm import Provider

__all__ = ["launch_for_config", "launch_providers"]


async def launch_providers(config: ModelConfig, models: Sequence[str] | None,
                           judges: Sequence[str] | None) -> dict[str, Provider]:
    """The embedded providers that ``models`` and ``judges`` (``None``: the config's agents, judges) will call,
    launched now (``spawn``), by prefix."""
    names = [*(config.agent_models if models is None else models),
             *(config.judge_models if judges is None else judges)]
    prefixes = {prefix for name in names if (prefix := provider_prefix(name)) is not None
                and (settings := config.settings_for(name)).base_url is None and settings.transport == "native"
                and settings.batch_settings is None}
    providers: dict[str, Provider] = {}
    for prefix in sorted(prefixes):
        provider = create_provider(prefix)
        if callable(spawn := getattr(provider, "spawn", None)):
            await spawn()
            providers[prefix] = provider
    return providers


async def launch_for_config(path: Path, models: Sequence[str] | None,
                            judges: Sequence[str] | None) -> dict[str, Provider]:
    """``launch_providers`` for the model config at ``path``; none when it does not load (the sweep says why)."""
    try:
        config = load_model_config(path)
    except BenchError:
        return {}
    return await launch_providers(config, models, judges)
