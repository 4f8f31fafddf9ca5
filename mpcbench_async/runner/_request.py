"""What a suite's factory is given (``SuiteRequest``) and what it is (``SuiteFactory``): see ``_registry``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

from .._prompts import PromptConfig
from ..llm import ModelConfig
from ._choice import Limits, RunChoice
from ._runner import AnySuite

__all__ = ["SuiteFactory", "SuiteRequest"]

SettingsT = TypeVar("SettingsT")


class SuiteRequest(NamedTuple):
    """What a suite's factory is given: the loaded model config and prompts, what to run (``run``), its limits, and
    each benchmark's own inputs (``inputs``: one settings object per benchmark, read with ``settings``)."""

    config: ModelConfig
    prompts: PromptConfig
    run: RunChoice = RunChoice()
    limits: Limits = Limits()
    inputs: Sequence[Any] = ()

    def settings(self, kind: type[SettingsT]) -> SettingsT:
        """The inputs of type ``kind`` the caller gave (``request.settings(TariffInputs)``), else ``kind()``'s
        defaults."""
        return next((given for given in self.inputs if isinstance(given, kind)), None) or kind()


SuiteFactory = Callable[[SuiteRequest], Sequence[AnySuite]]
