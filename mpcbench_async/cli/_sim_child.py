"""The sim child process (``python -m mpcbench_async.cli._sim_child --seed N``), run by ``SimProcessProvider``.

It serves one ``SimServer`` on a loopback port the kernel picks, reports that port on stdout as one JSON
line (``{"base_url": "http://127.0.0.1:PORT/v1"}``, or ``{"error": "..."}`` when it cannot listen), and
serves until its stdin reaches end of file. Its parent holds the only write end of that pipe, so the
pipe closes when the parent closes it (``aclose``) or dies in any way, ``SIGKILL`` included: the child
then stops its server and exits, and never outlives the runner that started it. On Linux it also asks
for ``SIGTERM`` on its parent's death (``PR_SET_PDEATHSIG``), in case its own loop is too busy to read.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import os
import signal
import sys

import orjson

from ._loop import run_asyncio

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Have the kernel send SIGTERM when the parent dies (Linux only; elsewhere the stdin EOF alone)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request: nobody would send it now
        os.kill(os.getpid(), signal.SIGTERM)


async def _stdin_closed() -> None:
    """Return once stdin reaches end of file (the parent closed the pipe or died)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while await reader.read(4096):
        pass


async def _serve(seed: int) -> int:
    from ..sim import SimServer

    server = SimServer(seed=seed)
    try:
        base_url = await server.start()
    except OSError as exc:
        await server.stop()
        sys.stdout.write(orjson.dumps({"error": f"cannot listen on loopback ({exc.strerror or exc})"}).decode())
        sys.stdout.write("\n")
        sys.stdout.flush()
        return 1
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    watcher = asyncio.create_task(_stdin_closed())
    watcher.add_done_callback(lambda _: stop.set())
    sys.stdout.write(orjson.dumps({"base_url": base_url}).decode() + "\n")
    sys.stdout.flush()
    try:
        await stop.wait()
    finally:
        watcher.cancel()
        await server.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mpcbench_async.cli._sim_child")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parent", type=int, default=os.getppid(), help="the pid whose death stops this child")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the runner decides
    _die_with_parent(args.parent)
    return run_asyncio(_serve, args.seed)  # uvloop unless MPCBENCH_LOOP=asyncio (cli/_loop.py)


if __name__ == "__main__":
    sys.exit(main())
