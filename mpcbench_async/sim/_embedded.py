"""One process-wide sim server on loopback, started on first use in a daemon thread.

Any model named ``sim/...`` without a configured ``base_url`` is served by it, so
the sim needs no set-up. It runs on its own event loop in its own thread, so it
never competes with the caller's loop for scheduling (only for the GIL).
"""

from __future__ import annotations

import asyncio
import threading

from ._server import SimServer

__all__ = ["embedded_sim_url"]

_lock = threading.Lock()
_server: SimServer | None = None


def embedded_sim_url(seed: int = 0) -> str:
    """Base URL (``http://127.0.0.1:PORT/v1``) of the process's embedded sim."""
    global _server
    with _lock:
        if _server is None:
            server = SimServer(seed=seed)
            ready = threading.Event()
            failure: list[BaseException] = []

            def serve() -> None:
                loop = asyncio.new_event_loop()
                try:
                    loop.run_until_complete(server.start())
                except BaseException as exc:  # reported to the starting thread
                    failure.append(exc)
                    ready.set()
                    return
                ready.set()
                loop.run_forever()

            threading.Thread(target=serve, name="mpcbench-sim", daemon=True).start()
            ready.wait()
            if failure:
                raise failure[0]
            _server = server
        return _server.base_url
