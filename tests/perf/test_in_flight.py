"""``profile endpoint`` keeps the asked concurrency in flight and reports TPOT to the µs (issue 31, points 5 and 6).

Counted at the sim (its most requests in progress at once), and computed from synthetic samples where the
answer is known exactly: no timing is asserted.
"""

from __future__ import annotations

from mpcbench_async.llm import ModelConfig
from mpcbench_async.perf import EndpointProfile, RequestSample, profile_endpoint, render_endpoint_profile
from mpcbench_async.perf._endpoint_stats import summarize

# Each request holds the sim for at least 0.3 s: every worker's first request is in progress at once.
MODEL = "sim/echo?latency_ms=300&tokens_per_s=100&output_tokens=3"


async def test_every_worker_has_a_request_at_the_sim_at_once(sim):
    """At concurrency 16, the sim sees 16 requests in progress at once, and it completed each request the profile
    counted (none lost between the workers and the endpoint)."""
    profile = await profile_endpoint(ModelConfig(), MODEL, concurrencies=[16], duration=0.5,
                                     sim_base_url=sim.base_url)
    (level,) = profile.levels
    assert (16, 16) == (sim.stats.max_in_flight, level.max_in_flight)
    assert (level.requests, level.requests) == (sim.stats.total_received, sim.stats.total_completed)
    assert level.ok == level.requests >= 16 and level.mean_in_flight is not None


def closed_loop(workers: int, latency: float, duration: float, tpot: float) -> list[RequestSample]:
    """``workers`` back-to-back requests of ``latency`` s each from time 0 to ``duration``, ``tpot`` s per token."""
    return [RequestSample(start_s=n * latency, end_s=(n + 1) * latency, ok=True, output_tokens=5,
                          e2e_s=latency, ttft_s=latency - 4 * tpot, tpot_s=tpot)
            for _ in range(workers) for n in range(round(duration / latency))]


def test_a_closed_loop_keeps_its_concurrency_in_flight_and_tpot_keeps_its_microseconds():
    level = summarize(closed_loop(4, 0.25, 1.0, 0.0054321), duration_s=1.0, concurrency=4, max_in_flight=4)
    assert (4.0, 16.0) == (level.mean_in_flight, level.requests_per_s)
    assert level.tpot is not None and (0.005432, 0.005432) == (level.tpot.p50, level.tpot.mean)
    half = summarize([s for s in closed_loop(4, 0.25, 1.0, 0.005) if s.start_s < 0.5], duration_s=1.0,
                     concurrency=4)
    assert 2.0 == half.mean_in_flight  # requests only in the first half of the window: half the concurrency
    profile = EndpointProfile(model="m", prompt_tokens=1, max_tokens=5, duration_s=1.0, levels=[level],
                              peak_requests_per_s=16.0, knee_concurrency=4)
    markdown, _ = render_endpoint_profile(profile)
    assert "| c=4 | 228.3 / 228.3 / 228.3 / 228.3 | 5.432 / 5.432 / 5.432 / 5.432 | – | – | 250.0 / 250.0 / 250.0 / " \
           "250.0 |" in markdown.splitlines()
    assert "| 4 | 4.0 | 0 |  |" in next(line for line in markdown.splitlines() if line.startswith("| c=4 | –"))
