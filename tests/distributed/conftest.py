"""One local Ray instance for the Ray tests (started once for tests/distributed: it takes seconds), or a skip."""

from __future__ import annotations

import os
import signal

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[ray]' (the dev extra includes it)")


@pytest.fixture(scope="package")
def ray_instance():
    """A local Ray instance (4 logical CPUs so a few worker actors fit on 2 cores), shut down after these tests.

    Package-scoped: Ray's idle processes would otherwise take CPU from every later test. Ray installs its own
    SIGTERM/SIGINT handlers in the driver; they are put back afterwards so they cannot leak into later tests.
    """
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no network: never try to report usage
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False,  # never a running cluster
                 object_store_memory=100 * 1024 * 1024, namespace="mpcbench-async-tests")
    yield ray
    ray.shutdown()
    for number, handler in handlers.items():
        signal.signal(number, handler)
