"""``profile endpoint`` modes: streamed timings tied to the sim, arrivals, windows, goodput, sweeps, the CLI."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from mpcbench_async.cli import main
from mpcbench_async.llm import ModelConfig
from mpcbench_async.perf import LevelResult, ProfileOptions, RequestSample, profile_endpoint
from mpcbench_async.perf._endpoint_profile import _Levels
from mpcbench_async.perf._endpoint_stats import keeps_up, meets_slo, summarize, ttft_cdf
from mpcbench_async.perf._load import arrival_offsets, level_rng, sweep_rates


def sample(start: float, end: float, *, ok: bool = True, ttft: float | None = None, tpot: float | None = None,
           tokens: int = 10, rate_limited: bool = False) -> RequestSample:
    """A request of ``tokens`` output tokens that ran from ``start`` to ``end`` (its E2E)."""
    return RequestSample(start_s=start, end_s=end, ok=ok, rate_limited=rate_limited, output_tokens=tokens if ok else 0,
                         e2e_s=round(end - start, 6) if ok else None, ttft_s=ttft, tpot_s=tpot)


class TestStreamedTimingsFollowTheSim:
    """latency_ms=200, tokens_per_s=50, output_tokens=11: TTFT ≈ 0.2 s, TPOT and ITL ≈ 0.02 s, E2E ≈ 0.4 s.

    The sim waits latency_ms before the first token, then sends one token every
    1/tokens_per_s on a fixed schedule, so a recorded TTFT can only exceed 0.2 s by
    loopback and scheduling delays: TTFT in [0.2, 0.2 + 0.1) (half the latency, far above
    loopback delays on a loaded machine, and under the 0.2 s the other 10 tokens take, so a
    TTFT that were really the E2E would fail). TPOT spans the 10 gaps after the first token:
    within ±30% of 0.02 (the first or last token up to 60 ms late). ITL: the same gaps one
    by one; their mean within ±30% (not each gap: chunks read together have gaps of 0).
    E2E = TTFT + 10 gaps: in [0.4, 0.4 + 0.1 + 0.06). The medians must fall in these
    ranges; every percentile must reach the sim's floor (TTFT 0.2 s, E2E 0.4 s), but only the
    median is bounded above, so that one request delayed by a busy machine fails nothing.
    Every figure is the profile's recorded percentile, not a clock read by the test.
    """

    MODEL = "sim/echo?latency_ms=200&tokens_per_s=50&output_tokens=11"

    async def test_concurrency_level(self, sim):
        profile = await profile_endpoint(ModelConfig(), self.MODEL, concurrencies=[2], duration=0.5,
                                         sim_base_url=sim.base_url)
        (level,) = profile.levels
        assert level.ok == level.requests >= 2 and level.errors == 0
        assert level.ttft is not None and level.tpot is not None and level.itl is not None and level.e2e is not None
        assert 0.2 <= level.ttft.p50 < 0.3
        assert 0.014 <= level.tpot.p50 <= 0.026 and 0.014 <= level.itl.mean <= 0.026
        assert 0.4 <= level.e2e.p50 < 0.56 and level.e2e.p50 <= level.e2e.p99
        assert level.output_tokens_per_s == pytest.approx(11 * level.requests_per_s, rel=0.01)
        assert level.requests_per_s == pytest.approx(2 / level.e2e.mean, rel=0.05)  # Little's law: C / latency
        assert profile.ttft_cdf_level == "c=2" and profile.ttft_cdf[-1][1] == 1.0
        assert profile.ttft_cdf[0][0] >= 0.2  # the fastest of the level's requests (fewer than 100 of them)

    async def test_rate_level(self, sim):
        """Open loop at 10 req/s (constant arrivals, 5 sent in 0.5 s): the same timings, nothing capped."""
        options = ProfileOptions(mode="rate", rates=(10.0,), arrivals="constant", max_concurrency=8)
        profile = await profile_endpoint(ModelConfig(), self.MODEL, duration=0.5, sim_base_url=sim.base_url,
                                         options=options)
        (level,) = profile.levels
        assert (level.rate, level.concurrency, level.requests, level.ok, level.capped) == (10.0, None, 5, 5, 0)
        assert level.sent_requests_per_s == 10.0
        assert level.ttft is not None and 0.2 <= level.ttft.p50 < 0.3
        assert level.tpot is not None and 0.014 <= level.tpot.p50 <= 0.026
        assert 4 <= level.max_in_flight <= 5  # replies of at least 0.4 s, sent every 0.1 s from 0 to 0.4 s

    async def test_not_streamed(self, sim):
        """--no-stream: E2E only (the sim still paces its tokens before replying); 3 requests, so a median."""
        profile = await profile_endpoint(ModelConfig(), self.MODEL, concurrencies=[3], duration=0.3,
                                         sim_base_url=sim.base_url, options=ProfileOptions(stream=False))
        (level,) = profile.levels
        assert (level.ttft, level.tpot, level.itl, profile.ttft_cdf, profile.ttft_cdf_level) == (
            None, None, None, [], None)
        assert level.e2e is not None and 0.4 <= level.e2e.p50 < 0.56


class TestArrivals:
    def test_poisson_is_deterministic_for_a_seed_with_the_right_mean(self):
        """2,000 gaps at 20 req/s: mean 0.05 s within ±7% (3 standard errors of 1/√2000 ≈ 2.2%)."""
        first = arrival_offsets(20.0, 100.0, "poisson", random.Random(7))
        assert first == arrival_offsets(20.0, 100.0, "poisson", random.Random(7))
        assert first != arrival_offsets(20.0, 100.0, "poisson", random.Random(8))
        assert first == sorted(first) and 0 < first[0] and first[-1] < 100.0
        gaps = [b - a for a, b in zip([0.0, *first], first, strict=False)]
        assert 0.05 * 0.93 <= sum(gaps) / len(gaps) <= 0.05 * 1.07
        assert 2000 * 0.93 <= len(first) <= 2000 * 1.07

    def test_each_rate_level_draws_its_own_schedule(self):
        """Same seed, rates 5 and 10: reproducible per level, and not one schedule scaled to the other's rate."""
        slow = arrival_offsets(5.0, 10.0, "poisson", level_rng(0, 5.0))
        fast = arrival_offsets(10.0, 10.0, "poisson", level_rng(0, 10.0))
        assert slow == arrival_offsets(5.0, 10.0, "poisson", level_rng(0, 5.0))
        assert [round(t / 2, 9) for t in slow[:20]] != [round(t, 9) for t in fast[:20]]

    def test_constant(self):
        assert [0.0, 0.25, 0.5, 0.75] == arrival_offsets(4.0, 1.0, "constant", random.Random(0))
        assert [0.0, 0.4, 0.8] == arrival_offsets(2.5, 1.0, "constant", random.Random(0))


class TestWindow:
    def test_warmup_and_cooldown_exclude_by_start_and_end(self):
        """A 10 s level, warm-up 2 s, cool-down 1 s: counted and timed iff start ≥ 2 and end ≤ 9.

        The rates are over the 7 s from 2 to 9, each successful request counted by the share of
        its run in them: 0.5/0.6 of the one from 1.9 to 2.5, the two inside whole, 0.5/0.6 of
        the one from 8.5 to 9.1: 3.667 requests, 0.52 a second.
        """
        samples = [sample(0.5, 1.0), sample(1.9, 2.5),  # started in the warm-up
                   sample(2.0, 3.0), sample(4.0, 9.0), sample(5.0, 6.0, ok=False),  # measured
                   sample(8.5, 9.1), sample(9.5, 10.4)]  # ended in the cool-down (or after sending stopped)
        level = summarize(samples, duration_s=10.0, warmup_s=2.0, cooldown_s=1.0)
        assert (level.requests, level.ok, level.errors, level.excluded, level.duration_s) == (3, 2, 1, 4, 7.0)
        assert level.sent_requests_per_s is None  # a concurrency level
        assert (level.requests_per_s, level.output_tokens_per_s, level.error_rate) == (0.52, 5.2, 0.3333)
        assert level.e2e is not None and (level.e2e.p50, level.e2e.p99, level.e2e.mean) == (1.0, 5.0, 3.0)

    def test_the_rate_sent_counts_the_requests_due_in_the_window(self):
        """Due at 0.5, 1.5, …, 9.5 s; warm-up 2 s, cool-down 1 s: the 7 due in [2, 9) over 7 s."""
        due = [i + 0.5 for i in range(10)]
        level = summarize([sample(t, t + 0.2) for t in due], duration_s=10.0, warmup_s=2.0,
                          cooldown_s=1.0, rate=1.0, scheduled=due)
        assert (level.sent_requests_per_s, level.requests, level.requests_per_s) == (1.0, 7, 1.0)

    def test_the_rate_is_not_biased_by_how_long_requests_take(self):
        """2 workers back to back, 0.5 s a request, for 10 s: 4 req/s, with or without a cool-down.

        Without one, the window runs to the 10 s (the last requests end after it, counted in part).
        """
        samples = [sample(t, t + 0.5) for t in (0.25 + k * 0.5 for k in range(20)) for _worker in range(2)]
        with_cooldown = summarize(samples, duration_s=10.0, warmup_s=1.0, cooldown_s=1.0, concurrency=2)
        assert (with_cooldown.requests, with_cooldown.duration_s, with_cooldown.requests_per_s) == (30, 8.0, 4.0)
        without = summarize(samples, duration_s=10.0, warmup_s=1.0, concurrency=2)
        assert (without.requests, without.duration_s, without.requests_per_s) == (36, 9.0, 4.0)
        assert (without.output_tokens_per_s, without.excluded) == (40.0, 4)

    @pytest.mark.parametrize(("warmup", "cooldown"), [(0.0, 0.0), (0.0, 0.5), (0.3, 0.0), (0.3, 0.5)])
    @pytest.mark.parametrize(("concurrency", "latency", "duration"), [(16, 3.0, 10.0), (4, 2.1, 10.0), (2, 1.4, 2.0)])
    def test_a_closed_loop_from_time_0_reads_concurrency_over_latency(self, concurrency, latency, duration, warmup,
                                                                    cooldown):
        """Every worker sends its first request at 0, as the profile does, and its next when the last ends, until
        the level's end: the rate is C / L exactly, even with fewer than two requests per worker in the window
        (counting whole requests read 16 workers at 3 s as 6.4 req/s, not 5.33)."""
        samples = [sample(k * latency, (k + 1) * latency) for _worker in range(concurrency)
                   for k in range(int(duration // latency) + 1)]
        level = summarize(samples, duration_s=duration, warmup_s=warmup, cooldown_s=cooldown,
                          concurrency=concurrency)
        assert level.requests_per_s == round(concurrency / latency, 2)


class TestGoodput:
    def test_requests_meeting_every_slo(self):
        """6 requests: 2 meet ttft ≤ 0.5 and tpot ≤ 0.05 (one a 1-token reply without TPOT).

        A 4 s level with a 0.5 s cool-down: every request ran inside its first 3.5 s, so 2 / 3.5 met them a second.
        """
        samples = [sample(0.0, 1.0, ttft=0.4, tpot=0.04),  # meets
                   sample(0.5, 1.5, ttft=0.4, tpot=None, tokens=1),  # meets: no TPOT to exceed
                   sample(1.0, 2.0, ttft=0.6, tpot=0.01),  # TTFT too slow
                   sample(1.5, 2.5, ttft=0.1, tpot=0.06),  # TPOT too slow
                   sample(2.0, 3.0, ttft=None, tpot=None),  # not streamed: no TTFT, fails
                   sample(2.5, 3.0, ok=False, rate_limited=True)]  # errors never meet
        slo = {"ttft": 0.5, "tpot": 0.05}
        assert [True, True, False, False, False, False] == [meets_slo(s, slo) for s in samples]
        level = summarize(samples, duration_s=4.0, cooldown_s=0.5, slo=slo)
        assert (level.requests, level.goodput_requests_per_s, level.slo_met_fraction) == (6, 0.57, 0.3333)
        assert (level.rate_limited, level.rate_limited_rate) == (1, 0.1667)
        e2e_only = summarize(samples, duration_s=4.0, slo={"e2e": 1.0})
        assert (e2e_only.goodput_requests_per_s, e2e_only.slo_met_fraction) == (1.25, 0.8333)
        assert (None, None) == (summarize(samples, duration_s=4.0).goodput_requests_per_s,
                                summarize(samples, duration_s=4.0).slo_met_fraction)


class TestSweep:
    def test_rates_evenly_spaced_between_synchronous_and_saturation(self):
        """Synchronous 2 req/s, saturation 12 req/s (as measured at c=1 and c=max), 4 points between."""
        sync = summarize([sample(i * 0.5, i * 0.5 + 0.5) for i in range(10)], duration_s=5.0,
                         concurrency=1)
        saturated = summarize([sample(i / 12, i / 12 + 0.5) for i in range(-6, 60)], duration_s=5.0,
                              concurrency=8)  # 12 a second, 6 running at every instant of the 5 s
        assert (2.0, 12.0) == (sync.requests_per_s, saturated.requests_per_s)
        assert [4.0, 6.0, 8.0, 10.0] == sweep_rates(sync.requests_per_s, saturated.requests_per_s, 4)
        assert [7.0] == sweep_rates(2.0, 12.0, 1)
        assert [] == sweep_rates(5.0, 5.0, 3)

    async def test_a_sweep_measures_the_ends_then_rates_until_one_is_over_saturated(self):
        """Synchronous 2 req/s, saturation 12: rates 4, 6, 8, 10 planned; 8 is over-saturated, so 10 is never run."""
        asked: list[str] = []

        class Synthetic(_Levels):
            async def concurrency(self, concurrency: int) -> LevelResult:
                asked.append(f"c={concurrency}")
                return LevelResult(concurrency=concurrency, requests=1, ok=1, errors=0, rate_limited=0,
                                   duration_s=1.0, requests_per_s={1: 2.0, 8: 12.0}[concurrency],
                                   output_tokens_per_s=0.0, error_rate=0.0, rate_limited_rate=0.0)

            async def rate(self, rate: float) -> LevelResult:
                asked.append(f"{rate:g} req/s")
                return LevelResult(rate=rate, requests=1, ok=1, errors=0, rate_limited=0, duration_s=1.0,
                                   requests_per_s=min(rate, 7.0), output_tokens_per_s=0.0, error_rate=0.0,
                                   rate_limited_rate=0.0, oversaturated=rate > 7.0)

        shown: list[str] = []
        runner = Synthetic(ModelConfig(), "sim/echo", ProfileOptions(mode="sweep", max_concurrency=8, sweep_points=4),
                           duration=1.0, prompt="hi", max_tokens=8, sim_base_url=None)
        levels, saturation = await runner.run([], lambda level: shown.append(level.load))
        assert asked == shown == ["c=1", "c=8", "4 req/s", "6 req/s", "8 req/s"] == [lv.load for lv in levels]
        assert saturation == 12.0

    def test_over_saturation(self):
        """Sent every 0.1 s for 10 s; kept up when replies take 0.5 s, not when they queue (each 0.1 s later).

        Queued: request i ends at 0.2 i + 0.5 (served every 0.2 s, half the rate sent). Its early
        latency (sent in [1, 3.25)) is 2.6 s at the median: 32 ended in [3.6, 10] against 64 sent in
        [1, 7.4). Steady: lag 0.5 s, 86 ended in [1.5, 10] against 85 sent in [1, 9.5).
        """
        steady = [sample(i / 10, i / 10 + 0.5) for i in range(100)]
        queued = [sample(i / 10, i / 10 + 0.5 + 0.1 * i) for i in range(100)]
        assert keeps_up(steady, 1.0, 10.0) and not keeps_up(queued, 1.0, 10.0)
        assert not summarize(steady, duration_s=10.0, rate=10.0).oversaturated
        assert summarize(queued, duration_s=10.0, rate=10.0).oversaturated
        assert summarize(steady, duration_s=10.0, rate=10.0, capped=1).oversaturated
        assert not summarize(queued, duration_s=10.0, concurrency=4).oversaturated  # closed loop

    def test_ttft_cdf_is_thinned_to_100_points_ending_at_1(self):
        cdf = ttft_cdf([i / 1000 for i in range(1000, 0, -1)])
        assert 100 == len(cdf) and (0.01, 0.01) == cdf[0] and (1.0, 1.0) == cdf[-1]
        assert [(0.2, 0.5), (0.3, 1.0)] == ttft_cdf([0.3, 0.2])


NOT_FINITE = "--rates, --slo, --warmup and --cooldown take finite numbers (not inf or nan)"


@pytest.mark.parametrize(("argv", "message"), [
    (["--mode", "rate"], "--mode rate needs --rates R1,R2,... (requests/s)"),
    (["--mode", "rate", "--rates", ""], "--rates: give at least one rate (requests/s), e.g. --rates 1,5,10"),
    (["--mode", "rate", "--rates", "5,0"], "--rates: every rate must be a positive number of requests/s, got 0"),
    (["--mode", "rate", "--rates", "-2"], "--rates: every rate must be a positive number of requests/s, got -2"),
    (["--mode", "rate", "--rates", "fast"], "--rates: expected comma-separated requests/s, e.g. 1,5,10, got 'fast'"),
    (["--rates", "5"], "--rates applies to --mode rate only (this is --mode concurrency)"),
    (["--slo", "ttft=0.5,itl=0.1"], "--slo: unknown key 'itl' (known: e2e, tpot, ttft)"),
    (["--slo", "ttft"], "--slo: expected KEY=SECONDS pairs (keys ttft, tpot, e2e), got 'ttft'"),
    (["--slo", "e2e=soon"], "--slo: expected KEY=SECONDS pairs (keys ttft, tpot, e2e), got 'e2e=soon'"),
    (["--slo", "e2e=0"], "--slo: e2e must be a positive number of seconds, got 0"),
    (["--slo", "tpot=0.05", "--no-stream"], "--slo: ttft and tpot need streaming (drop --no-stream)"),
    (["--warmup", "-1"], "--warmup and --cooldown must be 0 or more"),
    (["--mode", "sweep", "--max-concurrency", "0"], "--max-concurrency and --sweep-points must be positive"),
    (["--warmup", "3", "--cooldown", "0.5", "--duration", "5"],
     "--warmup and --cooldown (3 s + 2.5 s) leave nothing of --duration 5 s to measure"),
    (["--mode", "rate", "--rates", "inf"], NOT_FINITE),
    (["--warmup", "nan"], NOT_FINITE),
    (["--duration", "nan"], "--duration must be a positive number of seconds, got nan"),
    (["--duration", "0"], "--duration must be a positive number of seconds, got 0"),
    (["--mode", "rate", "--rates", "1e9"], "--rates 1e+09 for --duration 10 s schedules 10,000,000,000 requests in one "
                                           "level (at most 1,000,000): lower the rate or the duration"),
    (["--max-tokens", "10000000000000000000000"], "--max-tokens must be between 1 and 10,000,000, got "
                                                  "10000000000000000000000"),
    (["--prompt-tokens", "0"], "--prompt-tokens must be between 1 and 1,000,000, got 0"),
])
def test_input_errors(argv, message, tmp_path, capsys, restored_logging):
    """Each bad flag is one `error:` line (exit 2), before anything is measured or written."""
    out = tmp_path / "out"
    assert 2 == main(["profile", "endpoint", "--model", "sim/echo", "--out", str(out), *argv])
    assert f"error: {message}\n" == capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())


class TestTheLoadIsWhatWasAskedFor:
    async def test_a_dead_endpoint_is_sent_every_request(self, sim):
        """Every connection dropped (pdrop=1): no circuit breaker stands in for the endpoint, so each request the
        level counts reached the sim (5 failures would open it and fail the rest unsent, thousands a second)."""
        profile = await profile_endpoint(ModelConfig(), "sim/echo?pdrop=1", concurrencies=[2], duration=0.3,
                                         sim_base_url=sim.base_url, options=ProfileOptions(stream=False))
        (level,) = profile.levels
        assert level.ok == 0 and level.errors == level.requests > 5
        assert sum(sim.stats.received.values()) == level.requests + level.excluded

    async def test_the_configs_rpm_does_not_throttle_the_profile(self, sim):
        """A model configured at rpm 1 (one a minute, paced: one request in the level's 0.3 s) still gets the 2
        workers' load of 10 ms replies: at least three requests, a count no pacing at rpm 1 allows and that even a
        loaded machine reaches (it has 0.3 s for three 10 ms replies)."""
        config = ModelConfig.from_dict({"models": {"sim/echo": {"limits": {"rpm": 1}}}})
        profile = await profile_endpoint(config, "sim/echo?latency_ms=10", concurrencies=[2], duration=0.3,
                                         sim_base_url=sim.base_url, options=ProfileOptions(stream=False))
        assert profile.levels[0].requests >= 3

    async def test_a_capped_rate_level_sends_nothing_after_its_end(self, sim):
        """50 req/s (constant: 25 due in 0.5 s) through a cap of 1 against 100 ms replies: at most 5 or 6 are sent,
        the rest are unsent when the level ends, and the rate read is what ran (at most 1 / 0.1 s), not 50.

        No bound here depends on the machine's speed: each request takes at least the sim's 100 ms and they run one
        at a time, so a loaded machine can only send fewer (more unsent, a lower rate); the counts add up exactly."""
        options = ProfileOptions(mode="rate", rates=(50.0,), arrivals="constant", max_concurrency=1, stream=False)
        profile = await profile_endpoint(ModelConfig(), "sim/echo?latency_ms=100", duration=0.5,
                                         sim_base_url=sim.base_url, options=options)
        (level,) = profile.levels
        assert level.requests + level.excluded + level.unsent == 25 and level.unsent >= 19
        assert level.oversaturated and level.capped > 0 and level.requests_per_s <= 10.5
        assert sum(sim.stats.received.values()) == 25 - level.unsent


def test_input_error_exit_code_in_a_process(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mpcbench_async", "profile", "endpoint", "--model", "sim/echo",
                           "--mode", "rate", "--out", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert (2, "error: --mode rate needs --rates R1,R2,... (requests/s)\n") == (done.returncode, done.stderr)


MODEL = "sim/echo?latency_ms=20&tokens_per_s=500&output_tokens=5"


@pytest.mark.parametrize(("argv", "loads"), [
    (["--mode", "concurrency", "--concurrency", "1,2"], ["c=1", "c=2"]),
    (["--mode", "rate", "--rates", "5,10", "--arrivals", "constant"], ["5 req/s", "10 req/s"]),
    (["--mode", "sweep", "--max-concurrency", "4", "--sweep-points", "2"], None),
])
def test_cli_modes_write_json_markdown_and_charts(argv, loads, tmp_path, capsys, restored_logging):
    """Each mode, 0.3 s a level: the JSON holds every level's figures, the Markdown both tables, two SVGs with ticks."""
    out = tmp_path / "out"
    assert 0 == main(["profile", "endpoint", "--model", MODEL, "--duration", "0.3", "--warmup", "0.1",
                      "--slo", "ttft=1,e2e=2", "--out", str(out), *argv])
    err = capsys.readouterr().err.splitlines()
    base = "endpoint_sim_echo_latency_ms_20_tokens_per_s_500_output_tokens_5"
    assert sorted(p.name for p in out.iterdir()) == [f"{base}.json", f"{base}.md", f"{base}.svg", f"{base}_ttft.svg"]
    profile = json.loads((out / f"{base}.json").read_text())
    levels = profile["levels"]
    labels = [f"c={lv['concurrency']}" if lv.get("concurrency") else f"{lv['rate']:g} req/s" for lv in levels]
    if loads is None:  # sweep: c=1 and c=4, then up to 2 rates between their rates
        assert labels[:2] == ["c=1", "c=4"] and 2 <= len(levels) <= 4
        assert profile["saturation_requests_per_s"] == levels[1]["requests_per_s"]
        assert all(lv["rate"] is not None for lv in levels[2:])
    else:
        assert labels == loads
    assert len(err) == len(levels) and all(line.startswith(label) for line, label in zip(err, labels, strict=True))
    assert (profile["mode"], profile["stream"], profile["warmup_s"], profile["slo"]) == (
        argv[1], True, 0.03, {"ttft": 1.0, "e2e": 2.0})
    for level in levels:
        assert level["requests"] == level["ok"] > 0
        assert level["excluded"] >= (1 if level["concurrency"] else 0)  # the workers' first requests start at 0
        assert set(level["ttft"]) == {"p50", "p90", "p95", "p99", "mean"}
        assert {"tpot", "itl", "e2e", "goodput_requests_per_s", "slo_met_fraction"} <= set(level)
        assert level["slo_met_fraction"] == 1.0 and level["goodput_requests_per_s"] == level["requests_per_s"]
    assert profile["ttft_cdf"][-1][1] == 1.0 and profile["ttft_cdf_level"] in labels
    markdown = (out / f"{base}.md").read_text()
    assert all(f"| {label} |" in markdown for label in labels)
    assert "| load | TTFT | TPOT | ITL | stream end | E2E |" in markdown
    for chart in (f"{base}.svg", f"{base}_ttft.svg"):
        svg = (out / chart).read_text()
        assert svg.startswith("<svg") and svg.count('class="tick x"') >= 2 and svg.count('class="tick y"') >= 2
    assert 'data-name="TTFT p95"' in (out / f"{base}.svg").read_text()
    assert 'data-name="TTFT CDF"' in (out / f"{base}_ttft.svg").read_text()


def test_cli_not_streamed_shows_dashes(tmp_path: Path, capsys, restored_logging):
    out = tmp_path / "out"
    assert 0 == main(["profile", "endpoint", "--model", MODEL, "--duration", "0.3", "--concurrency", "1",
                      "--no-stream", "--out", str(out)])
    profile = json.loads(next(out.glob("*.json")).read_text())
    assert (profile["stream"], profile["levels"][0]["ttft"], profile["ttft_cdf"]) == (False, None, [])
    assert "| c=1 | – | – | – |" in (next(out.glob("*.md"))).read_text()
    assert "no TTFT measured (not streamed)" in next(out.glob("*_ttft.svg")).read_text()
