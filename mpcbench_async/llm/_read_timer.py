"""aiohttp connections whose read timeout (``timeouts.read_s``, aiohttp's ``sock_read``) costs no timer per request.

aiohttp cuts a read that stalls for ``sock_read`` seconds by a timer it re-schedules on every chunk received: a
loop timer handle made, pushed on the loop's heap and cancelled when the request is sent and again when its reply
arrives — two per request, a tenth of the client's own cost per call (issue 31, bench/RESULTS.md). Here the
connection keeps the time its read would time out (``_read_due``), and one timer per connection, armed at that
time, checks it when it fires: data that came since moved the time on, so the timer is armed again for it; an
ended read left nothing due. The cut is the same — a read with no data for ``sock_read`` seconds, to the loop
timer's precision — and a keep-alive connection's timer serves its next requests too.

It replaces aiohttp's ``ResponseHandler._reschedule_timeout``/``_drop_timeout`` (and the connector's protocol
factory, ``_factory``), which aiohttp has had since 3.0; should a version drop them, the overrides go unused and
aiohttp's own timer cuts the read as before.
"""

from __future__ import annotations

import asyncio
import functools
import math
from typing import Any

import aiohttp
from aiohttp.client_proto import ResponseHandler

from ._deadlines import loop_clock

__all__ = ["connector"]


class _LazyReadTimeout(ResponseHandler):
    """A connection's protocol whose ``sock_read`` timer is re-armed lazily (see the module)."""

    _read_due: float | None = None  # loop time at which the read in progress times out; None: no read running
    _armed_at = math.inf  # when the timer (``_read_timeout_handle``) fires

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self._now = loop_clock(loop)

    def _reschedule_timeout(self) -> None:
        timeout = self._read_timeout
        if not timeout:
            self._read_due = None
            return
        due = self._read_due = self._now() + timeout
        if self._read_timeout_handle is None or due < self._armed_at:  # none armed, or armed too late
            self._arm(due)

    def _drop_timeout(self) -> None:
        self._read_due = None  # the timer stays armed: when it fires with nothing due it stops

    def _arm(self, when: float) -> None:
        if self._read_timeout_handle is not None:
            self._read_timeout_handle.cancel()
        self._armed_at = when
        self._read_timeout_handle = self._loop.call_at(when, self._check_read)

    def _check_read(self) -> None:
        self._read_timeout_handle = None
        due = self._read_due
        if due is None:
            return
        if due > self._armed_at:  # data came after the timer was armed: the read may go on until then
            self._arm(due)
            return
        self._read_due = None
        self._on_read_timeout()

    def connection_lost(self, exc: BaseException | None) -> None:
        super().connection_lost(exc)
        if self._read_timeout_handle is not None:  # a closed connection holds no timer
            self._read_timeout_handle.cancel()
            self._read_timeout_handle = None


def connector(**options: Any) -> aiohttp.TCPConnector:
    """A ``TCPConnector(**options)`` whose connections time their reads out lazily; made on the running loop."""
    made = aiohttp.TCPConnector(**options)
    made._factory = functools.partial(_LazyReadTimeout, loop=asyncio.get_running_loop())  # type: ignore[assignment]
    return made
