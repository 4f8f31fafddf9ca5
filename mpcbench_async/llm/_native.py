"""The lean native transport: pooled aiohttp, pre-encoded JSON, msgspec-decoded replies.

aiohttp is used because it is the cheapest async HTTP client in CPU per call
on this project's machines (see ``mpcbench-async bench client`` and
bench/RESULTS.md); the session is created lazily on the caller's event loop.
A request with ``"stream": true`` answered with an event stream is read as it
arrives and assembled by ``_stream.StreamAssembler``.
"""

from __future__ import annotations

import time

import aiohttp

from .._exceptions import BadResponseError, LLMConnectionError
from ..runtime import unit_attempt_headers
from ._read_timer import connector
from ._stream import StreamAssembler, is_event_stream
from ._transport import ChatRequest, Endpoint, Transport
from ._wire import WireCompletion, decode_completion, error_for_status, rate_limit_headers, request_id_header

__all__ = ["NativeTransport"]


def _broke(exc: BaseException) -> bool:
    """aiohttp's errors for a body that broke off (a read timeout is a ``ClientConnectionError`` too)."""
    return isinstance(exc, (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError))


class NativeTransport(Transport):
    """POST the pre-encoded body with aiohttp; decode the reply with msgspec."""

    name = "native"

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        # Per endpoint (by identity: a model's endpoint object lives as long as the client's state of it), what
        # every call to it sends alike: its URL, its fixed headers and its timeouts, built once.
        self._fixed: dict[int, tuple[Endpoint, str, dict[str, str], aiohttp.ClientTimeout]] = {}

    def _fix(self, endpoint: Endpoint) -> tuple[Endpoint, str, dict[str, str], aiohttp.ClientTimeout]:
        """The endpoint's parts every call sends alike, built on its first call."""
        headers = {"Content-Type": "application/json", "User-Agent": "mpcbench-async", **endpoint.headers}
        if endpoint.api_key:
            headers["Authorization"] = f"Bearer {endpoint.api_key}"
        timeout = aiohttp.ClientTimeout(sock_connect=endpoint.connect_s, sock_read=endpoint.read_s)
        fixed = self._fixed[id(endpoint)] = (endpoint, endpoint.url, headers, timeout)
        return fixed

    def _open_session(self) -> aiohttp.ClientSession:
        # Every request names its User-Agent (the fixed headers), so aiohttp adds none of its own: no
        # ``skip_auto_headers``, which would cost a header set built per request.
        self._session = aiohttp.ClientSession(connector=connector(limit=0, ttl_dns_cache=300, keepalive_timeout=30))
        return self._session

    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        fixed_parts = self._fixed.get(id(endpoint))
        if fixed_parts is None or fixed_parts[0] is not endpoint:
            fixed_parts = self._fix(endpoint)
        _, url, fixed, timeout = fixed_parts
        session = self._session if self._session is not None else self._open_session()
        # The configured headers (and the key) win over the per-call ones, as they always did.
        headers = {"Idempotency-Key": request.key, **unit_attempt_headers(), **fixed}
        stream = request.body.get("stream") is True
        started = time.perf_counter() if stream else 0.0
        assembler: StreamAssembler | None = None
        try:
            async with session.post(url, data=request.payload, headers=headers, timeout=timeout) as response:
                if stream and response.status == 200 and is_event_stream(response.headers.get("Content-Type")):
                    assembler = StreamAssembler(started, model=endpoint.model, endpoint=url)
                    completion = await assembler.read(response.content.iter_any(), _broke)
                    completion.rate_limit_headers = rate_limit_headers(response.headers)
                    completion.request_id = request_id_header(response.headers)
                    return completion
                body = await response.read()
                if response.status != 200:
                    raise error_for_status(response.status, body, response.headers,
                                           model=endpoint.model, endpoint=url)
                limits = rate_limit_headers(response.headers)
                request_id = request_id_header(response.headers)
        except aiohttp.ConnectionTimeoutError as exc:
            raise endpoint.connect_timeout() from exc
        except aiohttp.ServerTimeoutError as exc:  # a ClientConnectionError too: caught before it
            raise endpoint.read_timeout() from exc
        except aiohttp.ClientPayloadError as exc:
            if assembler is not None:
                raise assembler.cut(str(exc)) from exc
            raise BadResponseError(f"truncated reply body ({exc})", model=endpoint.model, endpoint=url) from exc
        except (aiohttp.ClientConnectionError, aiohttp.ClientResponseError) as exc:
            if assembler is not None:
                raise assembler.cut(f"{type(exc).__name__}: {exc}") from exc
            raise LLMConnectionError(f"connection failed ({type(exc).__name__}: {exc})",
                                     model=endpoint.model, endpoint=url) from exc
        completion = decode_completion(body, model=endpoint.model, endpoint=url)
        completion.rate_limit_headers = limits
        completion.request_id = request_id
        return completion

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
