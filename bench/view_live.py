"""A live viewer's look after a running sweep appended a few runs: a full read (what every look cost before the
incremental index) against ``Tail.catch_up`` (only the appended lines read; the summary still recomputed).

Writes ``view_bench``'s synthetic sweep, then alternates, ``--repeats`` times: append ``--append`` new run lines
(copies of the first under new keys), time a full build through a fresh ``Tail`` (``open_index(tail=...)``, as a
look did before), then append as many again and time ``catch_up`` on the Tail that build kept, and ``apply`` of its
patch. Medians; in-process wall and CPU (``time.process_time``) seconds.

    .venv/bin/python bench/view_live.py --runs 20000 --repeats 3
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from view_bench import write_sweep  # noqa: E402

from mpcbench_async.view._build import Tail  # noqa: E402
from mpcbench_async.view._index import SweepIndex, file_stamp, open_index  # noqa: E402

T = TypeVar("T")


def live_key(i: int) -> str:
    return f"run-live{i:012d}"


def append_runs(out: Path, count: int, start: int) -> None:
    first = orjson.loads((out / "runs.jsonl").open("rb").readline())
    keys = [live_key(start + i) for i in range(count)]
    with (out / "runs.jsonl").open("ab") as fh:
        fh.write(b"".join(orjson.dumps({**first, "key": k}) + b"\n" for k in keys))


def timed(fn: Callable[[], T]) -> tuple[T, float, float]:
    """``fn()``, its wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--append", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="view-live-"))
    try:
        run(root / "sweep", args)
    finally:
        shutil.rmtree(root)


def run(out: Path, args: argparse.Namespace) -> None:
    write_sweep(out, args.runs)
    with (out / "experiment_keys.txt").open("a") as fh:  # a sweep lists its keys once, at its start
        fh.write("".join(f"{live_key(i)}\n" for i in range(2 * args.repeats * args.append)))
    mib = sum(p.stat().st_size for p in out.glob("*.jsonl")) / 2**20
    full: list[tuple[float, float]] = []
    tail_: list[tuple[float, float]] = []
    n = 0
    for _ in range(args.repeats):
        append_runs(out, args.append, n)
        n += args.append
        tail = Tail(out)
        index, wall, cpu = timed(partial(open_index, out, tail=tail))
        full.append((wall, cpu))
        append_runs(out, args.append, n)
        n += args.append

        def look(tail: Tail = tail, index: SweepIndex = index) -> bool:
            patch = tail.catch_up(file_stamp(out))
            assert patch is not None and len(patch.runs) == args.append, patch and len(patch.runs)
            return index.apply(patch)

        _, wall, cpu = timed(look)
        tail_.append((wall, cpu))
        index.close()
    med = [(statistics.median(w for w, _ in xs), statistics.median(c for _, c in xs)) for xs in (full, tail_)]
    print(f"{args.runs} runs, {mib:.0f} MiB of JSONL, {args.append} runs appended per look, medians of {args.repeats}")
    print("| look | wall s | CPU s |\n|---|---|---|")
    print(f"| before: full read | {med[0][0]:.2f} | {med[0][1]:.2f} |")
    print(f"| after: catch_up (tail read + summary) and apply | {med[1][0]:.2f} | {med[1][1]:.2f} |")


if __name__ == "__main__":
    main()
