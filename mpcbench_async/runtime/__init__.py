"""Runtime core: worker pools, per-model limiters, retries, JSONL store, logging, clocks."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._attempt import current_unit_attempt, unit_attempt, unit_attempt_headers
    from ._blas import single_threaded_blas
    from ._clock import Clock, FakeClock, MonotonicClock
    from ._failures import UnitFailure, log_unit_error, unit_failure
    from ._files import atomic_write_bytes, pid_alive, safe_name
    from ._gc import frozen_imports, space_young_collections, thaw_imports
    from ._jsonl import (
        JsonlWriter,
        ReadReport,
        ResumeIndex,
        done_keys,
        iter_jsonl,
        key_view,
        read_jsonl,
        trim_torn_tail,
    )
    from ._key_set import bucketed, find_bucketed, sorted_unique
    from ._limit_headers import BucketReading, read_limit_headers
    from ._limiter import AdaptiveConcurrency, Limiter, ModelLimiter, Ticket
    from ._lock import DirLock
    from ._logging import configure_logging
    from ._malloc import hold_malloc_thresholds
    from ._memo import Memo
    from ._pace import AimdCap, LimitSettings, ModelPace
    from ._pool import WorkerPool
    from ._retry import Deadline, RetryPolicy, retry_after_from_headers, retrying
    from ._units import Pipeline, PipelineEvents, Stage, latest_records, run_keyed_units

__all__ = ["Clock", "DirLock", "FakeClock", "JsonlWriter", "LimitSettings", "Limiter", "ModelLimiter",
           "MonotonicClock", "Pipeline", "PipelineEvents", "ReadReport", "ResumeIndex", "RetryPolicy", "Stage",
           "WorkerPool", "configure_logging", "iter_jsonl", "read_jsonl"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["AdaptiveConcurrency", "AimdCap", "BucketReading", "Deadline", "Memo", "ModelPace", "Ticket",
             "UnitFailure",
             "atomic_write_bytes", "bucketed", "current_unit_attempt", "done_keys", "find_bucketed", "frozen_imports",
             "hold_malloc_thresholds", "key_view",
             "latest_records",
             "log_unit_error", "pid_alive", "read_limit_headers", "retry_after_from_headers", "retrying",
             "run_keyed_units", "safe_name", "single_threaded_blas", "sorted_unique", "space_young_collections",
             "thaw_imports", "trim_torn_tail",
             "unit_attempt", "unit_attempt_headers", "unit_failure"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
