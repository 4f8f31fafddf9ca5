"""Rate limits against a mock provider that is not the project's sim: fixed windows, other header habits.

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
from datetime import UTC, datetime
from pathlib import Path

MODES = ("window-rpm", "window-count", "no-headers", "bare-429")


def serve(mode: str, rate: int, port: int, latency_s: float = 0.05) -> None:
    """The mock provider (child process): ``POST /v1/chat/completions``, ``GET /stats``."""
    from aiohttp import web

    stats = {"ok": 0, "429": 0}
    log: list[tuple[float, int, int]] = []  # (server time, status, accepted in the window before it)
    window = [0, 0]  # the whole second it counts, requests accepted in it

    def limit_headers(now: float) -> dict[str, str]:
        if mode not in ("window-rpm", "window-count"):
            return {}
        limit = rate * 60 if mode == "window-rpm" else rate
        return {"x-ratelimit-limit-requests": str(limit), "x-ratelimit-remaining-requests": str(rate - window[1]),
                "x-ratelimit-reset-requests": f"{int((window[0] + 1 - now) * 1000)}ms"}

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        now = time.time()
        if window[0] != int(now):
            window[:] = [int(now), 0]
        log.append((now, 429 if window[1] >= rate else 200, window[1]))
        if window[1] >= rate:
            stats["429"] += 1
            headers = limit_headers(now)
            if mode != "bare-429":
                headers["retry-after"] = str(max(1, math.ceil(window[0] + 1 - now)))
            return web.json_response({"error": {"message": "Rate limit reached for requests",
                                                "type": "requests", "code": "rate_limit_exceeded"}},
                                     status=429, headers=headers)
        window[1] += 1
        stats["ok"] += 1
        headers = limit_headers(now)
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


async def drive(base_url: str, calls: int, per_s: float) -> tuple[int, dict[str, int], float]:
    """(successes, failures by error, seconds from the first call to the last success)."""
    import anyio

    from mpcbench_async.llm import LLMClient, ModelConfig
    from mpcbench_async.records import Message

    config = ModelConfig.from_dict({"models": {"mock-model": {"base_url": base_url, "api_key_env": None}}})
    failed: dict[str, int] = {}
    done: list[float] = []
    async with LLMClient(config) as client:
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
    return len(done), failed, max(done, default=0.0)


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
    parser.add_argument("--log", metavar="DIR", help="write each mode's requests as the mock saw them to "
                        "DIR/MODE.json: [server time, status, requests accepted in its window before it]")
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
            ok, failed, span = asyncio.run(drive(f"http://127.0.0.1:{port}/v1", args.calls, args.rate * args.offered))
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as reply:
                stats = json.loads(reply.read())
            if args.log:
                Path(args.log).mkdir(parents=True, exist_ok=True)
                Path(args.log, f"{mode}.json").write_text(json.dumps(stats["log"]))
        finally:
            server.terminate()
            server.wait()
        rows.append((mode, ok, failed, stats["429"] / max(1, stats["ok"]), ok / span / args.rate if span else 0.0,
                     span))
        print(f"{mode}: {ok}/{args.calls} ok, failed {failed}, {rows[-1][3]:.3f} 429s per success, "
              f"{rows[-1][4]:.0%} of the limit used", file=sys.stderr)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"#### Rate limits against a foreign mock (fixed 1-s windows) — {stamp}\n")
    import mpcbench_async

    print(f"Machine: {platform.machine()}, Python {platform.python_version()}. Command: `python "
          f"bench/ratelimit_foreign.py --calls {args.calls} --rate {args.rate} --offered {args.offered:g} "
          f"--latency-ms {args.latency_ms:g}`. Client: "
          f"`{Path(mpcbench_async.__file__).parent.parent}`.\n")
    print("| mode | success | failures | 429s per success | limit used | s |\n|---|---:|---|---:|---:|---:|")
    for mode, ok, failed, per_success, used, span in rows:
        print(f"| {mode} | {ok / args.calls:.1%} | {failed or 'none'} | {per_success:.3f} | {used:.0%} | "
              f"{span:.1f} |")


if __name__ == "__main__":
    main()
