"""Performance measurement: transport benchmarks, endpoint and sweep profiles, a sim in a child process."""

from ._client_bench import ClientBenchRow, format_markdown, run_client_bench
from ._endpoint_profile import EndpointProfile, LevelResult, profile_endpoint, render_endpoint_profile
from ._sim_process import sim_subprocess
from ._sweep_profile import SweepProfile, profile_sweep, render_sweep_profile

__all__ = [
    "ClientBenchRow",
    "EndpointProfile",
    "LevelResult",
    "SweepProfile",
    "format_markdown",
    "profile_endpoint",
    "profile_sweep",
    "render_endpoint_profile",
    "render_sweep_profile",
    "run_client_bench",
    "sim_subprocess",
]
