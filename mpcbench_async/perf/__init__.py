"""Performance measurement: transport benchmarks and a sim server in a child process."""

from ._client_bench import ClientBenchRow, format_markdown, run_client_bench
from ._sim_process import sim_subprocess

__all__ = ["ClientBenchRow", "format_markdown", "run_client_bench", "sim_subprocess"]
