"""The long-running commands' event loop (``cli/_loop.py``): uvloop by default, asyncio's with ``MPCBENCH_LOOP=asyncio``
or without uvloop installed, one clear message for any other value."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import anyio
import pytest

from mpcbench_async._exceptions import InputError
from mpcbench_async.cli import _loop
from mpcbench_async.sim._process import SimProcessProvider
from tests.conftest import REPO

uvloop = pytest.importorskip("uvloop")  # a dependency everywhere but Windows


async def loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


class TestChoice:
    def test_uvloop_is_the_default(self, monkeypatch):
        monkeypatch.delenv(_loop.LOOP_ENV, raising=False)
        assert uvloop.new_event_loop is _loop.loop_factory()

    def test_named_in_any_case(self, monkeypatch):
        monkeypatch.setenv(_loop.LOOP_ENV, " UVLoop ")
        assert uvloop.new_event_loop is _loop.loop_factory()

    def test_asyncio_turns_it_off(self, monkeypatch):
        monkeypatch.setenv(_loop.LOOP_ENV, "asyncio")
        assert None is _loop.loop_factory()

    def test_without_uvloop_installed_asyncio_silently(self, monkeypatch):
        monkeypatch.delenv(_loop.LOOP_ENV, raising=False)
        monkeypatch.setitem(sys.modules, "uvloop", None)  # what an install without it looks like to ``import``
        assert None is _loop.loop_factory()

    def test_another_value_is_an_input_error(self, monkeypatch):
        monkeypatch.setenv(_loop.LOOP_ENV, "trio")
        with pytest.raises(InputError) as caught:
            _loop.loop_factory()
        assert ("environment variable MPCBENCH_LOOP='trio': expected 'uvloop' (the default where it is installed) or "
                "'asyncio'") == str(caught.value)


class TestRunners:
    @pytest.mark.parametrize(("choice", "module"), [("", "uvloop"), ("asyncio", "asyncio.unix_events")])
    def test_anyio_and_asyncio_runs_use_the_choice(self, monkeypatch, choice, module):
        monkeypatch.setenv(_loop.LOOP_ENV, choice)
        assert (module, module) == (_loop.run(loop_module), _loop.run_asyncio(loop_module))


# The sweep command's own coroutine, wrapped to report the loop it runs on; then the command as the console script
# runs it (in-process sim: tests/conftest.py).
PROBE = """
import asyncio, sys
from mpcbench_async.cli import _sweep, main
inner = _sweep._sweep
async def reporting(args):
    print("loop:", type(asyncio.get_running_loop()).__module__)
    return await inner(args)
_sweep._sweep = reporting
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(("choice", "module"), [("", "uvloop"), ("asyncio", "asyncio.unix_events")])
def test_the_sweep_command_runs_on_the_choice(tmp_path, choice, module):
    env = {**os.environ, _loop.LOOP_ENV: choice}
    proc = subprocess.run([sys.executable, "-c", PROBE, "sweep", "--out", str(tmp_path / "out"), "--tasks", "sc01_*",
                           "--trials", "1", "--quiet"], capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert (0, f"loop: {module}") == (proc.returncode, proc.stdout.splitlines()[0]), proc.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the child's /proc/PID/maps")
@pytest.mark.parametrize(("choice", "loaded"), [("", True), ("asyncio", False)])
def test_the_embedded_sim_child_runs_on_the_choice(monkeypatch, choice, loaded):
    """uvloop's extension is mapped into the child's memory exactly when its loop is uvloop's (nothing else in the
    child imports it)."""
    monkeypatch.setenv(_loop.LOOP_ENV, choice)

    async def child_maps() -> str:
        provider = SimProcessProvider()
        await provider.start()
        try:
            assert provider.process is not None
            return await anyio.Path(f"/proc/{provider.process.pid}/maps").read_text()
        finally:
            await provider.aclose()

    assert loaded == ("uvloop/loop." in anyio.run(child_maps))


def test_a_bad_choice_stops_the_sweep_command_with_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mpcbench_async", "sweep", "--out", str(tmp_path / "out"), "--tasks",
                           "sc01_*", "--quiet"], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, _loop.LOOP_ENV: "trio"})
    assert (2, "error: environment variable MPCBENCH_LOOP='trio': expected 'uvloop' (the default where it is "
               "installed) or 'asyncio'") == (proc.returncode, proc.stderr.strip().splitlines()[-1])
    assert not (tmp_path / "out").exists()
