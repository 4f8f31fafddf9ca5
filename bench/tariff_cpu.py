"""CPU per case of building a tariff case's evidence bundle: ranking every note (before) vs the pack's index (after).

Inputs: the HSCodeComp test set converted by the project's importer (``read_hscodecomp``: title, attributes,
price and currency, English category path — as ``tariff import hscodecomp`` writes them) and the shipped
tariff suite. Each case's bundle is built by ``build_bundle`` with the shipped pack in two ways:

- before: the chapter notes chosen by ``_text.rank`` over every note of the pack on each request (how the
  bundle was built before issue 11; the rate lines come from the pack's per-heading table in both);
- after: ``Pack.best_notes``, from the word index built once per pack.

The two are interleaved case by case (before, after, before, after …) ``--repeats`` times; a case's figure is
the median of its repeats in process CPU time. Reported per input set: median, p95 and max over cases, and
the one-time costs (building the index and the HS nomenclature, which a run does in a worker thread). The
script also checks that both ways give the same bundle for every case, and says so.

    .venv/bin/python bench/tariff_cpu.py --hscodecomp ../shared/datasets/hscodecomp/test_data.jsonl --repeats 5
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from mpcbench_async._text import rank
from mpcbench_async.tariff import Case, Pack, load_pack, load_suite, read_hscodecomp
from mpcbench_async.tariff._dossier import build_bundle
from mpcbench_async.tariff._pack import EvidenceItem


def ranking_every_note(pack: Pack) -> Callable[..., list[EvidenceItem]]:
    """The selection as it was before the index: every note scored by ``rank`` on each request."""

    def best_notes(text: str, *, limit: int) -> list[EvidenceItem]:
        return [item for _, item in rank(pack.notes, text, lambda n: [(n.text, 1.0)], limit=limit)]

    return best_notes


def cpu_ms(fn: Callable[[], object]) -> float:
    started = time.process_time_ns()
    fn()
    return (time.process_time_ns() - started) / 1e6


def measure(cases: list[Case], before: Pack, after: Pack, repeats: int) -> tuple[list[float], list[float], int]:
    """Per-case median CPU ms of each way (interleaved), and the number of cases whose bundles differ."""
    old_ms, new_ms, differ = [], [], 0
    for case in cases:
        request = case.input
        old, new = [], []
        for pack, out in [(before, old), (after, new)] * repeats:
            out.append(cpu_ms(partial(build_bundle, pack, request.input, request.evidence,
                                      request.options.candidate_chapters)))
        old_ms.append(statistics.median(old))
        new_ms.append(statistics.median(new))
        bundles = [build_bundle(p, request.input, request.evidence, request.options.candidate_chapters)
                   for p in (before, after)]
        differ += bundles[0] != bundles[1]
    return old_ms, new_ms, differ


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[18]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hscodecomp", type=Path, default=Path("../shared/datasets/hscodecomp/test_data.jsonl"),
                        help="HSCodeComp test_data.jsonl (default: ../shared/datasets/hscodecomp/test_data.jsonl)")
    parser.add_argument("--suite", type=Path, default=Path("storage/benchmarks/tariff/cases"),
                        help="another suite's cases directory (default: the shipped tariff suite)")
    parser.add_argument("--pack", type=Path, default=Path("storage/packs/tariff"))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    before, after = load_pack(args.pack), load_pack(args.pack)
    before.best_notes = ranking_every_note(before)  # type: ignore[method-assign]
    index_ms = cpu_ms(lambda: after.best_notes("", limit=1))  # the first selection builds the index
    warm_ms = cpu_ms(after.warm)
    before.warm()
    inputs = [(f"HSCodeComp listings ({args.hscodecomp.name})", read_hscodecomp(args.hscodecomp)),
              (f"suite {args.suite}", load_suite(args.suite))]
    rows = []
    for name, cases in inputs:
        old, new, differ = measure(cases, before, after, args.repeats)
        rows.append((name, len(cases), old, new, differ))
        print(f"{name}: {len(cases)} cases, before median {statistics.median(old):.2f} ms, after "
              f"{statistics.median(new):.3f} ms, {differ} bundle(s) differ", flush=True)
    print(f"\n#### Tariff evidence bundle CPU — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {platform.machine()}, {len(os.sched_getaffinity(0))} cores, Python "
          f"{platform.python_version()}. Command: `python bench/tariff_cpu.py --repeats {args.repeats}`. "
          f"`build_bundle` per case, process CPU time, median of {args.repeats} interleaved repeats per case; "
          f"pack `{args.pack}` ({len(after.notes)} chapter notes).\n")
    print("| inputs | cases | before median ms | before p95 ms | before max ms | after median ms | after p95 ms | "
          "after max ms | speed-up (median) | bundles differing |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, count, old, new, differ in rows:
        print(f"| {name} | {count} | {statistics.median(old):.2f} | {p95(old):.2f} | {max(old):.2f} | "
              f"{statistics.median(new):.3f} | {p95(new):.3f} | {max(new):.3f} | "
              f"{statistics.median(old) / max(statistics.median(new), 1e-9):.0f}× | {differ} |")
    print(f"\nOne-time, per pack (in a worker thread during a run): word index {index_ms:.1f} ms; rate table and HS "
          f"nomenclature {warm_ms:.0f} ms.")


if __name__ == "__main__":
    main()
