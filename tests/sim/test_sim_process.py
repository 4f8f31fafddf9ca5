"""The embedded sim in a child process (the default mode): started and stopped with the client, never orphaned."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import textwrap
from urllib.parse import urlsplit

import orjson
import pytest

from mpcbench_async import ConfigError
from mpcbench_async.llm import LLMClient
from mpcbench_async.records import Message
from mpcbench_async.sim import SimProcessProvider, SimProvider
from mpcbench_async.sim._process import sim_provider

ECHO = [Message(role="user", content="hi")]


@pytest.fixture(autouse=True)
def process_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MPCBENCH_SIM", "process")  # the suite's default is inprocess (tests/conftest.py)


def port_open(base_url: str) -> bool:
    parts = urlsplit(base_url)
    with socket.socket() as sock:
        return sock.connect_ex((parts.hostname, parts.port)) == 0


def wait_for_exit(pid: int, timeout_s: float = 60.0) -> bool:
    """Whether process ``pid`` (not necessarily a child of ours) exits within ``timeout_s``: a pidfd wait."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout_s)[0])
    finally:
        os.close(fd)


class TestMode:
    def test_a_child_process_is_the_default(self, monkeypatch):
        monkeypatch.delenv("MPCBENCH_SIM")
        assert isinstance(sim_provider(), SimProcessProvider)

    def test_inprocess_keeps_the_thread(self, monkeypatch):
        monkeypatch.setenv("MPCBENCH_SIM", " InProcess ")
        assert isinstance(sim_provider(), SimProvider)

    def test_an_unknown_mode_fails_when_the_model_is_resolved(self, monkeypatch):
        """A bad value is one clear error from check_models, before any call is made."""
        monkeypatch.setenv("MPCBENCH_SIM", "fork")
        with pytest.raises(ConfigError) as caught:
            LLMClient().check_models(["sim/echo"])
        assert ("environment variable MPCBENCH_SIM='fork': expected 'process' (the embedded sim in a child "
                "process, the default) or 'inprocess' (in a thread of this process, for tests)") == str(caught.value)


class TestClientOwnsTheChild:
    async def test_first_call_starts_the_child_and_aclose_stops_it(self):
        """The sim runs in another process; aclose closes its port and reaps it (exit code 0)."""
        client = LLMClient()
        client.check_models(["sim/echo"])  # resolving a model starts nothing
        provider = client._providers["sim"]
        assert isinstance(provider, SimProcessProvider) and provider.process is None
        result = await client.chat("sim/echo", ECHO, key="k")
        process, url = provider.process, client._provider_urls["sim"]
        assert process is not None and process.pid != os.getpid()
        assert ("echo: hi", True, None) == (result.content, port_open(url), process.returncode)
        await client.aclose()
        assert (0, False, None) == (process.returncode, port_open(url), provider.process)

    async def test_benchmark_policies_are_served_by_the_child(self):
        """The child wires the benchmark policies as the parent does: sim/judge answers."""
        async with LLMClient() as client:
            result = await client.chat("sim/judge", ECHO)
        assert result.content.startswith("sim/judge: ")

    async def test_aclose_before_start_does_nothing(self):
        await SimProcessProvider().aclose()


class TestNoOrphan:
    def test_the_child_exits_when_its_parent_is_killed(self, tmp_path):
        """SIGKILL of the runner (no aclose, no finally) still ends its sim child."""
        program = textwrap.dedent("""
            import anyio, os, sys, orjson
            from mpcbench_async.sim import SimProcessProvider
            async def main():
                provider = SimProcessProvider()
                url = await provider.start()
                print(orjson.dumps({"child": provider.process.pid, "url": url}).decode(), flush=True)
                await anyio.sleep_forever()
            anyio.run(main)
        """)
        parent = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True,
                                  env={**os.environ, "MPCBENCH_SIM": "process"})
        try:
            assert parent.stdout is not None
            report = orjson.loads(parent.stdout.readline())
            assert port_open(report["url"])
        finally:
            parent.send_signal(signal.SIGKILL)
            parent.wait()
        assert wait_for_exit(report["child"])
        assert not port_open(report["url"])
