"""The runner: drives any suite through one client and one resumable pipeline; it imports no benchmark.

The suites live beside their benchmarks and register in ``SUITES`` (``register_suite``); ``sweep`` composes them.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._cost import cost_text
    from ._outcome import Outcome, keys_on_disk
    from ._registry import SUITES, SuiteFactory, SuiteRequest, register_suite, suite_factory
    from ._runner import AnySuite, Runner, SweepStats, SweepStream
    from ._suite import StagedSuite, Suite, SuiteStage, Unit

__all__ = ["Outcome", "Runner", "SUITES", "StagedSuite", "Suite", "SuiteFactory", "SuiteRequest", "SuiteStage",
           "Unit", "register_suite"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["AnySuite", "SweepStats", "SweepStream", "cost_text", "keys_on_disk", "suite_factory"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
