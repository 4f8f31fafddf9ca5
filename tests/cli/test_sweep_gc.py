"""The sweep command collects the young generation less often (``runtime/_gc.py``: ~70 µs of CPU per LLM call).

A library caller's process keeps its collector as it was: ``run_sweep`` itself sets nothing.
"""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

PROBE = """
import gc, sys
from mpcbench_async.cli import main
before = gc.get_threshold()
code = main(sys.argv[1:])
print(code, before[0], gc.get_threshold())
"""


def test_a_sweep_raises_the_young_threshold_only(tmp_path):
    proc = subprocess.run([sys.executable, "-c", PROBE, "sweep", "--out", str(tmp_path / "out"), "--tasks", "sc01_*",
                           "--trials", "1", "--quiet"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert "0 700 (10000, 10, 10)" == proc.stdout.splitlines()[-1], proc.stderr


def test_the_threshold_is_never_lowered():
    import gc

    from mpcbench_async.runtime import space_young_collections

    saved = gc.get_threshold()
    try:
        gc.set_threshold(50_000, 20, 30)
        space_young_collections()
        assert gc.get_threshold() == (50_000, 20, 30)
    finally:
        gc.set_threshold(*saved)
