"""Where a sweep's wall time beyond the Little's-law bound goes: a timeline from timestamps, not guesses.

Runs the same sweep as ``sweep_scaling.py`` (``sim/echo`` agents and the ``sim/judge``, a fixed latency, a
separate ``sim serve`` or, with ``--embedded``, the runner's embedded sim child) with a ``sitecustomize``
on the children's path that stamps, on the system-wide monotonic clock (``CLOCK_MONOTONIC``: comparable
across processes):

- in every sim process (the separate server or the embedded child), each chat request's arrival and its
  reply (``SimServer._handle_chat``'s entry and return): ``handler_over_ms`` is the mean time in the handler
  beyond the latency (the sim's own share of each round), ``round_over_ms`` the mean round (the active span
  over its ⌈units / concurrency⌉ + 1 waves) beyond the latency, ``agent_gap_ms`` the mean time from an agent's
  reply to its worker's next request (the runner's part of a round);
- in the sweep process, its interpreter's first Python code (``sitecustomize`` itself), the embedded sim's
  start (``SimProcessProvider.start``'s call and return) and its ``atexit``.

The parent stamps the spawn and the ``wait4`` return. From those: spawn → first request arrival (start-up),
the steady state (requests in flight at the sim over time: do the slots stay full? the gap between a reply
and the next arrival), last reply → exit (the end-of-sweep work and the interpreter's teardown).

    .venv/bin/python bench/sweep_timeline.py --units 10000 --concurrency 64 [--embedded] [--repeats 3]

``--impl DIR`` runs the sweep (and its sims) from another tree of the package (a ``git worktree`` of an
earlier commit), for before/after in one invocation; ``--flags '...'`` (repeatable) runs the sweep with other
flags (``--flags '' --flags '--ledger-sync flush'``: what the ledger's flush to disk costs), each variant in turn.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import orjson

from mpcbench_async.testing import write_workspace

TASKS = 10
SITECUSTOMIZE = '''
import atexit, os, sys, time
_LOG = os.environ["SWEEP_TIMELINE_DIR"] + f"/{os.getpid()}.jsonl"
_EVENTS = [("python", time.monotonic())]
def _flush():
    _EVENTS.append(("atexit", time.monotonic()))
    with open(_LOG, "w") as f:
        f.write("\\n".join(f"{name} {t!r}" for name, t in _EVENTS))
atexit.register(_flush)
_argv = " ".join(getattr(sys, "orig_argv", sys.argv))
if "sim serve" in _argv or "_sim_child" in _argv:
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    _exit = os._exit  # the sim child ends with it, skipping the exit handlers
    def _stamped_exit(code):
        _flush()
        _exit(code)
    os._exit = _stamped_exit
    from mpcbench_async.sim import _server
    _handle = _server.SimServer._handle_chat
    async def _stamped(self, request, raw):
        arrived = time.monotonic()
        role = "agent" if request.headers.get("Idempotency-Key", "").startswith("run-") else "judge"
        _EVENTS.append(("in", arrived))
        try:
            return await _handle(self, request, raw)
        finally:
            replied = time.monotonic()
            _EVENTS.append(("out", replied))
            _EVENTS.append(("handled", replied - arrived))
            _EVENTS.append((role + "_in", arrived))
            _EVENTS.append((role + "_out", replied))
    _server.SimServer._handle_chat = _stamped
elif " sweep " in _argv:
    import inspect
    _EVENTS.append(("role_sweep", time.monotonic()))
    def _stamp(owner, attr, name):
        """Stamp ``owner.attr``'s call (``name``) and return (``name_end``), sync or async."""
        original = getattr(owner, attr, None)
        if original is None:
            return
        if inspect.iscoroutinefunction(original):
            async def wrapper(*args, **kwargs):
                _EVENTS.append((name, time.monotonic()))
                try:
                    return await original(*args, **kwargs)
                finally:
                    _EVENTS.append((name + "_end", time.monotonic()))
        else:
            def wrapper(*args, **kwargs):
                _EVENTS.append((name, time.monotonic()))
                try:
                    return original(*args, **kwargs)
                finally:
                    _EVENTS.append((name + "_end", time.monotonic()))
        setattr(owner, attr, wrapper)
    # what the command imports anyway, imported here to patch it
    import mpcbench_async.sweep as _sweep_package
    from mpcbench_async.sim import _process
    from mpcbench_async.sweep import _job
    from mpcbench_async.runner import _runner
    _EVENTS.append(("imports_end", time.monotonic()))
    _stamp(_process.SimProcessProvider, "spawn", "sim_spawn")
    _stamp(_process.SimProcessProvider, "start", "sim_start")
    for _attr in ("run_sweep", "_inputs", "_checked_start", "_locked", "write_baselines", "_write_summary"):
        _stamp(_job, _attr, _attr.strip("_"))
    _stamp(_runner.Runner, "run_suites", "run_suites")
    _sweep_package.run_sweep = _job.run_sweep
'''


def one_run(impl: Path, tmp: Path, embedded: bool, units: int, concurrency: int, latency: float,
            flags: list[str]) -> dict[str, float]:
    """One sweep (with a sim of its own when apart); its timeline's figures (seconds from the spawn)."""
    stamps = Path(tempfile.mkdtemp(prefix="timeline", dir=tmp))
    site = stamps / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {**os.environ, "PYTHONPATH": f"{site}:{impl}", "SWEEP_TIMELINE_DIR": str(stamps)}
    sim = None
    base_url = None
    if not embedded:
        sim = subprocess.Popen([sys.executable, "-m", "mpcbench_async", "sim", "serve", "--port", "0",
                                "--latency-ms", str(latency * 1000)], stdout=subprocess.PIPE, text=True, env=env,
                               cwd=impl)
        assert sim.stdout is not None
        base_url = sim.stdout.readline().split()[-1]
    query = "" if base_url else f"?latency_ms={latency * 1000:g}"
    root = write_workspace(stamps / "ws", base_url=base_url, tasks=TASKS, agent_models=[f"sim/echo{query}"],
                           judge_models=[f"sim/judge{query}"],
                           defaults={"limits": {"max_concurrency": concurrency * 2}})
    cmd = [sys.executable, "-m", "mpcbench_async", "sweep", "--config", str(root / "model_config.json"),
           "--prompts", str(root / "prompt_config.json"), "--tasks-dir", str(root / "tasks"),
           "--data-dir", str(root / "data"), "--trials", str(units // TASKS), "--concurrency", str(concurrency),
           "--out", str(stamps / "out"), "--quiet", *flags]
    try:
        spawn = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=impl)
        _, status, usage = os.wait4(proc.pid, 0)
        end = time.monotonic()
    finally:
        if sim is not None:
            sim.terminate()
            sim.wait()
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(proc.stderr.read().decode()[-3000:] if proc.stderr else "sweep failed")
    return figures(stamps, spawn, end, units, concurrency, latency, usage.ru_utime + usage.ru_stime)


class Events(NamedTuple):
    """What the stamps say: the sweep process's named stamps; every sim process's arrival and reply times and the
    agents' alone (sorted); each request's time in the sim's handler (arrival to reply)."""

    named: dict[str, float]
    arrivals: list[float]
    replies: list[float]
    agent_arrivals: list[float]
    agent_replies: list[float]
    handled: list[float]


def read_events(stamps: Path) -> Events:
    """The stamps of one run (``Events``)."""
    named: dict[str, float] = {}
    arrivals: list[float] = []
    replies: list[float] = []
    agent_arrivals: list[float] = []
    agent_replies: list[float] = []
    handled: list[float] = []
    for path in stamps.glob("*.jsonl"):
        events = [(name, float(t)) for name, t in (line.split() for line in path.read_text().splitlines())]
        if any(name == "role_sweep" for name, _ in events):
            for name, t in events:
                named.setdefault(name, t)  # the first: a later call (``start`` spawns again, a no-op) keeps it
        arrivals += [t for name, t in events if name == "in"]
        replies += [t for name, t in events if name == "out"]
        handled += [t for name, t in events if name == "handled"]
        agent_arrivals += [t for name, t in events if name == "agent_in"]
        agent_replies += [t for name, t in events if name == "agent_out"]
    return Events(named, sorted(arrivals), sorted(replies), sorted(agent_arrivals), sorted(agent_replies),
                  sorted(handled))


def figures(stamps: Path, spawn: float, end: float, units: int, concurrency: int, latency: float,
            cpu: float) -> dict[str, float]:
    """Start-up, steady state and tail of one sweep, from its stamps."""
    named, arrivals, replies, agent_arrivals, agent_replies, handled = read_events(stamps)
    first, last = arrivals[0], replies[-1]
    bound = math.ceil(units / concurrency) * latency + latency
    # requests in flight at the sim, sampled at every arrival of the steady state (the first and last wave out)
    events = sorted([(t, 1) for t in arrivals] + [(t, -1) for t in replies])
    in_flight, samples = 0, []
    for t, step in events:
        in_flight += step
        if step == 1 and first + latency < t < last - 2 * latency:
            samples.append(in_flight)
    result = {
        "wall": end - spawn, "bound": bound, "ratio": (end - spawn) / bound, "cpu": cpu,
        "python": named["python"] - spawn,
        "first_request": first - spawn,
        "active": last - first,
        "last_reply_to_atexit": named["atexit"] - last,
        "teardown": end - named["atexit"],
        "in_flight_mean": statistics.fmean(samples) if samples else float("nan"),
        "in_flight_min": min(samples) if samples else float("nan"),
        "requests": len(arrivals),
        # the sim's own share of each round: its handler's time beyond the latency (parsing waits, the policy, the
        # reply), and a whole round (a request's arrival to the same worker's next) against the latency
        "handler_over_ms": (statistics.fmean(handled) - latency) * 1000,
        "handler_over_p90_ms": (handled[len(handled) * 9 // 10] - latency) * 1000,
        "round_over_ms": ((last - first) / (math.ceil(units / concurrency) + 1) - latency) * 1000,
        # an agent's reply (leaving the handler) to its worker's next request (entering it): the runner's part of a
        # round (the reply's processing, the records, the next unit, the ledger's commit) and both sides' HTTP.
        # Arrival i follows the reply that freed its worker, i − concurrency: the mean does not depend on which.
        "agent_gap_ms": statistics.fmean(a - r for a, r in zip(agent_arrivals[concurrency:], agent_replies,
                                                                    strict=False)) * 1000,
    }
    for name in ("imports_end", "run_sweep", "sim_spawn", "inputs", "inputs_end", "checked_start_end",
                 "run_suites", "sim_start", "sim_start_end", "run_suites_end", "write_baselines",
                 "write_baselines_end", "write_summary", "write_summary_end", "run_sweep_end"):
        if name in named:
            result[name] = named[name] - spawn
    if "run_suites_end" in named:  # the last reply's processing, records and the runner's own end
        result["last_reply_to_suites_end"] = named["run_suites_end"] - last
    # the active span against its own bound: the requests' waves at the sim
    result["active_excess"] = result["active"] - (bound)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--embedded", action="store_true")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--flags", action="append", default=[],
                        help="the sweep command's extra flags, as one string (repeat: each set is run in turn, "
                             "interleaved like the trees; e.g. --flags '' --flags '--ledger-sync flush')")
    parser.add_argument("--impl", type=Path, action="append",
                        help="a tree of the package to run (repeat for before/after; default this one)")
    args = parser.parse_args()
    impls = args.impl or [Path(__file__).resolve().parent.parent]
    latency = args.latency_ms / 1000
    variants = [(impl, flags) for impl in impls for flags in (args.flags or [""])]
    results: dict[tuple[Path, str], list[dict[str, float]]] = {variant: [] for variant in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            for impl, flags in variants:
                r = one_run(impl, Path(tmp), args.embedded, args.units, args.concurrency, latency, flags.split())
                results[(impl, flags)].append(r)
                print(impl, flags, orjson.dumps(r).decode(), file=sys.stderr, flush=True)
    keys = list(dict.fromkeys(key for runs in results.values() for r in runs for key in r))
    print("| figure | " + " | ".join(f"{impl} {flags}".strip() for impl, flags in variants) + " |")
    print("|---|" + "---:|" * len(variants))
    for key in keys:
        cells = []
        for variant in variants:
            values = sorted(r[key] for r in results[variant] if key in r)
            cells.append(f"{statistics.median(values):.2f} ({values[0]:.2f}–{values[-1]:.2f})" if values else "–")
        print(f"| {key} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
