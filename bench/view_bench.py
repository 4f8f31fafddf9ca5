"""Viewer cost at 100k runs: time to the first page and peak RSS of ``mpcbench-async view``, cold and warm.

Writes a synthetic finished sweep in the shapes the runner writes: N agent runs (4 agent models,
250 tasks of 3 types, N/1000 trials) whose run logs hold 2-8 tool calls with their arguments and
results (~1-3 KB of JSON each), the final answer and rationale, 1-3 deterministic checks; two judges
per run with both axes' scores and justifications; one ``calls.jsonl`` line per agent turn and per
judge call; ``experiment_keys.txt``, ``manifest.json``, and ``summary.json`` / ``summary.md`` from
``mpcbench-async summarize`` (as a finished sweep has them). Lines are assembled from pre-serialised
pieces (``orjson.Fragment``), so the records of 100k runs (~1.2 GB) take about 20 s to write.

Each measurement starts ``mpcbench-async view DIR --port 0`` in a child process and times from
process start until ``/`` has been answered (status 200, body read), then until ``/runs`` has been
answered with the runs table (not the page shown while the index is built in the background), reading
the child's CPU time and peak RSS (``VmHWM`` of ``/proc/PID/status``; psutil is not a dependency) at
each, and stops it.
*Cold* removes the viewer's index first (``DIR/.view``), *warm* finds the one the previous cold
start cached; a third, cold start makes ``summary.json`` older than ``runs.jsonl`` for its duration
(an unfinished sweep's case: the viewer computes the summary from its one read of the records).
The three starts alternate; medians of ``--repeats``. Also reported, on the warm
viewer: the last page of ``/runs``, a filtered ``/runs`` and one ``/run/KEY`` page. ``--impl DIR`` measures another
source tree (e.g. a ``git worktree`` of the commit before) beside this one, their starts alternating; every viewer
runs with bytecode caching on, as an install does.

    .venv/bin/python bench/view_bench.py --runs 100000 --repeats 3 --out bench/RESULTS.md
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

MODELS = ("openai/gpt-4.1-mini", "anthropic/claude-sonnet-4", "google/gemini-2.5-flash", "qwen/qwen3-32b")
JUDGES = ("openai/gpt-4.1", "anthropic/claude-opus-4")
TASK_TYPES = ("planning", "email_reply", "document_generation")
TASKS = 250
INDEX_DIR = ".view"  # where the viewer caches its index inside the sweep directory
CLI = [sys.executable, "-m", "mpcbench_async"]
COLD, WARM = "cold (no index; fresh summary.json)", "warm (index cached)"
STALE = "cold, summary.json stale (the viewer summarizes)"

# Tool calls as a real agent makes them: a search, a read, a listing, with results of realistic size.
_PEOPLE = [{"id": f"U{i}", "name": f"Person {i}", "email": f"person{i}@example.com", "title": "Engineer"}
           for i in range(6)]
_TOOLS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("Slack.search_messages", {"query": "release review", "limit": 10},
     {"messages": [{"id": f"m{i}", "channel_id": "C1", "user_id": f"U{i % 6}",
                    "timestamp": f"2026-03-2{i % 9}T10:00:00Z",
                    "text": f"Release review for milestone {i}: 30 minutes, agenda in the doc, owners please confirm."}
                   for i in range(8)], "total_matches": 8}),
    ("Gmail.SearchThreads", {"query": "customer ETA", "max_results": 5},
     {"threads": [{"id": f"th{i}", "subject": f"Re: ETA for feature {i}", "snippet": "Could you tell us when the "
                   "export feature ships? Our team plans the migration around it. " * 2,
                   "participants": ["ana@example.com", "cx@customer.example"]} for i in range(5)],
      "total_matches": 5}),
    ("GoogleCalendar.ListEvents", {"start": "2026-03-30T00:00:00Z", "end": "2026-04-03T23:59:59Z"},
     {"events": [{"id": f"e{i}", "title": f"Standup {i}", "start": f"2026-03-3{i % 2}T09:{i:02d}:00Z",
                  "end": f"2026-03-3{i % 2}T09:{i + 15:02d}:00Z", "attendees": ["ana@example.com", "ben@example.com"]}
                 for i in range(10)]}),
    ("Contacts.search", {"query": "Person"}, {"contacts": _PEOPLE}),
    ("Jira.SearchIssuesWithJql", {"jql": "project = AB AND status != Done ORDER BY updated DESC", "max_results": 20},
     {"issues": [{"key": f"AB-{i}", "summary": f"Export feature part {i}", "status": "In Progress",
                  "assignee": f"Person {i % 6}", "due": "2026-04-10"} for i in range(6)], "total": 6}),
    ("GoogleDrive.gdrive_search", {"query": "release playbook", "limit": 10},
     {"files": [{"id": f"f{i}", "name": f"Release playbook v{i}.docx", "modified": "2026-03-20T12:00:00Z",
                 "owner": "ana@example.com"} for i in range(4)], "total_matches": 4}),
]
_CALLS = [orjson.Fragment(orjson.dumps({"tool_name": name, "arguments": args, "result": result,
                                        "result_bytes": len(orjson.dumps(result)), "truncated": False,
                                        "timed_out": False}))
          for name, args, result in _TOOLS]
_STEPS = [f"{name}({orjson.dumps(args).decode()})" for name, args, _ in _TOOLS]
_ANSWER = ("Proposed slots for the release review (30 minutes, all four participants free): Tuesday 31 March "
           "14:00-14:30 and Wednesday 1 April 10:00-10:30 Europe/London. Both avoid the standups and the "
           "planning block found in the calendar; Ana confirmed the agenda in #team. ")
_JUSTIFY = ("The answer proposes two slots that are free for every participant in the calendar results, "
            "within working hours and the requested week, and it names the meeting's length; one claim about "
            "the agenda is supported by the Slack search result. ")
_CHECKS = [{"name": "planning.slots_free", "status": "pass", "detail": "2 of 2 proposed slot(s) are free for all "
            "4 participant(s)"},
           {"name": "planning.duration", "status": "fail", "detail": "expected 30 min, the answer proposes 45 min"},
           {"name": "report.metrics_in_sources", "status": "n/a", "detail": "n/a: the answer quotes no percentage"}]


def _draw(i: int, salt: str, n: int) -> int:
    """A deterministic pseudo-random integer in [0, n) for record ``i``."""
    return int.from_bytes(hashlib.blake2b(f"{salt}{i}".encode(), digest_size=4).digest(), "big") % n


def write_sweep(out: Path, runs: int) -> None:
    """A finished sweep of ``runs`` agent runs, each judged by both judges."""
    out.mkdir(parents=True, exist_ok=True)
    trials = max(1, runs // (len(MODELS) * TASKS))
    keys: list[str] = []
    t0 = 1_790_000_000.0
    with (out / "runs.jsonl").open("wb") as rf, (out / "judgements.jsonl").open("wb") as jf, \
            (out / "calls.jsonl").open("wb") as cf:
        for i in range(runs):
            model, task = MODELS[i % len(MODELS)], (i // len(MODELS)) % TASKS
            trial = i // (len(MODELS) * TASKS)
            task_type, task_id, key = TASK_TYPES[task % 3], f"t{task:03d}", f"run-{i:016x}"
            tools = [(i + k) % len(_TOOLS) for k in range(2 + _draw(i, "n", 7))]
            start = t0 + i * 0.5
            usage = {"prompt_tokens": 2000 * (len(tools) + 1), "completion_tokens": 150 * (len(tools) + 1)}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            run = {"task_id": task_id, "task_type": task_type, "user_prompt": f"Task {task_id}: find a 30-minute "
                   "slot next week for the release review with Ana, Ben, Chen and Dara.",
                   "tool_trace_steps": [f"Step {n + 1}: {_STEPS[t]}" for n, t in enumerate(tools)],
                   "raw_tool_calls": [_CALLS[t] for t in tools], "final_answer": f"{_ANSWER}(run {i})",
                   "rationale": "Read the calendar and the participants' contacts, then chose the free slots.",
                   "scenario_id": f"sc_{task % 10}", "model": model, "stop_reason": "final", "usage": usage,
                   "timings": {"total_s": 4.2, "model_s": 3.9, "tools_s": 0.3}, "key": key,
                   "turns": len(tools) + 1, "cost_usd": 0.0021, "final_answer_format": "json", "error": None,
                   "error_class": None, "retryable": False}
            record = {"key": key, "status": "ok", "retryable": False, "error_class": None, "error_message": None,
                      "started_at": start, "finished_at": start + 4.2, "kind": "agent_run", "task_id": task_id,
                      "task_type": task_type, "scenario_id": run["scenario_id"], "model": model, "trial": trial,
                      "run": run, "checks": _CHECKS[:1 + _draw(i, "c", 3)]}
            rf.write(orjson.dumps(record) + b"\n")
            for turn in range(len(tools) + 1):
                cf.write(orjson.dumps({"model": model, "key": f"{key}/turn{turn}", "status": "ok",
                                       "started_at": start + turn * 0.6, "latency_s": 0.55, "queued_s": 0.0,
                                       "retry_wait_s": 0.0, "usage": {"prompt_tokens": 2000, "completion_tokens": 150,
                                                                      "total_tokens": 2150},
                                       "cost_usd": 0.0003}) + b"\n")
            keys.append(key)
            for j, judge in enumerate(JUDGES):
                judge_key = f"judge-{i:016x}{j}"
                keys.append(judge_key)
                scores = {axis: {"score": _draw(i, f"{axis}{j}", 6), "justification": _JUSTIFY}
                          for axis in ("answer_requirements_satisfaction", "source_grounded_reasoning")}
                judgement = {"task_id": task_id, "scenario_id": run["scenario_id"], "agent_model": model,
                             "judge_model": judge, "verdict": "scored", "scores": scores, "attempts": 1, "problems": [],
                             "usage": {"prompt_tokens": 2400, "completion_tokens": 220, "total_tokens": 2620},
                             "cost_usd": 0.004, "error": None, "error_class": None, "retryable": False}
                jf.write(orjson.dumps({"key": judge_key, "status": "ok", "retryable": False, "error_class": None,
                                       "error_message": None, "started_at": start + 5 + j,
                                       "finished_at": start + 6 + j, "kind": "judge", "run_key": key,
                                       "task_id": task_id, "task_type": task_type, "agent_model": model,
                                       "judge_model": judge, "trial": trial, "judgement": judgement}) + b"\n")
                cf.write(orjson.dumps({"model": judge, "key": f"{judge_key}/try1", "status": "ok",
                                       "started_at": start + 5 + j, "latency_s": 0.9,
                                       "usage": {"prompt_tokens": 2400, "completion_tokens": 220,
                                                 "total_tokens": 2620}, "cost_usd": 0.004}) + b"\n")
    (out / "experiment_keys.txt").write_text("".join(f"{k}\n" for k in sorted(keys)))
    began = datetime.fromtimestamp(t0, UTC)
    (out / "manifest.json").write_bytes(orjson.dumps({
        "command": "mpcbench-async sweep (synthetic: bench/view_bench.py)", "config_hash": "0" * 16,
        "prompts_hash": "0" * 16, "versions": {"python": platform.python_version()},
        "started_at": began.isoformat(), "finished_at": (began + timedelta(seconds=runs * 0.5 + 10)).isoformat(),
        "agent_models": list(MODELS), "judge_models": list(JUDGES), "tasks": [f"t{t:03d}" for t in range(TASKS)],
        "trials": trials, "units": {"agent_run": runs, "judge": runs * len(JUDGES)}}, option=orjson.OPT_INDENT_2))
    subprocess.run([*CLI, "summarize", str(out)], check=True, stdout=subprocess.DEVNULL)


def _peak_rss_mib(pid: int) -> float:
    """The process's peak resident set size so far (``VmHWM``), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM in /proc/{pid}/status")


def _cpu_s(pid: int) -> float:
    """The process's CPU time so far (user + system, ``/proc/PID/stat``): what the load of a shared machine
    does not inflate, unlike wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _get(url: str) -> tuple[float, bytes]:
    """Seconds to fetch ``url`` completely (it must answer 200), and its body."""
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as response:
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status}")
    return time.perf_counter() - start, body


def _until_indexed(url: str) -> None:
    """Fetch ``url`` until it is the page itself, not the one shown while the index is built (each request
    waits a moment server-side for the build, so this is no busy loop)."""
    while b'id="indexing"' in _get(url)[1]:
        pass


def start_viewer(out: Path, impl: Path | None = None) -> tuple[subprocess.Popen[bytes], str, float]:
    """Start the viewer (``impl``: of that source tree); its process, base URL and the seconds until it printed
    that URL. Bytecode caching is on, as in an install."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if impl is not None:  # run from inside it: ``-m`` puts the working directory ahead of PYTHONPATH
        env["PYTHONPATH"] = str(impl)
    start = time.perf_counter()
    proc = subprocess.Popen([*CLI, "view", str(out), "--port", "0"], stdout=subprocess.PIPE, env=env, cwd=impl)
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=600):
            proc.kill()
            raise RuntimeError("the viewer printed nothing within 600 s")
    line = proc.stdout.readline().decode().strip()
    if not line.startswith("viewer: http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"unexpected first line from the viewer: {line!r}")
    return proc, line.removeprefix("viewer: "), time.perf_counter() - start


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def measure(out: Path, *, cold: bool, run_key: str, stale_summary: bool = False,
            impl: Path | None = None) -> dict[str, float]:
    """One viewer start: seconds to the URL line, to ``/`` answered and to ``/runs`` answered from the index (CPU
    time and peak RSS at each); on a warm start, a few more pages. ``stale_summary``: summary.json is made older
    than runs.jsonl for this start (its times restored after), so the viewer computes the summary itself."""
    if cold:
        shutil.rmtree(out / INDEX_DIR, ignore_errors=True)
    if stale_summary:
        summary, times = out / "summary.json", (out / "summary.json").stat()
        older = (out / "runs.jsonl").stat().st_mtime_ns - 10**9
        os.utime(summary, ns=(older, older))
        try:
            return measure(out, cold=cold, run_key=run_key, impl=impl)
        finally:
            os.utime(summary, ns=(times.st_atime_ns, times.st_mtime_ns))
    start = time.perf_counter()
    proc, url, printed = start_viewer(out, impl)
    try:
        _until_indexed(url)
        figures = {"printed_s": printed, "first_page_s": time.perf_counter() - start,
                   "first_cpu_s": _cpu_s(proc.pid), "first_rss_mib": _peak_rss_mib(proc.pid)}
        _until_indexed(url + "runs")
        figures |= {"runs_s": time.perf_counter() - start, "cpu_s": _cpu_s(proc.pid),
                    "rss_mib": _peak_rss_mib(proc.pid)}
        if not cold:
            figures |= {"last_page_s": _get(url + "runs?page=1000000")[0],
                        "filtered_s": _get(url + f"runs?model={MODELS[1]}&family=planning&page=20")[0],
                        "run_page_s": _get(url + f"run/{run_key}")[0]}
    finally:
        stop(proc)
    return figures


def render(runs: int, mib: float, rows: dict[str, dict[str, float]], repeats: int, command: str) -> str:
    lines = [f"#### Viewer at {runs:,} runs — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"Linux {platform.release()}. Command: `{command}`. Sweep files: {mib:,.0f} MiB. "
             f"Medians of {repeats}, the three starts (of each tree) alternating; load average at the end "
             f"{os.getloadavg()[0]:.1f}.\n",
             "| start | URL printed s | `/` s | CPU s to `/` | peak RSS MiB to `/` | `/runs` ready s "
             "| CPU s to `/runs` | peak RSS MiB to `/runs` |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {name} | {r['printed_s']:.2f} | {r['first_page_s']:.2f} | {r['first_cpu_s']:.2f} "
              f"| {r['first_rss_mib']:.0f} | {r['runs_s']:.2f} | {r['cpu_s']:.2f} | {r['rss_mib']:.0f} |"
              for name, r in rows.items()]
    warm = {name: r for name, r in rows.items() if WARM in name}
    lines += ["", "| warm viewer page | " + " | ".join(f"{name} s" for name in warm) + " |",
              "|---|" + "---:|" * len(warm)]
    for label, field in (("`/runs`, last page", "last_page_s"), ("`/runs`, filtered by model and family, page 20",
                                                                  "filtered_s"), ("`/run/KEY`", "run_page_s")):
        lines.append(f"| {label} | " + " | ".join(f"{r[field]:.3f}" for r in warm.values()) + " |")
    return "\n".join([*lines, ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100_000, help="agent runs in the synthetic sweep")
    parser.add_argument("--repeats", type=int, default=3, help="cold and warm starts each")
    parser.add_argument("--dir", type=Path, default=None,
                        help="keep the synthetic sweep here (reused when it already holds runs.jsonl)")
    parser.add_argument("--out", type=Path, default=None, help="also append the tables to this file")
    parser.add_argument("--impl", type=Path, default=None,
                        help="another source tree to measure beside this one (e.g. a git worktree of the commit "
                        "before), its starts alternating with this one's")
    args = parser.parse_args()
    trees: dict[str, Path | None] = {"": None} | ({"--impl: ": args.impl.resolve()} if args.impl else {})
    with tempfile.TemporaryDirectory(prefix="view-bench-") as tmp:
        out = args.dir or Path(tmp) / "sweep"
        if not (out / "runs.jsonl").exists():
            began = time.perf_counter()
            write_sweep(out, args.runs)
            print(f"wrote {args.runs:,} runs to {out} in {time.perf_counter() - began:.1f} s", file=sys.stderr)
        mib = sum(p.stat().st_size for p in out.iterdir() if p.is_file()) / 2**20
        run_key = f"run-{args.runs // 2:016x}"  # a run in the middle of runs.jsonl
        samples: dict[str, list[dict[str, float]]] = {f"{tree}{kind}": [] for tree in trees
                                                      for kind in (COLD, WARM, STALE)}
        for _ in range(args.repeats):
            for tree, impl in trees.items():
                samples[f"{tree}{COLD}"].append(measure(out, cold=True, run_key=run_key, impl=impl))
                samples[f"{tree}{WARM}"].append(measure(out, cold=False, run_key=run_key, impl=impl))
                samples[f"{tree}{STALE}"].append(measure(out, cold=True, run_key=run_key, stale_summary=True,
                                                         impl=impl))
        rows = {name: {field: statistics.median(s[field] for s in runs) for field in runs[0]}
                for name, runs in samples.items()}
    text = render(args.runs, mib, rows, args.repeats, f"python bench/view_bench.py {' '.join(sys.argv[1:])}")
    print(text)
    if args.out:
        with args.out.open("a", encoding="utf-8") as fh:
            fh.write("\n" + text)


if __name__ == "__main__":
    main()
