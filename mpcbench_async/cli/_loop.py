"""The event loop of the CLI's long-running commands: uvloop where it is installed, else asyncio's own.

``sweep``, ``sim serve`` and the embedded sim's child run their work on uvloop (a dependency on every platform
but Windows): its loop is C, so each reply, tool hand-off and timer costs the runner less of its own CPU than
asyncio's Python loop (bench/RESULTS.md, issue 31 point 2). ``MPCBENCH_LOOP=asyncio`` keeps asyncio's loop
(for a debugger, a profiler that must see the loop, or a suspected uvloop problem); without uvloop installed
the commands use asyncio's loop silently. The library itself never picks a loop: ``anyio.run`` or
``asyncio.run`` in a program of your own runs on whatever that program chose.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from .._exceptions import InputError

__all__ = ["LOOP_ENV", "loop_factory", "run", "run_asyncio"]

LOOP_ENV = "MPCBENCH_LOOP"
T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """``uvloop.new_event_loop`` when ``MPCBENCH_LOOP`` is unset or ``uvloop`` and uvloop imports; else ``None``
    (asyncio's own loop)."""
    choice = os.environ.get(LOOP_ENV, "").strip().lower()
    if choice not in ("", "uvloop", "asyncio"):
        raise InputError(f"environment variable {LOOP_ENV}={os.environ[LOOP_ENV]!r}: expected 'uvloop' (the "
                         "default where it is installed) or 'asyncio'")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:  # Windows, or an install without it: asyncio's loop, silently
        return None
    return uvloop.new_event_loop


def run(func: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``anyio.run(func, *args)`` on the commands' loop."""
    import anyio

    return anyio.run(func, *args, backend_options={"loop_factory": loop_factory()})


def run_asyncio(main: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
    """``asyncio.run(main(*args))`` on the commands' loop."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main(*args))
