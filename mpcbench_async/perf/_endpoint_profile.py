"""``profile endpoint``: throughput, latency (TTFT/TPOT/ITL/E2E) and goodput of one model under load.

Three modes, as serving benchmarks (vLLM's ``bench serve``, GuideLLM) measure an endpoint:

- ``concurrency``: at each level C, C workers send requests back to back (closed loop);
- ``rate``: at each rate R, requests are sent on a schedule (Poisson or constant
  arrivals) whatever the replies do (open loop), at most ``max_concurrency`` in flight;
- ``sweep``: concurrency 1 (the synchronous rate) and ``max_concurrency`` (the
  saturation throughput) first, then rates evenly spaced between, stopping after
  the first over-saturated rate — its cap was hit, or it completed under 90% of
  what it was sent (``keeps_up``) — as GuideLLM's sweep does.

Every request goes through ``LLMClient`` (streamed by default, so TTFT and the
inter-token gaps are recorded) with adaptation, retries, the circuit breaker, the
config's rpm/tpm and pacing (by headers too) off, so errors and 429s count as the endpoint returns them and the
load is what was asked for; each call's record (``call_sink``) gives its timings.
Requests that started in the warm-up or ended in the cool-down of a level count in no
latency; rates count the share of each request's run between the two. A rate level
sends nothing after its end: arrivals still held by the cap then are ``unsent``.
The knee is the lowest concurrency reaching 90% of the peak rate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import anyio
import msgspec

from .._exceptions import InputError, LLMError, RateLimitError
from .._options import checked_options
from ..llm import LLMClient, ModelConfig, is_sim_model
from ..records import LLMCallRecord, Message
from ..sim import SimProvider
from ._endpoint_stats import SLO_KEYS, LevelResult, RequestSample, measured, summarize, ttft_cdf
from ._load import Arrivals, arrival_offsets, level_rng, sweep_rates

__all__ = ["EndpointProfile", "ProfileOptions", "profile_endpoint"]

Mode = Literal["concurrency", "rate", "sweep"]


class ProfileOptions(msgspec.Struct, kw_only=True, frozen=True):
    """How to load the endpoint beyond the concurrency levels (each field is the CLI flag of the same name).

    ``warmup``/``cooldown``: seconds at the start and end of each level (the CLI also takes
    a fraction of ``--duration`` below 1 and passes seconds).
    ``slo``: limits in seconds on ``ttft``, ``tpot`` and ``e2e`` (any subset) for goodput.
    Invalid values raise ``InputError`` naming the flag; a value of the wrong type names the setting.
    """

    mode: Mode = "concurrency"
    rates: tuple[float, ...] = ()
    arrivals: Arrivals = "poisson"
    seed: int = 0
    max_concurrency: int = 256
    sweep_points: int = 5
    warmup: float = 0.0
    cooldown: float = 0.0
    slo: dict[str, float] = msgspec.field(default_factory=dict)
    stream: bool = True

    def __post_init__(self) -> None:
        checked_options(self)  # the declared types first: a library caller's rates="1,5" is named, not a TypeError
        if not all(math.isfinite(value) for value in (*self.rates, *self.slo.values(), self.warmup, self.cooldown)):
            raise InputError("``rates``, ``slo``, ``warmup`` and ``cooldown`` take finite numbers (not inf or nan)")
        if self.mode == "rate" and not self.rates:
            raise InputError("``mode=rate`` needs ``rates=R1,R2,...`` (requests/s)")
        if self.rates and self.mode != "rate":
            raise InputError(f"``rates`` applies to ``mode=rate`` only (this is ``mode={self.mode}``)")
        for rate in self.rates:
            if not rate > 0:
                raise InputError(f"``rates``: every rate must be a positive number of requests/s, got {rate:g}")
        for key, limit in self.slo.items():
            if key not in SLO_KEYS:
                raise InputError(f"``slo``: unknown key {key!r} (known: {', '.join(SLO_KEYS)})")
            if not limit > 0:
                raise InputError(f"``slo``: {key} must be a positive number of seconds, got {limit:g}")
        if not self.stream and {"ttft", "tpot"} & self.slo.keys():
            raise InputError("``slo``: ttft and tpot need streaming (drop ``stream=False``)")
        if self.warmup < 0 or self.cooldown < 0:
            raise InputError("``warmup`` and ``cooldown`` must be 0 or more")
        if self.max_concurrency < 1 or self.sweep_points < 1:
            raise InputError("``max_concurrency`` and ``sweep_points`` must be positive")


class EndpointProfile(msgspec.Struct, kw_only=True):
    """The levels of one profile and what they add up to.

    ``ttft_cdf``: (TTFT s, fraction of requests at or below it) of ``ttft_cdf_level``, the
    heaviest level (highest concurrency, else highest rate), at most 100 points; empty
    when streaming was off.
    """

    model: str
    prompt_tokens: int
    max_tokens: int
    duration_s: float
    levels: list[LevelResult]
    peak_requests_per_s: float
    knee_concurrency: int | None
    mode: Mode = "concurrency"
    stream: bool = True
    arrivals: Arrivals | None = None
    seed: int | None = None
    warmup_s: float = 0.0
    cooldown_s: float = 0.0
    slo: dict[str, float] = msgspec.field(default_factory=dict)
    saturation_requests_per_s: float | None = None
    ttft_cdf: list[tuple[float, float]] = msgspec.field(default_factory=list)
    ttft_cdf_level: str | None = None

    @property
    def all_failed(self) -> bool:
        """Every request sent failed (a wrong key, an unknown model, a dead endpoint): nothing was measured."""
        return all(level.ok == 0 for level in self.levels) and any(level.errors for level in self.levels)


class _Run:
    """One level's requests through one client: launches them, turns each call record into a sample."""

    def __init__(self, client: LLMClient, records: dict[str, LLMCallRecord], model: str, messages: list[Message],
                 params: dict[str, Any]) -> None:
        self.client, self.records, self.model, self.messages, self.params = client, records, model, messages, params
        self.samples: list[RequestSample] = []
        self.in_flight = self.max_in_flight = self.capped = 0
        self.t0 = time.perf_counter()

    def now(self) -> float:
        return time.perf_counter() - self.t0

    async def request(self, key: str) -> None:
        start = self.now()
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        rate_limited = False
        try:
            await self.client.chat(self.model, self.messages, key=key, **self.params)
        except RateLimitError:
            rate_limited = True
        except LLMError:
            pass
        finally:
            self.in_flight -= 1
        end, record = self.now(), self.records.pop(key, None)
        if record is None or record.status != "ok":
            self.samples.append(RequestSample(
                start_s=start, end_s=end, ok=False, rate_limited=rate_limited,
                error_class=record.error_class if record else None,
                error_message=record.error_message if record else None))
            return
        self.samples.append(RequestSample(
            start_s=start, end_s=end, ok=True, output_tokens=record.usage.completion_tokens, e2e_s=record.latency_s,
            ttft_s=record.ttft_s, tpot_s=record.tpot_s, itl_s=tuple(record.itl_s or ()),
            stream_end_s=record.stream_end_s))


class _Levels:
    """Runs levels of one profile: the tuned client of each, the window, the samples kept for the TTFT chart."""

    def __init__(self, config: ModelConfig, model: str, options: ProfileOptions, *, duration: float, prompt: str,
                 max_tokens: int, sim_base_url: str | None) -> None:
        self.config, self.model, self.options, self.duration = config, model, options, duration
        self.messages = [Message(role="user", content=prompt)]
        self.params: dict[str, Any] = {"max_tokens": max_tokens, **({"stream": True} if options.stream else {})}
        self.sim_base_url = sim_base_url
        self.warmup_s, self.cooldown_s = options.warmup, options.cooldown
        self.ttfts: dict[str, list[float]] = {}

    def _client(self, cap: int, records: dict[str, LLMCallRecord]) -> LLMClient:
        tuned = self.config.with_overrides(self.model, {
            "limits": {"max_concurrency": cap, "adaptive": False, "pacing": False, "rpm": None, "tpm": None},
            "retry": {"max_attempts": 1}, "breaker": {"failures": 0}})
        client = LLMClient(tuned, sim_base_url=self.sim_base_url,
                           call_sink=lambda record: records.__setitem__(record.key, record))
        client.check_models([self.model])
        return client

    async def concurrency(self, concurrency: int) -> LevelResult:
        records: dict[str, LLMCallRecord] = {}
        async with self._client(concurrency, records) as client:
            run = _Run(client, records, self.model, self.messages, self.params)

            async def worker(index: int) -> None:
                n = 0
                while run.now() < self.duration:
                    n += 1
                    await run.request(f"profile-c{concurrency}-{index}-{n}")

            async with anyio.create_task_group() as tg:
                for index in range(concurrency):
                    tg.start_soon(worker, index)
        return self._summarize(run, concurrency=concurrency)

    async def rate(self, rate: float) -> LevelResult:
        records: dict[str, LLMCallRecord] = {}
        cap = self.options.max_concurrency
        offsets = arrival_offsets(rate, self.duration, self.options.arrivals, level_rng(self.options.seed, rate))
        async with self._client(cap, records) as client:
            run = _Run(client, records, self.model, self.messages, self.params)
            slots = anyio.Semaphore(cap)

            async def send(key: str) -> None:
                try:
                    await run.request(key)
                finally:
                    slots.release()

            unsent = 0
            async with anyio.create_task_group() as tg:
                for n, offset in enumerate(offsets):
                    await anyio.sleep(max(0.0, offset - run.now()))
                    if slots.value == 0:
                        run.capped += 1
                    await slots.acquire()
                    if run.now() >= self.duration:  # held by the cap past the level's end: never sent
                        slots.release()
                        unsent = len(offsets) - n
                        break
                    tg.start_soon(send, f"profile-r{rate:g}-{n}")
        return self._summarize(run, rate=rate, scheduled=offsets, unsent=unsent)

    async def run(self, concurrencies: Sequence[int], progress: Callable[[LevelResult], None] | None,
                  ) -> tuple[list[LevelResult], float | None]:
        """Every level of the mode in turn, and the sweep's saturation throughput (``None`` in other modes)."""
        levels: list[LevelResult] = []

        def measured_level(level: LevelResult) -> LevelResult:
            levels.append(level)
            if progress:
                progress(level)
            return level

        if self.options.mode == "concurrency":
            for concurrency in concurrencies:
                measured_level(await self.concurrency(concurrency))
        elif self.options.mode == "rate":
            for rate in self.options.rates:
                measured_level(await self.rate(rate))
        else:
            synchronous = measured_level(await self.concurrency(1)).requests_per_s
            saturation = measured_level(await self.concurrency(self.options.max_concurrency)).requests_per_s
            for rate in sweep_rates(synchronous, saturation, self.options.sweep_points):
                if measured_level(await self.rate(rate)).oversaturated:
                    break
            return levels, saturation
        return levels, None

    def _summarize(self, run: _Run, *, concurrency: int | None = None, rate: float | None = None,
                   scheduled: Sequence[float] | None = None, unsent: int = 0) -> LevelResult:
        level = summarize(run.samples, duration_s=self.duration, warmup_s=self.warmup_s,
                          cooldown_s=self.cooldown_s, slo=self.options.slo, concurrency=concurrency, rate=rate,
                          scheduled=scheduled, max_in_flight=run.max_in_flight, capped=run.capped, unsent=unsent)
        kept = measured(run.samples, self.warmup_s, self.cooldown_s, self.duration)
        self.ttfts[level.load] = [s.ttft_s for s in kept if s.ok and s.ttft_s is not None]
        return level


MAX_ARRIVALS = 1_000_000  # requests one rate level may schedule
MAX_PROMPT_TOKENS = 1_000_000
MAX_OUTPUT_TOKENS = 10_000_000


def _check_load(options: ProfileOptions, *, duration: float, prompt_tokens: int, max_tokens: int) -> None:
    """Refuse, naming the flag, a load that is not a number or could not be generated (a schedule, a prompt)."""
    if not (math.isfinite(duration) and duration > 0):
        raise InputError(f"``duration`` must be a positive number of seconds, got {duration:g}")
    if not 1 <= prompt_tokens <= MAX_PROMPT_TOKENS:
        raise InputError(f"``prompt_tokens`` must be between 1 and {MAX_PROMPT_TOKENS:,}, got {prompt_tokens}")
    if not 1 <= max_tokens <= MAX_OUTPUT_TOKENS:
        raise InputError(f"``max_tokens`` must be between 1 and {MAX_OUTPUT_TOKENS:,}, got {max_tokens}")
    for rate in options.rates:
        if rate * duration > MAX_ARRIVALS:
            raise InputError(f"``rates={rate:g}`` for ``duration={duration:g}`` s schedules {rate * duration:,.0f} "
                             f"requests in one level (at most {MAX_ARRIVALS:,}): lower the rate or the duration")


def _embedded_sim(config: ModelConfig, model: str) -> bool:
    """Whether ``model`` is served by the embedded sim (a ``sim/`` model without a ``base_url``)."""
    return is_sim_model(model) and config.settings_for(model).base_url is None


async def profile_endpoint(
    config: ModelConfig, model: str, *, concurrencies: Sequence[int] = (1, 4, 16, 64, 256), duration: float = 10.0,
    prompt_tokens: int = 200, max_tokens: int = 64, sim_base_url: str | None = None,
    progress: Callable[[LevelResult], None] | None = None, options: ProfileOptions | None = None,
) -> EndpointProfile:
    """Measure each level of ``options.mode`` in turn (``concurrencies`` in concurrency mode); return the profile.

    One level at one load: ``profile_endpoint(config, model, concurrencies=[8], duration=5)``
    or ``..., options=ProfileOptions(mode="rate", rates=(20.0,)))``; its figures are
    ``profile.levels[0]`` (``requests_per_s``, ``output_tokens_per_s``, ``ttft.p50``, …). A ``sim/``
    model without a ``base_url`` is served by one embedded sim (``SimProvider``) for the whole profile,
    started before the first level, so its start-up is in no level's figures.
    """
    options = options or ProfileOptions()
    _check_load(options, duration=duration, prompt_tokens=prompt_tokens, max_tokens=max_tokens)
    warmup_s, cooldown_s = options.warmup, options.cooldown
    if warmup_s + cooldown_s >= duration:
        raise InputError(f"``warmup`` and ``cooldown`` ({warmup_s:g} s + {cooldown_s:g} s) leave nothing of "
                         f"``duration={duration:g}`` s to measure")
    words = "the quick brown fox jumps over the lazy dog and counts the tokens it sees".split()
    prompt = " ".join(words[i % len(words)] for i in range(max(1, prompt_tokens * 3 // 4)))
    provider = SimProvider() if sim_base_url is None and _embedded_sim(config, model) else None
    try:
        if provider is not None:  # once, before any level's clock starts (a client would start one per level)
            sim_base_url = await provider.start()
        runner = _Levels(config, model, options, duration=duration, prompt=prompt, max_tokens=max_tokens,
                         sim_base_url=sim_base_url)
        levels, saturation = await runner.run(concurrencies, progress)
    finally:
        if provider is not None:
            await provider.aclose()
    peak = max((lv.requests_per_s for lv in levels), default=0.0)
    knee = next((lv.concurrency for lv in sorted(levels, key=lambda lv: lv.concurrency or 0)
                 if lv.concurrency is not None and peak and lv.requests_per_s >= 0.9 * peak), None)
    heaviest = max(levels, key=lambda lv: (lv.concurrency or 0, lv.rate or 0.0), default=None)
    cdf = ttft_cdf(runner.ttfts.get(heaviest.load, [])) if heaviest is not None else []
    return EndpointProfile(
        model=model, prompt_tokens=prompt_tokens, max_tokens=max_tokens, duration_s=duration, levels=levels,
        peak_requests_per_s=peak, knee_concurrency=knee, mode=options.mode, stream=options.stream,
        arrivals=options.arrivals if options.mode != "concurrency" else None,
        seed=options.seed if options.mode != "concurrency" else None, warmup_s=round(warmup_s, 3),
        cooldown_s=round(cooldown_s, 3), slo=dict(options.slo), saturation_requests_per_s=saturation,
        ttft_cdf=cdf, ttft_cdf_level=heaviest.load if cdf and heaviest is not None else None)
