"""Issue 31's acceptance table, every row measured in one invocation, side by side.

Each row comes from the bench script that measures it, run here as a child process one after the other
(so they do not compete for the 2 cores), its Markdown output parsed for the figures and kept whole under
``--log`` for reference:

- rate limits, headers only and no headers: ``ratelimit_goodput.py --calls 600 --rate 20 --offered 2``;
- whole-runner and native-transport CPU per call ÷ the raw aiohttp floor, loop iterations per request:
  ``cpu_per_call.py``, with the tree of the last commit before that wave (``--wave-before``, default
  ``f81fb83``, unpacked under ``--log`` by ``git archive``) as its "before", so the issue's "≈ 2.5× before the
  last wave" is measured here too, by this bench's method, beside "now"; with ``--instructions``, so the native
  row is judged on instructions per call (valgrind), which the load does not move, its CPU median beside;
- beside it, the same sweep at a real sweep's size (400 trials of the 17 shipped tasks, ~38k calls: start-up and
  the summary's fixed part spread over them), this tree only;
- the whole runner again, ÷ the raw aiohttp floor sending the sweep's own requests (the same bytes: what raw
  aiohttp alone pays to make these calls, ~1.7–2.2× its one short request), at 40 and 400 trials;
- the whole-runner row's marginal call (a 40-trial sweep less a 1-trial one, ÷ the calls between) and the raw
  floor replaying the sweep's own requests: ``runner_breakdown.py``, beside the literal ratio;
- 10k units at 200 ms, concurrency 64, wall ÷ the Little's-law bound, a separate ``sim serve`` and the
  embedded sim: ``sweep_scaling.py`` (and ``--embedded``), three 10k sweeps each, the median; its 10k and
  large sweeps also give the peak memory row (peak RSS of the whole sweep process) and the no-op resume row
  (the same sweep rerun once it finished);
- ``--help`` CPU ÷ the bare interpreter, wheel install: ``startup.py --wheel``;
- ``profile endpoint`` at c=64, requests in flight: ``profile_in_flight.py``;
- the viewer's first page at 100k runs (cold: no index, fresh ``summary.json``): ``view_bench.py``.

"before the last wave" and the goals are the issue's own figures (the whole-runner row also gives this run's
measure of that tree); "now" is this run. ``--scale`` shrinks the
large sizes (the 100k sweep and the viewer's 100k runs) for a machine or a deadline that cannot wait for them;
the table says which sizes ran.

    .venv/bin/python bench/issue31_table.py --log /tmp/issue31
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent


REUSE = False  # --reuse: parse the outputs an earlier run left under --log instead of running the scripts


def run(log: Path, name: str, *args: str) -> tuple[str, str]:
    """Run ``bench/<script> args`` in a child; return its stdout and stderr (both also written under ``log``)."""
    if REUSE:
        return (log / f"{name}.md").read_text(), (log / f"{name}.err").read_text()
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, str(BENCH / args[0]), *args[1:]], capture_output=True, text=True,
                          cwd=BENCH.parent)
    (log / f"{name}.md").write_text(proc.stdout)
    (log / f"{name}.err").write_text(proc.stderr)
    print(f"{name}: {time.perf_counter() - started:.0f} s, exit {proc.returncode}, load {os.getloadavg()[0]:.1f}",
          file=sys.stderr, flush=True)
    if proc.returncode:
        sys.stderr.write(proc.stderr[-3000:])
    return proc.stdout, proc.stderr


def wave_tree(log: Path, commit: str) -> Path:
    """The source tree of ``commit``, unpacked once under ``log`` (``git archive``; a later run reuses it)."""
    tree = log / f"tree-{commit}"
    if not REUSE and not (tree / "mpcbench_async").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(BENCH.parent), "archive", commit], capture_output=True,
                                 check=False)
        if archive.returncode != 0:
            raise SystemExit(f"git archive {commit} failed (a git checkout is needed for --wave-before; "
                             f"'--wave-before none' leaves it out): {archive.stderr.decode().strip()}")
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def rows(markdown: str) -> list[list[str]]:
    """The cells of every Markdown table row of ``markdown``."""
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in markdown.splitlines() if line.startswith("|") and not line.startswith("|---")]


def row(markdown: str, *starts: str) -> list[str]:
    """The first table row whose leading cells start with ``starts``."""
    for cells in rows(markdown):
        if all(cell.startswith(start) for cell, start in zip(cells, starts, strict=False)):
            return cells
    raise SystemExit(f"no row starting {starts} in:\n{markdown}")


def sweep_figures(stderr: str) -> dict[int, dict[str, float]]:
    """Per size, what ``sweep_scaling.py`` printed on its progress line: of a size run more than once, the run of
    the median wall time."""
    runs: dict[int, list[dict[str, float]]] = {}
    for m in re.finditer(r"(\d+) runs: wall +([\d.]+) s .*peak RSS +(\d+) MiB +resume +([\d.]+) s \(CPU ([\d.]+) s, "
                         r"peak RSS (\d+) MiB\) +bound +([\d.]+) s +ratio +([\d.]+) +runner CPU +([\d.]+) s", stderr):
        runs.setdefault(int(m[1]), []).append({
            "wall": float(m[2]), "rss": float(m[3]), "resume": float(m[4]), "resume_cpu": float(m[5]),
            "resume_rss": float(m[6]), "bound": float(m[7]), "ratio": float(m[8]), "cpu": float(m[9])})
    return {size: sorted(found, key=lambda run: run["wall"])[len(found) // 2] for size, found in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply the large sizes (the 100k-unit sweep, the viewer's 100k runs) by this")
    parser.add_argument("--log", type=Path, default=Path("/tmp/issue31_table"), help="each script's output")
    parser.add_argument("--reuse", action="store_true", help="only rebuild the table from the outputs under --log")
    parser.add_argument("--wave-before", default="f81fb83", metavar="COMMIT",
                        help="the last commit before the wave issue 31 measures against, run as cpu_per_call.py's "
                             "'before' (default: f81fb83; 'none' to leave it out)")
    args = parser.parse_args()
    global REUSE
    REUSE = args.reuse
    args.log.mkdir(parents=True, exist_ok=True)
    large = int(100_000 * args.scale)
    start = datetime.now(UTC)
    load_start = os.getloadavg()

    limits, _ = run(args.log, "ratelimit", "ratelimit_goodput.py", "--calls", "600", "--rate", "20", "--offered", "2",
                    "--modes", "headers,no-headers")
    wave = [] if args.wave_before == "none" else ["--before", str(wave_tree(args.log, args.wave_before))]
    # 7 rounds: the raw floor alone spread 97-152 µs per call between runs of one quiet hour, which moved the
    # native row's ratio across its goal at 3 (the client's own CPU held at 138-158 µs)
    cpu, _ = run(args.log, "cpu_per_call", "cpu_per_call.py", *wave, "--calls", "4000", "--concurrency", "64",
                 "--trials", "40", "--embedded-trials", "20", "--large-trials", "400", "--repeats", "7",
                 "--instructions")
    breakdown, _ = run(args.log, "runner_breakdown", "runner_breakdown.py", "--trials", "40", "--concurrency", "64",
                       "--repeats", "3")
    # the 10k sweeps three times each (median wall): one 35-s sweep's ratio to the Little bound moved 1.08-1.11
    # between runs of the same code, across the 1.1 goal
    _, separate_err = run(args.log, "sweep_separate", "sweep_scaling.py", "--sizes", f"10000,10000,10000,{large}",
                          "--latency-ms", "200", "--concurrency", "64", "--sequential-units", "10")
    _, embedded_err = run(args.log, "sweep_embedded", "sweep_scaling.py", "--sizes", "10000,10000,10000",
                          "--latency-ms", "200",
                          "--concurrency", "64", "--embedded", "--sequential-units", "10")
    startup, _ = run(args.log, "startup", "startup.py", "--runs", "20", "--wheel")
    in_flight, _ = run(args.log, "profile_in_flight", "profile_in_flight.py", "--concurrency", "64", "--repeats", "1")
    viewer, _ = run(args.log, "viewer", "view_bench.py", "--runs", str(large), "--repeats", "1")
    load_end = os.getloadavg()

    table: list[tuple[str, str, str, str, bool]] = []
    for mode, title, before in (("headers only", "1-s bucket, limit in x-ratelimit-* headers only",
                                 "94% success, 2.1 429s per success"),
                                ("no headers", "1-s bucket, no headers", "up to 38% failed, 4.0 429s per success")):
        cells = row(limits, title)
        ok, failed, per_success, used = int(cells[2]), cells[3], float(cells[6]), cells[8]
        share = ok / (ok + int(failed.split()[0]))
        if mode == "headers only":
            goal, met = "100% success, < 1% 429s per success, ≥ 95% of the limit used", \
                share == 1 and per_success < 0.01 and int(used.rstrip("%")) >= 95
        else:
            goal, met = "100% success, < 5% 429s per success", share == 1 and per_success < 0.05
        table.append((f"600 calls at 2× a 1-s bucket of 20 req/s, {mode}", before,
                      f"{share:.0%} success, {per_success:.3f} 429s per success, {used} of the limit used", goal, met))

    # cpu_per_call prints the instructions table (valgrind, once) before the CPU table (medians of the rounds)
    counted, _, cpu = cpu.rpartition("| row | code | runner CPU")
    cpu = "| row | code | runner CPU" + cpu
    floor = row(cpu, "raw aiohttp floor")
    native = row(cpu, "LLMClient native", "after")
    sweep = row(cpu, "sweep (oracle agent", "after")
    embedded = row(cpu, "sweep, embedded sim", "after")
    ratio = float(sweep[3].rstrip("×"))
    wave_before, scaled = "≈ 2.5× (issue: 9.3×)", ""
    if args.wave_before != "none":
        old = row(cpu, "sweep (oracle agent", "before")
        wave_before += f"; {old[3]} here ({old[2]} µs, {args.wave_before})"
        share = int(sweep[2]) / int(old[2])
        scaled = f"; {share:.2f}× the before tree's CPU per call, {2.5 * share:.1f}× on the issue's scale"
    marginal = float(row(breakdown, "whole process")[1])
    traffic = float(row(breakdown, "raw aiohttp floor, the sweep's requests")[1])
    table.append(("whole runner, CPU per LLM call in a real sweep ÷ raw aiohttp floor, its one short request (sim "
                  "apart; embedded sim)", wave_before,
                  f"{ratio:.1f}× ({sweep[2]} vs {floor[2]} µs){scaled}; embedded {embedded[3]}", "≤ 3×", ratio <= 3))
    same = int(sweep[2]) / traffic
    large_sweep = [cells for cells in rows(cpu) if cells[0].startswith("sweep, sim apart, 400 trials")]
    real_size = ""
    if large_sweep:  # an older run's output (--reuse) may not have it
        real_size = (f"; a sweep of a real size (400 trials, {large_sweep[0][6]} calls) "
                     f"{int(large_sweep[0][2]) / traffic:.1f}× ({large_sweep[0][2]} µs)")
    table.append(("the same ÷ the raw aiohttp floor sending the sweep's own requests (the same bytes: agents' "
                  "conversations with tools, judges' inputs)", "—",
                  f"{same:.1f}× ({sweep[2]} vs {traffic:.0f} µs, 40 trials){real_size}; a marginal call {marginal:.0f} "
                  f"µs, {marginal / traffic:.1f}×", "≤ 3×", same <= 3))
    native_ratio, iterations = float(native[3].rstrip("×")), float(native[4])
    # Judged on instructions where counted: the load does not move them, while on this shared machine one round's
    # CPU ratio of the same code spread 0.95-1.98× (the floor's own CPU per call 92-172 µs in one run)
    instructions = [cells for cells in rows(counted) if cells[0].startswith("LLMClient native") and cells[1] == "after"]
    counted_ratio = float(instructions[0][3].rstrip("×")) if instructions else native_ratio
    table.append(("native transport CPU per call ÷ raw floor, c=64; event-loop iterations per request",
                  "≈ 1.5× (issue: 1.45–1.85×; 2.0 iterations)",
                  (f"{counted_ratio:.2f}× in instructions ({instructions[0][2]} per call), " if instructions else "")
                  + f"{native_ratio:.2f}× in CPU (median of 7 rounds); {iterations:.3f} iterations (floor {floor[4]})",
                  "≤ 1.3×, ≤ 0.2 iterations", counted_ratio <= 1.3 and iterations <= 0.2))

    apart, inside = sweep_figures(separate_err), sweep_figures(embedded_err)
    little = (apart[10000]["ratio"], inside[10000]["ratio"])
    table.append(("10k units at 200 ms, concurrency 64: wall ÷ Little bound, separate sim / embedded sim",
                  "1.09× / 1.23× (issue: 1.35× / 2.61×)",
                  f"{little[0]:.2f}× / {little[1]:.2f}× (sweep CPU {apart[10000]['cpu']:.0f} / "
                  f"{inside[10000]['cpu']:.0f} s with its embedded sim, bound {apart[10000]['bound']:.1f} s)",
                  "≤ 1.1× / ≤ 1.2×", little[0] <= 1.1 and little[1] <= 1.2))
    small, big = apart[10000]["rss"], apart[large]["rss"]
    table.append((f"peak memory 10k → {large // 1000}k units (whole sweep, 200 ms, c=64)",
                  "56 → 68 MiB (issue: 80 → 202 MiB)", f"{small:.0f} → {big:.0f} MiB ({big / small - 1:+.0%})",
                  "growth ≤ 25%", big / small - 1 <= 0.25))
    resume = apart[large]
    table.append((f"resume with nothing to do, {large // 1000}k units", "3.1 s (issue: 19.2 s)",
                  f"{resume['resume']:.1f} s wall, {resume['resume_cpu']:.1f} s CPU", "≤ 3 s", resume["resume"] <= 3))
    bare = float(row(startup, "this checkout", "python (bare")[3])
    help_ = row(startup, "this checkout", "mpcbench-async --help")
    help_ratio = float(help_[4])
    table.append(("`--help` CPU ÷ bare interpreter (wheel install)", "— (issue: 6.8×)",
                  f"{help_ratio:.1f}× ({help_[3]} vs {bare:.0f} ms)", "≤ 2×", help_ratio <= 2))
    level = row(in_flight, "this checkout", "c=64")
    table.append(("`profile endpoint` at c=64: requests actually in flight", "— (issue: 45 of 64)",
                  f"{float(level[5]):.1f} of 64", "≥ 63 of 64", float(level[5]) >= 63))
    cold = row(viewer, "cold (no index; fresh")
    table.append((f"viewer, {large // 1000}k runs, first page (cold)", "0.67 s (issue: 1.1–1.3 s)",
                  f"{float(cold[2]):.2f} s", "≤ 0.7 s", float(cold[2]) <= 0.7))

    print(f"#### Issue 31 acceptance — {start:%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; load average "
          f"(1/5/15 min) {' / '.join(f'{x:.1f}' for x in load_start)} at the start, "
          f"{' / '.join(f'{x:.1f}' for x in load_end)} at the end. Command: "
          f"`python bench/issue31_table.py {' '.join(sys.argv[1:])}` (large size: {large:,} units). One run of each "
          "script, one after the other; \"before the last wave\" and the goals are the issue's figures, with the "
          "issue's own \"now\" in brackets.\n")
    print("| figure | before the last wave | now | goal | met |")
    print("|---|---|---|---|---|")
    for figure, before, now, goal, met in table:
        print(f"| {figure} | {before} | {now} | {goal} | {'**yes**' if met else '**no**'} |")


if __name__ == "__main__":
    main()
