"""The cyclic garbage collector's young generation collected less often during a sweep.

CPython collects its young generation every 700 net allocations of container objects (its default threshold).
A sweep keeps thousands of young containers alive at any moment: the coroutines, frames' cells, futures and
handles of 64 agents' and judges' calls in flight, the dicts and lists of decoded replies. Each young collection
walks all of them, ~0.5 ms, and a 40-trial sweep of the shipped tasks made ~340 of them (with ~30 middle and 2 full
collections that followed): 0.29–0.36 s of its ~4 s of CPU, ~80 µs per LLM call, the largest single item left of
the runner's CPU per call outside the HTTP client (bench/RESULTS.md, "Whole runner per LLM call: where the rest
goes"). At 10,000 the same sweep makes ~15 young collections and 1 middle one, 0.06–0.09 s in all; most young objects
are freed by their reference counts before a collection would have walked them.

Only how often the collector runs changes, never what it frees: unreachable cycles wait for at most 10,000 net
allocations instead of 700 (a few MiB at most on a sweep's peak; 40-trial sweeps' peak RSS unchanged within its
run-to-run spread). Like glibc's thresholds (``_malloc.py``), the setting is the whole process's, so the ``sweep``
command applies it and a library caller of ``run_sweep`` leaves its own process's collector as it was.
"""

from __future__ import annotations

import gc

SWEEP_YOUNG_THRESHOLD = 10_000


def space_young_collections() -> None:
    """Raise the young generation's threshold to ``SWEEP_YOUNG_THRESHOLD`` (never lower it); the others kept."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, SWEEP_YOUNG_THRESHOLD), middle, old)
