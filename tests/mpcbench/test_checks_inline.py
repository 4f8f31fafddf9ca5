"""The checks run on the event loop under a budget first, and again in a thread past it (issue 31).

Whether a reading stays inline is decided by a ``StepClock`` (time that passes only at checkpoints), never by the
machine: a normal answer reaches a few dozen checkpoints, a pathological one thousands.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import pytest

from mpcbench_async._checkpoint import run_checked
from mpcbench_async.mpcbench import run_checks
from mpcbench_async.mpcbench.tools._threads import INLINE_BUDGET_S, ToolThreads, inline_or_thread
from tests.mpcbench.check_corpus import CASES, scenario
from tests.mpcbench.test_tool_execution import StepClock

FAMILIES = ("P1", "E1", "D1")  # a planning, an e-mail reply and a weekly report scenario of the corpus


def pathological(size: int) -> str:
    """An answer of ``size`` characters dense with what every reading pairs with everything before it."""
    return ("Mon Jan 26 10:30-11:30, Tue 27 Jan 12:30–13:30 or 14:00. 12% up, 3 down. " * (size // 70 + 1))[:size]


def steps(task: Any, answer: str, data: Any) -> tuple[int, int]:
    """(Python calls of the whole reading, most Python calls between two checkpoints or an end)."""
    calls, marks = 0, [0]

    def profile(_frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(profile)
    try:
        run_checked(lambda: marks.append(calls), lambda: run_checks(task, answer, data))
    finally:
        sys.setprofile(None)
    marks.append(calls)
    return calls, max(b - a for a, b in zip(marks, marks[1:], strict=False))


async def test_every_corpus_answer_is_read_on_the_loop():
    """With a budget of 2,000 checkpoints (2 ms on a clock moving 1 µs per reading) no answer of the labelled
    corpus needs a thread, and each gives what a direct reading gives."""
    threads = ToolThreads(1)
    for case in CASES:
        task, data = scenario(case.scenario)
        inline = await inline_or_thread(threads, lambda: run_checks(task, case.answer, data),  # noqa: B023
                                        clock=StepClock(1e-6))
        assert run_checks(task, case.answer, data) == inline
    assert (0, 0) == (threads.submitted, threads.started)
    threads.close()


@pytest.mark.parametrize("family", FAMILIES)
async def test_a_pathological_answer_is_read_again_in_a_thread_with_the_same_checks(family):
    """An 8 KB answer of dates, times and percentages passes the budget (20 checkpoints here) on the loop; it is
    read again from its start in a thread, with no limit, and gives exactly the direct reading's checks."""
    task, data = scenario(family)
    answer, threads = pathological(8000), ToolThreads(1)
    checks = await inline_or_thread(threads, lambda: run_checks(task, answer, data), INLINE_BUDGET_S,
                                    StepClock(1e-4))
    assert (run_checks(task, answer, data), 1) == (checks, threads.submitted)
    threads.close()


@pytest.mark.parametrize("family", FAMILIES)
def test_no_step_between_checkpoints_grows_with_the_square_of_the_answer(family):
    """Readings pair each match with those before it, so a whole reading grows with the square of an answer's
    length; the work between two checkpoints (what an inline reading may run past its budget) grows with the length
    alone: four times the answer, at most 4.5 times the longest step, in Python calls."""
    task, data = scenario(family)
    (short_total, short_step), (long_total, long_step) = (steps(task, pathological(size), data)
                                                          for size in (2000, 8000))
    assert long_total >= 8 * short_total  # the answers are pathological: the whole reading is quadratic
    assert long_step <= 4.5 * short_step
