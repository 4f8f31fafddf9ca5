"""A small sweep workspace (mpcbench_async.testing) pointed at a sim, with fast retries."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpcbench_async.testing import write_workspace

FAST_RETRY = {"retry": {"initial_backoff": 0.01, "max_backoff": 0.05, "max_attempts": 10}, "timeout_s": 1.0}


@pytest.fixture
def workspace(tmp_path: Path):
    return lambda base_url: write_workspace(tmp_path, base_url=base_url, defaults=FAST_RETRY)
