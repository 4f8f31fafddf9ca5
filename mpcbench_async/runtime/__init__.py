"""Runtime core: worker pools, per-model limiters, retries, JSONL store, logging, clocks."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._attempt import UNIT_ATTEMPT_HEADER, current_unit_attempt, unit_attempt, unit_attempt_headers
    from ._clock import Clock, FakeClock, MonotonicClock
    from ._done_index import KEYS_READ, Entries, Entry
    from ._failures import UnitFailure, log_unit_error, unit_failure
    from ._files import atomic_write_bytes, pid_alive, safe_name
    from ._jsonl import (
        LINES_DECODED,
        JsonlWriter,
        ReadReport,
        ResumeIndex,
        done_keys,
        iter_jsonl,
        key_view,
        read_jsonl,
        trim_torn_tail,
    )
    from ._limit_headers import BucketReading, read_limit_headers
    from ._limiter import (
        AdaptiveConcurrency,
        AdaptiveRate,
        Limiter,
        ModelLimiter,
        SlidingWindow,
        Ticket,
    )
    from ._lock import DirLock
    from ._logging import configure_logging, redact, redact_text, register_secret
    from ._pace import AimdCap, LimitSettings, ModelPace
    from ._pool import Stoppable, WorkerPool, watch_signals
    from ._retry import Deadline, RetryPolicy, parse_duration, retry_after_from_headers, retrying
    from ._units import Pipeline, PipelineEvents, Stage, latest_records, run_keyed_units

__all__ = [
    "trim_torn_tail",
    "AdaptiveConcurrency",
    "AimdCap",
    "AdaptiveRate",
    "BucketReading",
    "Clock",
    "Deadline",
    "DirLock",
    "FakeClock",
    "JsonlWriter",
    "KEYS_READ",
    "Entries",
    "Entry",
    "LINES_DECODED",
    "LimitSettings",
    "Limiter",
    "ModelLimiter",
    "ModelPace",
    "MonotonicClock",
    "Pipeline",
    "PipelineEvents",
    "ReadReport",
    "ResumeIndex",
    "RetryPolicy",
    "SlidingWindow",
    "Stage",
    "Stoppable",
    "Ticket",
    "UNIT_ATTEMPT_HEADER",
    "UnitFailure",
    "WorkerPool",
    "atomic_write_bytes",
    "safe_name",
    "configure_logging",
    "current_unit_attempt",
    "done_keys",
    "iter_jsonl",
    "key_view",
    "latest_records",
    "log_unit_error",
    "parse_duration",
    "read_jsonl",
    "read_limit_headers",
    "redact",
    "redact_text",
    "register_secret",
    "retry_after_from_headers",
    "retrying",
    "run_keyed_units",
    "unit_attempt",
    "unit_attempt_headers",
    "unit_failure",
    "watch_signals",
    "pid_alive",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
