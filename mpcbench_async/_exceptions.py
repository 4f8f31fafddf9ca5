"""The one exception tree of mpcbench-async.

Every error the library raises on purpose is a ``BenchError``; each names what went
wrong, where (file and field, or model and endpoint) and, where useful, what to do.
Foreign exceptions (aiohttp, httpx, openai, msgspec) are converted at the boundary
into the most specific class below and chained with ``from``. Every ``BenchError``
masks secrets in its own text when it is built (``_redact.redact_text``): error
texts quote servers, some servers echo the request's key, and these texts are
stored in records and reports and printed::

    BenchError
    ├── InputError                  bad user input: a file, a field, a flag
    │   ├── ConfigError             model_config.json and friends
    │   │   └── MissingAPIKeyError  a non-sim model whose key variable is unset
    │   ├── RecordDecodeError       a JSON/JSONL document that does not fit its type
    │   ├── CacheError              the response cache file cannot be used (not a cache, locked, missing)
    │   └── MixedScoringError       two tariff reports scored under different modes
    ├── LLMError                    one model call failed (carries model and endpoint)
    │   ├── TransientLLMError       worth retrying
    │   │   ├── RateLimitError      HTTP 429
    │   │   ├── ServerError         HTTP 408, 409, 5xx
    │   │   ├── LLMConnectionError  refused, reset or dropped connection
    │   │   ├── LLMTimeoutError     no complete reply within the timeout
    │   │   └── BadResponseError    truncated or undecodable body
    │   ├── PermanentLLMError       retrying cannot help (400/401/403/404/422/501/505)
    │   │   ├── HTMLReplyError      an HTML page answered where the JSON API should be
    │   │   ├── ReplayMissError     the replay store holds no reply for this request
    │   │   └── UnknownBatchError   the provider does not know a batch id (404): never resubmitted blindly
    │   ├── CallDeadlineError       the call's deadline (retries and backoff included) passed
    │   ├── BatchDeadlineError      the call's provider batch passed its deadline (retryable by a rerun)
    │   ├── ReplyStoreError         the response cache or replay store failed the call (damaged, locked)
    │   ├── CircuitOpenError        the model's endpoint failed N calls in a row; failing fast
    │   └── LedgerError             a request's intent could not be written to the call ledger: not sent
    ├── ToolWorkerTimeout           no tool worker came free in time (other units' calls held them all)
    ├── BudgetExceeded              a call refused: its worst case would pass a budget (nothing sent)
    ├── GenerationError             a model could not produce valid data within the repair budget
    ├── WorkersLost                 every Ray worker died, or one lost the global limiter
    ├── LimiterLost                 a Ray worker can lease from the global limiter no more: its units stop
    └── Interrupted                 the run was stopped by SIGINT/SIGTERM
"""

from __future__ import annotations

from ._redact import redact_text

__all__ = [
    "BadResponseError",
    "BatchDeadlineError",
    "BenchError",
    "BudgetExceeded",
    "CacheError",
    "CallDeadlineError",
    "CircuitOpenError",
    "ConfigError",
    "GenerationError",
    "InputError",
    "HTMLReplyError",
    "Interrupted",
    "LedgerError",
    "LimiterLost",
    "LLMConnectionError",
    "LLMError",
    "LLMTimeoutError",
    "MissingAPIKeyError",
    "MixedScoringError",
    "PermanentLLMError",
    "RateLimitError",
    "RecordDecodeError",
    "ReplayMissError",
    "ReplyStoreError",
    "ServerError",
    "ToolWorkerTimeout",
    "TransientLLMError",
    "UnknownBatchError",
    "WorkersLost",
]


class BenchError(Exception):
    """Base of every error mpcbench-async raises on purpose; its text never carries a secret."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact_text(arg) if isinstance(arg, str) else arg for arg in args))


class InputError(BenchError):
    """A user-supplied file, field, setting or flag is invalid.

    ``setting`` names the library setting at fault (``max_turns``, ``out``), which the message names too; the CLI
    prints the flag that sets it in its place (``--max-turns``), so both speak of what their user typed.
    """

    def __init__(self, *args: object, setting: str | None = None) -> None:
        super().__init__(*args)
        self.setting = setting


class ConfigError(InputError):
    """A configuration file (model_config.json, prompt_config.json) is invalid."""


class MissingAPIKeyError(ConfigError):
    """A model needs an API key whose environment variable is not set."""


class RecordDecodeError(InputError):
    """A JSON document or JSONL line does not match the type it must have."""


class Interrupted(BenchError):
    """The run was stopped by a signal; finished records are on disk."""


class LLMError(BenchError):
    """A call to a model failed.

    ``status`` is the HTTP status when the server answered, ``retry_after`` the
    wait in seconds the server asked for (from its headers), if any.
    """

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        model: str = "",
        endpoint: str = "",
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.model = model
        self.endpoint = endpoint = redact_text(endpoint)  # a base URL may carry a key (``?key=…``)
        self.status = status
        self.retry_after = retry_after
        self.detail = message = redact_text(message)
        where = f"model {model!r} at {endpoint}" if model else endpoint
        prefix = f"{where}: " if where else ""
        status_text = f"HTTP {status}: " if status is not None else ""
        super().__init__(f"{prefix}{status_text}{message}")

    @property
    def reason(self) -> str:
        """The failure without the model/endpoint prefix, for messages that name those once themselves."""
        return f"HTTP {self.status}: {self.detail}" if self.status is not None else self.detail


class TransientLLMError(LLMError):
    """A failure that may succeed when retried."""

    retryable = True


class RateLimitError(TransientLLMError):
    """The server answered 429 Too Many Requests.

    ``headers``: its ``x-ratelimit-*`` and ``anthropic-ratelimit-*`` ones (names lower-cased).
    """

    def __init__(self, message: str, *, model: str = "", endpoint: str = "", status: int | None = None,
                 retry_after: float | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message, model=model, endpoint=endpoint, status=status, retry_after=retry_after)
        self.headers = headers


class ServerError(TransientLLMError):
    """The server answered 408, 409 or 5xx."""


class LLMConnectionError(TransientLLMError):
    """The connection was refused, reset or closed before a full reply."""


class LLMTimeoutError(TransientLLMError):
    """No complete reply arrived within the request timeout."""


class BadResponseError(TransientLLMError):
    """The reply body was truncated or could not be decoded."""


class PermanentLLMError(LLMError):
    """The server rejected the request (400/401/403/404/422/501/505); retrying cannot help."""


class HTMLReplyError(PermanentLLMError):
    """An HTML page answered a JSON API call (usually a wrong ``base_url``); retrying cannot help."""


class ReplayMissError(PermanentLLMError):
    """The ``replay`` transport's store has no recorded reply for this request; retrying cannot help."""


class CallDeadlineError(LLMError):
    """The call's deadline passed (``timeouts.call_deadline_s``: every attempt, backoff and wait counted).

    ``last_error`` is the failure of the last attempt, if one finished. Not retried
    within the call, but ``retryable``: the unit runs again on the next resume.
    """

    retryable = True

    def __init__(self, message: str, *, last_error: LLMError | None = None, model: str = "",
                 endpoint: str = "") -> None:
        self.last_error = last_error
        super().__init__(message, model=model, endpoint=endpoint)


class UnknownBatchError(PermanentLLMError):
    """The provider does not know a batch id (404): never resubmitted blindly, it may have been paid for."""


class BatchDeadlineError(LLMError):
    """A request whose batch passed ``batch.deadline_s``: retryable by a rerun, not resubmitted in this one."""

    retryable = True


class ReplyStoreError(LLMError):
    """The response cache or the replay store could not serve or keep this call's reply: the file (named in the
    message) is damaged, locked or unreadable.

    Not retried within the call, but ``retryable``: the failure is the file's, not the unit's result, so the
    unit runs again on the next resume once the file is deleted or repaired.
    """

    retryable = True


class CircuitOpenError(LLMError):
    """The model's circuit breaker is open: its endpoint failed too many calls in a row, so no call is sent.

    ``retryable``: the unit never reached the endpoint, so it runs again on the next resume.
    """

    retryable = True


class LedgerError(LLMError):
    """A request's intent could not be written to the call ledger (disk full, I/O error), so it was not sent.

    ``retryable``: nothing reached the endpoint, so the unit runs again on the next resume.
    """

    retryable = True


class ToolWorkerTimeout(BenchError):
    """A tool call waited longer than the pool allows for a free worker: an infrastructure limit, not the model's.

    Every worker of the process's tool pool was running other units' calls for the whole wait, so the call
    never ran. ``retryable``: the agent run ends in an error record that a resume runs again, and it is no
    trial in pass^k. (A tool that itself outlives its time limit is the model's business: it returns an
    error result to the model and the run goes on.)
    """

    retryable = True

    def __init__(self, message: str, *, tool: str = "", waited_s: float = 0.0) -> None:
        self.tool, self.waited_s = tool, waited_s
        super().__init__(message)


class GenerationError(BenchError):
    """A model could not produce valid data within the repair budget."""


class CacheError(InputError):
    """The response cache file cannot be used: not a cache, another schema, locked, or missing in read mode."""


class BudgetExceeded(BenchError):
    """A call was refused because its worst-case cost would pass a budget; nothing was sent."""

    def __init__(self, message: str, *, model: str, spent_usd: float, limit_usd: float, scope: str) -> None:
        super().__init__(message)
        self.model, self.spent_usd, self.limit_usd, self.scope = model, spent_usd, limit_usd, scope


class MixedScoringError(InputError):
    """Two reports scored under different modes: their scores do not measure the same thing."""


class WorkersLost(BenchError):
    """No unit can run any more: every Ray worker died, or one lost the global limiter (the units recorded are
    kept; a rerun resumes)."""


class LimiterLost(BenchError):
    """This worker can lease from the global limiter no more (reclaimed, the actor dead, or unreachable for
    every retry): none of its calls can keep to the limits, so its units must stop, not fail one by one (the worker
    then reports ``WorkersLost``)."""
