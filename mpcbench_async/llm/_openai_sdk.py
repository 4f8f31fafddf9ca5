"""The openai SDK transport: ``AsyncOpenAI`` with its own retries off.

For users who want the SDK's exact request handling. It costs several times the
CPU per call of the native transport (bench/RESULTS.md); the runner's retry loop,
limiter and accounting are the same for both.
"""

from __future__ import annotations

import json

import openai

from .._exceptions import BadResponseError, LLMConnectionError
from ._transport import ChatRequest, Endpoint, Transport
from ._wire import (
    WireCompletion,
    completion_from_builtins,
    error_for_status,
    html_reply_error,
    looks_like_html,
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
        body = dict(request.body)
        model = body.pop("model")
        messages = body.pop("messages")
        url = endpoint.url
        try:
            completion = await self._client(endpoint).chat.completions.create(
                model=model,
                messages=messages,
                extra_body=body or None,
                extra_headers={"Idempotency-Key": request.key},
                timeout=_timeout(endpoint),
            )
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
        if isinstance(completion, str):  # the SDK hands back text it could not parse
            if looks_like_html(completion):
                raise html_reply_error(completion, model=endpoint.model, endpoint=url)
            raise BadResponseError(f"undecodable reply body: {completion[:200]!r}",
                                   model=endpoint.model, endpoint=url)
        return completion_from_builtins(completion.model_dump(exclude_unset=True), model=endpoint.model,
                                        endpoint=url)

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
