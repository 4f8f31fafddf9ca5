"""What to run and how far it may go, as two small values every suite's factory reads (``SuiteRequest``).

``RunChoice`` is the run a user chooses: the suites, their models and judges,
the tasks, the trials and whether units that ended in a transient error run
again. ``Limits`` bounds it: units at once, turns per agent run, USD for the
whole run. Each benchmark keeps its own inputs (paths, levels, scoring rules)
in a settings object of its own package, handed to its factory beside these
(``SuiteRequest.settings``), so neither value grows a field per benchmark.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

__all__ = ["Limits", "RunChoice"]


class RunChoice(msgspec.Struct, kw_only=True, frozen=True):
    """What to run. ``models`` are the agent models (``None``: the config's ``agent_models``); a suite with no
    agents reads them as its own models (tariff: ``None`` is the config's ``tariff_models``). ``judges``: ``None``
    is the config's ``judge_models``. ``tasks`` is a glob over task names; ``retry_errors`` runs again the units whose
    record is a transient error."""

    suites: Sequence[str] = ("mpcbench",)
    models: Sequence[str] | None = None
    judges: Sequence[str] | None = None
    tasks: str = "*"
    trials: int = 1
    retry_errors: bool = False


class Limits(msgspec.Struct, kw_only=True, frozen=True):
    """How far a run may go: ``concurrency`` units at once, ``max_turns`` model turns per agent run, ``max_cost``
    USD for the whole run (earlier runs into the same directory included; ``None``: no limit but the models' own
    ``budget_usd``)."""

    concurrency: int = 32
    max_turns: int = 12
    max_cost: float | None = None
