"""What running tool calls and checks on the event loop first costs the loop (issue 31): normal and pathological.

Built-in tool calls and each answer's checks run inline under ``INLINE_BUDGET_S`` (2 ms) before they move to a
thread (``mpcbench/tools/_threads.py``). This measures, on the shipped tasks and data, in this process:

- **normal**: every tool call the oracle agent makes in a sweep of the shipped tasks (run first, in this process),
  and the checks of each of its answers: the wall time of each on the loop, and how many passed the budget;
- **pathological**: calls and answers that run for seconds or minutes (a free-slot search over two thousand
  years of every attendee, a search of 5,000 query words, a JQL of 5,000 clauses; answers of 16 and 64 KB of dates,
  times and percentages): how long the loop is held before the call moves to a thread — the budget plus the
  overshoot, the work between the budget's end and the next checkpoint.

Wall times (``time.perf_counter``), ``--repeats`` of each; median and max. The machine's load adds to both.

    .venv/bin/python bench/inline_budget.py --repeats 20
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from mpcbench_async.llm import load_model_config
from mpcbench_async.mpcbench import build_plan, load_prompts, run_checks
from mpcbench_async.mpcbench.tools import ToolBackend
from mpcbench_async.mpcbench.tools._calendar import attendee_emails
from mpcbench_async.mpcbench.tools._execution import _call
from mpcbench_async.mpcbench.tools._threads import INLINE_BUDGET_S, Missed, run_inline

REPO = Path(__file__).resolve().parent.parent
MAX_BYTES = 64 * 1024


def held(fn: Callable[[], Any], repeats: int) -> tuple[list[float], int]:
    """Wall ms of each inline attempt of ``fn`` and how many missed the budget."""
    times, missed = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        result = run_inline(fn, INLINE_BUDGET_S, time.monotonic)
        times.append((time.perf_counter() - start) * 1e3)
        missed += isinstance(result, Missed)
    return times, missed


def row(name: str, times: list[float], missed: int, runs: int) -> str:
    return (f"| {name} | {statistics.median(times):.3f} | {max(times):.3f} | {missed}/{runs} |")


def _oracle_runs(out: Path) -> list[dict[str, Any]]:
    """The runs of a sweep of the shipped tasks by ``sim/oracle-agent`` (its embedded sim in this process)."""
    import contextlib
    import io
    import os

    from mpcbench_async.cli import main as cli

    os.environ.setdefault("MPCBENCH_SIM", "inprocess")
    cwd = Path.cwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert 0 == cli(["sweep", "--models", "sim/oracle-agent", "--judges", "sim/judge", "--out", str(out)])
    finally:
        os.chdir(cwd)
    return [orjson.loads(line) for line in (out / "runs.jsonl").read_bytes().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    plan = build_plan(config=load_model_config(REPO / "model_config.json"),
                      prompts=load_prompts(REPO / "prompt_config.json"), tasks_dir=REPO / "tasks",
                      data_dir=REPO / "data", scenarios_dir=REPO / "scenarios", task_glob="*",
                      agent_models=["sim/oracle-agent"], judge_models=["sim/judge"])
    with tempfile.TemporaryDirectory() as tmp:
        runs = _oracle_runs(Path(tmp) / "out")

    lines = ["| on the event loop first | loop held, median ms | max ms | moved to a thread |", "|---|---:|---:|---:|"]
    calls: list[float] = []
    calls_missed = checks_missed = 0
    checks: list[float] = []
    for run in runs:
        task = plan.tasks[run["task_id"]]
        data = plan.data[task.scenario_id]
        backend = ToolBackend(data)
        for call in run["run"]["raw_tool_calls"]:
            arguments = orjson.dumps(call["arguments"]).decode()
            times, missed = held(lambda: _call(backend, call["tool_name"], arguments, MAX_BYTES),  # noqa: B023
                                 args.repeats)
            calls, calls_missed = calls + times, calls_missed + missed
        answer = run["run"]["final_answer"]
        times, missed = held(lambda: run_checks(task, answer, data), args.repeats)  # noqa: B023
        checks, checks_missed = checks + times, checks_missed + missed
    lines.append(row(f"the oracle's tool calls in the shipped sweep ({len(calls) // args.repeats})", calls,
                     calls_missed, len(calls)))
    lines.append(row(f"the checks of its answers ({len(runs)})", checks, checks_missed, len(checks)))

    data = plan.data[next(iter(plan.data))]
    backend = ToolBackend(data)
    emails = sorted({e for event in data.source("calendar").get("events") or () for e in attendee_emails(event)})
    pathological = {
        "free-slot search, 0001-01-01..2025-01-01, every attendee": (
            "GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
            {"email_addresses": emails, "start_date": "0001-01-01", "end_date": "2025-01-01",
             "include_weekends": True}),
        "Slack search of 5,000 query words": (
            "Slack_search_messages", {"query": " ".join(f"word{i}" for i in range(5000))}),
        "JQL of 5,000 clauses": ("Jira_SearchIssuesWithJql", {"jql": " OR ".join(f'text ~ "w{i}"'
                                                                                 for i in range(5000))}),
    }
    for what, (name, arguments) in pathological.items():
        encoded = orjson.dumps(arguments).decode()
        times, missed = held(lambda: _call(backend, name, encoded, MAX_BYTES), args.repeats)  # noqa: B023
        lines.append(row(what, times, missed, len(times)))
    for size in (16_000, 64_000):
        answer = ("Mon Jan 26 10:30-11:30, Tue 27 Jan 12:30–13:30 or 14:00. 12% up, 3 down. " * (size // 70))[:size]
        for family in ("planning", "email_reply", "document_generation"):
            task = next(t for t in plan.tasks.values() if t.task_type == family)
            data = plan.data[task.scenario_id]
            times, missed = held(lambda: run_checks(task, answer, data), args.repeats)  # noqa: B023
            lines.append(row(f"checks of a {size // 1000} KB pathological answer, {family}", times, missed,
                             len(times)))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
