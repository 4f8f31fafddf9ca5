"""Runtime core: worker pools, per-model limiters, retries, JSONL store, logging, clocks."""

from ._clock import Clock, FakeClock, MonotonicClock
from ._files import atomic_write_bytes
from ._jsonl import JsonlWriter, ReadReport, ResumeIndex, iter_jsonl, read_jsonl
from ._limiter import AdaptiveConcurrency, LimitSettings, ModelLimiter, SlidingWindow, Ticket
from ._lock import DirLock
from ._logging import configure_logging, redact, redact_text, register_secret
from ._pool import WorkerPool, stop_on_signals
from ._retry import Deadline, RetryPolicy, parse_duration, retry_after_from_headers, retrying

__all__ = [
    "AdaptiveConcurrency",
    "Clock",
    "Deadline",
    "DirLock",
    "FakeClock",
    "JsonlWriter",
    "LimitSettings",
    "ModelLimiter",
    "MonotonicClock",
    "ReadReport",
    "ResumeIndex",
    "RetryPolicy",
    "SlidingWindow",
    "Ticket",
    "WorkerPool",
    "atomic_write_bytes",
    "configure_logging",
    "iter_jsonl",
    "parse_duration",
    "read_jsonl",
    "redact",
    "redact_text",
    "register_secret",
    "retry_after_from_headers",
    "retrying",
    "stop_on_signals",
]
