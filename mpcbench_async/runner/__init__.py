"""The runner: drives any suite through one client and one resumable pipeline; it imports no benchmark.

The suites live beside their benchmarks and register in ``SUITES`` (``register_suite``); ``sweep`` composes them.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._cost import cost_text
    from ._models import check_models, sim_model_problem
    from ._outcome import Outcome, keys_on_disk
    from ._registry import SUITES, add_suite_loader, register_suite, suite_factory, suite_names
    from ._request import SuiteFactory, SuiteRequest
    from ._runner import AnySuite, Runner, SweepStats, SweepStream
    from ._suite import StagedSuite, Suite, SuiteStage, Unit

__all__ = [
    "SUITES",
    "AnySuite",
    "Outcome",
    "Runner",
    "StagedSuite",
    "Suite",
    "SuiteFactory",
    "SuiteRequest",
    "SuiteStage",
    "SweepStats",
    "SweepStream",
    "Unit",
    "add_suite_loader",
    "check_models",
    "cost_text",
    "keys_on_disk",
    "register_suite",
    "sim_model_problem",
    "suite_factory",
    "suite_names",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
