"""The call ledger: every request's intent, durable on disk before the request is sent.

Why: a call record (``calls.jsonl``) is written when the reply has arrived. A
process killed while calls are in flight leaves no record of them, yet the
provider has received — and billed — every one of them; budgets and summaries
that count only records under-count by every call in flight at each kill. So
before each request leaves, ``LLMClient`` appends its ``records.CallIntent``
(call id, call key, attempt, model, worst-case cost) here and waits until it is
durable; the call's ``LLMCallRecord`` (same ``call_id``) settles it. After a
kill, every intent without a settling record is *unsettled* and counts at its
worst case (``unsettled_calls``).

Durability: ``fsync=True`` (the default) writes with ``os.write`` and
``os.fdatasync`` (``fsync`` where there is none), so an intent survives a kill of
the process, of the machine and a power cut; a new ledger file also has its
directory synced once. That is a disk flush on the path of every request, so
intents are group-committed: every intent handed in while one commit is on disk
joins the next, one write and one flush for all of them, in the ledger's own thread (the
event loop never waits on the disk; ``bench/call_ledger.py`` measures the cost).
No request is sent before the commit holding its intent has returned. The hand-off is
lean (issue 31): an idle thread gets a batch on a queue, the thread hands each outcome back
with one ``call_soon_threadsafe``, and each caller waits on a bare future of its own — no
executor future chained to a loop future, no cancel scope, no ``anyio.Event`` per commit.
The thread takes the next batch itself as a commit returns (the open batch is shared under a
lock), so commits follow each other at the disk's pace, not the loop's: handed over by the
loop, the next commit began only once the loop had worked through its queue — in a burst of
64 replies, after the whole burst. A caller cancelled while waiting leaves at once, its intent
still committed with the others (its request is not sent either way).
``fsync=False`` writes each intent to the OS at once instead (no thread, no
flush): it survives a kill of the process — the kernel keeps the written page —
but not a crash of the machine.

A write that fails (disk full, I/O error) is cut back to the last whole line and
raises ``LedgerError``: the request is not sent, and its unit reruns on resume.
A line torn by a kill mid-write is trimmed when the ledger is next opened (that
request was never sent: its commit never returned).

Reading: ``SettledCalls`` collects the ``call_id`` of every call record (a bit per
call: the ids are a per-client prefix and a counter); ``unsettled_calls`` then
streams the ledger and returns the last intent of each call none of them settles.
Memory: O(calls / 8) bytes plus the unsettled calls, never a dict of every intent.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
from collections.abc import Iterable
from pathlib import Path

import msgspec

from .._exceptions import LedgerError
from ..records import CallIntent
from ..runtime import iter_jsonl, trim_torn_tail

__all__ = ["LEDGER", "CallLedger", "LedgerStats", "SettledCalls", "unsettled_calls"]

log = logging.getLogger(__name__)

LEDGER = "ledger.jsonl"


class LedgerStats(msgspec.Struct, kw_only=True):
    """What a ledger has written: intents, commits (writes + flushes) and the largest commit."""

    intents: int = 0
    commits: int = 0
    largest_commit: int = 0


class _Batch:
    """Intents committed together, a future per caller waiting for them (each gets ``None`` once they are on disk,
    or the error that kept them off it) and the loop those futures belong to."""

    __slots__ = ("lines", "waiters", "loop")

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.waiters: list[asyncio.Future[BaseException | None]] = []
        self.loop: asyncio.AbstractEventLoop | None = None


class CallLedger:
    """The append-only intent file of one client (``ledger.jsonl`` of a sweep); see the module docstring.

    ``await intend(intent)`` returns once the intent is durable (``fsync``) or written to the OS, and
    raises ``LedgerError`` when it could not be written. One event loop at a time uses a ledger.
    """

    def __init__(self, path: str | Path, *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.stats = LedgerStats()
        self._encoder = msgspec.json.Encoder()
        self._fd: int | None = None
        self._size = 0  # bytes of whole lines in the file: a failed write is cut back to it
        # The batch callers add to, and whether the thread is committing one: both the loop's and the thread's
        # (the thread takes the next batch itself), under the lock.
        self._lock = threading.Lock()
        self._open_batch = _Batch()
        self._writing = False
        self._jobs: queue.SimpleQueue[_Batch | None] = queue.SimpleQueue()  # wakes the idle thread
        self._thread: threading.Thread | None = None  # the ledger's own thread: one commit at a time
        self._closed = False

    # -- writing -------------------------------------------------------------
    async def intend(self, intent: CallIntent) -> None:
        """Append ``intent``; return once it is durable (group-committed with the intents handed in meanwhile)."""
        if self._closed:
            raise self._error(intent, OSError("the ledger is closed"))
        line = self._encoder.encode(intent) + b"\n"
        if not self.fsync:
            try:
                self._write([line])
            except OSError as exc:
                raise self._error(intent, exc) from exc
            return
        loop = asyncio.get_running_loop()
        committed: asyncio.Future[BaseException | None] = loop.create_future()
        with self._lock:
            batch = self._open_batch
            batch.lines.append(line)
            batch.waiters.append(committed)
            batch.loop = loop
            idle = not self._writing
            if idle:  # the thread waits: this batch is its next, sent now
                self._open_batch, self._writing = _Batch(), True
        if idle:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="mpcbench-ledger", daemon=True)
                self._thread.start()
            self._jobs.put(batch)
        error = await committed
        if error is not None:
            if isinstance(error, OSError):
                raise self._error(intent, error) from error
            raise error

    def _serve(self) -> None:
        """The ledger's thread: commit each batch, hand its outcome back to its loop, and take the batch filled
        meanwhile at once (not once the loop gets round to it: in a burst of replies that is after the burst)."""
        while (batch := self._jobs.get()) is not None:
            next_batch: _Batch | None = batch
            while next_batch is not None:
                batch = next_batch
                error: BaseException | None = None
                if self._closed:  # handed in as the ledger was closed: not written, so not sent
                    error = OSError("the ledger is closed")
                else:
                    try:
                        self._write(batch.lines)
                    except BaseException as exc:  # an OSError fails the batch's intents; anything else is raised
                        error = exc
                self._settle(batch, error)
                with self._lock:
                    if self._open_batch.lines:
                        next_batch, self._open_batch = self._open_batch, _Batch()
                    else:
                        next_batch, self._writing = None, False

    @staticmethod
    def _settle(batch: _Batch, error: BaseException | None) -> None:
        """Wake the batch's callers on their loop (those not cancelled meanwhile)."""

        def wake() -> None:
            for waiter in batch.waiters:
                if not waiter.done():
                    waiter.set_result(error)

        assert batch.loop is not None
        try:
            batch.loop.call_soon_threadsafe(wake)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    def _write(self, lines: list[bytes]) -> None:
        """Append ``lines`` (and flush them to the disk with ``fsync``); a failed write is cut back to whole lines."""
        if self._fd is None:
            self._open()
        fd = self._fd
        assert fd is not None
        data = b"".join(lines)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if self.fsync:
                (os.fdatasync if hasattr(os, "fdatasync") else os.fsync)(fd)
        except OSError:
            try:
                os.ftruncate(fd, self._size)
            except OSError:
                pass  # the torn line is trimmed when the ledger is next opened
            raise
        self._size += len(data)
        self.stats.intents += len(lines)
        self.stats.commits += 1
        self.stats.largest_commit = max(self.stats.largest_commit, len(lines))

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        trimmed = trim_torn_tail(self.path)
        if trimmed:
            log.warning("ledger.torn_tail_trimmed", extra={"path": str(self.path), "bytes": trimmed})
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._size = os.fstat(self._fd).st_size
        if created and self.fsync:  # the new file's name must survive a crash too
            directory = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)

    def _error(self, intent: CallIntent, exc: OSError) -> LedgerError:
        return LedgerError(f"not sent: its intent could not be written to the call ledger {self.path} "
                           f"({type(exc).__name__}: {exc.strerror or exc})", model=intent.model)

    def close(self) -> None:
        """Close the file (every intent handed in has been committed: ``intend`` returns only then)."""
        self._closed = True
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join()
            self._thread = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# -- reading ------------------------------------------------------------------------------------------------


class SettledCalls:
    """The ``call_id`` of every call record read: a bit per call for the ledger's ``<prefix>-<n>`` ids."""

    def __init__(self, call_ids: Iterable[str | None] = ()) -> None:
        self._bits: dict[str, bytearray] = {}
        self._other: set[str] = set()
        for call_id in call_ids:
            self.add(call_id)

    def add(self, call_id: str | None) -> None:
        if not call_id:
            return
        prefix, _, number = call_id.rpartition("-")
        if not (prefix and number.isdigit() and len(number) < 10):
            self._other.add(call_id)
            return
        n = int(number)
        bits = self._bits.setdefault(prefix, bytearray())
        if len(bits) <= n >> 3:
            bits.extend(bytes(max((n >> 3) + 1 - len(bits), len(bits))))  # grow by doubling
        bits[n >> 3] |= 1 << (n & 7)

    def __contains__(self, call_id: object) -> bool:
        if not isinstance(call_id, str):
            return False
        prefix, _, number = call_id.rpartition("-")
        if not (prefix and number.isdigit() and len(number) < 10):
            return call_id in self._other
        bits, n = self._bits.get(prefix), int(number)
        return bits is not None and len(bits) > n >> 3 and bool(bits[n >> 3] & (1 << (n & 7)))


def unsettled_calls(ledger: str | Path, settled: SettledCalls) -> list[CallIntent]:
    """The last intent of every call in ``ledger`` that no record in ``settled`` settles, in ledger order.

    Each is one call sent whose reply was never recorded: count it once, at its ``worst_usd`` (its earlier
    attempts failed with retryable errors, which are not billed — as for a settled call's failed attempts).
    A missing ledger has none; a torn last line and undecodable lines are skipped (and logged).
    """
    open_calls: dict[str, CallIntent] = {}
    for intent in iter_jsonl(ledger, type_=CallIntent):
        if intent.call_id not in settled:
            open_calls[intent.call_id] = intent  # a later attempt of the call replaces the earlier one
    return list(open_calls.values())
