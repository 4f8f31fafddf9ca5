"""Cooperative stops for CPU-bound work in a worker thread: ``checkpoint()`` and the check it runs.

A Python thread cannot be killed from outside, so long loops stop themselves: code whose running time the
caller's input controls (the MPCBench tools walking a date range, ranking records against a query,
evaluating a JQL tree) calls ``checkpoint()`` once per step. Whoever runs that code in a worker installs a
check with ``checked(check)`` — the tool pool's raises when the call's time limit has passed or its unit was
cancelled — and the next checkpoint raises it, unwinding the loop where it stands. Outside ``checked``
(a direct call, a test, the tariff pipeline) ``checkpoint()`` does nothing.

A check raises a ``BaseException`` (never an ``Exception``), so a tool's own ``except Exception`` — which
turns a failure into an error result for the model — cannot swallow a stop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["checked", "checkpoint"]

_CHECK: ContextVar[Callable[[], None] | None] = ContextVar("mpcbench_checkpoint", default=None)


def checkpoint() -> None:
    """Run the installed check (which raises to stop the work here); nothing when none is installed."""
    check = _CHECK.get()
    if check is not None:
        check()


@contextmanager
def checked(check: Callable[[], None]) -> Iterator[None]:
    """Install ``check`` for every ``checkpoint()`` reached in this context (this thread, this call)."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)
