"""The embedded simulated OpenAI-compatible provider (server, policies, faults)."""

from . import _procgen  # registers sim/generator
from . import _judge_policy  # registers sim/judge and sim/lazy-agent
from . import _oracle  # registers sim/oracle-agent
from . import _tariff_policy  # registers sim/tariff
from ._embedded import embedded_sim_url
from ._faults import FaultSpec, choose_fault, split_model_name
from ._policies import POLICIES, Reply, register_policy
from ._server import SimServer, SimStats

__all__ = [
    "POLICIES",
    "FaultSpec",
    "Reply",
    "SimServer",
    "SimStats",
    "choose_fault",
    "embedded_sim_url",
    "register_policy",
    "split_model_name",
]
