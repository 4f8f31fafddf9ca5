"""An accounting proxy that bills what a provider would, so chaos tests can hold a sweep's books against a bill.

It stands between a sweep and a sim as a provider's billing does: every request the upstream answers 200 is
billed — by the reply's usage at the given prices — whether or not the client is still there to read the reply
(it keeps going when the client dies, like a provider that finished generating). It can SIGKILL the sweep's
child process at the k-th bill of a round, after the sim answered and before the reply is relayed: a request
billed and certainly never recorded (between send and record). ``tests/sweep/test_ledger_chaos.py`` and
``bench/chaos.py`` use it.
"""

from __future__ import annotations

from typing import Any, Protocol

import anyio
import msgspec
import orjson

__all__ = ["Billed", "BillingProxy"]


class Billed(msgspec.Struct, frozen=True):
    """One billed request: its idempotency key, the provider's request id, its cost and the proxy's round."""

    key: str
    request_id: str
    cost_usd: float
    round: int


class _Killable(Protocol):
    def kill(self) -> None: ...


class BillingProxy:
    """Forwards chat requests to ``upstream`` and bills every 200 reply; may kill ``child`` at the k-th bill.

    ``async with BillingProxy(upstream, input_per_1m=…, output_per_1m=…) as proxy:`` serves on a free loopback
    port at ``proxy.base_url``. Set ``round`` (bills are tagged with it), ``kill_at_bill`` (kill when this
    round's bills reach it; cleared once done) and ``child`` (the process to kill) between invocations;
    ``first_request`` is set by the first request after it is replaced.
    """

    def __init__(self, upstream: str, *, input_per_1m: float, output_per_1m: float) -> None:
        self.upstream = upstream
        self.input_per_1m, self.output_per_1m = input_per_1m, output_per_1m
        self.billed: list[Billed] = []
        self.round = 0
        self.kill_at_bill: int | None = None
        self.first_request = anyio.Event()
        self.child: _Killable | None = None
        self.killed_between_send_and_record = 0
        self.base_url = ""
        self._session: Any = None
        self._runner: Any = None

    async def __aenter__(self) -> BillingProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        import aiohttp
        from aiohttp import web

        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._forward)
        self._runner = web.AppRunner(app, access_log=None)  # no handler cancellation: a dead client is still billed
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._session = aiohttp.ClientSession()

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def bills_this_round(self) -> int:
        return sum(b.round == self.round for b in self.billed)

    async def _forward(self, request: Any) -> Any:
        from aiohttp import web

        self.first_request.set()
        body = await request.read()
        headers = {name: request.headers[name] for name in ("Content-Type", "Idempotency-Key")
                   if name in request.headers}
        async with self._session.post(f"{self.upstream}/chat/completions", data=body, headers=headers) as reply:
            payload = await reply.read()
            status = reply.status
            relay = {name: reply.headers[name] for name in ("x-request-id", "Retry-After", "retry-after-ms")
                     if name in reply.headers}
        if status == 200:
            usage = orjson.loads(payload)["usage"]
            cost = (usage["prompt_tokens"] * self.input_per_1m + usage["completion_tokens"] * self.output_per_1m) / 1e6
            self.billed.append(Billed(key=headers.get("Idempotency-Key", ""), request_id=relay["x-request-id"],
                                      cost_usd=cost, round=self.round))
            if self.kill_at_bill is not None and self.bills_this_round() >= self.kill_at_bill and self.child:
                self.kill_at_bill = None
                self.child.kill()  # SIGKILL with this reply billed and not yet relayed
                self.killed_between_send_and_record += 1
        return web.Response(status=status, body=payload, content_type="application/json", headers=relay)
