"""The embedded simulated OpenAI-compatible provider: server, fault injection, policy registry.

The package holds only what is generic: the HTTP server (``SimServer``), faults
chosen by the model name's query suffix, the policy registry with the generic
``sim/echo`` and ``sim/scripted`` policies, and the forms in which ``LLMClient``
starts and stops the sim: ``SimProcessProvider`` (a child process, the default)
and ``SimProvider`` (a thread of the caller's process, ``MPCBENCH_SIM=inprocess``). Benchmark policies live beside
their benchmark (``mpcbench/_sim``, ``tariff/_sim_policy``) and reach the
registry through a loader (see ``_registry`` and ``mpcbench_async/_wiring.py``).
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._faults import FaultSpec, split_model_name
    from ._leaks import key_shapes
    from ._policies import Reply
    from ._process import SimProcessProvider
    from ._provider import SimProvider
    from ._registry import Policy, has_policy, policy_names, register_policy
    from ._server import SimServer, SimStats  # brings in aiohttp's server: only on first use

__all__ = ["FaultSpec", "Policy", "Reply", "SimProcessProvider", "SimProvider", "SimServer", "SimStats",
           "policy_names", "register_policy"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["has_policy", "key_shapes", "split_model_name"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
