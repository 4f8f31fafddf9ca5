"""One global limit per model across Ray workers, counted at the sim (issue 16, point 2).

2 and 4 worker actors, each with its own ``LLMClient`` whose limiters lease from one limiter actor, hammer ONE
sim model at a concurrency well above the configured limit; the sim runs in the test process and records every
arrival. The proofs are pacing-level properties, testable in seconds:

- concurrency: at the sim, the most calls in flight at once never exceed ``max_concurrency``;
- RPM (``burst`` = rpm // 20, rate ``r`` = rpm / 60 per second, lease TTL ``ttl``): a credit is stamped by the
  actor's GCRA pacer and spent within ``ttl`` of its stamp, so the credits whose calls start in ``[a, b]`` were
  stamped in ``[a - ttl, b]``, and GCRA stamped at most ``burst + r * (b - a + ttl)`` in such a span. That is
  asserted exactly on the calls' start times (their tickets: when each spent its credit, on the same machine's
  monotonic clock as the actor's stamps), and at the sim's arrival times with ``LOOPBACK_S`` more of slack (a
  call reaches the sim a little after it starts);
- TPM: the same with tokens (each call's token cost, as the limiter was charged);
- a 429 reported by one worker halves the cap every worker gets.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from mpcbench_async.distributed._leased import leased_limiters
from mpcbench_async.distributed._limiter_actor import start_limiter
from mpcbench_async.llm import LLMClient, ModelConfig
from mpcbench_async.records import Message
from mpcbench_async.runtime import LimitSettings
from mpcbench_async.sim import SimServer

MODEL = "sim/echo"
TTL = 0.25
LOOPBACK_S = 0.25  # at most this from a call's start to its arrival at the sim (loopback, on a loaded CI box)


class Recorded:
    """A limiter that notes each admitted call's start and token cost, around the worker's leased limiter."""

    def __init__(self, inner: Any, starts: list[tuple[float, int]]) -> None:
        self._inner = inner
        self._starts = starts

    def slot(self, token_cost: int = 0) -> Any:
        return _RecordedSlot(self._inner.slot(token_cost), token_cost, self._starts)

    def on_rate_limited(self, ticket: Any) -> None:
        self._inner.on_rate_limited(ticket)

    async def on_success(self) -> None:
        await self._inner.on_success()

    def observe(self, headers: Any, ticket: Any = None) -> None:
        self._inner.observe(headers, ticket)


class _RecordedSlot:
    def __init__(self, inner: Any, cost: int, starts: list[tuple[float, int]]) -> None:
        self._inner, self._cost, self._starts = inner, cost, starts

    async def __aenter__(self) -> Any:
        ticket = await self._inner.__aenter__()
        self._starts.append((ticket.started_at, self._cost))
        return ticket

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class Hammer:
    """A tiny worker actor: one client whose limits are leased from a limiter; calls in parallel, all at once.

    The actors are started once for the module (a process each takes seconds); ``use`` gives one a fresh client.
    """

    def __init__(self) -> None:
        # Defined, not inherited: Ray's tracing hook sets ``__signature__`` on every method of an actor class, and
        # object's own ``__init__`` (a slot wrapper) refuses it — seen as "'wrapper_descriptor' object has no
        # attribute '__signature__'" when the class is loaded in a worker.
        self.starts: list[tuple[float, int]] = []

    async def use(self, config: dict[str, Any], limiter: Any, worker_id: str) -> None:
        """A new client with ``config``, its limits leased from ``limiter`` as ``worker_id``."""
        if hasattr(self, "client"):
            await self.client.aclose()
        self.starts = []
        self.limiter = limiter
        leased = leased_limiters(limiter, worker_id)
        self.limiters: list[Any] = []

        def factory(model: str, settings: LimitSettings) -> Any:
            self.limiters.append(leased(model, settings))
            return Recorded(self.limiters[-1], self.starts)

        self.client = LLMClient(ModelConfig.from_dict(config), limiter_factory=factory)

    async def hammer(self, keys: list[str]) -> dict[str, Any]:
        """Every call at once; the calls' (start, token cost), calls admitted, calls failed."""
        replies = await asyncio.gather(*(self.client.chat(MODEL, [Message(role="user", content=f"ping {key}")],
                                                          key=key, max_tokens=20)
                                         for key in keys), return_exceptions=True)
        return {"starts": self.starts,
                "calls": sum(limiter.calls for limiter in self.limiters),
                "failed": [type(r).__name__ for r in replies if isinstance(r, BaseException)]}

    async def actor_stats(self) -> dict[str, Any]:
        """The limiter actor's stats, asked from this worker: after everything this worker sent it before."""
        stats: dict[str, Any] = await self.limiter.stats.remote()
        return stats


class Arrivals:
    """The sim's gate: each request's arrival time and the most in flight at once; closed, it holds every call."""

    def __init__(self, *, hold_after: int | None = None) -> None:
        self.times: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.opened = asyncio.Event()
        self.held = asyncio.Event()  # set once ``hold_after`` calls are held at the closed gate
        self._hold_after = hold_after
        if hold_after is None:
            self.opened.set()

    async def gate(self, _key: str) -> None:
        self.times.append(time.monotonic())
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if len(self.times) == self._hold_after:
                self.held.set()
            await self.opened.wait()
            await asyncio.sleep(0.01)  # hold each call a moment, so calls overlap at the sim
        finally:
            self.in_flight -= 1


def excess(times: list[tuple[float, int]], rate: float, slack: float) -> float:
    """The largest ``sum(cost over [a, b]) - rate * (b - a + slack)`` over every interval ``[a, b]`` of ``times``."""
    ordered = sorted(times)
    worst = float("-inf")
    for i, (a, _) in enumerate(ordered):
        total = 0
        for b, cost in ordered[i:]:
            total += cost
            worst = max(worst, total - rate * (b - a + slack))
    return worst


def config(sim: SimServer, limits: dict[str, Any], **model: Any) -> dict[str, Any]:
    return {"defaults": {"base_url": sim.base_url, "limits": limits, "retry": {"max_attempts": 1}},
            "models": {MODEL: model}}


@pytest.fixture(scope="module")
def pool(ray_instance):
    """Four worker actors for the module's tests."""
    actors = [ray_instance.remote(Hammer).options(num_cpus=0).remote() for _ in range(4)]
    yield actors
    for actor in actors:
        ray_instance.kill(actor)


@pytest.fixture
def limiter(ray_instance):
    """A fresh global limiter actor for one test."""
    actor = start_limiter(ttl=TTL)
    yield actor
    ray_instance.kill(actor)


async def hammers(pool: list[Any], limiter: Any, configs: list[dict[str, Any]]) -> list[Any]:
    """As many of the pool's workers as ``configs``, each with a fresh client on ``limiter``."""
    actors = pool[: len(configs)]
    await asyncio.gather(*(actor.use.remote(cfg, limiter, f"w{i}")
                           for i, (actor, cfg) in enumerate(zip(actors, configs, strict=True))))
    return actors


async def run(pool: list[Any], limiter: Any, sim: SimServer, limits: dict[str, Any], workers: int, calls: int
              ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``calls`` calls split over ``workers`` workers, all at once; their results and the model's stats."""
    actors = await hammers(pool, limiter, [config(sim, limits)] * workers)
    results = await asyncio.gather(*(h.hammer.remote([f"w{i}-{k}" for k in range(calls // workers)])
                                     for i, h in enumerate(actors)))
    assert [] == [f for r in results for f in r["failed"]]
    return results, (await actors[0].actor_stats.remote())["models"][MODEL]


@pytest.mark.parametrize("workers", [2, 4])
async def test_concurrency_sum_never_exceeds_the_cap(pool, limiter, workers):
    """Every worker asks for all its calls at once; at the sim never more than max_concurrency=3 are in flight."""
    arrivals = Arrivals()
    async with SimServer(seed=3, gate=arrivals.gate) as sim:
        results, model = await run(pool, limiter, sim, {"max_concurrency": 3}, workers, 48)
    assert (48, 3, 3) == (len(arrivals.times), arrivals.max_in_flight, model["peak_outstanding"])
    assert 48 == sum(r["calls"] for r in results)


@pytest.mark.parametrize("workers", [2, 4])
async def test_rpm_pacing_holds_over_all_workers(pool, limiter, workers):
    """rpm 1200 (burst 60, 20/s): 80 calls at once over the workers; every interval of starts is within the pace."""
    arrivals = Arrivals()
    async with SimServer(seed=3, gate=arrivals.gate) as sim:
        results, _ = await run(pool, limiter, sim, {"max_concurrency": 64, "rpm": 1200}, workers, 80)
    starts = [(at, 1) for r in results for at, _ in r["starts"]]
    assert 80 == len(starts) == len(arrivals.times)
    assert excess(starts, 20.0, TTL) <= 60
    assert excess([(at, 1) for at in arrivals.times], 20.0, TTL + LOOPBACK_S) <= 60


@pytest.mark.parametrize("workers", [2, 4])
async def test_tpm_pacing_holds_over_all_workers(pool, limiter, workers):
    """tpm 48000 (burst 2400 tokens, 800/s), 64 calls of ~55 tokens: the tokens started in any interval are
    within the pace."""
    arrivals = Arrivals()
    async with SimServer(seed=3, gate=arrivals.gate) as sim:
        results, _ = await run(pool, limiter, sim, {"max_concurrency": 64, "tpm": 48000}, workers, 64)
    starts = [start for r in results for start in r["starts"]]
    assert 64 == len(starts) == len(arrivals.times)
    assert sum(cost for _, cost in starts) > 2400  # more than one burst: the pace is what holds them
    assert excess(starts, 800.0, TTL) <= 2400
    lightest = min(cost for _, cost in starts)
    assert excess([(at, lightest) for at in arrivals.times], 800.0, TTL + LOOPBACK_S) <= 2400


async def test_a_429_at_one_worker_halves_the_cap_of_the_others(pool, limiter):
    """Worker 0's call is answered 429; then worker 1, asking 8 at once, gets only 4 of max_concurrency 8 (pacing
    off: only the cap adapts, no AIMD rate holds worker 1's calls)."""
    arrivals = Arrivals(hold_after=4)
    async with SimServer(seed=3, gate=arrivals.gate) as sim:
        limits = {"max_concurrency": 8, "pacing": False}
        first, second = await hammers(pool, limiter, [config(sim, limits, model=f"{MODEL}?fault=429&fail_first=1"),
                                                        config(sim, limits)])
        assert ["RateLimitError"] == (await first.hammer.remote(["k429"]))["failed"]
        after_429 = (await first.actor_stats.remote())["models"][MODEL]
        assert (1, 4, 1) == (after_429["peak_outstanding"], after_429["cap"], after_429["decreases"])
        hammering = asyncio.ensure_future(second.hammer.remote([f"k{i}" for i in range(8)]))
        await arrivals.held.wait()  # 4 calls at the sim, none finished, so the cap cannot have grown back
        model = (await second.actor_stats.remote())["models"][MODEL]
        held = arrivals.in_flight
        arrivals.opened.set()
        assert [] == (await hammering)["failed"]
    assert (4, 4, 4) == (held, model["outstanding"], model["cap"])


@pytest.mark.parametrize("spelling", ["openai", "anthropic"])
async def test_headers_alone_pace_every_worker(pool, limiter, spelling):
    """A 1-s bucket of 100 a second whose limit is only in the replies' headers, nothing configured, retries on:
    400 calls at once over 2 workers all succeed, each completed once, with under 1% 429s at the sim (the bound of
    the in-process test, tests/llm/test_rate_limit_modes.py); the actor learned the provider's 6000 a minute.

    The same code paces it as in-process (``runtime.ModelPace`` in the actor): the workers report the headers they
    read, the actor fits the learned window to the bucket. Before, the actor ignored headers and this sent the
    calls at the cap (32 at once) with no pace at all.
    """
    model = f"{MODEL}?rpm=6000&rate_window_s=1&rate_headers={spelling}"
    async with SimServer(seed=27) as sim:
        cfg = {"defaults": {"base_url": sim.base_url}, "models": {MODEL: {"model": model}}}
        actors = await hammers(pool, limiter, [cfg] * 2)
        results = await asyncio.gather(*(h.hammer.remote([f"w{i}-{k}" for k in range(200)])
                                         for i, h in enumerate(actors)))
        stats = (await actors[0].actor_stats.remote())["models"][MODEL]
    assert [] == [f for r in results for f in r["failed"]]
    assert {f"w{i}-{k}": 1 for i in range(2) for k in range(200)} == sim.stats.completed
    assert sim.stats.statuses.get("429", 0) < 0.01 * 400
    assert 6000 == stats["learned_rpm"]
