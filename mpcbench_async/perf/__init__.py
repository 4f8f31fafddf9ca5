"""Performance measurement: transport benchmarks, endpoint and sweep profiles, a sim in a child process."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._client_bench import format_markdown, run_client_bench
    from ._endpoint_profile import EndpointProfile, ProfileOptions, profile_endpoint
    from ._endpoint_report import render_endpoint_profile, render_ttft_cdf
    from ._endpoint_stats import LevelResult, Percentiles, RequestSample
    from ._sim_process import sim_subprocess
    from ._sweep_profile import SweepProfile, profile_sweep, render_sweep_profile

__all__ = ["EndpointProfile", "LevelResult", "Percentiles", "ProfileOptions", "RequestSample", "SweepProfile",
           "profile_endpoint", "profile_sweep", "render_endpoint_profile", "render_sweep_profile"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["format_markdown", "render_ttft_cdf", "run_client_bench", "sim_subprocess"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
