"""The retry layer: transient failures are retried (tenacity, ``runtime.retrying``) within the call's deadline.

Outside the limiter so each attempt queues for its own slot, and a rate-limited
attempt frees its slot while it waits; inside the breaker and the records so a
call is counted and recorded once, with all its attempts. It counts the attempts (a client without a
retry layer starts each call at its one attempt).
The first attempt runs with no retry machinery at all (the common case costs no
tenacity objects); only its failure starts the loop.

Before each wait it tells its listeners (``RetryEvent``: model, attempt, why, the
wait), so a progress line or ``run-task`` can say that a call is being retried and
why, where a dead endpoint or a gateway's 500s would otherwise sit silent for a minute.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from .._exceptions import BenchError, TransientLLMError
from .._redact import redact_text
from ..runtime import Clock, retrying
from ._layer import Call, Layer

if TYPE_CHECKING:
    from ._wire import WireCompletion

__all__ = ["RetryEvent", "RetryLayer", "RetryListener"]


class RetryEvent(NamedTuple):
    """A call's attempt failed and is about to be retried: which, why (masked) and how long until the next try."""

    model: str
    key: str
    attempt: int  # the attempt that failed, from 1
    max_attempts: int
    error_class: str
    reason: str
    wait_s: float

    def describe(self, reason_chars: int | None = None, wait_s: float | None = None) -> str:
        """``retrying sim/x: attempt 1/3 failed (ServerError: …: HTTP 500: …); next try in 0.5 s``.

        ``reason_chars`` keeps the end of a long reason (the provider's words come after the ``model 'm' at URL``
        the message starts with); ``wait_s`` is what is left of the wait, for a line redrawn during it.
        """
        reason = " ".join(self.reason.split())
        if reason_chars is not None and len(reason) > reason_chars:
            reason = "…" + reason[len(reason) - reason_chars + 1:]
        return (f"retrying {self.model}: attempt {self.attempt}/{self.max_attempts} failed ({self.error_class}: "
                f"{reason}); next try in {self.wait_s if wait_s is None else wait_s:.1f} s")


RetryListener = Callable[[RetryEvent], None]


class RetryLayer(Layer):
    """Retries each call's transient failures by its model's ``retry`` policy; ``retries`` counts the retries."""

    def __init__(self, clock: Clock, rng: random.Random) -> None:
        self.clock = clock
        self.rng = rng
        self.retries = 0
        self.listeners: list[RetryListener] = []  # told of each retry before its wait

    async def send(self, call: Call) -> WireCompletion:
        call.attempts += 1
        try:
            return await self.inner.send(call)
        except TransientLLMError as first_failure:
            return await self._retry(call, first_failure)

    async def _retry(self, call: Call, first_failure: TransientLLMError) -> WireCompletion:
        """The tenacity loop, replaying the first failure as its attempt 1 so waits and stops are computed as
        if it had made that attempt itself."""

        def on_retry(exc: BaseException, wait: float) -> None:
            call.retry_wait_s += wait
            self.retries += 1
            if self.listeners:
                reason = str(exc) if isinstance(exc, BenchError) else redact_text(str(exc) or repr(exc))
                event = RetryEvent(call.model, call.request.key, call.attempts, call.state.settings.retry.max_attempts,
                                   type(exc).__name__, reason, wait)
                for listener in self.listeners:
                    listener(event)

        pending: TransientLLMError | None = first_failure
        async for attempt in retrying(call.state.settings.retry, clock=self.clock, rng=self.rng,
                                      on_retry=on_retry, deadline=call.deadline):
            with attempt:
                if pending is not None:
                    failed, pending = pending, None
                    # The first failure itself, replayed: `raise ... from` would rewrite its cause.
                    raise failed  # noqa: B904
                if call.breaker is not None:
                    call.breaker.check()
                call.attempts += 1
                completion = await self.inner.send(call)
        return completion
