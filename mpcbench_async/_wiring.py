"""Composition root: plugs the higher layers into the registries of the lower ones, lazily.

DESIGN.md §3 has ``llm`` below ``sim`` below the benchmarks, so none of them may
import a layer above it. Yet ``LLMClient`` must start the sim for a ``sim/...``
model, and the sim must serve ``sim/judge`` (an MPCBench policy) and
``sim/tariff`` even in a process that never imported the benchmarks (a library
user's client, ``sim serve``, a test's ``SimServer``). The package root sits
above every layer and is imported before any of its sub-packages, so it does
the wiring here, at import time, cheaply — nothing heavy is imported until used:

- ``llm``'s provider registry gets ``sim``: a factory that imports the sim only
  when a client first calls a ``sim/...`` model;
- the sim's policy registry gets a loader that imports the benchmarks' policy
  modules (which register themselves) on the first policy lookup;
- the runner's suite registry gets a loader per benchmark that imports its suite
  module (which registers itself) on the first lookup of one of its suites.
"""

from __future__ import annotations

from ._lazy import TYPE_CHECKING
from .llm._providers import register_provider
from .runner._registry import add_suite_loader
from .sim._registry import add_policy_loader

if TYPE_CHECKING:
    from .llm._provider_protocol import Provider


def _sim_provider() -> Provider:
    from .sim._process import sim_provider  # a child process, or a thread with MPCBENCH_SIM=inprocess

    return sim_provider()


def _benchmark_policies() -> None:
    from .levels import _sim_policy as _levels_policy  # noqa: F401  the levels variants of the agent baselines
    from .mpcbench import _sim  # noqa: F401  sim/judge, sim/lazy-agent, sim/oracle-agent, sim/generator
    from .tariff import _sim_policy  # noqa: F401  sim/tariff


def _levels_suite() -> None:
    from .levels import _suite  # noqa: F401  levels


def _mpcbench_suite() -> None:
    from .mpcbench import _suite  # noqa: F401  mpcbench


def _tariff_suites() -> None:
    from .tariff import _suite  # noqa: F401  tariff, hscodecomp


register_provider("sim", _sim_provider)
# The names those modules register: ``runner.sim_model_problem`` checks a run's sim models without importing them
# (tests/test_registries.py holds this list to what the loader registers).
add_policy_loader(_benchmark_policies, names=(
    "sim/generator", "sim/judge", "sim/lazy-agent", "sim/levels-ignore-comm", "sim/levels-ignore-policy",
    "sim/levels-ignore-rooms", "sim/oracle-agent", "sim/tariff"))
# One loader per benchmark, naming its suites: a sweep imports only the suites it runs (tests/test_registries.py).
add_suite_loader(_levels_suite, names=("levels",))
add_suite_loader(_mpcbench_suite, names=("mpcbench",))
add_suite_loader(_tariff_suites, names=("tariff", "hscodecomp"))
