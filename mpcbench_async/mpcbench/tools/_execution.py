"""Tool calls: on the event loop while short, else each unit's own share of workers, a time limit that stops the
call, a size cap.

Tools are plain CPU-bound Python over in-memory data, and a pathological query (a free-slot search over two
thousand years, a search matching every message) can run for minutes and build megabytes. Three rules keep
one unit's tool calls from touching any other unit's results.

**Each unit has its own share of workers.** An agent run takes a ``ToolShare`` of the ``ToolPool`` for
itself (``pool.share()``): at most ``per_unit`` of its calls run at once, and the others wait behind them —
behind the unit's own calls only. A running call also holds one of the pool's ``workers``, the bound on tool
threads running at once (per event loop, every unit's calls together). One unit therefore holds at most
``per_unit`` workers and can never take the pool; another unit's call waits for a worker only while
``workers / per_unit`` units all run calls at the same moment. The price falls on the unit itself: a reply
whose n calls all run to the limit takes ceil(n / per_unit) limits. Threads share the interpreter lock, so
running calls slow the rest of the process (never more than their limits allow) but change no result.

**A call past its time limit is stopped, not abandoned.** Python cannot kill a thread, so the tools stop
themselves: every loop whose length the model's arguments control — the days of a date range, the slots cut
from free time, the people of a free-slot search, records × query words in ranked search, issues × clauses
in JQL, the parts of a result being cut to size — calls ``checkpoint()`` (``mpcbench_async._checkpoint``)
once per step. The check this module installs in the worker raises when the call has run ``timeout_s``
(counted from when it started running, not while it queued) or when its unit was cancelled (the cancelled
task sets the call's stop flag and waits for it: an interrupted sweep does not wait a tool out). The call
unwinds at that step and frees its worker at once; no call outlives its unit, so a sweep exits as soon as
its summary is written, and a timed-out call never keeps a worker from another unit.

Why cooperative checks rather than a process pool, which could kill a worker outright: the tools read one
scenario's data in memory and a sweep serves many scenarios; worker processes would need each scenario's
data shipped to them (pickled per call, or cached per process and lost with every killed worker), a
respawn after each kill, start-up time per sweep, and a copy of the data per process; tests and users
that replace a tool in-process would silently stop reaching it. A checkpoint costs a context-variable read
and a clock read (about 0.4 µs in a worker on the 2-core bench machine; a normal call passes a few hundred).
Its limit: one C-level operation cannot be interrupted mid-way (a regular expression over one long text,
encoding one result), so every such operation in a tool must be bounded by the size of the scenario's data
or of the arguments — never repeated by a loop without a checkpoint. ``tests/mpcbench/test_tool_execution.py``
drives each long tool with pathological arguments on a clock that advances per checkpoint and requires it to
stop; a new loop in a tool needs its checkpoint. A stopped call's partial results are freed as it unwinds.

**Whose fault a timeout is, is explicit.** A call that runs past ``timeout_s`` is the model's doing (its
arguments asked for too much): the model receives ``{"error": "... took longer than N s ..."}``, the run goes
on, and the logged call says ``timed_out``. A call that waits longer than the pool's ``wait_s`` for a worker
never ran — every worker was busy with other units' calls: ``run_tool`` raises ``ToolWorkerTimeout``, an
infrastructure error (``retryable``), so the agent run ends in an error record that a resume runs again and
that pass^k leaves out, as for a rate limit — never a score against the model.

A result larger than ``max_bytes`` of JSON is cut to fit by ``cap_result``, stays valid JSON and says so to
the model.

**A short call runs on the event loop.** A normal call takes tens of microseconds, and handing it to a thread and
back cost the runner more than that (issue 31, ``bench/RESULTS.md``). So a call of the built-in tools
(``ToolBackend.checkpointed``: the shipped class, no method replaced) runs inline first, under the pool's
``inline_s`` (``_threads.INLINE_BUDGET_S``, 2 ms, or the call's time limit when shorter) on the pool's ``clock``:
past it, the call stops at its next checkpoint, its partial work is dropped, and the same call goes to the unit's
share of workers exactly as above, with its full time limit. The tools have no effect but their result, so the
rerun is the same call, and the outcome the model receives and the log keeps is the same either way. The price of
a pathological call is the budget once, on the loop, before it moves to a thread (``bench/RESULTS.md``: measured;
a budget's overshoot is the longest step between two checkpoints, bounded as above by the data or the arguments).
A tool that is not known to checkpoint (a subclass's, one replaced on the class by a test or a user) may block
or sleep, so it never runs inline: it goes to a thread at once.
"""

from __future__ import annotations

import asyncio
import functools
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import msgspec
import orjson

from ..._checkpoint import checkpoint, run_checked
from ..._exceptions import ToolWorkerTimeout
from ...runtime import AdaptiveConcurrency, Memo
from ._backend import ToolBackend, tool_name
from ._threads import INLINE_BUDGET_S, Job, Missed, ToolThreads, run_inline

__all__ = ["TOOL_RESULT_MAX_BYTES", "TOOL_TIMEOUT_S", "TOOL_WORKERS", "TOOL_WORKERS_PER_UNIT", "TOOL_WORKER_WAIT_S",
           "ToolOutcome", "ToolPool", "ToolShare", "ToolTimeLimit", "cap_result", "default_tool_pool", "kept_outcome",
           "run_tool"]

T = TypeVar("T")
_MemoKey = tuple[str, str | bytes, int]  # a kept call: the tool, its arguments as given, the result cap

TOOL_TIMEOUT_S = 30.0
"""Default time limit of one tool call while it runs, seconds (a normal call takes milliseconds)."""
TOOL_RESULT_MAX_BYTES = 64 * 1024
"""Default cap on one tool result, bytes of JSON as the model receives it."""
MIN_RESULT_MAX_BYTES = 1024
"""The smallest cap accepted: below it the truncation marker itself would not fit."""
TOOL_WORKERS = 16
"""Default bound on tool calls running at once, every unit's together (per event loop)."""
TOOL_WORKERS_PER_UNIT = 2
"""Default share of one unit (one agent run): its calls running at once; the calls of one reply beyond it wait."""
TOOL_WORKER_WAIT_S = 60.0
"""Default longest wait of a call for a pool worker before it fails as an infrastructure error. Every running
call ends within its time limit, so a worker comes free at least that often."""
CANCEL_EVERY = 32
"""A running call looks whether its unit was cancelled at every this many checkpoints (the clock at each)."""
MARKER_RESERVE = 200
"""Bytes kept free for the truncation marker on the first fitting attempt (a longer note takes the rest
from the content on the next)."""
MIN_PART = 64
"""A list item or dict value is shortened into a budget only this large or larger; below, it is left out."""
NOTED_CUTS = 3
"""How many of the places that were shortened the note names."""
NOTED_PATH = 80
"""Longest path the note prints in full (keys come from the data and may be long); longer ones keep their end."""
MEMO_ENTRIES = 1024
"""Finished built-in calls kept per scenario data for repeats (``runtime.Memo``; see ``run_tool``)."""
MEMO_BYTES = 4 * 1024 * 1024
"""Their bound in bytes per scenario data, as ``_memo_size`` counts them."""


class ToolOutcome(msgspec.Struct, kw_only=True, frozen=True):
    """One tool call as the agent logs it and the model receives it."""

    result: dict[str, Any]
    content: str
    """``result`` as the JSON text of the tool message."""
    result_bytes: int = 0
    """Size of the tool's full result as JSON, before any cap (0 when it timed out)."""
    truncated: bool = False
    timed_out: bool = False


class ToolTimeLimit(BaseException):  # noqa: N818 — a stop signal, like KeyboardInterrupt, not an error
    """Raised at a checkpoint of a call that ran past its time limit.

    A ``BaseException``, so a tool's own ``except Exception`` (which turns failures into error results) lets it
    through; ``ToolShare.run`` turns it into ``TimeoutError`` for its caller.
    """


class _Cancelled(BaseException):  # noqa: N818 — a stop signal, not an error
    """Raised at a checkpoint of a call whose unit was cancelled (its awaiting task set the call's ``stop``)."""


def _limited(fn: Callable[[], T], timeout_s: float, clock: Callable[[], float], job: Job) -> T:
    """``fn()`` in this worker thread, stopped at its next checkpoint once ``timeout_s`` has passed on ``clock``
    or its unit has been cancelled (``job.stopped``, looked at every ``CANCEL_EVERY`` checkpoints)."""
    deadline = clock() + timeout_s
    countdown = CANCEL_EVERY

    def check() -> None:
        nonlocal countdown
        if clock() > deadline:
            raise ToolTimeLimit
        countdown -= 1
        if not countdown:
            countdown = CANCEL_EVERY
            if job.stopped:
                raise _Cancelled

    try:
        return run_checked(check, fn)
    except ToolTimeLimit:
        pass
    # Raised outside the handler, so the stop's traceback — the stopped frames and the partial results they
    # hold, megabytes for a pathological call — is freed now, not kept as this error's context until a GC.
    raise TimeoutError(f"stopped after {timeout_s:g} s")


class ToolPool:
    """Where tool calls run: ``workers`` at once in all (per event loop), ``per_unit`` of them per unit's share.

    ``timeout_s`` is the default time limit of a call while it runs, ``wait_s`` the longest wait for a worker
    (past it the call fails with ``ToolWorkerTimeout``), ``inline_s`` how long a built-in tool's call may first
    run on the event loop (0: never), ``clock`` the time the limit and that budget are measured on (called in
    the thread running the call; tests give one that advances per checkpoint — a clock that stands still keeps an
    inline call on the loop to its end). ``memo``: whether a repeated built-in call is answered from the outcomes
    kept per scenario data (``run_tool``; off to watch every call run, as tests of where calls run do). Nothing to
    close: each call ends within its limit, and the pool's threads
    (``workers`` of them, started as calls need them) end with the pool or the interpreter.

    The threads are the pool's own (``_threads.ToolThreads``: a queue of calls, each outcome handed back with
    one ``call_soon_threadsafe``), not ``anyio.to_thread`` nor ``run_in_executor``: anyio's hand-off passes
    through the event loop twice more per call and tracks the borrowing task, and an executor's builds two
    futures, a shield and two ``threading.Condition``s per call (issue 31). Event loops that run at the same
    time in one process share the threads; each loop's bound on running calls is its own.
    """

    def __init__(self, workers: int = TOOL_WORKERS, *, per_unit: int = TOOL_WORKERS_PER_UNIT,
                 timeout_s: float = TOOL_TIMEOUT_S, wait_s: float = TOOL_WORKER_WAIT_S,
                 inline_s: float = INLINE_BUDGET_S, clock: Callable[[], float] = time.monotonic,
                 memo: bool = True) -> None:
        if workers < 1 or per_unit < 1:
            raise ValueError(f"a tool pool needs at least 1 worker and 1 per unit, got {workers} and {per_unit}")
        if not (timeout_s > 0 and wait_s > 0):
            raise ValueError(f"a tool pool's timeout_s and wait_s must be positive, got {timeout_s} and {wait_s}")
        if not inline_s >= 0:
            raise ValueError(f"a tool pool's inline_s must be 0 or more seconds, got {inline_s}")
        self.workers, self.per_unit, self.timeout_s, self.wait_s = workers, min(per_unit, workers), timeout_s, wait_s
        self.inline_s, self.clock, self.memo = inline_s, clock, memo
        self._limiters: anyio.lowlevel.RunVar[AdaptiveConcurrency] = anyio.lowlevel.RunVar(
            f"mpcbench_tool_workers_{id(self)}")
        self._threads = ToolThreads(self.workers)
        weakref.finalize(self, self._threads.close)  # the threads end with the pool

    def share(self) -> ToolShare:
        """A new unit's share of this pool (one per agent run)."""
        return ToolShare(self)

    def _loop_workers(self) -> AdaptiveConcurrency:
        """This event loop's bound on running calls.

        A FIFO counter (``AdaptiveConcurrency`` with nothing adaptive), not anyio's ``CapacityLimiter``: taking
        a free slot neither yields to the loop nor tracks the task that took it (issue 31).
        """
        try:
            return self._limiters.get()
        except LookupError:
            workers = AdaptiveConcurrency(self.workers, adaptive=False)
            self._limiters.set(workers)
            return workers

    async def _in_thread(self, fn: Callable[[], T], timeout_s: float, done: Callable[[], None]) -> T:
        """``_limited(fn)`` in one of the pool's threads, ``done()`` called on this loop as it ends (or fails to
        start); a cancelled caller stops it and waits for it to end."""
        clock = self.clock
        job = Job(lambda job: _limited(fn, timeout_s, clock, job), asyncio.get_running_loop(), done)
        try:
            self._threads.submit(job)
        except BaseException:
            done()
            raise
        try:
            return await job.future
        except BaseException:
            if not job.finished:  # cancelled while the call runs: it stops at its next checkpoint
                job.stopped = True
                job.future = job.loop.create_future()  # its outcome, when it has unwound
                with anyio.CancelScope(shield=True):
                    await asyncio.wait([job.future])
                job.future.exception()  # retrieved: its _Cancelled is the expected end, not an error to log
            raise


class ToolShare:
    """One unit's share of a ``ToolPool``: at most ``pool.per_unit`` of its calls run at once."""

    def __init__(self, pool: ToolPool) -> None:
        self.pool = pool
        self._own = AdaptiveConcurrency(pool.per_unit, adaptive=False)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._workers: AdaptiveConcurrency | None = None  # the pool's bound on self._loop, looked up once

    def _loop_workers(self) -> AdaptiveConcurrency:
        """The pool's bound on running calls for the running loop (a ``RunVar`` look-up once per share and loop)."""
        loop = asyncio.get_running_loop()
        if self._workers is None or loop is not self._loop:
            self._loop, self._workers = loop, self.pool._loop_workers()
        return self._workers

    async def run(self, fn: Callable[[], T], *, timeout_s: float | None = None, tool: str = "") -> T:
        """``fn()`` in a worker thread, stopped at a checkpoint after ``timeout_s`` (the pool's by default).

        Raises ``TimeoutError`` when ``fn`` ran past its limit (it was stopped), ``ToolWorkerTimeout`` when no
        pool worker came free within the pool's ``wait_s`` (``fn`` never started). Waiting behind the unit's
        own calls has no limit: each of them ends within its own.
        """
        pool = self.pool
        limit = pool.timeout_s if timeout_s is None else timeout_s
        workers = self._loop_workers()
        own = self._own
        if not own.try_acquire():  # a free share and a free worker are taken at once: no timer, no loop pass
            await own.acquire()
        try:
            if not workers.try_acquire():
                await self._wait_for_worker(workers, tool)
            return await pool._in_thread(fn, limit, workers.release_nowait)  # the worker is freed as the call ends
        finally:
            own.release_nowait()

    async def _wait_for_worker(self, workers: AdaptiveConcurrency, tool: str) -> None:
        """Wait for one of the pool's workers; past the pool's ``wait_s``, raise ``ToolWorkerTimeout``."""
        pool = self.pool
        if not await workers.acquire_within(pool.wait_s):
            what = tool or "a tool call"
            raise ToolWorkerTimeout(
                f"{what} waited {pool.wait_s:g} s for a tool worker and never ran: all {pool.workers} were "
                "running other units' calls (an infrastructure limit, not the model's doing; a resume runs "
                "this unit again)", tool=tool, waited_s=pool.wait_s)


_default_pool: ToolPool | None = None


def default_tool_pool() -> ToolPool:
    """The process-wide pool every agent run shares unless given its own (its bound holds per event loop)."""
    global _default_pool
    if _default_pool is None:
        _default_pool = ToolPool()
    return _default_pool


def _size(value: Any) -> int:
    return len(orjson.dumps(value))


def _cut(path: str, what: str) -> str:
    """One place that was shortened, as the note names it (bounded, so the note always fits its reserve)."""
    shown = path if len(path) <= NOTED_PATH else "…" + path[-(NOTED_PATH - 1):]
    return f"{shown}: {what}"


def _fit_text(text: str, budget: int, path: str, cuts: list[str]) -> str | None:
    """The longest prefix of ``text`` whose JSON fits ``budget`` (escapes make bytes and characters differ)."""
    if budget < 2:
        return None
    lo, hi = 0, len(text)
    while lo < hi:  # binary search on the number of characters kept
        checkpoint()
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if _size(text[:mid]) <= budget else (lo, mid - 1)
    cuts.append(_cut(path, f"{lo:,} of {len(text):,} characters"))
    return text[:lo]


def _fit_list(items: list[Any], budget: int, path: str, cuts: list[str]) -> list[Any] | None:
    """The leading items that fit ``budget`` whole (order is rank), then the next one shortened if room is left."""
    if budget < 2:
        return None
    kept: list[Any] = []
    noted = len(cuts)  # this list's own cut is named before any inside its last item
    used = 2  # the brackets
    for index, item in enumerate(items):
        checkpoint()
        comma = 1 if kept else 0
        size = _size(item)
        if used + comma + size <= budget:
            kept.append(item)
            used += comma + size
            continue
        room = budget - used - comma
        part = _fit(item, room, f"{path}[{index}]", cuts) if room >= MIN_PART else None
        if part is not None:
            kept.append(part)
        break
    cuts.insert(noted, _cut(path, f"{len(kept):,} of {len(items):,} items"))
    return kept


def _fit_dict(doc: dict[str, Any], budget: int, path: str, cuts: list[str]) -> dict[str, Any] | None:
    """Small values stay whole; the budget left is shared evenly among the large ones, which are shortened."""
    if budget < 2:
        return None
    entries = sorted(((len(orjson.dumps(key)) + 2, _size(value), key) for key, value in doc.items()),
                     key=lambda entry: entry[0] + entry[1])
    room = budget - 1  # 2 for the braces, less the comma the first entry counts but does not have
    fitted: dict[str, Any] = {}
    for left, (overhead, size, key) in zip(range(len(entries), 0, -1), entries, strict=True):
        checkpoint()
        share = room // left
        if overhead + size <= share:
            fitted[key], room = doc[key], room - overhead - size
            continue
        value = (_fit(doc[key], share - overhead, f"{path}.{key}", cuts)
                 if share - overhead >= MIN_PART else None)
        if value is None:
            cuts.append(_cut(f"{path}.{key}", "left out"))
            continue
        fitted[key], room = value, room - overhead - _size(value)
    return {key: fitted[key] for key in doc if key in fitted}


def _fit(value: Any, budget: int, path: str, cuts: list[str]) -> Any:
    """``value`` shortened so its JSON fits ``budget`` bytes, noting each cut; ``None`` when nothing fits."""
    if _size(value) <= budget:
        return value
    if isinstance(value, str):
        return _fit_text(value, budget, path, cuts)
    if isinstance(value, list):
        return _fit_list(value, budget, path, cuts)
    if isinstance(value, dict):
        return _fit_dict(value, budget, path, cuts)
    return None  # a number or a literal too large for what is left


def cap_result(result: dict[str, Any], max_bytes: int) -> dict[str, Any]:
    """``result`` cut to at most ``max_bytes`` of JSON with ``truncated`` and a note naming what was shortened.

    Lists keep their leading items (tools rank their results), texts their beginning, and small fields
    (counts, ids, notes) stay whole; the note tells the model the sizes and to narrow its query.
    """
    full = _size(result)
    budget = max_bytes - MARKER_RESERVE
    while True:  # a note longer than the reserve gives back its overshoot from the content on a second pass
        cuts: list[str] = []
        fitted = _fit(result, budget, "$", cuts) or {}
        shown = "; ".join(cuts[:NOTED_CUTS]) + ("; …" if len(cuts) > NOTED_CUTS else "")
        capped = {**fitted, "truncated": True,
                  "truncation_note": f"result cut to {_size(fitted):,} bytes of {full:,} ({shown}); "
                                     "narrow your query to see the rest"}
        size = _size(capped)
        if size <= max_bytes:
            return capped
        budget -= size - max_bytes


def _capped(result: dict[str, Any], max_bytes: int) -> ToolOutcome:
    """The outcome of a finished call, its result cut to ``max_bytes`` when larger (run where the call runs)."""
    encoded = orjson.dumps(result)
    if len(encoded) <= max_bytes:
        return ToolOutcome(result=result, content=encoded.decode(), result_bytes=len(encoded))
    capped = cap_result(result, max_bytes)
    return ToolOutcome(result=capped, content=orjson.dumps(capped).decode(), result_bytes=len(encoded),
                       truncated=True)


def _error(message: str, *, timed_out: bool = False) -> ToolOutcome:
    result = {"error": message}
    return ToolOutcome(result=result, content=orjson.dumps(result).decode(), timed_out=timed_out)


def _call(backend: ToolBackend, name: str, arguments: str | dict[str, Any] | None, max_bytes: int) -> ToolOutcome:
    """Run the tool and size its result (inline or in the worker thread: both can be heavy, both stop at
    checkpoints)."""
    result = backend.call(name, arguments)
    try:
        return _capped(result, max_bytes)
    except orjson.JSONEncodeError as exc:  # e.g. data nested deeper than JSON encoders go
        return _error(f"{tool_name(name)} built a result that cannot be sent as JSON ({exc}); "
                      "narrow the query or use another tool")


async def run_tool(backend: ToolBackend, name: str, arguments: str | dict[str, Any] | None, *, share: ToolShare,
                   timeout_s: float | None = None, max_bytes: int = TOOL_RESULT_MAX_BYTES) -> ToolOutcome:
    """One tool call, inline while short, else in ``share``, stopped after ``timeout_s`` (the pool's by default),
    its result capped.

    Whatever the tool does — fails, runs past its limit, builds too much — comes back as the outcome the model
    receives; only ``ToolWorkerTimeout`` is raised: no worker came free, which is not the model's doing.

    A built-in call (``backend.checkpointed``: pure, a function of the data and its arguments) that ended on its
    own is kept per scenario data (``MEMO_ENTRIES``, ``MEMO_BYTES``): the same call again — the next trial of the
    task repeating it, as models at temperature 0 and the sim's oracle do — gets the same outcome without running.
    A call stopped at its time limit is never kept, so its repeat runs (and is stopped) again. Off with the pool's
    ``memo``.
    """
    slot = _memo_slot(backend, name, arguments, share, max_bytes)
    if slot is None:
        return await _run(backend, name, arguments, share, timeout_s, max_bytes)
    memo, key = slot
    outcome = memo.get(key)
    if outcome is None:
        outcome = await _run(backend, name, arguments, share, timeout_s, max_bytes)
        if not outcome.timed_out:
            memo.put(key, outcome, _memo_size(key, outcome))
    return outcome


def kept_outcome(backend: ToolBackend, name: str, arguments: str | dict[str, Any] | None, *, share: ToolShare,
                 max_bytes: int = TOOL_RESULT_MAX_BYTES) -> ToolOutcome | None:
    """The outcome ``run_tool`` would answer this call with from what an earlier identical call left, or ``None``
    (not kept, or not a call that is kept): a look-up only, nothing runs. A caller with several calls to make at
    once asks first, so that only the others need a task each (issue 31)."""
    slot = _memo_slot(backend, name, arguments, share, max_bytes)
    return None if slot is None else slot[0].get(slot[1])


def _memo_slot(backend: ToolBackend, name: str, arguments: str | dict[str, Any] | None, share: ToolShare,
               max_bytes: int) -> tuple[Memo[_MemoKey, ToolOutcome], _MemoKey] | None:
    """Where a call's outcome is kept — its data's memo and its key — or ``None`` for a call that is not kept (not
    built in, the pool's ``memo`` off, arguments that are not JSON)."""
    key = _memo_key(name, arguments, max_bytes) if backend.checkpointed and share.pool.memo else None
    return None if key is None else (backend.data.derived("tool_outcomes", _new_memo), key)


async def _run(backend: ToolBackend, name: str, arguments: str | dict[str, Any] | None, share: ToolShare,
               timeout_s: float | None, max_bytes: int) -> ToolOutcome:
    """``run_tool``'s call itself: inline while short, else in the share's thread, stopped at its limit."""
    pool = share.pool
    limit = pool.timeout_s if timeout_s is None else timeout_s
    call = functools.partial(_call, backend, name, arguments, max_bytes)
    if backend.checkpointed and pool.inline_s:  # on the loop while it is short (see the module's docstring)
        outcome = run_inline(call, min(pool.inline_s, limit), pool.clock)
        if not isinstance(outcome, Missed):
            return outcome
    try:
        return await share.run(call, timeout_s=limit, tool=tool_name(name))
    except TimeoutError:
        return _error(f"{tool_name(name)} took longer than {limit:g} s and was stopped. Narrow the query (a "
                      "shorter date range, fewer people, a more specific search) and try again", timed_out=True)


def _new_memo() -> Memo[_MemoKey, ToolOutcome]:
    return Memo(max_entries=MEMO_ENTRIES, max_bytes=MEMO_BYTES)


def _memo_key(name: str, arguments: str | dict[str, Any] | None, max_bytes: int) -> _MemoKey | None:
    """What makes a built-in call's outcome: the tool, its arguments as given (text as the model wrote it, a dict
    by its sorted JSON) and the cap; ``None`` for arguments that are not JSON (such a call is not kept)."""
    if arguments is None or isinstance(arguments, str):
        return name, arguments or "", max_bytes  # no arguments and "" both read as {} (``ToolBackend.call``)
    try:
        return name, orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS), max_bytes
    except (TypeError, orjson.JSONEncodeError):
        return None


def _memo_size(key: _MemoKey, outcome: ToolOutcome) -> int:
    """Bytes an entry holds, roughly: its key, the result's JSON text and its decoded objects (about three times
    the text as Python dicts, lists and strings)."""
    return len(key[1]) + 4 * len(outcome.content) + 256
