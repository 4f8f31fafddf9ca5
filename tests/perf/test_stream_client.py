"""bench/stream_client.py, the independent yardstick of the ``profile endpoint`` cross-check, measures the sim right.

The bench script is not part of the package, so it is loaded from its file; these tests keep
it from rotting silently (bench/profile_crosscheck.py relies on it).
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "stream_client.py"
_SPEC = importlib.util.spec_from_file_location("bench_stream_client", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
stream_client = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = stream_client  # dataclasses look their module up
_SPEC.loader.exec_module(stream_client)

LATENCY_S, TOKENS_PER_S, TOKENS = 0.1, 4.0, 3  # a reply: first token at 0.1 s, then one every 0.25 s
MODEL = f"sim/echo?latency_ms={LATENCY_S * 1000:g}&tokens_per_s={TOKENS_PER_S:g}&output_tokens={TOKENS}"


class TestAgainstTheSim:
    async def test_ttft_tokens_and_chunks_match_the_sims_settings(self, sim):
        """Each reply: 3 tokens (usage), 6 data events; TTFT from the sim's latency to before its second token."""
        run = await stream_client.run(sim.base_url, MODEL, concurrency=2, duration=0.5, max_tokens=TOKENS)
        assert len(run.timings) == sim.stats.total_received  # every request sent reached the sim, once
        assert [None] * len(run.timings) == [t.error for t in run.timings]
        assert {TOKENS} == {t.output_tokens for t in run.timings}
        # role chunk, 3 token chunks, the finish chunk, the usage chunk ([DONE] is not an event with data)
        assert {1 + TOKENS + 2} == {len(t.chunks) for t in run.timings}
        decode_s = (TOKENS - 1) / TOKENS_PER_S  # 0.5 s from the first token to the last
        ttfts = [t.ttft for t in run.timings]
        assert all(ttft >= LATENCY_S for ttft in ttfts)  # the sim holds the first token back this long
        # a TTFT taken at a later token or at the end would be at least a token gap (0.25 s) later
        assert statistics.median(ttfts) < LATENCY_S + 1 / TOKENS_PER_S
        tpot = statistics.median(t.tpot for t in run.timings)
        assert 0.5 / TOKENS_PER_S < tpot < 1.5 / TOKENS_PER_S
        assert all(t.end - t.sent >= LATENCY_S + decode_s for t in run.timings)

    async def test_the_figures_are_the_requests_that_ended_in_the_window(self, sim):
        """requests/s and tokens/s are the window's completed requests over its length, exactly."""
        run = await stream_client.run(sim.base_url, MODEL, concurrency=3, duration=0.8, warmup=0.2,
                                      max_tokens=TOKENS)
        assert 0.8 == pytest.approx(run.window_s)
        assert run.requests == len([t for t in run.timings if t.end is not None]) - run.excluded
        assert run.requests_per_s == run.requests / run.window_s
        assert run.output_tokens_per_s == TOKENS * run.requests / run.window_s

    async def test_open_loop_sends_on_schedule_whatever_the_replies_do(self, sim):
        """A constant rate of 8/s over 0.5 s sends exactly 4 requests (at 0, 0.125, 0.25, 0.375 s)."""
        run = await stream_client.run(sim.base_url, MODEL, rate=8.0, poisson=False, duration=0.5,
                                      max_tokens=TOKENS)
        assert 4 == len(run.timings) == sim.stats.total_received
        assert "rate 8/s" == run.load


class TestSummarize:
    def test_window_percentiles_and_rates_from_recorded_times(self):
        """Only requests ending inside the window count; errors are counted apart; figures are exact."""
        def timing(sent: float, first: float, end: float, tokens: int) -> object:
            return stream_client.Timing(sent=sent, first_token=first, end=end, output_tokens=tokens)

        timings = [
            timing(0.0, 0.5, 0.9, 4),   # ended before the window
            timing(1.0, 1.1, 1.4, 4),   # in: TTFT 0.1, TPOT 0.1, E2E 0.4
            timing(2.0, 2.3, 2.9, 7),   # in: TTFT 0.3, TPOT 0.1, E2E 0.9
            timing(2.5, 2.6, 3.1, 4),   # ended after it
            stream_client.Timing(sent=1.5, error="HTTP 503"),
        ]
        run = stream_client.summarize(timings, load="concurrency 2", window=(1.0, 3.0))
        assert (2, 1, 2, 2.0) == (run.requests, run.errors, run.excluded, run.window_s)
        assert (1.0, 5.5) == (run.requests_per_s, run.output_tokens_per_s)
        assert (0.2, 0.2) == (pytest.approx(run.ttft_p50_s), pytest.approx(run.ttft_mean_s))
        assert (0.1, 0.65) == (pytest.approx(run.tpot_p50_s), pytest.approx(run.e2e_p50_s))

    async def test_exactly_one_kind_of_load(self):
        with pytest.raises(ValueError, match="exactly one of concurrency and rate"):
            await stream_client.run("http://127.0.0.1:9/v1", MODEL, concurrency=2, rate=1.0)
