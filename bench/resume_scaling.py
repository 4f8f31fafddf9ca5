"""Memory and resume at 10k and 100k agent runs, with both task × trial splits, two source trees side by side.

For each tree (this checkout, and ``--impl DIR``: e.g. a ``git worktree`` of the commit before), each split
(10 tasks × N/10 trials and 100 tasks × N/100 trials) and each size: a real ``mpcbench-async sweep`` of ``sim/echo``
agents judged by ``sim/judge`` (one sim in its own process, no latency, ``--concurrency 128``) in a child process,
its peak RSS from ``wait4``; then ``--repeats`` reruns of the same command, the two trees' interleaved, which
find every unit done (a resume with nothing to do): wall, CPU (user + system) and peak RSS each, medians; then
``summarize`` alone on the same directory. This tree's ``summary.json`` after the no-op resumes is checked against
what the ``--impl`` tree's ``summarize`` computes on the same directory (every figure equal; the wall time is the
manifest's, so it must agree too). Children run with bytecode caching on, from inside their
tree (``python -c`` and ``-m`` put the working directory ahead of ``PYTHONPATH``).

    .venv/bin/python bench/resume_scaling.py --impl /tmp/before --sizes 10000,100000 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson

from mpcbench_async.perf import sim_subprocess
from mpcbench_async.testing import write_workspace

SPLITS = (10, 100)  # tasks; trials = runs / tasks


def timed(args: list[str], impl: Path) -> tuple[float, float, float, bytes]:
    """Run ``python ARGS`` from inside ``impl``; (wall s, CPU s = user + system, peak RSS MiB (``wait4``), stdout)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(impl)}
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, *args], env=env, cwd=impl, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"child failed: {' '.join(args)}\n{err.read().decode()[-2000:]}")
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read()


def sweep_args(root: Path, out: Path, trials: int) -> list[str]:
    return ["-m", "mpcbench_async", "sweep", "--config", str(root / "model_config.json"),
            "--prompts", str(root / "prompt_config.json"), "--tasks-dir", str(root / "tasks"),
            "--data-dir", str(root / "data"), "--trials", str(trials), "--concurrency", "128", "--out", str(out),
            "--quiet"]


def summary_of(out: Path, impl: Path) -> dict[str, object]:
    """The summary ``impl`` computes for ``out``, as JSON (nothing written)."""
    code = ("import sys, msgspec; from mpcbench_async.sweep import summarize; "
            f"sys.stdout.buffer.write(msgspec.json.encode(summarize({str(out)!r})))")
    return orjson.loads(timed(["-c", code], impl)[3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--impl", type=Path, required=True, help="the other source tree (the 'before')")
    parser.add_argument("--sizes", default="10000,100000", help="agent runs per sweep")
    parser.add_argument("--repeats", type=int, default=3, help="no-op resumes per sweep")
    parser.add_argument("--work", type=Path, default=None, help="keep the sweeps here (default: a temporary dir)")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    trees = {"this checkout": here, "before (--impl)": args.impl.resolve()}
    rows: list[tuple[object, ...]] = []
    checks: list[str] = []
    with sim_subprocess(["--latency-ms", "0"]) as base_url, tempfile.TemporaryDirectory(prefix="resume-") as tmp:
        work = args.work or Path(tmp)
        for tasks in SPLITS:
            root = write_workspace(work / f"ws{tasks}", base_url=base_url, tasks=tasks, agent_models=["sim/echo"],
                                   judge_models=["sim/judge"], defaults={"limits": {"max_concurrency": 512}})
            for runs in (int(s) for s in args.sizes.split(",")):
                outs = {name: work / f"{'after' if impl == here else 'before'}-{tasks}x{runs // tasks}"
                        for name, impl in trees.items()}
                sweeps = {name: timed(sweep_args(root, outs[name], runs // tasks), impl)
                          for name, impl in trees.items()}
                resumes: dict[str, list[tuple[float, float, float, bytes]]] = {name: [] for name in trees}
                for _ in range(args.repeats):  # interleaved: a change of load hits both trees alike
                    for name, impl in trees.items():
                        resumes[name].append(timed(sweep_args(root, outs[name], runs // tasks), impl))
                for name, impl in trees.items():
                    out = outs[name]
                    summarize = timed(["-c", f"from mpcbench_async.sweep import summarize; summarize({str(out)!r})"],
                                      impl)
                    if impl == here:
                        written = orjson.loads((out / "summary.json").read_bytes())
                        same = written == summary_of(out, trees["before (--impl)"])
                        checks.append(f"{tasks} tasks × {runs // tasks:,} trials: summary.json after the no-op "
                                      f"resume {'==' if same else '!='} the --impl tree's summarize of that directory")
                    rows.append((runs, tasks, name, sweeps[name][0], sweeps[name][2],
                                 statistics.median(r[0] for r in resumes[name]),
                                 statistics.median(r[1] for r in resumes[name]),
                                 statistics.median(r[2] for r in resumes[name]), summarize[0], summarize[1]))
                    print(rows[-1], file=sys.stderr, flush=True)
    print(f"#### Memory and resume — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, load average at "
          f"the end {os.getloadavg()[0]:.1f}. Command: `python bench/resume_scaling.py {' '.join(sys.argv[1:])}`. "
          f"Sweeps of sim/echo + sim/judge, no latency, concurrency 128; no-op resume: medians of {args.repeats}.\n")
    print("| agent runs | tasks × trials | tree | sweep wall s | sweep peak RSS MiB | no-op resume wall s "
          "| resume CPU s | resume peak RSS MiB | `summarize` wall s | `summarize` CPU s |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for runs, tasks, name, wall, rss, r_wall, r_cpu, r_rss, s_wall, s_cpu in rows:
        print(f"| {runs:,} | {tasks} × {runs // tasks:,} | {name} | {wall:.1f} | {rss:.0f} | {r_wall:.2f} | "
              f"{r_cpu:.2f} | {r_rss:.0f} | {s_wall:.2f} | {s_cpu:.2f} |")
    print("\n" + "\n".join(f"- {line}" for line in checks))


if __name__ == "__main__":
    main()
