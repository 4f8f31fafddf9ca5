"""The openai SDK transport: ``AsyncOpenAI`` with its own retries off.

For users who want the SDK's exact request handling. It costs several times the
CPU per call of the native transport (bench/RESULTS.md); the runner's retry loop,
limiter and accounting are the same for both. Replies come through the SDK's raw-response
wrappers so their ``x-ratelimit-*`` headers are kept; a ``"stream": true`` reply is read
as raw bytes and assembled by the same ``_stream.StreamAssembler`` as the native transport's.
"""

from __future__ import annotations

import json
import time
from typing import Any

import openai
from openai import AsyncAPIResponse

from .._exceptions import BadResponseError, LLMConnectionError
from ..runtime import unit_attempt_headers
from ._stream import StreamAssembler, is_event_stream
from ._transport import ChatRequest, Endpoint, Transport
from ._wire import (
    WireCompletion,
    completion_from_builtins,
    error_for_status,
    html_reply_error,
    looks_like_html,
    rate_limit_headers,
    request_id_header,
)

__all__ = ["OpenAISDKTransport"]


def _is(exc: BaseException | None, *names: str) -> bool:
    """Whether ``exc`` is one of the HTTP library's exceptions ``names``, by class name.

    The SDK wraps its HTTP library's errors, and that library changed (httpx in openai 1.x, httpx2 in 3.x:
    unrelated classes with the same names), so matching by name classifies the cause under either.
    """
    return exc is not None and any(cls.__name__ in names for cls in type(exc).__mro__)


def _timeout(endpoint: Endpoint) -> openai.Timeout:
    """The endpoint's connect timeout, and its read timeout for every other phase.

    Built as the SDK's own ``Timeout`` class (httpx's in openai 1.x, httpx2's in 3.x), which it takes as is.
    """
    return openai.Timeout(endpoint.read_s, connect=endpoint.connect_s)


def _completion(parsed: object, endpoint: Endpoint) -> WireCompletion:
    """The ``WireCompletion`` of what the SDK parsed: a ``ChatCompletion``, or the text it could not parse."""
    if isinstance(parsed, str):
        if looks_like_html(parsed):
            raise html_reply_error(parsed, model=endpoint.model, endpoint=endpoint.url)
        raise BadResponseError(f"undecodable reply body: {parsed[:200]!r}", model=endpoint.model,
                               endpoint=endpoint.url)
    assert isinstance(parsed, openai.BaseModel)
    return completion_from_builtins(parsed.model_dump(exclude_unset=True), model=endpoint.model,
                                    endpoint=endpoint.url)


class OpenAISDKTransport(Transport):
    """Send through ``AsyncOpenAI.chat.completions.create`` (``max_retries=0``)."""

    name = "openai"

    def __init__(self) -> None:
        self._clients: dict[tuple[str, str | None], openai.AsyncOpenAI] = {}

    def _client(self, endpoint: Endpoint) -> openai.AsyncOpenAI:
        ident = (endpoint.base_url, endpoint.api_key)
        client = self._clients.get(ident)
        if client is None:
            client = self._clients[ident] = openai.AsyncOpenAI(
                base_url=endpoint.base_url,
                api_key=endpoint.api_key or "not-needed",
                max_retries=0,
                timeout=_timeout(endpoint),
                default_headers=endpoint.headers or None,
            )
        return client

    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        stream = request.body.get("stream") is True
        started = time.perf_counter() if stream else 0.0  # from the call, as the client's latency_s
        body = dict(request.body)
        model = body.pop("model")
        messages = body.pop("messages")
        url = endpoint.url
        completions = self._client(endpoint).chat.completions
        headers = {"Idempotency-Key": request.key, **unit_attempt_headers()}
        try:
            if stream:  # in extra_body: the SDK hands the body over unparsed
                async with completions.with_streaming_response.create(
                    model=model, messages=messages, extra_body=body, extra_headers=headers, timeout=_timeout(endpoint),
                ) as response:
                    return await self._streamed(endpoint, response, started)
            raw = await completions.with_raw_response.create(
                model=model,
                messages=messages,
                extra_body=body or None,
                extra_headers=headers,
                timeout=_timeout(endpoint),
            )
            completion = _completion(raw.parse(), endpoint)
            completion.rate_limit_headers = rate_limit_headers(raw.headers)
            completion.request_id = request_id_header(raw.headers)
            return completion
        except openai.APIStatusError as exc:
            raise error_for_status(exc.status_code, exc.response.content, exc.response.headers,
                                   model=endpoint.model, endpoint=url) from exc
        except openai.APITimeoutError as exc:
            if _is(exc.__cause__, "ConnectTimeout"):
                raise endpoint.connect_timeout() from exc
            raise endpoint.read_timeout() from exc
        except openai.APIConnectionError as exc:
            cause = exc.__cause__
            if _is(cause, "RemoteProtocolError", "ReadError") and "complete" in str(cause).lower():  # (in)complete body
                raise BadResponseError(f"truncated reply body ({cause})",
                                       model=endpoint.model, endpoint=url) from exc
            raise LLMConnectionError(f"connection failed ({cause or exc})",
                                     model=endpoint.model, endpoint=url) from exc
        except (json.JSONDecodeError, openai.APIResponseValidationError) as exc:
            raise BadResponseError(f"undecodable reply body ({exc})",
                                   model=endpoint.model, endpoint=url) from exc

    async def _streamed(self, endpoint: Endpoint, response: AsyncAPIResponse[Any], started: float) -> WireCompletion:
        """Read a ``stream: true`` reply: an event stream as it arrives, or the JSON of a server that ignored it.

        The body is read here, outside the SDK's request handling, so its HTTP library's errors come
        unwrapped: a timeout is a read timeout, any other transport error a cut stream.
        """
        assembler: StreamAssembler | None = None
        try:
            if not is_event_stream(response.headers.get("content-type")):
                completion = _completion(await response.parse(), endpoint)
            else:
                assembler = StreamAssembler(started, model=endpoint.model, endpoint=endpoint.url)
                completion = await assembler.read(response.iter_bytes(), lambda exc: _is(exc, "TransportError"))
        except Exception as exc:
            if _is(exc, "TimeoutException"):
                raise endpoint.read_timeout() from exc
            if _is(exc, "TransportError"):
                if assembler is not None:
                    raise assembler.cut(f"{type(exc).__name__}: {exc}") from exc
                raise BadResponseError(f"truncated reply body ({exc})", model=endpoint.model,
                                       endpoint=endpoint.url) from exc
            raise
        completion.rate_limit_headers = rate_limit_headers(response.headers)
        completion.request_id = request_id_header(response.headers)
        return completion

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
