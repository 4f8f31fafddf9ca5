"""The summary's modules are imported while a sweep's first requests wait, not before them (issue 31).

Asserted by what is imported and by order of events, not by time: importing the sweep's job module leaves the
summary's modules out; the prefetch starts its thread only once every other task of the loop waits; an import that
fails on the thread fails again, the same way, in the caller's own import after ``join``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib import import_module

import anyio
import anyio.lowlevel
import pytest

from mpcbench_async.sweep._summary_prefetch import SUMMARY_MODULES, SummaryPrefetch


def test_the_job_module_leaves_the_summary_modules_to_the_prefetch():
    code = textwrap.dedent("""
        import sys
        import mpcbench_async.sweep._job
        print(sorted(name for name in sys.modules if name in {*sys.argv[1:]}))
    """)
    done = subprocess.run([sys.executable, "-c", code, *SUMMARY_MODULES, "mpcbench_async.sweep._dry_run"],
                          capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout == "[]\n"


def test_the_thread_starts_only_once_every_other_task_waits():
    seen: list[str] = []

    async def main() -> None:
        prefetch = SummaryPrefetch(("mpcbench_async._not_imported_yet",))  # a module never imported: a thread starts
        release = anyio.Event()

        async def busy() -> None:
            for step in range(3):
                seen.append(f"busy {step}, thread {prefetch.thread is not None}")
                await anyio.lowlevel.checkpoint()
            await release.wait()  # from here on it waits

        async with anyio.create_task_group() as tg:
            tg.start_soon(busy)
            await prefetch.start_when_waiting()
            seen.append(f"started, thread {prefetch.thread is not None}")
            prefetch.join()
            release.set()

    anyio.run(main)
    assert seen == ["busy 0, thread False", "busy 1, thread False", "busy 2, thread False", "started, thread True"]


def test_an_import_error_on_the_thread_is_raised_by_the_callers_import():
    name = "mpcbench_async._no_such_module_for_the_prefetch"
    prefetch = SummaryPrefetch((name,))
    prefetch.start()
    prefetch.join()
    assert prefetch.thread is not None and not prefetch.thread.is_alive() and name not in sys.modules
    with pytest.raises(ModuleNotFoundError, match=f"No module named '{name}'"):
        import_module(name)


def test_nothing_starts_when_the_modules_are_imported_already():
    prefetch = SummaryPrefetch(("json",))
    prefetch.start()
    prefetch.join()
    assert prefetch.thread is None
