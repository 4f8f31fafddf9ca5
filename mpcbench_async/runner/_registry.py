"""The one registry of suites a sweep can run, by name: adding a suite is one module and one registration.

A suite's module (beside its benchmark) calls ``register_suite(name, factory)``
once, at import; the composition (``sweep``) imports those modules, offers every
registered name as a suite (the ``suites`` setting) and calls the factory of each
one chosen, with a ``SuiteRequest``, before anything is written: a factory loads
and checks its inputs there (``InputError`` naming the file or setting) and
returns the suites to run (a tariff suite is one per model, so a list). The
registry is process-global on purpose, like ``llm.register_provider``: the name
is what a user types, and one name means one suite everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .._prompts import PromptConfig
from ..llm import ModelConfig
from ._runner import AnySuite

__all__ = ["SUITES", "SuiteFactory", "SuiteRequest", "register_suite", "suite_factory"]


class SuiteRequest(NamedTuple):
    """What a suite's factory is given: the loaded model config and prompts, and the sweep's settings."""

    config: ModelConfig
    prompts: PromptConfig
    options: Any  # the composition's settings (``sweep.SweepOptions``): paths, models, trials, the suites chosen


SuiteFactory = Callable[[SuiteRequest], Sequence[AnySuite]]

SUITES: dict[str, SuiteFactory] = {}  # name -> factory; read it, change it only through register_suite


def register_suite(name: str, factory: SuiteFactory) -> None:
    """Offer ``name`` as a suite, built by ``factory``; registering a name twice is a mistake and raises."""
    if name in SUITES and SUITES[name] is not factory:
        raise ValueError(f"suite {name!r} is already registered")
    SUITES[name] = factory


def suite_factory(name: str) -> SuiteFactory:
    """The factory registered for ``name`` (``KeyError`` for a name nobody registered)."""
    return SUITES[name]
