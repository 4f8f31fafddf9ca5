"""The sweep command's settings of its own process: the young generation collected less often
(``runtime/_gc.py``: 50–75 µs of CPU per LLM call), the sweep's modules imported with the collector off and frozen
after (``frozen_imports``: not walked again until the sweep ends) and numpy's BLAS on one thread
(``runtime/_blas.py``: its idle pool spun ~0.1 s per thread at start-up).

A library caller's process keeps its own: ``run_sweep`` itself sets neither.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

PROBE = """
import gc, os, sys
import mpcbench_async.sweep as sweep
from mpcbench_async.cli import main
run_sweep, frozen = sweep.run_sweep, []
async def probed(*args, **kwargs):  # what the command imports (``from ..sweep import run_sweep``), run as it is
    frozen.append(gc.get_freeze_count() > 10_000 and gc.isenabled())  # the sweep's modules frozen, collector on
    return await run_sweep(*args, **kwargs)
sweep.run_sweep = probed
before = gc.get_threshold()
code = main(sys.argv[1:])
print(code, before[0], frozen, gc.get_freeze_count(), gc.isenabled(), gc.get_threshold(),
      os.environ.get("OPENBLAS_NUM_THREADS"))
"""


def test_a_sweep_collects_young_objects_less_often_freezes_its_modules_and_asks_blas_for_one_thread(tmp_path):
    """While it runs, the sweep's modules are frozen; once it ends, thawed (a caller's process keeps none frozen)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    proc = subprocess.run([sys.executable, "-c", PROBE, "sweep", "--out", str(tmp_path / "out"), "--tasks", "sc01_*",
                           "--trials", "1", "--quiet"], capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert "0 700 [True] 0 True (10000, 10, 10) 1" == proc.stdout.splitlines()[-1], proc.stderr


FROZEN = """
import gc
from mpcbench_async.runtime import frozen_imports, thaw_imports
seen, kept = [], []
for enabled in (True, False):
    (gc.enable if enabled else gc.disable)()
    before = gc.get_freeze_count()
    with frozen_imports():
        seen.append(gc.isenabled())
        kept.append([[] for _ in range(100)])  # as a module's functions and classes: frozen with the rest
    seen += [gc.isenabled(), gc.get_freeze_count() >= before + 100, gc.get_count()[0]]
thaw_imports()
print(seen, gc.get_freeze_count())
"""


def test_frozen_imports_pauses_the_collector_freezes_what_was_made_and_restores_it():
    """Inside: no collection. After: the collector as it was (on or off), everything tracked so far frozen, the young
    generation empty; ``thaw_imports`` empties the permanent generation. In a child: no test process frozen."""
    proc = subprocess.run([sys.executable, "-c", FROZEN], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert "[False, True, True, 0, False, False, True, 0] 0" == proc.stdout.strip(), proc.stderr


def test_the_young_threshold_is_never_lowered():
    import gc

    from mpcbench_async.runtime import space_young_collections

    saved = gc.get_threshold()
    try:
        gc.set_threshold(50_000, 20, 30)
        space_young_collections()
        assert gc.get_threshold() == (50_000, 20, 30)
    finally:
        gc.set_threshold(*saved)


def test_a_blas_thread_count_the_user_set_is_kept(monkeypatch):
    from mpcbench_async.runtime import single_threaded_blas

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    single_threaded_blas()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    assert single_threaded_blas() is ("numpy" not in sys.modules)
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
