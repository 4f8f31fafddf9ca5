"""The embedded sim as a provider the client owns: started off the caller's loop, stopped in aclose."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
from urllib.parse import urlsplit

import pytest

from mpcbench_async.llm import LLMClient
from mpcbench_async.llm._providers import provider_prefix
from mpcbench_async.records import Message
from mpcbench_async.sim import SimProvider, SimServer

ECHO = [Message(role="user", content="hi")]


def sim_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "mpcbench-sim"]


def port_open(base_url: str) -> bool:
    parts = urlsplit(base_url)
    with socket.socket() as sock:
        return sock.connect_ex((parts.hostname, parts.port)) == 0


class TestClientOwnsTheSim:
    async def test_first_sim_call_starts_it_and_aclose_stops_it(self):
        """A sim/... model without base_url is served by a sim the client starts; aclose joins its thread."""
        client = LLMClient()
        client.check_models(["sim/echo"])  # resolving a model starts nothing
        assert [] == sim_threads()
        result = await client.chat("sim/echo", ECHO)
        url = client._provider_urls["sim"]
        assert ("echo: hi", ["mpcbench-sim"], True) == (result.content, sim_threads(), port_open(url))
        await client.aclose()
        assert ([], False) == (sim_threads(), port_open(url))

    async def test_each_client_owns_its_own_sim(self):
        """Two clients get two sims; closing one leaves the other serving."""
        first, second = LLMClient(), LLMClient()
        await first.chat("sim/echo", ECHO)
        await second.chat("sim/echo", ECHO)
        assert first._provider_urls["sim"] != second._provider_urls["sim"]
        await first.aclose()
        assert ["mpcbench-sim"] == sim_threads()
        assert "echo: again" == (await second.chat("sim/echo", [Message(role="user", content="again")])).content
        await second.aclose()
        assert [] == sim_threads()

    async def test_concurrent_first_calls_start_one_sim(self):
        """Calls to several sim models racing at the start share one sim."""
        async with LLMClient() as client:
            results = await asyncio.gather(*(client.chat(m, ECHO) for m in ("sim/echo", "sim/echo?latency_ms=0",
                                                                              "sim/lazy-agent")))
            assert (3, ["mpcbench-sim"]) == (len(results), sim_threads())
        assert [] == sim_threads()

    async def test_a_configured_sim_base_url_starts_nothing(self, sim):
        """With sim_base_url the client talks to that server and owns no sim."""
        async with LLMClient(sim_base_url=sim.base_url) as client:
            await client.chat("sim/echo", ECHO, key="k")
            assert ([], {}) == (sim_threads(), client._providers)
        assert 1 == sim.stats.completed["k"]


class TestProvider:
    async def test_start_keeps_the_callers_loop_running(self, monkeypatch):
        """The sim binds its port only after a task on the caller's loop ran: start never blocks that loop."""
        loop_ran = threading.Event()
        real_start = SimServer.start

        async def gated_start(self: SimServer) -> str:
            if not await asyncio.to_thread(loop_ran.wait, 10):
                raise RuntimeError("the caller's loop was blocked while the sim started")
            return await real_start(self)

        monkeypatch.setattr(SimServer, "start", gated_start)

        async def tick() -> None:
            await asyncio.sleep(0)
            loop_ran.set()

        provider = SimProvider()
        ticker = asyncio.create_task(tick())
        url = await provider.start()
        await ticker
        assert port_open(url)
        await provider.aclose()
        assert ([], False) == (sim_threads(), port_open(url))

    async def test_a_failed_start_raises_its_error_and_leaves_no_thread(self, monkeypatch):
        """When the server cannot start, start raises why and the thread is gone."""

        async def failing_start(self: SimServer) -> str:
            raise OSError(98, "Address already in use")

        monkeypatch.setattr(SimServer, "start", failing_start)
        provider = SimProvider()
        with pytest.raises(OSError, match="Address already in use"):
            await provider.start()
        await provider.aclose()
        assert [] == sim_threads()

    async def test_aclose_before_start_does_nothing(self):
        """Closing a provider that never started is a no-op."""
        await SimProvider().aclose()
        assert [] == sim_threads()


class TestRegistration:
    def test_sim_models_are_served_by_the_registered_provider(self):
        """The package root registers 'sim' into llm's provider registry; other prefixes stay remote."""
        assert ("sim", None, None) == (provider_prefix("sim/echo"), provider_prefix("openai/gpt-4o"),
                                       provider_prefix("gpt-4o"))

    def test_a_fresh_process_loads_nothing_until_a_sim_model_is_called(self):
        """Importing llm imports neither the sim server nor a benchmark; the first sim call serves sim/judge."""
        code = """
import sys, anyio
from mpcbench_async.llm import LLMClient
from mpcbench_async.records import Message
loaded = lambda: sorted(m for m in ("aiohttp.web", "mpcbench_async.sim._server", "mpcbench_async.mpcbench",
                                    "mpcbench_async.tariff") if m in sys.modules)
print(loaded())
async def main():
    async with LLMClient() as client:
        reply = await client.chat("sim/lazy-agent", [Message(role="user", content="plan it")])
    print(bool(reply.content), loaded())
anyio.run(main)
"""
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        expected = ("[]\nTrue ['aiohttp.web', 'mpcbench_async.mpcbench', 'mpcbench_async.sim._server', "
                    "'mpcbench_async.tariff']\n")
        assert expected == out
