"""Shared fixtures of the levels tests: the reference copy of the original MPCBench (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

UPSTREAM = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "mpcbench_levels" / "upstream"


@pytest.fixture(scope="session")
def upstream() -> Path:
    """The original repository as published (``../shared/reference/mpcbench_levels/upstream``)."""
    if not (UPSTREAM / "generate" / "output").is_dir():
        pytest.skip(f"reference copy of the three-level MPCBench not found at {UPSTREAM}")
    return UPSTREAM


@pytest.fixture(scope="session")
def results(upstream: Path) -> list[Path]:
    """The 11 recorded GPT-4o results files."""
    return sorted((upstream / "results").glob("eval_L*.jsonl"))
