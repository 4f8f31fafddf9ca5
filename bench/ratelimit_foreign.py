"""Rate limits against a mock provider that is not the project's sim: other meters, other header habits.

``ratelimit_goodput.py`` measures against the sim's token buckets, which the limiter was built beside. This
script runs the same open-loop signal (``--calls`` calls arriving at ``--offered`` × ``--rate`` a second, each
call a task run to its end, nothing configured) against a small aiohttp server of its own, in a child process,
that meters requests the simplest way a gateway does: a fixed 1-s window of ``--rate`` requests, counted from
the wall clock's whole seconds, each accepted request answered ``--latency-ms`` (default 50) after its headers
are stamped. Its replies say so in one of four habits (``--modes``):

* ``window-rpm``: ``x-ratelimit-limit-requests`` per minute (OpenAI's convention, ``60 × rate``), remaining in
  this window, reset to its end in milliseconds (``340ms``); a 429 adds ``retry-after`` in whole seconds;
* ``window-count``: the same, but the limit is the window's own count (``rate``), as some gateways send it;
* ``no-headers``: no ``x-ratelimit-*`` at all; a 429 carries ``retry-after`` in whole seconds;
* ``bare-429``: nothing but the status: no headers on success, no hint on a 429.

Other meters a gateway uses, all reporting ``x-ratelimit-limit-requests`` per minute (``60 × rate``) and a 429's
``retry-after`` in whole seconds:

* ``bucket-full``: a token bucket of ``rate`` (a second's worth) refilling continuously, its reset the time until
  it is full again (OpenAI's convention);
* ``bucket-next``: the same bucket, its reset the time until the next token (a bucket's other habit);
* ``sliding-log``: at most ``rate`` accepted requests in any trailing second, remaining what that leaves, reset
  the time until the oldest of them leaves the second;
* ``minute``: a per-minute bucket (``60 × rate``, refilling continuously at ``rate`` a second), empty at the first
  request (the key's minute spent before the run), its reset the time until full: up to 60 s.

A mode with ``+neighbour`` (e.g. ``bucket-full+neighbour``) adds a second client on the same key: plain aiohttp,
sending ``--share`` × ``rate`` requests a second the whole run and retrying each 429 50 ms later, so it keeps its
share; "limit used" is then ours over the share left to us (``(1 - share) × rate``), and the table gives the
neighbour's own successes a second as a share of the limit.

The server counts what it accepted and rejected (``--log DIR`` keeps every request it saw, to find where in a window
the 429s come); "limit used" is successes per second (first call to the last success) over ``rate``. The client is
whichever ``mpcbench_async`` is imported (``PYTHONPATH=<another tree>`` measures that one; the table names it).

    .venv/bin/python bench/ratelimit_foreign.py --calls 600 --rate 20 --offered 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from collections import deque
from datetime import UTC, datetime
from pathlib import Path

MODES = ("window-rpm", "window-count", "no-headers", "bare-429", "bucket-full", "bucket-next", "sliding-log", "minute",
         "bucket-full+neighbour", "minute+neighbour", "window-rpm+neighbour")
NEIGHBOUR = "+neighbour"


class Meter:
    """A foreign meter of ``rate`` requests a second: ``take`` says whether a request fits (and counts it),
    ``headers`` what a reply reports (``{}``: none)."""

    def __init__(self, mode: str, rate: int) -> None:
        self.mode, self.rate = mode, rate
        self.window = [0, 0]  # fixed windows: the whole second counted, requests accepted in it
        self.size = float(rate * 60 if mode == "minute" else rate)  # buckets
        self.level: float | None = None if mode == "minute" else self.size  # the minute's bucket: empty at first
        self.stamp = 0.0
        self.accepted: deque[float] = deque()  # the sliding log

    def _refill(self, now: float) -> float:
        if self.level is None:
            self.level, self.stamp = 0.0, now
        self.level = min(self.size, self.level + (now - self.stamp) * self.rate)
        self.stamp = now
        return self.level

    def take(self, now: float) -> tuple[bool, float]:
        """(accepted, seconds until a request would fit)."""
        if self.mode.startswith("bucket") or self.mode == "minute":
            level = self._refill(now)
            if level >= 1:
                self.level = level - 1
                return True, 0.0
            return False, (1 - level) / self.rate
        if self.mode == "sliding-log":
            log = self.accepted
            while log and log[0] <= now - 1:
                log.popleft()
            if len(log) < self.rate:
                log.append(now)
                return True, 0.0
            return False, log[0] + 1 - now
        window = self.window
        if window[0] != int(now):
            window[:] = [int(now), 0]
        if window[1] < self.rate:
            window[1] += 1
            return True, 0.0
        return False, window[0] + 1 - now

    def headers(self, now: float) -> dict[str, str]:
        mode = self.mode
        if mode in ("no-headers", "bare-429"):
            return {}
        if mode.startswith("bucket") or mode == "minute":
            level = self._refill(now)
            to_full = (self.size - level) / self.rate
            reset = min(to_full, (1 - level % 1) / self.rate) if mode == "bucket-next" else to_full
            remaining = int(level)
        elif mode == "sliding-log":
            log = self.accepted
            while log and log[0] <= now - 1:
                log.popleft()
            remaining, reset = self.rate - len(log), (log[0] + 1 - now if log else 0.0)
        else:
            remaining, reset = self.rate - self.window[1], self.window[0] + 1 - now
        limit = self.rate if mode == "window-count" else self.rate * 60
        return {"x-ratelimit-limit-requests": str(limit), "x-ratelimit-remaining-requests": str(remaining),
                "x-ratelimit-reset-requests": f"{int(reset * 1000)}ms"}


def serve(mode: str, rate: int, port: int, latency_s: float = 0.05) -> None:
    """The mock provider (child process): ``POST /v1/chat/completions``, ``GET /stats``."""
    from aiohttp import web

    meter = Meter(mode.removesuffix(NEIGHBOUR), rate)
    stats = {"ok": 0, "429": 0, "neighbour_ok": 0, "neighbour_429": 0}
    log: list[tuple[float, int, int]] = []  # (server time, status, 1 for the neighbour's requests)

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        now = time.time()
        ok, wait = meter.take(now)
        neighbour = request.headers.get("x-client") == "neighbour"
        prefix = "neighbour_" if neighbour else ""
        log.append((now, 200 if ok else 429, int(neighbour)))
        headers = meter.headers(now)
        if not ok:
            stats[prefix + "429"] += 1
            if meter.mode != "bare-429":
                headers["retry-after"] = str(max(1, math.ceil(wait)))
            return web.json_response({"error": {"message": "Rate limit reached for requests",
                                                "type": "requests", "code": "rate_limit_exceeded"}},
                                     status=429, headers=headers)
        stats[prefix + "ok"] += 1
        await asyncio.sleep(latency_s)
        return web.json_response({
            "id": "mock", "object": "chat.completion", "created": int(now), "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}}, headers=headers)

    async def read_stats(_request: web.Request) -> web.Response:
        return web.json_response({**stats, "log": log})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/stats", read_stats)
    web.run_app(app, host="127.0.0.1", port=port, print=None)


async def neighbour(base_url: str, per_s: float, stop: asyncio.Event) -> None:
    """The other client on the key: ``per_s`` requests a second until ``stop``, each retried 50 ms after a 429."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async def one() -> None:
            while True:
                async with session.post(f"{base_url}/chat/completions", headers={"x-client": "neighbour"},
                                        json={"model": "mock-model", "messages": []}) as reply:
                    await reply.read()
                    if reply.status != 429:
                        return
                await asyncio.sleep(0.05)

        tasks = set()
        start = time.perf_counter()
        i = 0
        while not stop.is_set():
            task = asyncio.ensure_future(one())
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            i += 1
            await asyncio.sleep(max(0.0, start + i / per_s - time.perf_counter()))
        await asyncio.gather(*tasks)


async def drive(base_url: str, calls: int, per_s: float,
                neighbour_per_s: float = 0.0) -> tuple[int, dict[str, int], float]:
    """(successes, failures by error, seconds from the first call to the last success); with ``neighbour_per_s``
    the other client runs beside the calls, from before the first to after the last."""
    import anyio

    from mpcbench_async.llm import LLMClient, ModelConfig
    from mpcbench_async.records import Message

    config = ModelConfig.from_dict({"models": {"mock-model": {"base_url": base_url, "api_key_env": None}}})
    failed: dict[str, int] = {}
    done: list[float] = []
    stop = asyncio.Event()
    other = asyncio.ensure_future(neighbour(base_url, neighbour_per_s, stop)) if neighbour_per_s else None
    async with LLMClient(config) as client:
        if other is not None:
            await asyncio.sleep(2.0)  # the neighbour's share in the meter before the first call
        start = time.perf_counter()

        async def one(i: int) -> None:
            try:
                await client.chat("mock-model", [Message(role="user", content=f"q{i}")], key=f"c{i}", max_tokens=8)
                done.append(time.perf_counter() - start)
            except Exception as exc:  # counted: the table names every failure
                failed[type(exc).__name__] = failed.get(type(exc).__name__, 0) + 1

        async with anyio.create_task_group() as tg:
            for i in range(calls):
                await anyio.sleep(max(0.0, start + i / per_s - time.perf_counter()))
                tg.start_soon(one, i)
    stop.set()
    if other is not None:
        await other
    return len(done), failed, max(done, default=0.0)


def neighbour_rate(log: list[list[float]], span: float) -> float:
    """The neighbour's successes a second over our calls' span: from our first request, ``span`` seconds."""
    ours = [t for t, _, other in log if not other]
    if not ours or span <= 0:
        return 0.0
    first = min(ours)
    return sum(1 for t, status, other in log if other and status == 200 and first <= t <= first + span) / span


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--rate", type=int, default=20, help="requests the server accepts per 1-s window")
    parser.add_argument("--offered", type=float, default=2.0, help="arrivals per second as a multiple of --rate")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--latency-ms", type=float, default=50.0,
                        help="the model's time on an accepted request, after its headers are stamped")
    parser.add_argument("--share", type=float, default=0.4,
                        help="the neighbour's requests a second as a share of --rate (modes with +neighbour)")
    parser.add_argument("--log", metavar="DIR", help="write each mode's requests as the mock saw them to "
                        "DIR/MODE.json: [server time, status, 1 if the neighbour's]")
    parser.add_argument("--serve", nargs=2, metavar=("MODE", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], args.rate, int(args.serve[1]), args.latency_ms / 1000)
        return
    rows = []
    for mode in args.modes.split(","):
        port = free_port()
        server = subprocess.Popen([sys.executable, __file__, "--rate", str(args.rate), "--latency-ms",
                                   str(args.latency_ms), "--serve", mode, str(port)])
        try:
            for _ in range(100):  # until it listens
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/stats").read()
                    break
                except OSError:
                    time.sleep(0.05)
            share = args.share if mode.endswith(NEIGHBOUR) else 0.0
            ok, failed, span = asyncio.run(drive(f"http://127.0.0.1:{port}/v1", args.calls, args.rate * args.offered,
                                                 share * args.rate))
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as reply:
                stats = json.loads(reply.read())
            if args.log:
                Path(args.log).mkdir(parents=True, exist_ok=True)
                Path(args.log, f"{mode}.json").write_text(json.dumps(stats["log"]))
        finally:
            server.terminate()
            server.wait()
        ours = args.rate * (1 - share)
        theirs = neighbour_rate(stats["log"], span) / args.rate if share else None
        rows.append((mode, ok, failed, stats["429"] / max(1, stats["ok"]), ok / span / ours if span else 0.0,
                     span, theirs))
        print(f"{mode}: {ok}/{args.calls} ok, failed {failed}, {rows[-1][3]:.3f} 429s per success, "
              f"{rows[-1][4]:.0%} of the limit used", file=sys.stderr)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"#### Rate limits against a foreign mock — {stamp}\n")
    import mpcbench_async

    print(f"Machine: {platform.machine()}, Python {platform.python_version()}. Command: `python "
          f"bench/ratelimit_foreign.py --calls {args.calls} --rate {args.rate} --offered {args.offered:g} "
          f"--latency-ms {args.latency_ms:g} --share {args.share:g}`. Client: "
          f"`{Path(mpcbench_async.__file__).parent.parent}`.\n")
    print("| mode | success | failures | 429s per success | limit used | s | neighbour's share |\n"
          "|---|---:|---|---:|---:|---:|---:|")
    for mode, ok, failed, per_success, used, span, theirs in rows:
        print(f"| {mode} | {ok / args.calls:.1%} | {failed or 'none'} | {per_success:.3f} | {used:.0%} | "
              f"{span:.1f} | {'—' if theirs is None else f'{theirs:.0%}'} |")


if __name__ == "__main__":
    main()
