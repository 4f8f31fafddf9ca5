"""The chaos harness (``bench/chaos.py``, issue 25) holds in its quick run: every trial of every scenario."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO

SCENARIOS = ["SIGKILL under --max-cost, resume", "sim faults at ~50 %, resume", "disk full (ENOSPC), resume",
             "torn / garbage JSONL tails, resume", "server echoing the key in 12 shapes",
             "pathological tools in one unit"]


def test_every_scenario_of_the_quick_chaos_run_holds(tmp_path):
    """``bench/chaos.py --quick`` runs the six scenarios against real sweep processes: it exits 0, its JSON has one
    row per scenario with every trial held and nothing listed as broken, and its Markdown table says the same."""
    results = tmp_path / "chaos.json"
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "chaos.py"), "--quick", "--json", str(results)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert 0 == proc.returncode, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads(results.read_text())["rows"]
    assert SCENARIOS == [row["scenario"] for row in rows]
    assert [(row["tried"], []) for row in rows] == [(row["held"], row["failures"]) for row in rows]
    assert all(row["tried"] >= 1 for row in rows)
    table = [line for line in proc.stdout.splitlines() if line.startswith("| ")][1:]
    assert [f"| {row['scenario']} | {row['tried']} | {row['tried']} |" for row in rows] == [
        line[: line.rindex(" | ") + 2].rstrip() for line in table]
    assert "Billed vs recorded" in proc.stdout and "Did not hold" not in proc.stdout
