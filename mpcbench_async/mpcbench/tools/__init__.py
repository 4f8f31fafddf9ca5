"""The MPCBench tool backend: nine workplace tools over one scenario's data."""

from ..._text import rank, words
from ._backend import TOOL_NAMES, ToolBackend, api_name, tool_name
from ._calendar import busy_intervals, common_free_slots
from ._dates import DateError, resolve_date, resolve_range
from ._execution import (
    TOOL_RESULT_MAX_BYTES,
    TOOL_TIMEOUT_S,
    TOOL_WORKER_WAIT_S,
    TOOL_WORKERS,
    TOOL_WORKERS_PER_UNIT,
    ToolPool,
    ToolShare,
    cap_result,
)
from ._jql import JqlError, parse_jql

__all__ = [
    "TOOL_NAMES",
    "TOOL_RESULT_MAX_BYTES",
    "TOOL_TIMEOUT_S",
    "TOOL_WORKERS",
    "TOOL_WORKERS_PER_UNIT",
    "TOOL_WORKER_WAIT_S",
    "DateError",
    "JqlError",
    "ToolBackend",
    "ToolPool",
    "ToolShare",
    "api_name",
    "busy_intervals",
    "cap_result",
    "common_free_slots",
    "parse_jql",
    "rank",
    "resolve_date",
    "resolve_range",
    "tool_name",
    "words",
]
