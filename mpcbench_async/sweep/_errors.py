"""Why units failed, grouped so a person can act: error class × model, a count, one example, what to do.

Every kept error record of the plan (agent runs, judgements, tariff cases) is
tallied by ``(error_class, model)``. Each group keeps one example message (already
masked when the error was built; cut to ~200 characters), the endpoint named in
the messages of that model (records or ``calls.jsonl``), and a hint chosen by class.
"""

from __future__ import annotations

import re

import msgspec

__all__ = ["ErrorClass", "ErrorTally", "endpoint_of", "hint_for"]

EXAMPLE_CHARS = 200

# Hints by error class; a class not listed falls back on whether a rerun retries it.
_HINTS = {
    "RateLimitError": "rate limited (HTTP 429): lower the model's limits (rpm, tpm, max_concurrency) in "
                      "model_config.json, or rerun the same command to retry these units",
    "ServerError": "the endpoint failed (HTTP 408/409/5xx): rerun the same command to retry these units",
    "BadResponseError": "the endpoint sent a truncated or undecodable reply: rerun the same command to retry",
    "LLMConnectionError": "the endpoint could not be reached: check base_url and that the server is up, then rerun",
    "CircuitOpenError": "the model's endpoint failed many calls in a row, so later calls were not sent: check "
                        "base_url and that the server is up, then rerun",
    "LLMTimeoutError": "no reply in time: raise timeouts.read_s for this model in model_config.json, or rerun "
                       "to retry",
    "CallDeadlineError": "the call's deadline passed (retries included): raise timeouts.call_deadline_s, or rerun "
                         "to retry",
    "ReplyStoreError": "the response cache or replay store named in the message failed (damaged, locked or "
                       "unreadable): delete or repair that file, then rerun the same command to retry these units",
    "MissingAPIKeyError": "set the environment variable named by the model's api_key_env, then rerun",
    "HTMLReplyError": "a web page answered instead of the API: check base_url (it usually ends in /v1)",
    "PermanentLLMError": "the endpoint rejected the request: check the model name, API key and params in "
                         "model_config.json, then rerun with ``retry_errors=True``",
    "ToolWorkerTimeout": "a tool call found no free tool worker in time (other units' tool calls held them all): "
                         "rerun the same command to retry these units",
    "UnparsableJudgement": "the judge never replied with the scores its prompt asks for (the last reply's problem "
                           "is in the example): check the judge model and the judge prompts of prompt_config.json, "
                           "then rerun with ``retry_errors=True``",
    "InvalidInstance": "a levels instance does not fit the schema (file, line and field in the message): fix it; "
                       "the fixed instance runs on the next sweep",
}

_ENDPOINT = re.compile(r"model '[^']*' at (\S+?):? ")


def hint_for(error_class: str, *, retryable: bool, file: str) -> str:
    """What to do about an error of ``error_class`` whose record is in ``file``."""
    if error_class in _HINTS:
        return _HINTS[error_class]
    if retryable:
        return f"an infrastructure error: rerun the same command to retry; details in {file}"
    return f"a task-level error: see error_message in {file}; fix the cause, then rerun with ``retry_errors=True``"


def endpoint_of(message: str) -> str | None:
    """The endpoint an LLM error names (``model 'm' at https://…/v1: …``), if any."""
    found = _ENDPOINT.search(message)
    return found.group(1) if found else None


def _example(message: str) -> str:
    flat = " ".join(message.split())
    return flat if len(flat) <= EXAMPLE_CHARS else flat[: EXAMPLE_CHARS - 1] + "…"


class ErrorClass(msgspec.Struct, kw_only=True):
    """One error class of one model: how many kept records ended with it, and what to do."""

    error_class: str
    model: str
    count: int = 0
    retryable: int = 0  # of ``count``, the infrastructure errors a rerun retries
    files: dict[str, int] = {}  # where the records are: ``runs.jsonl`` -> n
    endpoint: str | None = None
    example: str = ""
    hint: str = ""


class ErrorTally:
    """Error groups built from kept error records; one example message per group."""

    def __init__(self) -> None:
        self._groups: dict[tuple[str, str], ErrorClass] = {}

    def add(self, error_class: str | None, model: str, *, retryable: bool, file: str, message: str | None) -> None:
        """Count one kept error record; ``message`` (if given) becomes the group's example unless it has one."""
        name = error_class or "UnknownError"
        group = self._groups.get((name, model))
        if group is None:
            group = self._groups[(name, model)] = ErrorClass(error_class=name, model=model, files={})
        group.count += 1
        group.retryable += retryable
        group.files[file] = group.files.get(file, 0) + 1
        if message:
            self.offer(error_class, model, message)

    def offer(self, error_class: str | None, model: str, message: str | None) -> None:
        """``message`` as the example of its group, if the group has none yet."""
        group = self._groups.get((error_class or "UnknownError", model))
        if group is not None and message and not group.example:
            group.example = _example(message)
            group.endpoint = endpoint_of(message)

    def files_without_example(self) -> set[str]:
        """The files holding the records of groups that still lack an example."""
        return {file for group in self._groups.values() if not group.example for file in group.files}

    def groups(self, endpoints: dict[str, str]) -> list[ErrorClass]:
        """The groups, most frequent first; ``endpoints`` (model -> endpoint seen in its calls) fills gaps."""
        out = sorted(self._groups.values(), key=lambda g: (-g.count, g.error_class, g.model))
        for group in out:
            group.endpoint = group.endpoint or endpoints.get(group.model)
            group.example = group.example or "(no message recorded)"
            main_file = max(group.files, key=group.files.__getitem__)
            group.hint = hint_for(group.error_class, retryable=group.retryable == group.count, file=main_file)
        return out
