"""A per-model circuit breaker: a dead endpoint fails fast instead of being retried by every unit.

After ``failures`` consecutive calls of one model fail because its endpoint cannot
serve it at all (connection refused or dropped, connect/read timeouts, 404 model
not found, 501/505, an HTML page where the JSON API should be), the breaker opens
for the rest of the client's life: later calls, and retries still in flight, raise
``CircuitOpenError`` at once without any network I/O. Any other outcome (a
success, a 400, a 429 that ran out of retries) resets the count. Other models,
each with their own breaker, keep working. Opening logs one warning.
"""

from __future__ import annotations

import logging

from .._exceptions import (
    CallDeadlineError,
    CircuitOpenError,
    HTMLReplyError,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    PermanentLLMError,
)

__all__ = ["CircuitBreaker", "is_endpoint_failure"]

log = logging.getLogger(__name__)

_DEAD_STATUSES = frozenset({404, 501, 505})


def is_endpoint_failure(error: LLMError) -> bool:
    """Whether a failed call says the endpoint cannot serve the model at all, not just this one request."""
    if isinstance(error, CallDeadlineError):
        return error.last_error is not None and is_endpoint_failure(error.last_error)
    if isinstance(error, (LLMConnectionError, LLMTimeoutError, HTMLReplyError)):
        return True
    return isinstance(error, PermanentLLMError) and error.status in _DEAD_STATUSES


class CircuitBreaker:
    """Counts one model's consecutive endpoint failures; once open, refuses every later call."""

    def __init__(self, model: str, endpoint: str, threshold: int) -> None:
        self.model = model
        self.endpoint = endpoint
        self.threshold = threshold
        self.consecutive = 0
        self.cause: LLMError | None = None
        self.affected = 0

    @property
    def is_open(self) -> bool:
        return self.cause is not None

    def message(self) -> str:
        """What happened, how many calls it cost, and what to do (without the model/endpoint prefix)."""
        assert self.cause is not None
        return (f"circuit breaker open after {self.threshold} consecutive failed calls (last: "
                f"{self.cause.reason}); {self.affected} calls affected so far; no further calls are "
                f"sent to this model in this run (fix the endpoint or the model's entry in model_config.json, "
                f"then rerun)")

    def check(self) -> None:
        """Refuse the call at once (counting it as affected) when the breaker is open."""
        if self.cause is not None:
            self.affected += 1
            raise CircuitOpenError(self.message(), model=self.model, endpoint=self.endpoint)

    def after_call(self, error: LLMError | None) -> None:
        """Count a finished call: endpoint failures in a row open the breaker, anything else resets the count."""
        if isinstance(error, CircuitOpenError):
            return  # already counted by check()
        if self.cause is not None:
            self.affected += error is not None
            return
        if error is None or not is_endpoint_failure(error) or self.threshold == 0:
            self.consecutive = 0
            return
        self.consecutive += 1
        if self.consecutive >= self.threshold:
            self.cause = error
            self.affected = self.consecutive
            log.warning("model %r at %s: %s", self.model, self.endpoint, self.message())
