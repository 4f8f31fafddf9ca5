"""The three-level MPCBench's own costs: oracle, replay verification, generation and a sim sweep.

Nothing here touches the client's per-call path (the levels suite calls ``LLMClient.chat`` like every suite);
these are the CPU costs the suite adds around the calls: one oracle solve per unit, eleven dictionary tools per
run, one replay per recorded line, a 10x generated set. Medians of ``--repeats`` runs in this process; the
sweep runs ``sim/oracle-agent`` over a generated level-1 set in a fresh output directory each time (calls go
to the embedded sim over loopback HTTP). Needs ``../shared/reference`` for the verify row (skipped without it).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from mpcbench_async._prompts import load_prompts
from mpcbench_async.levels import (
    LevelsInputs,
    generate_level,
    instance_index,
    load_all,
    solve,
    verify_file,
    write_generated,
)
from mpcbench_async.runner import RunChoice
from mpcbench_async.sweep import Output, SweepOptions, run_sweep

REPO = Path(__file__).resolve().parent.parent
UPSTREAM = REPO.parent / "shared" / "reference" / "mpcbench_levels" / "upstream"


def _median_s(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows: list[tuple[str, int, float]] = []
    counts = {1: 200, 2: 150, 3: 100}  # 10x the original's instances per level
    sets = {level: generate_level(level, count, seed=2027) for level, count in counts.items()}
    for level, count in counts.items():
        rows.append((f"generate level {level} (10x the original)", count,
                     _median_s(lambda level=level, count=count: generate_level(level, count, seed=2027),
                               args.repeats)))
    for level, gs in sets.items():
        rows.append((f"oracle, level {level}", len(gs.instances),
                     _median_s(lambda gs=gs: [solve(gs.world, i) for i in gs.instances], args.repeats)))
    prompts = load_prompts(REPO / "prompt_config.json")
    if UPSTREAM.is_dir():
        index = instance_index(load_all(UPSTREAM))
        files = sorted((UPSTREAM / "results").glob("eval_L*.jsonl"))

        def verify() -> None:
            async def all_files() -> None:
                for path in files:
                    await verify_file(path, index, prompts)
            anyio.run(all_files)

        rows.append(("levels verify, the 11 recorded files", 54, _median_s(verify, args.repeats)))
    with tempfile.TemporaryDirectory() as tmp:
        write_generated(sets[1], Path(tmp) / "data")
        runs = iter(range(args.repeats))

        def sweep() -> None:
            out = Path(tmp) / f"out{next(runs)}"
            anyio.run(run_sweep, SweepOptions(
                config=REPO / "model_config.json", prompts=REPO / "prompt_config.json", output=Output(out=out),
                run=RunChoice(suites=["levels"], models=["sim/oracle-agent"]),
                inputs=[LevelsInputs(data=Path(tmp) / "data")], handle_signals=False))

        rows.append(("sweep --suite levels, sim/oracle-agent, level 1", len(sets[1].instances),
                     _median_s(sweep, args.repeats)))
    print("| what | units | median s | ms per unit |\n|---|---:|---:|---:|")
    for what, units, seconds in rows:
        print(f"| {what} | {units} | {seconds:.3f} | {1000 * seconds / units:.2f} |")


if __name__ == "__main__":
    main()
