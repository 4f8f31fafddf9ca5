"""The innermost layers: start the model's in-process provider, and send one attempt through the transport.

``ProviderStart`` sits right inside the cache (a cached reply starts nothing) and
outside everything that names the endpoint, so the breaker, the ledger and the
records see the provider's final URL; the client links it in only while a model
waits for its provider, so calls skip it once the provider runs. ``TransportSend`` is the one ``send`` every
other layer wraps: it starts the call's deadline on the first send and cuts each
attempt at it (or at the legacy per-attempt ``timeout_s``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from .._exceptions import LLMTimeoutError
from ..runtime import Clock, Deadline
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
    """One attempt through the model's transport, timed (``latency_s``) and cut at the call's deadline."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def send(self, call: Call) -> WireCompletion:
        state = call.state
        timeouts = state.settings.timeouts
        deadline = call.deadline
        batch = state.settings.batch_settings is not None  # a batch call has its own deadline (batch.deadline_s)
        if deadline is None:  # the deadline runs from the first send
            seconds = math.inf if batch else timeouts.call_deadline_s
            deadline = call.deadline = Deadline(at=self.clock.now() + seconds, seconds=seconds)
        remaining = deadline.remaining(self.clock)
        per_attempt = math.inf if batch else state.settings.timeout_s or math.inf
        sent = time.perf_counter()
        try:
            # A bare cancel scope, not ``anyio.fail_after``: two generator context managers fewer on every call.
            with anyio.CancelScope(deadline=anyio.current_time() + min(remaining, per_attempt)):
                return await state.transport.complete(state.endpoint, call.request)
        finally:
            call.latency_s = time.perf_counter() - sent
        # Only reached when the scope's own deadline cancelled the attempt (any other cancellation propagates).
        endpoint = state.endpoint
        if remaining <= per_attempt:
            raise deadline.error(call.attempts, model=endpoint.model, endpoint=endpoint.url,
                                 last=None) from TimeoutError()
        raise LLMTimeoutError(f"no complete reply within timeout_s={per_attempt:g} s", model=endpoint.model,
                              endpoint=endpoint.url) from TimeoutError()

