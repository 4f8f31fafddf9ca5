"""The retry layer: transient failures are retried (tenacity, ``runtime.retrying``) within the call's deadline.

Outside the limiter so each attempt queues for its own slot, and a rate-limited
attempt frees its slot while it waits; inside the breaker and the records so a
call is counted and recorded once, with all its attempts. It counts the attempts (a client without a
retry layer starts each call at its one attempt).
The first attempt runs with no retry machinery at all (the common case costs no
tenacity objects); only its failure starts the loop.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from .._exceptions import TransientLLMError
from ..runtime import Clock, retrying
from ._layer import Call, Layer

if TYPE_CHECKING:
    from ._wire import WireCompletion

__all__ = ["RetryLayer"]


class RetryLayer(Layer):
    """Retries each call's transient failures by its model's ``retry`` policy; ``retries`` counts the retries."""

    def __init__(self, clock: Clock, rng: random.Random) -> None:
        self.clock = clock
        self.rng = rng
        self.retries = 0

    async def send(self, call: Call) -> WireCompletion:
        call.attempts += 1
        try:
            return await self.inner.send(call)
        except TransientLLMError as first_failure:
            return await self._retry(call, first_failure)

    async def _retry(self, call: Call, first_failure: TransientLLMError) -> WireCompletion:
        """The tenacity loop, replaying the first failure as its attempt 1 so waits and stops are computed as
        if it had made that attempt itself."""

        def on_retry(_exc: BaseException, wait: float) -> None:
            call.retry_wait_s += wait
            self.retries += 1

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
