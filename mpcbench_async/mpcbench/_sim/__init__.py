"""MPCBench's policies for the simulated provider, kept beside the benchmark whose prompts they read.

Importing this package registers them into the sim's policy registry:
``sim/judge`` and ``sim/lazy-agent`` (``_judge_policy``), ``sim/oracle-agent``
(``_oracle``) and ``sim/generator`` (``_procgen``). They parse MPCBench's prompt
wording, so they change with the benchmark, not with the server. The sim never
imports them: the package root's wiring (``mpcbench_async/_wiring.py``) adds a
policy loader that imports this package the first time a policy is looked up.

Each is registered by name, its module imported at its first request: the runner looks a ``sim/...`` model up
only to check that it exists (``runner.sim_model_problem``), and the policies' answer-reading rules (about 150
regular expressions, ~50 ms of start-up) belong to the process that serves the model — the sim's child — not
to every sweep that names ``sim/judge`` (issue 31).
"""

from __future__ import annotations

import importlib

from ..._lazy import TYPE_CHECKING
from ...sim import register_policy

if TYPE_CHECKING:
    from typing import Any

    from ...sim import Policy, Reply


def _on_first_request(name: str, module: str, attr: str) -> None:
    """Serve ``sim/<name>`` by ``module``'s ``attr`` (a module of this package), importing it at the first request."""
    found: list[Policy] = []

    def serve(request: dict[str, Any]) -> Reply:
        if not found:
            found.append(getattr(importlib.import_module(f"{__name__}.{module}"), attr))
        return found[0](request)

    serve.__module__, serve.__name__, serve.__qualname__ = f"{__name__}.{module}", attr, attr
    register_policy(name)(serve)


_on_first_request("judge", "_judge_policy", "judge")
_on_first_request("lazy-agent", "_judge_policy", "lazy_agent")
_on_first_request("oracle-agent", "_oracle", "oracle_agent")
_on_first_request("generator", "_procgen", "generator")
