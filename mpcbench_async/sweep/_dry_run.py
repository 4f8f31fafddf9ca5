"""A sweep's plan and what it would cost, without a single call (``sweep --dry-run``).

Why ranges: before a run nobody knows how many turns an agent takes or how long
its tool results are, so every figure is a ``low``–``high`` range that a real run
falls inside, under the assumptions the ``DryRun`` lists, plus a ``likely``
value when earlier sweeps (the output directory itself, or ``history``
directories) recorded calls of that model. History narrows the ranges to what was
observed: calls per unit, the prompt's growth per turn, output tokens per call,
the bytes-per-token ratio of each model (``llm.TokenEstimator`` calibrated on
the first turn's real count) and call latency.

Prompts are sized from the real requests: each task's first agent request
(system and task prompt, tool schemas, the model's params) and each judge's
first request built from the task, through the token estimator. The time the
limits imply is, per model, the largest of calls ÷ RPM, TPM cost ÷ TPM (what
the limiter charges: estimated prompt plus max output tokens per call) and
Little's law (calls × latency ÷ concurrency); the sweep takes as long as its
slowest model. A model without a known price costs ``None`` ("unknown"), never $0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import Literal

import msgspec
import orjson

from .._options import setting_error
from .._prompts import PromptConfig
from ..llm import ModelConfig, ModelSettings, Prices, TokenEstimator, model_prices
from ..mpcbench import (
    AgentRunRecord,
    JudgeRecord,
    RunLog,
    RunTimings,
    SweepPlan,
    Task,
    agent_messages,
    build_judge_input,
    judge_messages,
)
from ..mpcbench.tools import TOOL_RESULT_MAX_BYTES, ToolBackend
from ..records import Message, Usage
from ..runtime import ResumeIndex
from ._history import Observed, ok_units, read_history
from ._reading import CALLS, JUDGEMENTS, RUNS

__all__ = ["CostRange", "DryRun", "ModelTime", "RoleEstimate", "TokenRange", "estimate_sweep", "render_dry_run"]

BYTES_PER_TOKEN = (2.5, 4.5)  # assumed without history: English BPE vocabularies ~3-4, JSON and code fewer
ASSUMED_LATENCY_S = 2.0
ASSUMED_BATCH_LATENCY_S = 3600.0  # a provider batch's turnaround: minutes to hours, within a 24 h window
REPAIR_BYTES = 1024  # a judge's repair request: the template plus the validation problem


class TokenRange(msgspec.Struct, kw_only=True, frozen=True):
    """A count between ``low`` and ``high`` (``None``: no bound, e.g. no ``max_tokens``); ``likely`` from history."""

    low: int
    high: int | None
    likely: int | None = None


class CostRange(msgspec.Struct, kw_only=True, frozen=True):
    """USD; every field ``None`` when the price is unknown, ``high`` alone when the tokens have no bound."""

    low: float | None
    high: float | None
    likely: float | None = None


class RoleEstimate(msgspec.Struct, kw_only=True, frozen=True):
    """One model in one role: its units, what a resume skips, and the calls, tokens and cost of the rest."""

    model: str
    role: Literal["agent", "judge"]
    units: int
    skipped: int
    to_run: int
    calls_per_unit: TokenRange
    calls: TokenRange
    prompt_tokens: TokenRange
    output_tokens: TokenRange
    cost_usd: CostRange
    history_units: int  # finished units of earlier sweeps the estimate learned from (0: assumptions only)
    online_cost_usd: CostRange | None = None  # a batch model's calls at the online price (``cost_usd``: batch)


class ModelTime(msgspec.Struct, kw_only=True, frozen=True):
    """Seconds one model's limits imply for its calls of every role (``high`` ``None``: unbounded)."""

    model: str
    rpm: int | None
    tpm: int | None
    concurrency: int
    latency_s: float
    latency_observed: bool
    rpm_s: tuple[float, float | None]
    tpm_s: tuple[float, float | None]
    latency_bound_s: tuple[float, float | None]
    bound_s: tuple[float, float | None]
    batch: bool = False  # the model's calls go in provider batches: ``latency_bound_s`` is one batch per round
    batch_rounds: str = ""  # what one batch is: ``judge attempt``, ``agent turn`` (a wave), or both


class DryRun(msgspec.Struct, kw_only=True, frozen=True):
    """The plan (units, skips) and its estimate, with every assumption it rests on, one line each."""

    out_dir: str
    concurrency: int
    rows: list[RoleEstimate]
    times: list[ModelTime]
    units: int
    skipped: int
    calls: TokenRange
    prompt_tokens: TokenRange
    output_tokens: TokenRange
    cost_usd: CostRange
    time_s: tuple[float, float | None]
    slowest_model: str
    history: list[str]
    assumptions: list[str]


def _request_bytes(settings: ModelSettings, name: str, messages: Sequence[Message], tools: object) -> int:
    """The size of the chat request body the client sends (model, messages, tools, the model's params)."""
    body: dict[str, object] = {"model": settings.model or name, "messages": msgspec.to_builtins(messages)}
    if tools:
        body["tools"] = msgspec.to_builtins(tools)
    body.update(settings.params)
    return len(orjson.dumps(body))


def _max_out(settings: ModelSettings) -> int | None:
    value = settings.params.get("max_tokens") or settings.params.get("max_completion_tokens")
    return int(value) if value else None


def _plus(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _sum(ranges: Sequence[TokenRange]) -> TokenRange:
    likely = [r.likely for r in ranges]
    high: int | None = 0
    for r in ranges:
        high = _plus(high, r.high)
    return TokenRange(low=sum(r.low for r in ranges), high=high,
                      likely=None if None in likely or not ranges else sum(x or 0 for x in likely))


def _turns_total(calls: int, base: float, growth: float) -> float:
    """Prompt tokens of ``calls`` calls whose prompt starts at ``base`` and grows by ``growth`` each call."""
    return calls * base + growth * calls * (calls - 1) / 2


class _Estimator:
    """The estimate of one plan; one method per role, assumptions collected as they are made."""

    def __init__(self, plan: SweepPlan, config: ModelConfig, prompts: PromptConfig, out_dir: Path,
                 observed: dict[tuple[str, str], Observed], judge_attempts: int, retry_errors: bool) -> None:
        self.plan, self.config, self.prompts, self.observed = plan, config, prompts, observed
        self.judge_attempts = judge_attempts
        self.assumptions: list[str] = []
        self.runs_done = ResumeIndex.from_file(out_dir / RUNS, retry_errors=retry_errors, type_=AgentRunRecord)
        self.judges_done = ResumeIndex.from_file(out_dir / JUDGEMENTS, retry_errors=retry_errors,
                                                 type_=JudgeRecord)
        self.runs_ok = set(ok_units(out_dir))  # a done run is judged only if it has an ok record
        self.tools = ToolBackend(next(iter(plan.data.values()))).schemas() if plan.data else ()
        self._agent_bytes: dict[tuple[str, str], int] = {}

    def note(self, line: str) -> None:
        if line not in self.assumptions:
            self.assumptions.append(line)

    def agent_bytes(self, model: str, task_id: str) -> int:
        """The bytes of ``task_id``'s first request to ``model`` (rendered once per pair)."""
        if (model, task_id) not in self._agent_bytes:
            task = self.plan.tasks[task_id]
            messages = agent_messages(task, self.plan.data[task.scenario_id], self.prompts)
            self._agent_bytes[model, task_id] = _request_bytes(self.config.settings_for(model), model, messages,
                                                               self.tools)
        return self._agent_bytes[model, task_id]

    def ratios(self, model: str, seen: Observed | None) -> tuple[float, float, TokenEstimator]:
        """The bytes-per-token bounds of ``model`` and its estimator, calibrated on first turns the history has."""
        estimator = TokenEstimator()
        pairs = [(self.agent_bytes(model, task_id), unit[0][0]) for task_id, unit in
                 zip(seen.task_ids, seen.units, strict=True) if task_id in self.plan.tasks and unit and unit[0][0] > 0
                 ] if seen else []
        for size, tokens in pairs:
            estimator.observe(size, tokens)
        if not pairs:
            self.note(f"{model}: {BYTES_PER_TOKEN[0]}-{BYTES_PER_TOKEN[1]} bytes per prompt token assumed "
                      f"(no first-turn history to calibrate on)")
            return *BYTES_PER_TOKEN, estimator
        ratios = [size / tokens for size, tokens in pairs]
        return min(ratios), max(ratios), estimator

    def per_unit(self, model: str, role: str, seen: Observed | None, most: int) -> TokenRange:
        if seen is None or not seen.units:
            self.note(f"{model}: no history as {role}; 1-{most} calls per unit assumed")
            return TokenRange(low=1, high=most)
        counts = [min(most, max(1, len(unit))) for unit in seen.units]
        return TokenRange(low=min(counts), high=max(counts), likely=round(fmean(counts)))

    def output_per_call(self, model: str, seen: Observed | None, cap: int | None) -> TokenRange:
        if cap is None:
            self.note(f"{model}: no max_tokens in its params, so output tokens and cost have no upper bound")
        completions = [c for unit in seen.units for _, c in unit] if seen else []
        if not completions:
            return TokenRange(low=0, high=cap)
        return TokenRange(low=min(completions), high=cap, likely=round(fmean(completions)))

    def agent(self, model: str) -> RoleEstimate:
        plan, seen = self.plan, self.observed.get((model, "agent"))
        keys = [(task_id, plan.agent_key(task_id, model, trial))
                for trial in range(plan.trials) for task_id in plan.tasks]
        todo = Counter(task_id for task_id, key in keys if key not in self.runs_done)
        settings = self.config.settings_for(model)
        cap = _max_out(settings)
        per_unit = self.per_unit(model, "agent", seen, plan.max_turns)
        per_call = self.output_per_call(model, seen, cap)
        r_low, r_high, estimator = self.ratios(model, seen)
        growth = [(p - unit[0][0]) / t for unit in seen.units for t, (p, _) in enumerate(unit) if t] if seen else []
        g_high: float | None
        g_likely: float | None
        if growth:
            g_low, g_high, g_likely = min(growth), max(growth), fmean(growth)
        elif per_unit.high == 1:  # every run in the history made one call: the prompt never grows
            g_low = g_high = g_likely = 0.0
        else:
            self.note(f"{model}: no multi-turn history; each agent turn assumed to add at most one reply of "
                      f"max_tokens and one tool result of {TOOL_RESULT_MAX_BYTES // 1024} KiB to the prompt")
            g_low, g_likely = 0.0, None
            g_high = None if cap is None else cap + math.ceil(TOOL_RESULT_MAX_BYTES / r_low)
        low = high = likely = 0.0
        for task_id, n in todo.items():
            size = self.agent_bytes(model, task_id)
            low += n * _turns_total(per_unit.low, math.floor(size / r_high), g_low)
            if g_high is not None and per_unit.high is not None:
                high += n * _turns_total(per_unit.high, math.ceil(size / r_low), g_high)
            if g_likely is not None and per_unit.likely is not None:
                likely += n * _turns_total(per_unit.likely, estimator.estimate(size), g_likely)
        prompt = TokenRange(low=math.floor(low), high=None if g_high is None else math.ceil(high),
                            likely=round(likely) if g_likely is not None and per_unit.likely is not None else None)
        return self.row(model, "agent", len(keys), len(keys) - sum(todo.values()), per_unit, prompt, per_call, seen)

    def judge_units(self, model: str) -> tuple[int, int, Counter[str]]:
        """Units, skipped and tasks to judge by ``model``, by the runner's resume rules (``runtime.Pipeline``)."""
        plan, units, todo = self.plan, 0, Counter[str]()
        for unit in plan.agent_units():
            units += 1
            judge_key = plan.judge_key(unit.key, model)
            if unit.key not in self.runs_done or (unit.key in self.runs_ok and judge_key not in self.judges_done):
                todo[unit.task_id] += 1  # a run made now is judged; a stored ok run only by the judges it lacks
        return units, units - sum(todo.values()), todo

    def judge(self, model: str) -> RoleEstimate:
        seen = self.observed.get((model, "judge"))
        units, skipped, todo = self.judge_units(model)
        settings = self.config.settings_for(model)
        cap = _max_out(settings)
        per_unit = self.per_unit(model, "judge", seen, self.judge_attempts)
        per_call = self.output_per_call(model, seen, cap)
        self.note("every run to be made is assumed to end ok and be judged (a failed run is not judged)")
        prompts_seen = [p for unit in seen.units for p, _ in unit] if seen else []
        n = sum(todo.values())
        if prompts_seen:
            low, high = n * per_unit.low * min(prompts_seen), n * (per_unit.high or 0) * max(prompts_seen)
            likely = None if per_unit.likely is None else round(n * per_unit.likely * fmean(prompts_seen))
            prompt = TokenRange(low=low, high=high, likely=likely)
        else:
            prompt = self.judge_prompt_bounds(model, settings, todo, per_unit, cap)
        return self.row(model, "judge", units, skipped, per_unit, prompt, per_call, seen)

    def judge_prompt_bounds(self, model: str, settings: ModelSettings, todo: Counter[str], per_unit: TokenRange,
                            cap: int | None) -> TokenRange:
        """Without history: the judge input of an empty run (low) up to a run of ``max_turns`` full tool results."""
        r_low, r_high = BYTES_PER_TOKEN
        agent_caps = [_max_out(self.config.settings_for(m)) for m in self.plan.agent_models]
        trace = (None if None in agent_caps or cap is None else
                 self.plan.max_turns * 2 * TOOL_RESULT_MAX_BYTES + 16 * max(c or 0 for c in agent_caps))
        self.note(f"{model}: a judge input is assumed to hold at most max_turns tool results of "
                  f"{TOOL_RESULT_MAX_BYTES // 1024} KiB (twice that as indented JSON) and a final answer of the "
                  f"agent's max_tokens at 16 bytes a token; each repair adds a reply of max_tokens and "
                  f"{REPAIR_BYTES} bytes")
        low = high = 0
        attempts = per_unit.high or 1
        for task_id, n in todo.items():
            size = _request_bytes(settings, model, judge_messages(build_judge_input(_empty_run(
                self.plan.tasks[task_id]), self.plan.tasks[task_id]), self.prompts), None)
            low += n * per_unit.low * math.floor(size / r_high)
            if trace is not None and cap is not None:
                first = math.ceil((size + trace) / r_low)
                high += n * math.ceil(_turns_total(attempts, first, cap + REPAIR_BYTES / r_low))
        return TokenRange(low=low, high=None if trace is None else high)

    def row(self, model: str, role: Literal["agent", "judge"], units: int, skipped: int, per_unit: TokenRange,
            prompt: TokenRange, per_call: TokenRange, seen: Observed | None) -> RoleEstimate:
        n = units - skipped
        calls = TokenRange(low=n * per_unit.low, high=None if per_unit.high is None else n * per_unit.high,
                           likely=None if per_unit.likely is None else n * per_unit.likely)
        output = TokenRange(low=calls.low * per_call.low,
                            high=None if per_call.high is None or calls.high is None else calls.high * per_call.high,
                            likely=None if per_call.likely is None or calls.likely is None
                            else calls.likely * per_call.likely)
        settings = self.config.settings_for(model)
        prices = model_prices(model, settings)
        if prices is None:
            self.note(f"{model}: no known price: cost unknown (set models.{model}.prices in {self.config.source})")
        online = _cost(prices, prompt, output)
        batch = settings.batch_settings is not None and prices is not None
        if batch:
            then = ("each turn of its runs is one batch (a lock-step wave)" if role == "agent"
                    else "a judge's repair goes in a later batch")
            self.note(f"{model}: in provider batches, each taking {ASSUMED_BATCH_LATENCY_S / 3600:g} h (assumed; "
                      f"OpenAI's window is 24 h); {then}")
        return RoleEstimate(model=model, role=role, units=units, skipped=skipped, to_run=n, calls_per_unit=per_unit,
                            calls=calls, prompt_tokens=prompt, output_tokens=output,
                            cost_usd=_cost(prices.batched(), prompt, output) if batch and prices else online,
                            history_units=len(seen.units) if seen else 0, online_cost_usd=online if batch else None)


def _empty_run(task: Task) -> RunLog:
    """A run that made no tool call and answered nothing: the smallest judge input of ``task``."""
    return RunLog(task_id=task.task_id, task_type=task.task_type or "", user_prompt=task.user_prompt,
                  tool_trace_steps=[], raw_tool_calls=[], final_answer="", rationale="", scenario_id=task.scenario_id,
                  model="", stop_reason="final", usage=Usage(), timings=RunTimings())


def _cost(prices: Prices | None, prompt: TokenRange, output: TokenRange) -> CostRange:
    if prices is None:
        return CostRange(low=None, high=None)
    unbounded = ((prompt.high is None and prices.input_per_1m > 0)
                 or (output.high is None and max(prices.output_per_1m, prices.reasoning_per_1m or 0.0) > 0))
    high = None if unbounded else prices.worst_case(prompt.high or 0, output.high or 0)  # free tokens cost $0
    likely = (None if prompt.likely is None or output.likely is None
              else prices.cost(prompt.likely, output.likely))
    return CostRange(low=prices.cost(prompt.low, output.low), high=high, likely=likely)


def _model_time(model: str, rows: list[RoleEstimate], settings: ModelSettings, concurrency: int,
                seen: list[Observed], assumed_latency_s: float) -> ModelTime:
    limits = settings.limits
    calls = _sum([r.calls for r in rows])
    cap = _max_out(settings) or 0  # the limiter charges estimated prompt + max output tokens per call
    prompt = _sum([r.prompt_tokens for r in rows])
    charged = (prompt.low + calls.low * cap, None if prompt.high is None or calls.high is None
               else prompt.high + calls.high * cap)
    latencies = [x for o in seen for x in o.latencies]
    latency = fmean(latencies) if latencies else assumed_latency_s
    parallel = max(1, min(concurrency, limits.max_concurrency))

    def per(counts: tuple[int, int | None], rate: float | None) -> tuple[float, float | None]:
        if rate is None:
            return 0.0, 0.0
        return counts[0] * rate, None if counts[1] is None else counts[1] * rate

    rpm_s = per((calls.low, calls.high), None if limits.rpm is None else 60.0 / limits.rpm)
    tpm_s = per(charged, None if limits.tpm is None else 60.0 / limits.tpm)
    little_s = per((calls.low, calls.high), latency / parallel)
    if settings.batch_settings is not None:  # no limits apply: one batch per round, one after another
        rounds = max((_batch_rounds(r, concurrency) for r in rows), default=1)
        rpm_s = tpm_s = (0.0, 0.0)
        little_s = (ASSUMED_BATCH_LATENCY_S if calls.low else 0.0, ASSUMED_BATCH_LATENCY_S * rounds)
    highs = [rpm_s[1], tpm_s[1], little_s[1]]
    bound = (max(rpm_s[0], tpm_s[0], little_s[0]), None if None in highs else max(h or 0.0 for h in highs))
    return ModelTime(model=model, rpm=limits.rpm, tpm=limits.tpm, concurrency=parallel, latency_s=latency,
                     latency_observed=bool(latencies), rpm_s=rpm_s, tpm_s=tpm_s, latency_bound_s=little_s,
                     bound_s=bound, batch=settings.batch_settings is not None,
                     batch_rounds=" or ".join(dict.fromkeys("agent turn" if r.role == "agent" else "judge attempt"
                                                            for r in rows)))


def _batch_rounds(row: RoleEstimate, concurrency: int) -> int:
    """Batches one after another at most: a judge's attempts; an agent's turns (lock-step waves, ``_waves``) for
    each generation of ``concurrency`` runs."""
    per_unit = row.calls_per_unit.high or row.calls_per_unit.low
    return per_unit * (math.ceil(row.to_run / concurrency) if row.role == "agent" and row.to_run else 1)


def estimate_sweep(plan: SweepPlan, config: ModelConfig, prompts: PromptConfig, out_dir: str | Path, *,
                   concurrency: int, history: Sequence[str | Path] = (), judge_attempts: int = 3,
                   retry_errors: bool = False, assumed_latency_s: float = ASSUMED_LATENCY_S) -> DryRun:
    """What running ``plan`` into ``out_dir`` would do and cost; reads files only, makes no call.

    ``history``: more sweep directories whose ``calls.jsonl`` teaches the estimate (``out_dir``'s own is always
    read). ``judge_attempts`` and ``retry_errors`` are the sweep's own settings (they change calls and skips).
    A concurrency below 1, or a ``history`` directory without ``calls.jsonl``, is an ``InputError``.
    """
    if concurrency < 1:
        raise setting_error("concurrency", f"concurrency must be at least 1, got {concurrency}")
    for path in history:
        if not (Path(path) / CALLS).is_file():
            raise setting_error("history", f"history {path}: no {CALLS} here; is it a sweep output directory?")
    out_dir = Path(out_dir)
    sources = [d for d in dict.fromkeys([out_dir, *(Path(h) for h in history)]) if (d / CALLS).is_file()]
    observed = read_history(sources)
    estimator = _Estimator(plan, config, prompts, out_dir, observed, judge_attempts, retry_errors)
    rows = [*(estimator.agent(m) for m in plan.agent_models), *(estimator.judge(m) for m in plan.judge_models)]
    estimator.note("provider prompt caching is not counted (cached input bills less)")
    times: list[ModelTime] = []
    for model in dict.fromkeys(r.model for r in rows):
        mine = [r for r in rows if r.model == model]
        seen = [o for (name, _), o in observed.items() if name == model]
        times.append(_model_time(model, mine, config.settings_for(model), concurrency, seen, assumed_latency_s))
        if not times[-1].latency_observed and not times[-1].batch:
            estimator.note(f"{model}: {assumed_latency_s:g} s per call assumed (no latency history)")
    slowest = max(times, key=lambda t: (t.bound_s[1] is None, t.bound_s[1] or 0.0, t.bound_s[0]))
    costs = [r.cost_usd for r in rows]
    unknown = any(c.low is None for c in costs)
    highs = [c.high for c in costs]
    likely = [c.likely for c in costs]
    total_cost = CostRange(low=None if unknown else sum(c.low or 0.0 for c in costs),
                           high=None if unknown or None in highs else sum(h or 0.0 for h in highs),
                           likely=None if unknown or None in likely else sum(x or 0.0 for x in likely))
    return DryRun(out_dir=str(out_dir), concurrency=concurrency, rows=rows, times=times,
                  units=sum(r.units for r in rows), skipped=sum(r.skipped for r in rows),
                  calls=_sum([r.calls for r in rows]), prompt_tokens=_sum([r.prompt_tokens for r in rows]),
                  output_tokens=_sum([r.output_tokens for r in rows]), cost_usd=total_cost,
                  time_s=slowest.bound_s, slowest_model=slowest.model, history=[str(d) for d in sources],
                  assumptions=estimator.assumptions)


def _count(r: TokenRange) -> str:
    high = "unbounded" if r.high is None else f"{r.high:,}"
    text = f"{r.low:,}" if r.high == r.low else f"{r.low:,}-{high}"
    return text if r.likely is None else f"{text} (~{r.likely:,})"


def _usd(c: CostRange) -> str:
    if c.low is None:
        return "unknown"
    high = "unbounded" if c.high is None else f"${c.high:.4f}"
    text = f"${c.low:.4f}-{high}"
    return text if c.likely is None else f"{text} (~${c.likely:.4f})"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _secs(span: tuple[float, float | None]) -> str:
    return f"{_duration(span[0])}-{'unbounded' if span[1] is None else _duration(span[1])}"


def render_dry_run(dry: DryRun) -> str:
    """The dry run for a terminal: one row per model and role, the time per model, totals, then the assumptions."""
    head = ("model", "role", "units", "skip", "run", "calls", "prompt tokens", "output tokens", "cost USD")
    body: list[tuple[str, ...]] = [
        (r.model, r.role, str(r.units), str(r.skipped), str(r.to_run), _count(r.calls), _count(r.prompt_tokens),
         _count(r.output_tokens), _usd(r.cost_usd)) for r in dry.rows]
    body.append(("total", "", str(dry.units), str(dry.skipped), str(dry.units - dry.skipped), _count(dry.calls),
                 _count(dry.prompt_tokens), _count(dry.output_tokens), _usd(dry.cost_usd)))
    widths = [max(len(row[i]) for row in (head, *body)) for i in range(len(head))]
    lines = [f"dry run of {dry.out_dir}: no call made, nothing written (concurrency {dry.concurrency})", ""]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in (head, *body)]
    lines += ["", "time the limits imply (largest of calls/RPM, tokens/TPM, calls x latency / concurrency):"]
    for t in dry.times:
        if t.batch:
            lines.append(f"  {t.model}: {_secs(t.bound_s)} (provider batches of {_duration(ASSUMED_BATCH_LATENCY_S)} "
                         f"each, assumed, one per {t.batch_rounds})")
            continue
        latency = f"{t.latency_s:.2f} s {'observed' if t.latency_observed else 'assumed'}"
        parts = [f"rpm {t.rpm}: {_secs(t.rpm_s)}" if t.rpm else "no rpm limit",
                 f"tpm {t.tpm}: {_secs(t.tpm_s)}" if t.tpm else "no tpm limit",
                 f"{t.concurrency} at a time, {latency}: {_secs(t.latency_bound_s)}"]
        lines.append(f"  {t.model}: {_secs(t.bound_s)} ({'; '.join(parts)})")
    lines.append(f"  sweep: {_secs(dry.time_s)} (slowest model: {dry.slowest_model})")
    batched = [r for r in dry.rows if r.online_cost_usd is not None]
    if batched:
        lines += ["", "batch vs online (the batch rows above are at batch prices):"]
        lines += [f"  {r.model} ({r.role}): batch {_usd(r.cost_usd)}, online {_usd(r.online_cost_usd)}"
                  for r in batched if r.online_cost_usd is not None]
    lines.append(f"history: {', '.join(dry.history) if dry.history else 'none (ranges from assumptions)'}")
    lines += ["assumptions:", *(f"  - {a}" for a in dry.assumptions)]
    return "\n".join(lines)
