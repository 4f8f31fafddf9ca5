"""The innermost layers: start the model's in-process provider, and send one attempt through the transport.

``ProviderStart`` sits right inside the cache (a cached reply starts nothing) and
outside everything that names the endpoint, so the breaker, the ledger and the
records see the provider's final URL; the client links it in only while a model
waits for its provider, so calls skip it once the provider runs. ``TransportSend`` is the one ``send`` every
other layer wraps: it starts the call's deadline on the first send and cuts each
attempt at it (or at the legacy per-attempt ``timeout_s``) through the loop's ``Deadlines`` watchdog.
"""

from __future__ import annotations

import asyncio
import math
import time
from asyncio import current_task
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .._exceptions import LLMTimeoutError
from ..runtime import Clock, Deadline
from ._deadlines import Deadlines
from ._layer import Call, Layer

if TYPE_CHECKING:
    from ._wire import WireCompletion

__all__ = ["ProviderStart", "TransportSend"]


class ProviderStart(Layer):
    """Starts the provider a model waits for (``attach(state)``, once per client) before passing the call on."""

    def __init__(self, attach: Callable[[Any], Awaitable[None]]) -> None:
        self.attach = attach

    async def send(self, call: Call) -> WireCompletion:
        if call.state.provider is not None:
            await self.attach(call.state)
        return await self.inner.send(call)


class TransportSend(Layer):
    """One attempt through the model's transport, timed (``latency_s``) and cut at the call's deadline.

    The cut is the event loop's ``Deadlines`` watchdog (one timer for every attempt in flight), not a cancel scope
    with a timer of its own per attempt: same cut, a fraction of the cost per call (``_deadlines``).
    """

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._deadlines: Deadlines | None = None

    async def send(self, call: Call) -> WireCompletion:
        state = call.state
        settings = state.settings
        deadline = call.deadline
        if deadline is None:  # the deadline runs from the first send: all of it is left
            seconds = remaining = math.inf if state.batch else settings.timeouts.call_deadline_s
            deadline = call.deadline = Deadline(at=self.clock.now() + seconds, seconds=seconds)
        else:
            remaining = deadline.remaining(self.clock)
        # a batch call has its own deadline (batch.deadline_s)
        per_attempt = math.inf if state.batch else settings.timeout_s or math.inf
        limit = per_attempt if per_attempt < remaining else remaining  # ``min``, without its argument parsing
        transport = state.transport
        sent = time.perf_counter()
        if limit == math.inf:
            try:
                return await transport.complete(state.endpoint, call.request)
            finally:
                call.latency_s = time.perf_counter() - sent
        task = current_task()
        assert task is not None
        deadlines = self._deadlines
        if deadlines is None or deadlines.loop is not task.get_loop():
            deadlines = self._deadlines = Deadlines(task.get_loop())
        attempt = deadlines.watch(deadlines.now() + limit, task)
        try:
            completion = await transport.complete(state.endpoint, call.request)
        except asyncio.CancelledError:
            if not attempt.cut():
                raise
        except BaseException:
            if attempt.fired:  # cut as it failed, the cancellation turned into its error on the way: the error stands
                attempt.task.uncancel()
            raise
        else:
            if attempt.fired:  # cut as it ended, the cancellation swallowed on the way: the reply stands
                attempt.task.uncancel()
            return completion
        finally:
            call.latency_s = time.perf_counter() - sent
            deadlines.end(attempt)
        # Only reached when the attempt's own deadline cut it (any other cancellation propagates).
        endpoint = state.endpoint
        if remaining <= per_attempt:
            raise deadline.error(call.attempts, model=endpoint.model, endpoint=endpoint.url,
                                 last=None) from TimeoutError()
        raise LLMTimeoutError(f"no complete reply within timeout_s={per_attempt:g} s", model=endpoint.model,
                              endpoint=endpoint.url) from TimeoutError()
