"""The OpenAI chat-completions wire format, decoded leniently, and its conversions.

Servers add fields freely (``refusal``, ``logprobs``, ``system_fingerprint``…), so
these Structs ignore unknown fields; both transports end in ``to_chat_result``
so they produce identical ``ChatResult``s for the same reply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec
import orjson

from .._exceptions import (
    BadResponseError,
    HTMLReplyError,
    LLMError,
    PermanentLLMError,
    RateLimitError,
    ServerError,
)
from .._redact import mask_secrets
from ..records import ChatResult, FunctionCall, ToolCall, Usage
from ..runtime import retry_after_from_headers

__all__ = [
    "StreamTiming", "WireCompletion", "completion_from_builtins", "decode_completion", "error_for_status",
    "html_reply_error", "looks_like_html", "rate_limit_headers", "request_id_header", "to_chat_result",
]


class _WireFunction(msgspec.Struct):
    name: str = ""
    arguments: str | None = None


class _WireToolCall(msgspec.Struct):
    id: str = ""
    type: str = "function"
    function: _WireFunction = msgspec.field(default_factory=_WireFunction)


class _WireMessage(msgspec.Struct):
    """A reply's message; registered secrets in its content and tool-call arguments are masked as it is made
    (decoded, converted or assembled from a stream), before a cache, a call store or a record sees it."""

    role: str = "assistant"
    content: str | None = None
    tool_calls: list[_WireToolCall] | None = None

    def __post_init__(self) -> None:
        if self.content:
            self.content = mask_secrets(self.content)
        for call in self.tool_calls or ():
            if call.function.arguments:
                call.function.arguments = mask_secrets(call.function.arguments)


class _WireChoice(msgspec.Struct):
    message: _WireMessage = msgspec.field(default_factory=_WireMessage)
    finish_reason: str | None = None
    index: int = 0


class _PromptDetails(msgspec.Struct, omit_defaults=True):
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None  # written to the prompt cache (Anthropic's cache_creation_input_tokens)


class _CompletionDetails(msgspec.Struct, omit_defaults=True):
    reasoning_tokens: int | None = None


class _WireUsage(msgspec.Struct, omit_defaults=True):
    prompt_tokens: int | None = 0
    completion_tokens: int | None = 0
    total_tokens: int | None = 0
    prompt_tokens_details: _PromptDetails | None = None
    completion_tokens_details: _CompletionDetails | None = None

    def cached_and_reasoning(self) -> tuple[int, int]:
        """Prompt tokens served from the provider's prompt cache, and completion tokens spent reasoning."""
        prompt, completion = self.prompt_tokens_details, self.completion_tokens_details
        return (prompt.cached_tokens or 0) if prompt else 0, (completion.reasoning_tokens or 0) if completion else 0

    def cache_writes(self) -> int:
        """Prompt tokens written to the provider's prompt cache (billed at its cache-write rate)."""
        return (self.prompt_tokens_details.cache_write_tokens or 0) if self.prompt_tokens_details else 0


class StreamTiming(msgspec.Struct, kw_only=True):
    """How a streamed reply arrived, measured by the transport with ``time.perf_counter()``.

    ``ttft_s``: from sending the request to the first chunk carrying content, reasoning or a
    tool-call delta (to the end of the stream when none did, ``chunks`` 0); ``itl_s``: the gaps between
    successive such chunks (a chunk counts as one token delivery, as in vLLM's bench), rounded to
    the microsecond; ``chunks``: how many there were.
    """

    ttft_s: float
    itl_s: list[float]
    chunks: int


class WireCompletion(msgspec.Struct, omit_defaults=True):
    """A chat completion as servers send it, plus what the transport measured while receiving it.

    ``stream`` (streamed replies), ``rate_limit_headers`` (the reply's ``x-ratelimit-*`` and
    ``anthropic-ratelimit-*`` headers, names lower-cased; ``None`` when it had none) and ``request_id`` (the
    provider's request id header, ``request_id_header``) are set by the transport, under JSON names no server
    sends; stores and caches keep ``without_measurements()``, the reply alone.
    """

    choices: list[_WireChoice]
    model: str = ""
    usage: _WireUsage | None = None
    id: str = ""
    stream: StreamTiming | None = msgspec.field(default=None, name="_mpcbench_stream")
    rate_limit_headers: dict[str, str] | None = msgspec.field(default=None, name="_mpcbench_headers")
    request_id: str | None = msgspec.field(default=None, name="_mpcbench_request_id")

    def without_measurements(self) -> WireCompletion:
        """The reply as the server sent it (what a store or cache keeps: a replay measured nothing)."""
        if self.stream is None and self.rate_limit_headers is None and self.request_id is None:
            return self
        return msgspec.structs.replace(self, stream=None, rate_limit_headers=None, request_id=None)


_decoder = msgspec.json.Decoder(WireCompletion)


def rate_limit_headers(headers: Mapping[str, str]) -> dict[str, str] | None:
    """A reply's ``x-ratelimit-*`` (OpenAI) and ``anthropic-ratelimit-*`` headers, names lower-cased; ``None``
    when it has none."""
    found = None  # made only when one is there: most replies have none
    for name, value in headers.items():
        first = name[:1]  # the first-letter test first: most names fail it (slices compared: no ``startswith``,
        # whose argument parsing costs more than the comparison)
        if ((first in "xX" and name[:12].lower() == "x-ratelimit-")
                or (first in "aA" and name[:20].lower() == "anthropic-ratelimit-")):
            if found is None:
                found = {}
            found[name.lower()] = value
    return found


_REQUEST_ID_HEADERS = ("x-request-id", "request-id")  # OpenAI, vLLM, LiteLLM …; Anthropic's compatible API


def request_id_header(headers: Mapping[str, str]) -> str | None:
    """The provider's id of the request (``x-request-id``, else ``request-id``), ``None`` when it sent none.

    ``headers`` is the reply's (case-insensitive, as aiohttp's and httpx's are); a value is cut at 200 characters.
    """
    for name in _REQUEST_ID_HEADERS:
        value = headers.get(name)
        if value:
            return value.strip()[:200] or None
    return None


_TAG = re.compile(r"<[^>]*>")


def looks_like_html(body: bytes | str) -> bool:
    """Whether a body is an HTML page (a web server or UI answering where the JSON API should be)."""
    head = (body[:512].decode("utf-8", "replace") if isinstance(body, bytes) else body[:512]).lstrip().lower()
    return head.startswith(("<!doctype html", "<html", "<head", "<body"))


def _html_text(text: str) -> str:
    """An HTML page's visible text on one line (tags dropped), short enough for an error message."""
    return " ".join(_TAG.sub(" ", text).split())[:200]


def html_reply_error(body: bytes | str, *, model: str, endpoint: str) -> HTMLReplyError:
    """The error for an HTML page where a chat completion should be: permanent, with the page's text."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return HTMLReplyError(
        f"the endpoint answered an HTML page, not the JSON chat API (is base_url the API root, e.g. ending "
        f"in /v1?): {_html_text(text)!r}", model=model, endpoint=endpoint, status=200)


def decode_completion(body: bytes, *, model: str, endpoint: str) -> WireCompletion:
    """Decode a 200 body: an HTML page is an ``HTMLReplyError``, any other non-completion a ``BadResponseError``."""
    if body[:1] != b"{" and looks_like_html(body):  # a JSON object (nearly every reply) is no page: no test
        raise html_reply_error(body, model=model, endpoint=endpoint)
    try:
        completion = _decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BadResponseError(f"undecodable reply body ({exc}): {body[:200]!r}",
                               model=model, endpoint=endpoint) from exc
    if not completion.choices:
        raise BadResponseError("reply has no choices", model=model, endpoint=endpoint)
    return completion


def completion_from_builtins(data: Any, *, model: str, endpoint: str) -> WireCompletion:
    """Convert an already-parsed completion (e.g. the SDK's ``model_dump()``)."""
    try:
        completion = msgspec.convert(data, WireCompletion)
    except msgspec.ValidationError as exc:
        raise BadResponseError(f"unexpected reply shape ({exc})", model=model, endpoint=endpoint) from exc
    if not completion.choices:
        raise BadResponseError("reply has no choices", model=model, endpoint=endpoint)
    return completion


def to_chat_result(completion: WireCompletion, *, model: str) -> ChatResult:
    """The runner's ``ChatResult`` for a wire completion (first choice)."""
    choice = completion.choices[0]
    message = choice.message
    calls = [
        ToolCall(id=call.id, function=FunctionCall(name=call.function.name,
                                                   arguments=call.function.arguments or "{}"))
        for call in message.tool_calls
    ] if message.tool_calls else []
    usage = completion.usage or _WireUsage()
    prompt = usage.prompt_tokens or 0
    completion_tokens = usage.completion_tokens or 0
    return ChatResult(
        model=model,
        content=message.content,
        tool_calls=calls,
        finish_reason=choice.finish_reason,
        usage=Usage(prompt_tokens=prompt, completion_tokens=completion_tokens,
                    total_tokens=usage.total_tokens or prompt + completion_tokens),
    )


def _server_message(body: bytes | str) -> str:
    """The server's own error text: ``error.message`` when it is JSON, else the body."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    if looks_like_html(text):
        return _html_text(text) or "(empty HTML page)"
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text.strip()[:500] or "(empty body)"
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
        if data.get("message"):
            return str(data["message"])
    return text.strip()[:500]


def error_for_status(
    status: int, body: bytes | str, headers: Mapping[str, str], *, model: str, endpoint: str
) -> LLMError:
    """The error to raise for a non-200 reply, carrying the server's text and wait hint.

    501 (not implemented) and 505 (HTTP version not supported) are permanent: the
    server says it cannot serve this request at all, so retrying only wastes time.
    """
    message = _server_message(body)
    retry_after = retry_after_from_headers(headers)
    if status == 429:
        return RateLimitError(message, model=model, endpoint=endpoint, status=status, retry_after=retry_after,
                              headers=rate_limit_headers(headers))
    if status in (408, 409) or (status >= 500 and status not in (501, 505)):
        return ServerError(message, model=model, endpoint=endpoint, status=status, retry_after=retry_after)
    return PermanentLLMError(message, model=model, endpoint=endpoint, status=status)

