"""Shared fixtures: a seeded sim server on loopback and clients pointed at it."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import structlog
from anyio.abc import Process
from hypothesis import settings

from mpcbench_async.llm import LLMClient, ModelConfig
from mpcbench_async.records import LLMCallRecord
from mpcbench_async.runtime import FakeClock
from mpcbench_async.sim import SimServer

from ._tiers import TIER_MARKERS, markers_for

# The embedded sim runs in a thread of the test's process, not in a child process (the default): tests register
# policies and patch SimServer, which only a sim in this interpreter sees, and start hundreds of sims (a child
# costs an interpreter start-up each). CLI tests' child processes inherit it. tests/sim/test_sim_process.py
# covers the child-process mode.
os.environ.setdefault("MPCBENCH_SIM", "inprocess")

# Hypothesis example counts, one place for every property test (none sets its own max_examples). "default": few
# examples, always the same ones (derandomized), so the inner loop is quick and a failure reruns as it was.
# HYPOTHESIS_PROFILE=deep: fifty times as many, random each run (a failure prints the seed that reproduces it), for
# the occasional search a change of a parser or a masking rule deserves.
settings.register_profile("default", max_examples=20, deadline=None, derandomize=True)
settings.register_profile("deep", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO.parent / "shared" / "reference"


@pytest.fixture
async def sim() -> AsyncIterator[SimServer]:
    """A seeded sim server on a free loopback port, in the test's event loop."""
    async with SimServer(seed=7) as server:
        yield server


@pytest.fixture(autouse=True)
def _certificate_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Sweeps cache the certificate's baselines under $XDG_CACHE_HOME: one directory for the test session, never
    the user's ~/.cache (subprocesses inherit it)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def make_client(sim: SimServer, fake_clock: FakeClock) -> AsyncIterator[Callable[..., LLMClient]]:
    """Build LLMClients against the sim; backoff sleeps run on a fake clock (no real waiting)."""
    clients: list[LLMClient] = []

    def build(transport: str = "native", config: ModelConfig | None = None,
              records: list[LLMCallRecord] | None = None) -> LLMClient:
        client = LLMClient(config, transport=transport, sim_base_url=sim.base_url, clock=fake_clock,
                           call_sink=records.append if records is not None else None)
        clients.append(client)
        return client

    yield build
    for client in clients:
        await client.aclose()


@pytest.fixture
def restored_logging(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Restore structlog, the root logger's handlers and level, and the excepthook after the test."""
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    structlog.reset_defaults()
    root.handlers[:] = handlers
    root.setLevel(level)


def reference_dir(*parts: str) -> Path:
    """A path under ../shared/reference, skipping the test when it is absent (fresh clones)."""
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference data not available at {path} (only present beside the CI checkout)")
    return path


async def stderr_lines(proc: Process) -> AsyncIterator[str]:
    """The child's stderr, line by line, as it is written."""
    assert proc.stderr is not None
    buffer = b""
    async for chunk in proc.stderr:
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            yield line.decode()


def pytest_configure(config: pytest.Config) -> None:
    for name, meaning in TIER_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its tiers (``tests/_tiers.py``), so ``-m "not slow"`` and the like select by name."""
    for item in items:
        for name in markers_for(item.nodeid):
            item.add_marker(name)
