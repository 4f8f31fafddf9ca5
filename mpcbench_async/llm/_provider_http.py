"""What the provider-native transports (``anthropic``, ``gemini``) share: one aiohttp session, the per-model
timeouts, and aiohttp's failures mapped to the client's errors, so each transport module is only its mapping."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp

from .._exceptions import BadResponseError, LLMConnectionError
from ._read_timer import connector
from ._transport import Endpoint, Transport
from ._wire import StreamTiming

__all__ = ["ProviderHTTPTransport", "stream_timing"]


class ProviderHTTPTransport(Transport):
    """A transport that POSTs JSON to a provider with its own keep-alive session (opened on first use)."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=connector(limit=0, keepalive_timeout=30),
                                                  skip_auto_headers=("User-Agent",))
        return self._session

    @asynccontextmanager
    async def _post(self, endpoint: Endpoint, url: str, body: bytes,
                    headers: dict[str, str]) -> AsyncIterator[aiohttp.ClientResponse]:
        """The reply to ``body`` POSTed to ``url``; a timeout, a cut-off body or a broken connection, while sending
        or while the caller reads, becomes the client's error for it."""
        timeout = aiohttp.ClientTimeout(sock_connect=endpoint.connect_s, sock_read=endpoint.read_s)
        try:
            async with self._get_session().post(url, data=body, headers=headers, timeout=timeout) as response:
                yield response
        except aiohttp.ConnectionTimeoutError as exc:
            raise endpoint.connect_timeout() from exc
        except aiohttp.ServerTimeoutError as exc:
            raise endpoint.read_timeout() from exc
        except aiohttp.ClientPayloadError as exc:
            raise BadResponseError(f"truncated reply ({exc})", model=endpoint.model, endpoint=url) from exc
        except (aiohttp.ClientConnectionError, aiohttp.ClientResponseError) as exc:
            raise LLMConnectionError(f"connection failed ({type(exc).__name__}: {exc})", model=endpoint.model,
                                     endpoint=url) from exc

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def stream_timing(started: float, times: list[float]) -> StreamTiming:
    """A stream's timing from the ``perf_counter`` times of its content events: TTFT at the first (at the end when
    none carried content), the gaps between them."""
    if not times:
        return StreamTiming(ttft_s=round(time.perf_counter() - started, 6), itl_s=[], chunks=0)
    gaps = [round(b - a, 6) for a, b in zip(times, times[1:], strict=False)]
    return StreamTiming(ttft_s=round(times[0] - started, 6), itl_s=gaps, chunks=len(times))
