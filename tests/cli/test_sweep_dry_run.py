"""``mpcbench-async sweep --dry-run``: the plan and its estimate on stdout, exit 0, no call, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def sweep(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mpcbench_async", "sweep", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_a_dry_run_prints_the_estimate_and_writes_nothing(tmp_path):
    """From an empty directory (the shipped example benchmark): 8 tasks × 2 agents × 2 trials, one judge."""
    proc = sweep(tmp_path, "--dry-run", "--trials", "2", "--out", "out")
    assert (0, "") == (proc.returncode, proc.stderr)
    lines = proc.stdout.splitlines()
    assert "dry run of out: no call made, nothing written (concurrency 32)" == lines[0]
    total = next(line for line in lines if line.startswith("total"))
    assert ["total", "136", "0", "136", "136-1,020"] == total.split()[:5]
    assert [] == list(tmp_path.iterdir())


def test_a_dry_run_of_a_tariff_suite_is_refused_in_one_line(tmp_path):
    proc = sweep(tmp_path, "--dry-run", "--suite", "tariff", "--tariff-path", str(REPO / "storage/benchmarks/tariff"))
    assert (2, "error: --dry-run: only --suite mpcbench is estimated so far\n") == (proc.returncode, proc.stderr)
