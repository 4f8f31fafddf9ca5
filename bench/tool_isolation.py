"""Unit isolation under pathological tool calls (issue 25): neighbours' results, and summary-to-exit time.

Two sweeps of the shipped tasks with ``sim/oracle-agent`` (agent) and ``sim/judge`` (judge), each in a
child process running ``mpcbench-async sweep``: a *baseline* with the oracle alone, and a *chaos* sweep that
adds ``sim/chaos-agent``. That policy (registered by this script in the child) answers every task at once,
except one: there its first reply makes ``--calls`` parallel free-slot searches over two thousand years of
every calendar attendee (about 15 s of CPU each on this data, and every day of the range walked), and its
second reply gives up. The script then compares every oracle unit of the two sweeps — status, check
outcomes, every tool result, judge scores — and reports how many differ, and for the chaos sweep the time
from ``main()`` returning (summary written and printed) to the child process's exit (interpreter shutdown
joins every non-daemon thread still running a tool).

    .venv/bin/python bench/tool_isolation.py [--calls 10] [--tool-timeout 30] [--out bench/RESULTS.md]

``--tool-timeout`` changes the time limit of the child's tool pool (30 s by default), as a user of the
library would with ``run_agent(tool_timeout_s=…)`` or ``run_agent(tool_pool=ToolPool(timeout_s=…))``.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
CHAOS_TASK = "sc01_planning"
CHAOS_SCENARIO = "sc01_berth_appointments"
MARK = "SWEEP-RETURNED"


def _child(out: str, models: str, tasks: str, calls: int, timeout: float | None) -> int:
    """Run one sweep in this process with the chaos policy registered; print MARK when ``main`` returns.

    The embedded sim runs in this process (``MPCBENCH_SIM=inprocess``): a policy registered here is unknown to a
    sim child process."""
    sys.path.insert(0, str(REPO))
    os.environ["MPCBENCH_SIM"] = "inprocess"
    from mpcbench_async.cli import main
    from mpcbench_async.mpcbench.tools._calendar import attendee_emails
    from mpcbench_async.sim._policies import Reply
    from mpcbench_async.sim._registry import register_policy

    if timeout is not None:
        from mpcbench_async.mpcbench.tools import ToolPool, _execution

        _execution._default_pool = ToolPool(timeout_s=timeout)
    calendar = orjson.loads((REPO / "data" / f"{CHAOS_SCENARIO}_calendar.json").read_bytes())
    emails = sorted({e for event in calendar["events"] for e in attendee_emails(event)})
    search = {"email_addresses": emails, "start_date": "0001-01-01", "end_date": "2025-01-01",
              "include_weekends": True}

    @register_policy("chaos-agent")
    def chaos(request: dict[str, Any]) -> Reply:
        prompt = " ".join(str(m.get("content") or "") for m in request["messages"] if m.get("role") == "user")
        turns = sum(1 for m in request["messages"] if m.get("role") == "assistant")
        if turns == 0 and "jiwoo" in prompt.lower() and "time slots" in prompt.lower():
            return Reply(tool_calls=[{"name": "GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
                                      "arguments": orjson.dumps(search).decode()} for _ in range(calls)])
        return Reply(content='{"final_answer": "no idea", "rationale": "chaos"}')

    code = main(["sweep", "--models", models, "--judges", "sim/judge", "--out", out, "--quiet",
                 "--config", str(REPO / "model_config.json"), "--prompts", str(REPO / "prompt_config.json"),
                 "--tasks-dir", str(REPO / "tasks"), "--data-dir", str(REPO / "data"),
                 "--scenarios-dir", str(REPO / "scenarios"), "--tasks", tasks])
    print(MARK, flush=True)
    return code


def _sweep(out: Path, models: str, calls: int, timeout: float | None, tasks: str = "*") -> tuple[float, float, int]:
    """(wall s, s from MARK to exit, exit code) of one child sweep."""
    argv = [sys.executable, __file__, "--child", str(out), models, tasks, str(calls)]
    argv += [str(timeout)] if timeout is not None else []
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env=dict(os.environ, PYTHONUNBUFFERED="1"))
    assert child.stdout is not None
    marked = None
    for line in child.stdout:
        if line.strip() == MARK:
            marked = time.perf_counter()
    code = child.wait()
    ended = time.perf_counter()
    return ended - started, ended - (marked or ended), code


def _units(out: Path) -> dict[str, Any]:
    """Per oracle run key: what must not change (status, checks, tool results, judge scores)."""
    runs = [orjson.loads(line) for line in (out / "runs.jsonl").read_bytes().splitlines() if line]
    judged = [orjson.loads(line) for line in (out / "judgements.jsonl").read_bytes().splitlines() if line]
    scores = {j["run_key"]: (j.get("judgement") or {}).get("scores") for j in judged}
    return {r["key"]: {"task": r["task_id"], "status": r["status"], "error": r.get("error_class"),
                       "checks": [(c["name"], c.get("status")) for c in r.get("checks") or []],
                       "tools": [c["result"] for c in ((r.get("run") or {}).get("raw_tool_calls") or [])],
                       "timed_out": sum(c.get("timed_out", False)
                                        for c in ((r.get("run") or {}).get("raw_tool_calls") or [])),
                       "scores": scores.get(r["key"])}
            for r in runs if r["model"] == "sim/oracle-agent"}


def _score(unit: dict[str, Any]) -> str:
    scores = unit["scores"] or {}
    return "/".join(str(scores.get(a, {}).get("score", "-")) for a in ("answer_requirements_satisfaction",
                                                                        "source_grounded_reasoning"))


@dataclass
class Pair:
    """A baseline sweep (oracle only) and a chaos sweep (oracle + the chaos unit) of the same tasks, compared."""

    base_wall: float
    base_exit: float
    base_code: int
    chaos_wall: float
    chaos_exit: float
    chaos_code: int
    before: dict[str, Any]
    after: dict[str, Any]
    differ: list[str]
    chaos_calls: list[dict[str, Any]]
    chaos_status: str


def pair(tmp: Path, calls: int, timeout: float | None, tasks: str = "*") -> Pair:
    """Run the baseline and the chaos sweep of ``tasks`` under ``tmp`` and compare every oracle unit of the two
    (``bench/chaos.py`` runs this as its pathological-tools scenario)."""
    base, chaos = tmp / "base", tmp / "chaos"
    base_wall, base_exit, base_code = _sweep(base, "sim/oracle-agent", calls, timeout, tasks)
    chaos_wall, chaos_exit, chaos_code = _sweep(chaos, "sim/oracle-agent,sim/chaos-agent", calls, timeout, tasks)
    before, after = _units(base), _units(chaos)
    chaos_runs = [orjson.loads(line) for line in (chaos / "runs.jsonl").read_bytes().splitlines() if line]
    hit = [r for r in chaos_runs if r["model"] == "sim/chaos-agent" and r["task_id"] == CHAOS_TASK]
    return Pair(base_wall=base_wall, base_exit=base_exit, base_code=base_code, chaos_wall=chaos_wall,
                chaos_exit=chaos_exit, chaos_code=chaos_code, before=before, after=after,
                differ=sorted(k for k in before if before[k] != after.get(k)),
                chaos_calls=(hit[0].get("run") or {}).get("raw_tool_calls") or [] if hit else [],
                chaos_status=hit[0]["status"] if hit else "-")


def measure(calls: int, timeout: float | None) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        result = pair(Path(tmp), calls, timeout)
        alone_wall, alone_exit, alone_code = _sweep(Path(tmp) / "alone", "sim/chaos-agent", calls, timeout,
                                                    tasks=CHAOS_TASK)
    base_wall, base_exit, base_code = result.base_wall, result.base_exit, result.base_code
    chaos_wall, chaos_exit, chaos_code = result.chaos_wall, result.chaos_exit, result.chaos_code
    before, after, differ, chaos_calls = result.before, result.after, result.differ, result.chaos_calls
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"#### Tool isolation — {stamp}", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. Command: "
             f"`python bench/tool_isolation.py --calls {calls}"
             + (f" --tool-timeout {timeout:g}`" if timeout is not None else "`")
             + f". {len(before)} oracle units; the chaos unit makes {calls} parallel pathological free-slot "
               "searches.", "",
             "| sweep | wall s | main() return → exit s | exit code |", "|---|---:|---:|---:|",
             f"| baseline (oracle only) | {base_wall:.1f} | {base_exit:.2f} | {base_code} |",
             f"| chaos (oracle + chaos unit) | {chaos_wall:.1f} | {chaos_exit:.2f} | {chaos_code} |",
             f"| the chaos unit alone | {alone_wall:.1f} | {alone_exit:.2f} | {alone_code} |", "",
             f"Oracle units whose status, checks, tool results or scores differ: **{len(differ)} of {len(before)}**"
             f" (tool calls timed out in them: baseline {sum(u['timed_out'] for u in before.values())}, chaos "
             f"{sum(u['timed_out'] for u in after.values())}). Chaos unit: status "
             f"{result.chaos_status}, {sum(c.get('timed_out', False) for c in chaos_calls)} of "
             f"{len(chaos_calls)} calls timed out.", ""]
    if differ:
        lines += ["| task | baseline ARS/SGR | chaos ARS/SGR | baseline status | chaos status | chaos timed out |",
                  "|---|---|---|---|---|---:|"]
        lines += [f"| {before[k]['task']} | {_score(before[k])} | {_score(after[k])} | {before[k]['status']} | "
                  f"{after[k]['status']} {after[k]['error'] or ''} | {after[k]['timed_out']} |" for k in differ]
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        out, models, tasks, calls = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
        raise SystemExit(_child(out, models, tasks, calls, float(sys.argv[6]) if len(sys.argv) > 6 else None))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--tool-timeout", type=float, default=None)
    parser.add_argument("--out", type=Path, default=None, help="append the table to this file (else print it)")
    args = parser.parse_args()
    table = measure(args.calls, args.tool_timeout)
    print(table)
    if args.out:
        with args.out.open("a", encoding="utf-8") as handle:
            handle.write("\n" + table + "\n")


if __name__ == "__main__":
    main()
