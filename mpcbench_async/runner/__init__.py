"""The runner: drives any suite through one client and one resumable pipeline; it imports no benchmark.

The suites live beside their benchmarks and register in ``SUITES`` (``register_suite``); ``sweep`` composes them.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._choice import Limits, RunChoice
    from ._cost import cost_text
    from ._models import check_models, sim_model_problem
    from ._outcome import Outcome
    from ._registry import SUITES, register_suite, suite_factory, suite_names
    from ._request import SuiteFactory, SuiteRequest
    from ._runner import AnySuite, Runner, SweepStats
    from ._suite import StagedSuite, Suite, SuiteStage, Unit

__all__ = ["Limits", "Outcome", "RunChoice", "Runner", "SUITES", "StagedSuite", "Suite", "SuiteFactory", "SuiteRequest",
           "SuiteStage", "Unit", "register_suite", "suite_names"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["AnySuite", "SweepStats", "check_models", "cost_text", "sim_model_problem",
             "suite_factory"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
