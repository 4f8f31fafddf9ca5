"""Which try of its unit a model call belongs to, counted across resumes.

A unit whose records on disk are all errors runs again on resume; its ``attempt`` is the number of those
earlier records (0 on its first run). The pipeline sets it around each unit (``unit_attempt``), and the
transports send it as the ``X-Mpcbench-Unit-Attempt`` header when it is above 0 (``unit_attempt_headers``).
Why: an endpoint that draws its faults per request — the embedded sim is a new server in every invocation,
its per-key request counts start again at 0 — would otherwise fail a resumed unit exactly as before, forever;
with the header it draws anew for each try, and a run stays reproducible (the same invocations, the same
draws). Real endpoints ignore the header.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["UNIT_ATTEMPT_HEADER", "current_unit_attempt", "unit_attempt", "unit_attempt_headers"]

UNIT_ATTEMPT_HEADER = "X-Mpcbench-Unit-Attempt"
_attempt: ContextVar[int] = ContextVar("mpcbench_unit_attempt", default=0)


@contextmanager
def unit_attempt(attempt: int) -> Iterator[None]:
    """Mark every model call inside the block (its tasks included) as made by the unit's ``attempt``-th try."""
    token = _attempt.set(attempt)
    try:
        yield
    finally:
        _attempt.reset(token)


def current_unit_attempt() -> int:
    """The try of the unit whose task this is (0 outside a unit): what a Ray worker is told to run it as."""
    return _attempt.get()


def unit_attempt_headers() -> dict[str, str]:
    """The header naming the current unit's try, or none on its first (so first runs send what they always did)."""
    attempt = _attempt.get()
    return {UNIT_ATTEMPT_HEADER: str(attempt)} if attempt > 0 else {}
