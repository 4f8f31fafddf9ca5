"""Batch transport: a model's calls gathered into provider batches, each call answered when its batch ends.

Why a transport: the layers around it (cache, budget, records at the batch price,
ledger) and the callers (a judge's ``client.chat``) stay as they are; a call
simply takes as long as its batch. The calls that arrive within ``max_wait_s`` of
the first (or ``max_requests`` of them) form one batch (``BatchBackend``); the
first caller submits it, and whoever holds the batch's lock polls it, backing off
from ``poll_s`` to ``poll_max_s``, logging ``batch <id>: n/total done``.

- **Journal.** ``batches.jsonl`` (``BatchJournal``, fsync'd) holds each batch's
  input file and keys before the batch is created, its id once it is, and its end
  state. A call whose key an earlier, killed invocation already sent joins that
  batch (polls it and reads its result; finds or creates the batch of a file it
  uploaded) instead of sending it again: nothing is paid twice.
- **What failed is resubmitted**: a request that ended in a transient error (5xx,
  429, ``batch_expired``, cancelled unfinished) goes into a later batch, up to
  ``resubmits`` times; a permanent one (4xx) is the call's error.
- **Deadline.** A batch not finished ``deadline_s`` after its creation is
  cancelled; what it finished is used, the rest fail (a transient error: a rerun
  resubmits them).
- **Waves** (``_waves``): a caller that is a member (an agent run, ``LLMClient.wave_member``) is waited for: the
  gathering batch is sent once every member waits on the model, else at ``max_wait_s`` or ``max_requests``; each
  batch this invocation saw end is a ``WaveReport`` in ``waves.reports``.
- **Unknown on resume.** A journalled batch the provider does not know (404)
  fails its calls with one message and is journalled ``unknown``, so a rerun
  sends them anew (it is not resent at once: a wrong ``base_url`` also answers 404,
  and resending would pay twice).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import orjson

from .._exceptions import BatchDeadlineError, LLMError, TransientLLMError
from ._batch_api import BatchBackend, BatchView, UnknownBatchError
from ._config import BatchSettings
from ._transport import ChatRequest, Endpoint, Transport
from ._waves import Cut, WaveReport, Waves
from ._wire import WireCompletion

__all__ = ["BATCHES", "BatchDeadlineError", "BatchJournal", "BatchTransport"]

log = logging.getLogger(__name__)

BATCHES = "batches.jsonl"


class BatchJournal:
    """``batches.jsonl``: one line per batch event, by the input file it was made from.

    ``uploaded`` (the file id and the keys it holds) is written before the batch is created, ``submitted`` (the
    batch id) once it is, then its end state: a kill at any point leaves each key traceable to its file, and the
    file to its batch (``BatchBackend.find`` when the kill came between create and ``submitted``).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.holder: dict[str, str] = {}  # key → the input file of a batch an earlier invocation sent
        self.batch_of: dict[str, str] = {}  # file id → its batch id
        self.state: dict[str, str] = {}  # file id → its latest state
        if path is not None and path.exists():
            for text in path.read_bytes().splitlines():
                try:
                    line = orjson.loads(text)
                    file_id, state = str(line["file_id"]), str(line["state"])
                except (orjson.JSONDecodeError, KeyError, TypeError):
                    continue  # a line torn by a kill: its file was journalled whole before, or never sent
                self.state[file_id] = state
                if line.get("batch_id"):
                    self.batch_of[file_id] = str(line["batch_id"])
                for key in line.get("keys") or ():
                    self.holder[key] = file_id
            for key, file_id in list(self.holder.items()):
                if self.state.get(file_id) == "unknown":
                    del self.holder[key]

    def append(self, file_id: str, model: str, state: str, *, batch_id: str | None = None,
               keys: list[str] | None = None) -> None:
        self.state[file_id] = state
        if batch_id is not None:
            self.batch_of[file_id] = batch_id
        if self.path is None:
            return
        line: dict[str, Any] = {"file_id": file_id, "batch_id": batch_id or self.batch_of.get(file_id),
                                "model": model, "state": state, "at": round(time.time(), 3)}
        if keys is not None:
            line["keys"] = keys
        with self.path.open("ab") as out:
            out.write(orjson.dumps(line) + b"\n")
            out.flush()
            os.fsync(out.fileno())


class _Live:
    """A batch this invocation waits on (by its input file): who polls it, and its results once it ended."""

    def __init__(self, file_id: str, batch_id: str | None, started: float) -> None:
        self.file_id, self.id, self.started = file_id, batch_id, started
        self.submitted = started
        self.keys: set[str] = set()  # the member calls waiting on it
        self.gathered: tuple[Cut, float, int] = ("resumed", started, 0)  # why it was sent, its first request, size
        self.lock = anyio.Lock()
        self.results: dict[str, WireCompletion | LLMError] | None = None
        self.error: LLMError | None = None  # the whole batch failed: every call gets it


class _Group:
    """Calls gathering into the next batch."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []
        self.members: set[str] = set()  # the keys of the member calls in it
        self.started = 0.0
        self.cut: Cut = "age"
        self.full = anyio.Event()
        self.sent = anyio.Event()
        self.live: _Live | None = None
        self.error: LLMError | None = None


class BatchTransport(Transport):
    """Sends one model's calls in provider batches (see the module docstring)."""

    name = "batch"

    def __init__(self, backend: BatchBackend, settings: BatchSettings, journal: BatchJournal, *,
                 now: Callable[[], float] = time.time) -> None:
        self.backend, self.settings, self.journal, self.now = backend, settings, journal, now
        self._group: _Group | None = None
        self._live: dict[str, _Live] = {}
        self.running: dict[str, BatchView] = {}  # batch id → how it stood at its last poll, until it ends
        self.waves = Waves()

    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        body = {k: v for k, v in request.body.items() if k not in ("stream", "stream_options")}
        key = request.key
        member = self.waves.of_caller()
        if member is not None:
            self.waves.counted(member)
        rounds = self.settings.resubmits + 1
        try:
            for round_ in range(rounds):
                if member is not None:
                    self.waves.wait_on(key)
                held_in = self.journal.holder.pop(key, None) if round_ == 0 else None
                live = (self._resumed(held_in, key if member else None) if held_in is not None
                        else await self._join(endpoint, key, body, member=member is not None))
                result = await self._result(endpoint, live, key)
                if isinstance(result, WireCompletion):
                    return result
                if not isinstance(result, TransientLLMError) or round_ == rounds - 1:
                    raise result
                log.info("batch %s: %s failed (%s); resubmitting it", live.id or live.file_id, key, result.reason)
            raise AssertionError("unreachable")
        finally:
            self.waves.done([key])

    def _resumed(self, file_id: str, member_key: str | None) -> _Live:
        live = self._live.get(file_id)
        if live is None:
            live = self._live[file_id] = _Live(file_id, self.journal.batch_of.get(file_id), self.now())
        if member_key is not None and live.results is None and live.error is None:
            live.keys.add(member_key)
        return live

    async def _join(self, endpoint: Endpoint, key: str, body: dict[str, Any], *, member: bool) -> _Live:
        """Add the call to the gathering batch; the first caller submits it (``_gather``: when full, when every
        member waits, or ``max_wait_s`` after it came)."""
        group = self._group
        leader = group is None
        if group is None:
            group = self._group = _Group()
            group.started = self.now()
        group.lines.append((key, body))
        if member:
            group.members.add(key)
        if len(group.lines) >= self.settings.max_requests:
            group.cut = "size"
            group.full.set()
            self.waves.stir()
            self._group = None
        if leader:
            await self._gather(group)
            if self._group is group:
                self._group = None
            with anyio.CancelScope(shield=True):  # the others wait on this submission
                await self._submit(endpoint, group)
        else:
            await group.sent.wait()
        if group.error is not None:
            raise group.error
        assert group.live is not None
        return group.live

    async def _gather(self, group: _Group) -> None:
        """Until the gathering batch is full, every member waits (``Waves``), or ``max_wait_s`` has passed."""
        with anyio.move_on_after(self.settings.max_wait_s):
            while not group.full.is_set():
                if self.waves.all_waiting():
                    if await self.waves.settled_all_waiting() and not group.full.is_set():
                        group.cut = "waiting"
                        return
                    continue
                await self.waves.changed()

    async def _submit(self, endpoint: Endpoint, group: _Group) -> None:
        keys = [key for key, _ in group.lines]
        try:
            file_id = await self.backend.upload(endpoint, group.lines)
            self.journal.append(file_id, endpoint.model, "uploaded", keys=keys)
            live = group.live = self._live[file_id] = _Live(file_id, None, self.now())
            await self._create(endpoint, live)
        except LLMError as exc:
            log.warning("batch of %d requests for %s refused: %s", len(keys), endpoint.model, exc)
            group.error = exc
            self.waves.done(group.members)
        else:
            live.keys |= group.members
            live.gathered = (group.cut, group.started, len(keys))
            log.info("batch %s: %d requests submitted for %s", live.id, len(keys), endpoint.model)
        finally:
            group.sent.set()

    async def _create(self, endpoint: Endpoint, live: _Live) -> None:
        """Create the batch of ``live``'s uploaded file, and journal its id."""
        view = await self.backend.create(endpoint, live.file_id)
        live.id, live.submitted = view.id, self.now()
        self.journal.append(live.file_id, endpoint.model, "submitted", batch_id=view.id)

    async def _result(self, endpoint: Endpoint, live: _Live, key: str) -> WireCompletion | LLMError:
        """Wait for ``live`` to end (polling it while holding its lock), then the call's own result."""
        async with live.lock:
            wait = self.settings.poll_s
            if live.id is None and live.results is None and live.error is None:
                await self._recover(endpoint, live)
            while live.results is None and live.error is None:
                await self._poll(endpoint, live)
                if live.results is None and live.error is None:
                    await anyio.sleep(wait)
                    wait = min(self.settings.poll_max_s, wait * 2 or self.settings.poll_max_s)
        if live.error is not None:
            return live.error
        assert live.results is not None
        found = live.results.pop(key, None)
        if found is None:
            return LLMError(f"batch {live.id} holds no result for {key}", model=endpoint.model,
                            endpoint=endpoint.base_url)
        return found

    async def _recover(self, endpoint: Endpoint, live: _Live) -> None:
        """A file an earlier invocation uploaded but did not see become a batch: find its batch, else create it."""
        try:
            view = await self.backend.find(endpoint, live.file_id)
            if view is None:
                log.info("batch input %s was uploaded but never made a batch: creating it now", live.file_id)
                await self._create(endpoint, live)
            else:
                live.id = view.id
                self.journal.append(live.file_id, endpoint.model, "submitted", batch_id=view.id)
        except LLMError as exc:
            live.error = exc
            self.waves.done(live.keys)

    async def _poll(self, endpoint: Endpoint, live: _Live) -> None:
        assert live.id is not None
        try:
            view = await self.backend.poll(endpoint, live.id)
        except UnknownBatchError as exc:
            self.journal.append(live.file_id, endpoint.model, "unknown")
            live.error = UnknownBatchError(
                f"batch {live.id} (in {BATCHES}) is unknown to the provider ({exc.detail}); its requests were "
                "not resent, as it may have been paid for: rerun to send them anew",
                model=endpoint.model, endpoint=exc.endpoint, status=404)
            self.waves.done(live.keys)
            return
        log.info("batch %s: %d/%d done (%s)", view.id, view.done, view.total, view.status)
        self.running[view.id] = view
        if not view.terminal and self.now() - live.started >= self.settings.deadline_s:
            view = await self.backend.cancel(endpoint, view.id)
            while not view.terminal:  # a cancel takes effect within a poll or two
                view = await self.backend.poll(endpoint, view.id)
            await self._ended(endpoint, live, view, BatchDeadlineError(
                f"batch {live.id} did not finish within batch.deadline_s={self.settings.deadline_s:g} s and "
                "was cancelled; rerun to resubmit this request", model=endpoint.model, endpoint=endpoint.base_url))
        elif view.terminal:
            await self._ended(endpoint, live, view, None)

    async def _ended(self, endpoint: Endpoint, live: _Live, view: BatchView, unfinished: LLMError | None) -> None:
        results = await self.backend.results(endpoint, view)
        if view.status == "failed" and not results:
            live.error = LLMError(f"batch {live.id} failed: {view.message or 'no reason given'}",
                                  model=endpoint.model, endpoint=endpoint.base_url)
        if unfinished is not None:  # the deadline's message, not the provider's "cancelled"
            results = {k: unfinished if isinstance(v, TransientLLMError) else v for k, v in results.items()}
        live.results = results
        self.running.pop(view.id, None)
        self.journal.append(live.file_id, endpoint.model, view.status)
        cut, started, size = live.gathered
        self.waves.reports.append(WaveReport(model=endpoint.model, batch_id=view.id, requests=size or view.total,
                                             cut=cut, started=started, submitted=live.submitted, ended=self.now()))
        self.waves.done(live.keys)

    async def aclose(self) -> None:
        await self.backend.aclose()
