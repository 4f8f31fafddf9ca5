"""What a suite's factory is given (``SuiteRequest``) and what it is (``SuiteFactory``): see ``_registry``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .._prompts import PromptConfig
from ..llm import ModelConfig
from ._runner import AnySuite

__all__ = ["SuiteFactory", "SuiteRequest"]


class SuiteRequest(NamedTuple):
    """What a suite's factory is given: the loaded model config and prompts, and the sweep's settings."""

    config: ModelConfig
    prompts: PromptConfig
    options: Any  # the composition's settings (``sweep.SweepOptions``): paths, models, trials, the suites chosen


SuiteFactory = Callable[[SuiteRequest], Sequence[AnySuite]]
