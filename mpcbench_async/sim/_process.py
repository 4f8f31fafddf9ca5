"""The embedded sim in a child process (the default), and the choice between it and the in-process thread.

Why a child process: a sim in the runner's process (``SimProvider``: its own thread and event loop) shares
the runner's interpreter lock, so every simulated reply — JSON decoding, the policy, the reply's encoding
— is CPU the runner's event loop cannot use: measured at 4.2 ms of CPU per call for both together
(issue 31). In a child process the sim gets a core of its own.

``SimProcessProvider.start`` runs ``mpcbench_async.cli._sim_child`` in a new interpreter (a program, so it
lives beside the command line: the sim on a port the kernel picks, reported as one JSON line on stdout) with a
pipe on its stdin, and returns the reported base URL; ``aclose`` closes that pipe, the child stops its server
and exits, and it is killed if it has not within ``STOP_S``. A runner that dies without ``aclose`` — killed,
crashed — closes the pipe all the same (the kernel closes a dead process's files), so the child never
outlives it.

``MPCBENCH_SIM`` chooses the mode: ``process`` (or unset) for this one, ``inprocess`` for ``SimProvider``.
The in-process mode is for tests that need the sim in their own interpreter: policies a test registers
(``register_policy``) or a ``SimServer`` method it patches reach only a sim in the same process. The test
suite sets it (``tests/conftest.py``); the tests of this module set ``process``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import anyio.abc
import orjson

from .._exceptions import BenchError, ConfigError
from .._lazy import TYPE_CHECKING

if TYPE_CHECKING:
    from ..llm import Provider

__all__ = ["SIM_MODE_ENV", "SimProcessProvider", "sim_provider"]

SIM_MODE_ENV = "MPCBENCH_SIM"
START_S = 60.0
"""Longest wait for the child to report its port (an interpreter start-up and aiohttp's import: about a second)."""
STOP_S = 10.0
"""Longest wait for the child to exit after its stdin closed, before it is killed."""
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent.parent)  # the directory holding mpcbench_async
# The child imports this very copy of the package (a source tree, a worktree on PYTHONPATH, a wheel), without
# putting its directory before the standard library on its path for anything else. Once its server has stopped
# it ends at once (``os._exit``: its one line on stdout was flushed when written), without the interpreter's
# teardown of aiohttp and the sim, which the runner's ``aclose`` would wait for at the end of every sweep.
_CHILD = ("import os, sys; sys.path.insert(0, sys.argv[1]); import mpcbench_async; del sys.path[0]; "
          "from mpcbench_async.cli._sim_child import main; os._exit(main(sys.argv[2:]))")


def sim_provider() -> Provider:
    """A new, not yet started embedded sim in the mode ``MPCBENCH_SIM`` names (a child process by default)."""
    mode = os.environ.get(SIM_MODE_ENV, "").strip().lower() or "process"
    if mode == "process":
        return SimProcessProvider()
    if mode == "inprocess":
        from ._provider import SimProvider

        return SimProvider()
    raise ConfigError(f"environment variable {SIM_MODE_ENV}={os.environ[SIM_MODE_ENV]!r}: expected 'process' "
                      "(the embedded sim in a child process, the default) or 'inprocess' (in a thread of this "
                      "process, for tests)")


class SimProcessProvider:
    """One sim in one child process: ``url = await provider.start()`` … ``await provider.aclose()``."""

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed
        self.base_url = ""
        self.process: anyio.abc.Process | None = None

    async def spawn(self) -> None:
        """Launch the child without waiting for it to listen (a no-op once launched).

        Why apart from ``start``: the child's interpreter start-up and imports (a few hundred ms, a second on a
        loaded machine) can then run on another core while the caller does its own work — a sweep spawns it
        before it reads its tasks and data, and its first call's ``start`` finds it listening (issue 31).
        """
        if self.process is None:
            self.process = await anyio.open_process(
                [sys.executable, "-c", _CHILD, _PACKAGE_ROOT, "--seed", str(self.seed), "--parent", str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None)

    async def start(self) -> str:
        """Start the child (``spawn`` unless done); return its base URL once it listens (or raise ``BenchError``)."""
        await self.spawn()
        try:
            with anyio.fail_after(START_S):
                report = await self._first_line()
        except TimeoutError:
            await self.aclose()
            raise BenchError(f"the sim child process reported no port within {START_S:g} s") from None
        except BaseException:
            await self.aclose()
            raise
        base_url = report.get("base_url") if isinstance(report, dict) else None
        if not isinstance(base_url, str):
            code = await self._stop()
            why = report.get("error") if isinstance(report, dict) else None
            raise BenchError(f"the sim child process did not start ({why or f'exit code {code}'})")
        self.base_url = base_url
        return base_url

    async def _first_line(self) -> object:
        """The child's report: its first line on stdout, decoded (``None`` when it exited without one)."""
        assert self.process is not None and self.process.stdout is not None
        buffer = b""
        while b"\n" not in buffer:
            try:
                buffer += await self.process.stdout.receive()
            except anyio.EndOfStream:
                return None
        try:
            return orjson.loads(buffer.partition(b"\n")[0])
        except orjson.JSONDecodeError:
            return None

    async def aclose(self) -> None:
        """Stop the child: close its stdin, wait for it to exit (kill it after ``STOP_S``); a no-op if not started."""
        if self.process is not None:
            await self._stop()

    async def _stop(self) -> int | None:
        process, self.process = self.process, None
        assert process is not None
        with anyio.CancelScope(shield=True):  # a cancelled runner still stops its child
            if process.stdin is not None:
                await process.stdin.aclose()  # the child's signal to stop
            with anyio.move_on_after(STOP_S):
                await process.wait()
            if process.returncode is None:
                process.kill()
            await process.aclose()  # its other pipe closed, its exit reaped
        return process.returncode
