"""One sweep of the shipped tasks × the shipped sim models (one trial), as ``mpcbench-async sweep`` writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpcbench_async.cli import main


@pytest.fixture(scope="package")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Made once for the package: treat it as read-only (copy it to change it)."""
    out = tmp_path_factory.mktemp("shipped") / "sweep"
    assert 0 == main(["sweep", "--out", str(out), "--no-certificate", "--quiet"])
    return out
