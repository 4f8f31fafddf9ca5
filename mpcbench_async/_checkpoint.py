"""Cooperative stops for CPU-bound work in a worker thread: ``checkpoint()`` and the check it runs.

A Python thread cannot be killed from outside, so long loops stop themselves: code whose running time the
caller's input controls (the MPCBench tools walking a date range, ranking records against a query,
evaluating a JQL tree) calls ``checkpoint()`` once per step. Whoever runs that code in a worker installs a
check with ``run_checked(check, fn)`` — the tool pool's raises when the call's time limit has passed or its unit was
cancelled — and the next checkpoint raises it, unwinding the loop where it stands. Outside ``run_checked``
(a direct call, a test, the tariff pipeline) ``checkpoint()`` does nothing.

A check raises a ``BaseException`` (never an ``Exception``), so a tool's own ``except Exception`` — which
turns a failure into an error result for the model — cannot swallow a stop.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["checkpoint", "run_checked"]

T = TypeVar("T")

_CHECK: ContextVar[Callable[[], None] | None] = ContextVar("mpcbench_checkpoint", default=None)


def checkpoint() -> None:
    """Run the installed check (which raises to stop the work here); nothing when none is installed."""
    check = _CHECK.get()
    if check is not None:
        check()


def run_checked(check: Callable[[], None], fn: Callable[[], T]) -> T:
    """``fn()`` with ``check`` installed for every ``checkpoint()`` it reaches (this thread, this call).

    A function, not a ``@contextmanager``: one Python call per tool call instead of six (issue 31).
    """
    token = _CHECK.set(check)
    try:
        return fn()
    finally:
        _CHECK.reset(token)
