"""The global limiter as an async Ray actor: ``GlobalLimits`` served to every worker of a Ray sweep.

One actor, many waiting leases: it is an async actor with a high ``max_concurrency`` (a lease may wait for a
slot or for pacing while the actor serves others), and it asks for no CPU, so it never takes a worker's place.
"""

from __future__ import annotations

import time
from typing import Any

from ..runtime import BucketReading, LimitSettings
from ._limits import Ask, GlobalLimits, Grant, Report

__all__ = ["LimiterActor", "start_limiter"]

MAX_CONCURRENCY = 10_000


class LimiterActor:
    """The remote side; each method is ``GlobalLimits``'s, plus ``stats`` with the actor's own CPU time."""

    def __init__(self, ttl: float) -> None:
        self._limits = GlobalLimits(ttl=ttl)

    async def lease(self, worker_id: str, model: str, settings: LimitSettings, ask: Ask) -> Grant:
        return await self._limits.lease(worker_id, model, settings, ask)

    async def release(self, worker_id: str, model: str, report: Report) -> None:
        self._limits.release(worker_id, model, report)

    async def rate_limited(self, worker_id: str, model: str, age_s: float, token_cost: int = 0,
                           readings: dict[str, BucketReading] | None = None) -> None:
        self._limits.rate_limited(worker_id, model, age_s, token_cost, readings)

    async def reclaim(self, worker_id: str) -> None:
        """Free every slot the worker held: the driver calls it when a worker died."""
        self._limits.reclaim(worker_id)

    async def stats(self) -> dict[str, Any]:
        """``cpu_s`` (this actor process's CPU seconds, for the overhead per call), ``ttl``, and per model:
        ``leases``, ``releases``, ``admitted`` (request credits net of returns), ``started`` (calls workers
        reported started), ``outstanding``, ``peak_outstanding``, ``cap``, ``decreases`` (429 episodes),
        ``rate_decreases`` (of the AIMD rate: 429s the headers did not explain) and ``learned_rpm`` (the
        requests limit learned from the headers, 0: none)."""
        return {"cpu_s": time.process_time(), "ttl": self._limits.ttl, "models": self._limits.stats()}


def start_limiter(*, ttl: float = 1.0) -> Any:
    """Start the global limiter actor (its grants fresh for ``ttl`` seconds)."""
    import ray

    return ray.remote(LimiterActor).options(num_cpus=0, max_concurrency=MAX_CONCURRENCY).remote(ttl)
