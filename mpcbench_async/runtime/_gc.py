"""The cyclic garbage collector's young generation collected less often during a sweep.

CPython collects its young generation every 700 net allocations of container objects (its default threshold).
A sweep keeps thousands of young containers alive at any moment: the coroutines, frames' cells, futures and
handles of 64 agents' and judges' calls in flight, the dicts and lists of decoded replies. Each young collection
walks all of them, ~0.5 ms, and a 40-trial sweep of the shipped tasks made ~340 of them (with ~30 middle and 2
full collections that followed): 0.25–0.36 s of its ~4 s of CPU, 50–75 µs per LLM call, more than any single part
of the agent loop, the engine or the records (bench/RESULTS.md, "Whole runner per LLM call: where the rest
goes"). Set by the command (after its own imports) at 10,000, the same sweep makes ~45 young collections, most
of them during the sweep's imports, and 4 middle ones: 0.05–0.11 s, 13–16 µs per call; most young objects are
freed by their reference counts before a collection would have walked them.

The threshold changes only how often the collector runs, never what it frees: unreachable cycles wait for at
most 10,000 net allocations instead of 700 (40-trial sweeps' peak RSS was 74–80 MiB with either threshold). Like
glibc's thresholds (``_malloc.py``), the setting is the whole process's, so the ``sweep`` command applies it and a
library caller of ``run_sweep`` leaves its own process's collector as it was.

``frozen_imports``: the sweep's modules (some 500, with aiohttp and numpy) leave ~55,000 container objects
(functions, classes, their dicts) that live as long as the process. Tracked as young objects, they were walked by
the collections made while they were imported, and again by every later middle collection. The command imports
them with the collector off, then moves everything tracked so far to the permanent generation (``gc.freeze``),
which no collection walks: the collector's CPU in a 1-trial sweep of the shipped tasks 18 → 12 ms (what remains is
the CLI's own imports, before the command runs), in a 40-trial one 60 → 20 ms (bench/RESULTS.md, "Sweep fixed
cost"). The command thaws them when the sweep ends (``thaw_imports``): a process that runs the command in-process
(a test, a notebook) keeps no frozen objects after it, so a reference cycle made before the freeze and dropped
later waits for a collection after the sweep, not for the process's end.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

SWEEP_YOUNG_THRESHOLD = 10_000


def space_young_collections() -> None:
    """Raise the young generation's threshold to ``SWEEP_YOUNG_THRESHOLD`` (never lower it); the others kept."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, SWEEP_YOUNG_THRESHOLD), middle, old)


@contextmanager
def frozen_imports() -> Iterator[None]:
    """The collector off while the block runs (a command's imports), then every object tracked so far frozen
    (``gc.freeze``: no collection walks them again) and the collector back as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def thaw_imports() -> None:
    """Undo ``frozen_imports``' freeze once the command's work is done (``gc.unfreeze``: the frozen objects join the
    oldest generation again; a constant-time move, no collection)."""
    gc.unfreeze()
