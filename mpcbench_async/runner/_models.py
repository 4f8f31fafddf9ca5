"""Checks of the models a run will call, made before anything is written: every suite's command needs them.

``check_models`` resolves each model as a client would (its key, its provider) without calling it, so a missing key
fails a command before it takes its output directory, which then stays as it was. ``sim_model_problem`` says why a
``sim/...`` name cannot be served (no such policy, bad fault options), so a suite's factory can list it with its
other input problems.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..llm import LLMClient, ModelConfig

__all__ = ["check_models", "sim_model_problem"]


async def check_models(config: ModelConfig, names: Sequence[str]) -> None:
    """Resolve every model of ``names`` now (its key, its provider), making no call and writing no file: a missing
    key fails a command before it takes its output directory, which then stays as it was."""
    client = LLMClient(config)
    try:
        client.check_models(names)
    finally:
        await client.aclose()


def sim_model_problem(name: str) -> str | None:
    """Why a ``sim/...`` model name cannot be served: no such policy, or bad fault options after ``?``."""
    from ..sim import FaultSpec, has_policy, policy_names, split_model_name  # loaded only when a run needs it

    base, query = split_model_name(name)
    if not has_policy(base):
        return f"model {name!r}: no sim policy {base!r}; available: {', '.join(policy_names())}"
    try:
        FaultSpec().with_overrides(query)
    except ValueError as exc:  # a malformed query string, or msgspec's ValidationError naming the option
        return f"model {name!r}: bad sim options after '?' ({exc})"
    return None
