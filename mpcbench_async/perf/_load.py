"""Load shapes of ``profile endpoint``: open-loop arrival schedules and the rates a sweep samples.

Both are pure functions of their arguments (no clock), so the schedule a seed
gives and the rates a sweep picks are unit-testable and reproducible.
"""

from __future__ import annotations

import math
import random
from typing import Literal

__all__ = ["Arrivals", "arrival_offsets", "level_rng", "sweep_rates"]

Arrivals = Literal["poisson", "constant"]


def level_rng(seed: int, rate: float) -> random.Random:
    """The random source of the rate level ``rate`` of a profile seeded ``seed``: its own per level.

    With one source for all, ``expovariate(r)`` would scale the same draws by ``1/r``, making every
    level's schedule a time-scaled copy of the others (their bursts and gaps all in the same places).
    """
    return random.Random(f"{seed}:{rate!r}")


def arrival_offsets(rate: float, duration: float, arrivals: Arrivals, rng: random.Random) -> list[float]:
    """When to send each request, in seconds from the level's start, for ``rate`` requests/s over ``duration`` s.

    ``constant``: one request every ``1/rate`` s from 0. ``poisson``: exponential gaps of
    mean ``1/rate`` drawn from ``rng`` (the first request after the first gap), as vLLM's
    bench and GuideLLM send a Poisson process.
    """
    if arrivals == "constant":
        return [k / rate for k in range(math.ceil(duration * rate))]
    offsets: list[float] = []
    t = rng.expovariate(rate)
    while t < duration:
        offsets.append(t)
        t += rng.expovariate(rate)
    return offsets


def sweep_rates(synchronous_rps: float, saturation_rps: float, points: int) -> list[float]:
    """``points`` rates evenly spaced strictly between the synchronous and the saturation rate, ascending.

    GuideLLM's sweep: the two ends are measured first (concurrency 1 and the maximum
    concurrency), the rates between sample the curve. Empty when the endpoint gained
    nothing from concurrency (saturation at or below the synchronous rate).
    """
    if points < 1 or saturation_rps <= synchronous_rps:
        return []
    step = (saturation_rps - synchronous_rps) / (points + 1)
    return [round(synchronous_rps + step * i, 3) for i in range(1, points + 1)]
