"""``profile endpoint``: requests in flight at the endpoint, and TPOT, at concurrency 16 and 64, trees side by side.

One sim in its own process serves ``sim/echo?latency_ms=100&tokens_per_s=200&output_tokens=8`` (first token after
100 ms, one every 5 ms after: 135 ms a request, so concurrency C could complete C / 0.135 requests/s). Each tree
(this checkout, and every ``--impl DIR``: e.g. ``git worktree``s of earlier commits) profiles it in a child process
(``profile_endpoint``, streamed, ``--duration`` s per level), the trees alternating, ``--repeats`` rounds.
"In flight" is requests/s × mean E2E (Little's law; what a closed loop of C workers should keep at C: a worker
idle between its requests lowers it), as ``bench/profile_crosscheck.py`` counts it for every tool; the level's own
``mean_in_flight`` (this tree's) is the same figure summed request by request. Medians of the rounds.

    .venv/bin/python bench/profile_in_flight.py --impl /tmp/before --repeats 3
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import orjson

from mpcbench_async.perf import sim_subprocess

MODEL = "sim/echo?latency_ms=100&tokens_per_s=200&output_tokens=8"
CODE = """
import sys, anyio, orjson
from mpcbench_async.llm import ModelConfig
from mpcbench_async.perf import profile_endpoint
url, model, c, duration = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
profile = anyio.run(lambda: profile_endpoint(ModelConfig(), model, concurrencies=[c], duration=duration,
                                             sim_base_url=url))
level = profile.levels[0]
print(orjson.dumps({"rps": level.requests_per_s, "e2e": level.e2e.mean, "tpot": level.tpot.p50,
                    "mean_in_flight": getattr(level, "mean_in_flight", None)}).decode())
"""


def one(impl: Path, url: str, concurrency: int, duration: float) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(impl)}
    out = subprocess.run([sys.executable, "-c", CODE, url, MODEL, str(concurrency), str(duration)], env=env,
                         cwd=impl, capture_output=True, check=True, timeout=300).stdout
    return orjson.loads(out.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--impl", type=Path, action="append", default=[], help="another source tree (repeatable)")
    parser.add_argument("--concurrency", default="16,64")
    parser.add_argument("--duration", type=float, default=6.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    trees = {"this checkout": Path(__file__).resolve().parent.parent} | {str(p): p.resolve() for p in args.impl}
    levels = [int(c) for c in args.concurrency.split(",")]
    samples: dict[tuple[str, int], list[dict[str, float]]] = {(t, c): [] for t in trees for c in levels}
    with sim_subprocess([]) as url:
        for _ in range(args.repeats):
            for c in levels:
                for name, impl in trees.items():
                    samples[(name, c)].append(one(impl, url, c, args.duration))
    print(f"#### profile endpoint in flight — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, load average "
          f"at the end {os.getloadavg()[0]:.1f}. Command: `python bench/profile_in_flight.py "
          f"{' '.join(sys.argv[1:])}`. `{MODEL}`, {args.duration:g} s per level; medians of {args.repeats}.\n")
    print("| tree | load | req/s | E2E mean ms | in flight (req/s × E2E) | `mean_in_flight` | TPOT p50 ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (name, c), runs in samples.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("rps", "e2e", "tpot")}
        own = [r["mean_in_flight"] for r in runs if r["mean_in_flight"] is not None]
        own_text = f"{statistics.median(own):.1f}" if own else "–"  # trees before the figure existed: none
        print(f"| {name} | c={c} | {med['rps']:.1f} | {1000 * med['e2e']:.1f} | {med['rps'] * med['e2e']:.1f} | "
              f"{own_text} | {1000 * med['tpot']:.3f} |")


if __name__ == "__main__":
    main()
