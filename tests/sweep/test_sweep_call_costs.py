"""A guard on a whole sweep's work per LLM call that cannot drift with the machine: a count, not a timing (issue 31).

``mpcbench-async sweep`` on the shipped tasks with ``sim/oracle-agent`` (tool calls, several turns) and
``sim/judge``, as ``bench/cpu_per_call.py`` measures it in time, against an in-process sim already running in its
own thread (so its work is not counted). Counted: Python function calls in every thread of the runner — the
event loop's, the tool pool's, the checks' and the ledger's threads, all started during the counted sweep
(a fresh default tool pool) — per line of ``calls.jsonl``. Plan, summary and certificate are included; the
imports and the per-text caches are warm (a first sweep of the same tasks runs uncounted), so the count is
what every sweep pays.

Each agent, tool, check, record or runner feature added per call shows up here on any machine. The ceiling is
the count the code makes now plus a margin for thread timing (how many replies one loop wake-up finds, how
often a tool call waits for a worker: a few percent); lowering a count is welcome (lower the ceiling with it),
raising one past its ceiling needs a reason and a new figure in bench/RESULTS.md.
"""

from __future__ import annotations

import gc
import itertools
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
import orjson

from mpcbench_async import _redact
from mpcbench_async.cli import main
from mpcbench_async.cli._loop import LOOP_ENV
from mpcbench_async.mpcbench.tools import ToolPool, _execution
from mpcbench_async.sim import SimProvider
from tests.conftest import REPO

TRIALS = 3
CONCURRENCY = 16


def sweep(config: Path, out: Path) -> None:
    assert 0 == main(["sweep", "--config", str(config), "--prompts", str(REPO / "prompt_config.json"),
                      "--tasks-dir", str(REPO / "tasks"), "--data-dir", str(REPO / "data"), "--trials", str(TRIALS),
                      "--concurrency", str(CONCURRENCY), "--out", str(out), "--quiet"])


def counted_sweep(config: Path, out: Path) -> int:
    """Python calls made by every thread of the runner during one sweep (threads started before: not counted)."""
    counter = itertools.count()  # next() is one C call: no increment lost between threads

    def profile(_frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call":
            next(counter)

    gc.collect()  # earlier tests' garbage: its finalizers would run, and count, inside the sweep
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        sweep(config, out)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return next(counter)


def test_python_calls_per_llm_call_of_a_sweep(tmp_path, monkeypatch):
    # The secrets other tests of the session registered make every masked text cost more calls (as in
    # tests/llm/test_call_costs.py): count with none.
    monkeypatch.setattr(_redact, "_registry", _redact._Registry())
    # asyncio's loop, not the command's default uvloop (cli/_loop.py): its Python loop is counted the same on every
    # platform, where uvloop (C) hides its share, and only where it is installed.
    monkeypatch.setenv(LOOP_ENV, "asyncio")
    provider = SimProvider(seed=3)
    url = anyio.run(provider.start)
    try:
        config = tmp_path / "model_config.json"
        config.write_bytes(orjson.dumps({"agent_models": ["sim/oracle-agent"], "judge_models": ["sim/judge"],
                                         "defaults": {"base_url": url,
                                                      "limits": {"max_concurrency": CONCURRENCY}}}))
        sweep(config, tmp_path / "warm")
        monkeypatch.setattr(_execution, "_default_pool", ToolPool())  # its threads start inside the count
        calls = counted_sweep(config, tmp_path / "out")
    finally:
        anyio.run(provider.aclose)
    llm_calls = len((tmp_path / "out" / "calls.jsonl").read_bytes().splitlines())
    assert 17 * TRIALS * 2 < llm_calls  # each run makes several calls and is judged once
    # 2,012-2,018 on a87e6d7, before issue 31's per-data caches and tool hand-off; 1,084 after (288 LLM
    # calls); 1,002-1,011 on bdfea79; 972-980 after the benchmark side's cheaper tools (records ranked through
    # per-data rows, queries by set intersection) and answer reading; 914 after the limiter's fast path, the
    # ledger's lean hand-off and the manifest's versions read from the metadata's headers only; 882-884 with both;
    # 835-841 on b1520e8; 800-808 after the tool calls' checkpoint installer became a plain function and the
    # answer reading's, JQL's and stamps' generators and wrappers loops and inline code (660-664 on uvloop, the
    # command's default); 805-817 on 371be65, 800-804 after h96's cuts (parallel tool calls waited for without
    # asyncio.wait, each call's arguments measured once, the summary's call rows kept per recent unit); 757-762 once
    # the built-in tools' calls ran on the event loop first (0-2 of the sweep's calls still went to a thread: their
    # budget is on the real clock, which profiling slows); 778-785 once the checks ran there too (no hand-off, but
    # the answer reading's checkpoints, two Python calls each under a budget, outnumber what a hand-off cost in
    # Python calls; its cost was the thread's wake-up and the interpreter lock, which this count does not see:
    # bench/RESULTS.md); 773-777 with h96's cuts merged (9589512). A per-call feature adds tens, a re-read of the
    # scenario's data per run hundreds.
    # 773-777 (771.5) with h96's cuts and the inline tool calls and checks; 666 once a tool call or an answer that a
    # trial repeats is answered from what an earlier one kept (runtime.Memo: the oracle repeats every trial).
    # 669-680 on aae2be4; 662-666 after h99's first cuts (the agent's opening texts kept per task, the tool class's
    # check one C comparison, no Pipeline coroutine around a unit, a reply's single tool call without a wrapper);
    # 642-660 once a reply's kept and refused tool calls took no task. Without the answer reading's calls, which
    # swing by ~12 with how often two trials of a task both miss the kept checks: 626-627 → 610-614 → 596-606.
    assert calls / llm_calls <= 675
