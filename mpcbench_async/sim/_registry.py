"""The sim's policy registry: model name → policy, filled by modules that register themselves.

A policy sees exactly what a real model sees — the request's messages, tools and
parameters — and returns a ``Reply`` (``_policies``). Policies register with
``register_policy`` when their module is imported. The generic ones (``sim/echo``,
``sim/scripted``) live in this package; benchmark policies live beside their
benchmark, and since the sim must not import the layers above it, a higher
layer hands it a *loader* (``add_policy_loader``) that imports them. Loaders run
once, on the first lookup (``get_policy``, ``policy_names``), so a process that
never serves a sim model never imports a policy. A loader may declare the names it
registers, so that ``has_policy`` (a run's check that its sim models exist) needs no
import: a sweep whose sim runs in another process never imports a policy (issue 31). This module imports nothing
heavy: the package root wires a loader in at import time.
"""

from __future__ import annotations

import _thread
import functools
from collections.abc import Callable, Iterable

from .._lazy import TYPE_CHECKING

if TYPE_CHECKING:  # the package root imports this module at start-up: no typing at run time (issue 31)
    from typing import Any

    from ._policies import Reply

__all__ = ["POLICIES", "Policy", "add_policy_loader", "get_policy", "has_policy", "policy_names",
           "register_policy"]

Policy = Callable[[dict[str, "Any"]], "Reply"]
Claim = Callable[[dict[str, "Any"]], bool]
POLICIES: dict[str, Policy] = {}
_CLAIMS: dict[str, list[tuple[Claim, Policy]]] = {}  # model name → (when, policy): a benchmark's own variant
_SERVING: dict[str, Policy | None] = {}  # model name → what serves it, built once (a lookup per request)


def register_policy(name: str, *, when: Claim | None = None) -> Callable[[Policy], Policy]:
    """Register a policy under ``sim/<name>``; with ``when``, as the variant serving the requests it claims.

    Two benchmarks can share a baseline's name that way (``sim/oracle-agent`` answers an MPCBench task and a
    three-level scheduling instance alike): the first variant whose ``when(request)`` holds serves the request,
    else the plain policy.
    """

    def decorate(fn: Policy) -> Policy:
        _SERVING.clear()
        if when is None:
            POLICIES[f"sim/{name}"] = fn
        else:
            _CLAIMS.setdefault(f"sim/{name}", []).append((when, fn))
        return fn

    return decorate


def _dispatch(model: str, default: Policy | None) -> Policy | None:
    variants = _CLAIMS.get(model)
    if not variants:
        return default

    def serve(request: dict[str, Any]) -> Reply:
        for claims, policy in variants:
            if claims(request):
                return policy(request)
        if default is None:
            from ._policies import Reply

            return Reply(content=f"{model}: this request is not one it serves")
        return default(request)

    return functools.wraps(default)(serve) if default is not None else serve


def _generic_policies() -> None:
    from . import _policies  # noqa: F401  sim/echo, sim/scripted register themselves


_loaders: list[Callable[[], None]] = [_generic_policies]
_DECLARED: set[str] = {"sim/echo", "sim/scripted"}  # what the loaders say they register (tests/test_registries.py)
# The sim's thread and the caller's may look up at once; both wait for the loaders. ``_thread``'s lock is
# ``threading.Lock`` without importing ``threading`` at every start-up (issue 31).
_loading = _thread.allocate_lock()


def add_policy_loader(loader: Callable[[], None], *, names: Iterable[str] = ()) -> None:
    """Have ``loader`` (which imports modules that call ``register_policy``) run before the next lookup; ``names``:
    the model names it registers (``sim/...``), which ``has_policy`` then knows without running it."""
    _loaders.append(loader)
    _DECLARED.update(names)


def _load() -> None:
    with _loading:
        while _loaders:
            _loaders.pop(0)()


def get_policy(model: str) -> Policy | None:
    """The policy serving ``model`` (``sim/<name>``, no query suffix), or ``None``."""
    _load()
    if model not in _SERVING:
        _SERVING[model] = _dispatch(model, POLICIES.get(model))
    return _SERVING[model]


def has_policy(model: str) -> bool:
    """Whether a policy serves ``model`` (``sim/<name>``, no query suffix): ``get_policy(model) is not None``,
    without loading the policies when a loader declared the name."""
    if model in _DECLARED or model in POLICIES or model in _CLAIMS:
        return True
    _load()
    return model in POLICIES or model in _CLAIMS


def policy_names() -> list[str]:
    """Every registered model name, sorted."""
    _load()
    return sorted({*POLICIES, *_CLAIMS})
