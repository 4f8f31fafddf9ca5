"""The embedded sim in the caller's process (``MPCBENCH_SIM=inprocess``): a ``SimServer`` on loopback in a thread.

``LLMClient`` starts it on the first call to a ``sim/...`` model without a
``base_url`` and stops it in ``aclose()``. The server runs on its own event loop
in its own thread, so it never competes with the client's loop for scheduling
(only for the GIL) — and a sweep's sim replies cost the client's loop nothing.
``start`` waits for the thread through ``anyio.to_thread``, so the caller's
loop keeps running while aiohttp is imported and the socket is bound; ``aclose``
stops the server (port closed) and joins the thread the same way. Each client
owns its own sim: nothing is shared, so no thread outlives the client that
started it.
"""

from __future__ import annotations

import asyncio
import threading

import anyio

__all__ = ["SimProvider"]


class SimProvider:
    """One sim server in one thread: ``url = await provider.start()`` … ``await provider.aclose()``."""

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed
        self.base_url = ""
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    async def start(self) -> str:
        """Start the server thread; return its base URL once it listens (or raise why it could not)."""
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(),), name="mpcbench-sim",
                                        daemon=True)  # daemon: a client never closed cannot hold the process
        self._thread.start()
        await anyio.to_thread.run_sync(self._ready.wait)
        if self._failure is not None:
            await anyio.to_thread.run_sync(self._thread.join)
            raise self._failure
        return self.base_url

    async def aclose(self) -> None:
        """Stop the server, close its port and join its thread (a no-op if it never started)."""
        if self._thread is None:
            return
        await anyio.to_thread.run_sync(self._ready.wait)
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        await anyio.to_thread.run_sync(self._thread.join)
        self._thread = None

    async def _serve(self) -> None:
        """The thread's loop: start, report readiness, serve until ``aclose`` sets the stop event."""
        try:
            from ._server import SimServer  # imports aiohttp's server in this thread, not on the caller's loop

            server = SimServer(seed=self.seed)
            try:
                self.base_url = await server.start()
            except BaseException:
                await server.stop()
                raise
            self._stop = asyncio.Event()
            self._loop = asyncio.get_running_loop()
        except BaseException as exc:  # reported to the starting task
            self._failure = exc
            return
        finally:
            self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await server.stop()
