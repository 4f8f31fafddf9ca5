"""Sweep summaries, rebuilt from the JSONL files alone (``mpcbench-async summarize DIR``).

Per agent model: mean ± standard error of both judge axes (overall and per task
type, per judge), deterministic-check pass rate (passes over checks that applied:
``n/a`` checks count in neither), pass^k over trials (a run passes when every
check that applied passes — or, for a task without applicable checks, when its
mean answer-requirements score is ≥ 4 — and pass^k is the share of tasks whose
k trials all pass), error and ``unscored`` counts, tokens, cost and call latency
p50/p95 (from 2%-wide log buckets, so memory stays constant). The latest record per key counts (a resumed unit replaces its error).
Only the records and calls of the directory's current experiment count (``experiment_keys.txt``); those of
earlier experiments (``sweep --allow-changes``) are left out and counted in ``other_experiments``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from ..records import LLMCallRecord
from ..runtime import iter_jsonl
from ._experiment import read_experiment_keys
from ._records import Manifest

__all__ = ["AxisStats", "ModelSummary", "Summary", "render_markdown", "render_table", "summarize"]


class AxisStats(msgspec.Struct, kw_only=True):
    n: int = 0
    mean: float | None = None
    stderr: float | None = None


class JudgeView(msgspec.Struct, kw_only=True):
    """One judge's scores of one agent model."""

    judge_model: str
    scored: int = 0
    unscored: int = 0
    errors: int = 0
    ars: AxisStats = msgspec.field(default_factory=AxisStats)
    sgr: AxisStats = msgspec.field(default_factory=AxisStats)
    by_task_type: dict[str, dict[str, AxisStats]] = {}


class ModelSummary(msgspec.Struct, kw_only=True):
    model: str
    runs: int = 0
    ok: int = 0
    errors: int = 0
    max_turns: int = 0
    checks_passed: int = 0
    checks_total: int = 0  # checks that applied (n/a excluded)
    check_pass_rate: float | None = None
    pass_at_k: float | None = None
    k: int = 0
    judges: list[JudgeView] = []
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None


class Summary(msgspec.Struct, kw_only=True):
    out_dir: str
    models: list[ModelSummary]
    judge_calls: dict[str, dict[str, float]] = {}
    wall_s: float | None = None
    runs: int = 0
    judgements: int = 0
    calls: int = 0
    other_experiments: int = 0  # records of earlier experiments in the directory, not counted


class _Stop(msgspec.Struct):
    stop_reason: str = ""


class _Passed(msgspec.Struct):
    """A check's outcome: ``status`` (pass | fail | n/a), or ``passed`` in logs written before ``status`` existed."""

    status: str | None = None
    passed: bool = False

    @property
    def outcome(self) -> str:
        return self.status or ("pass" if self.passed else "fail")


class _RunView(msgspec.Struct):
    """The fields of a run record the summary needs; msgspec skips the rest (the payload) unparsed."""

    key: str
    status: str
    model: str
    task_id: str
    run: _Stop | None = None
    checks: list[_Passed] = []


class _Score(msgspec.Struct):
    score: int


class _Scores(msgspec.Struct):
    answer_requirements_satisfaction: _Score
    source_grounded_reasoning: _Score


class _JudgementView(msgspec.Struct):
    verdict: str
    scores: _Scores | None = None


class _JudgeView(msgspec.Struct):
    key: str
    run_key: str
    status: str
    task_type: str
    agent_model: str
    judge_model: str
    judgement: _JudgementView | None = None


class _Moments:
    """Count, sum and sum of squares: a mean and its standard error without keeping the values."""

    __slots__ = ("n", "total", "squares")

    def __init__(self) -> None:
        self.n, self.total, self.squares = 0, 0.0, 0.0

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.squares += value * value

    def stats(self) -> AxisStats:
        if not self.n:
            return AxisStats()
        mean = self.total / self.n
        variance = max(0.0, (self.squares - self.n * mean * mean) / (self.n - 1)) if self.n > 1 else 0.0
        return AxisStats(n=self.n, mean=round(mean, 3), stderr=round(math.sqrt(variance / self.n), 3))


class _Quantiles:
    """Latency quantiles in constant memory: log-spaced buckets 2% wide from 0.1 ms (ample for p50/p95)."""

    _BASE, _STEP = 1e-4, math.log(1.02)

    def __init__(self) -> None:
        self.counts: dict[int, int] = defaultdict(int)
        self.n = 0

    def add(self, value: float) -> None:
        self.counts[max(0, int(math.log(max(value, self._BASE) / self._BASE) / self._STEP))] += 1
        self.n += 1

    def quantile(self, q: float) -> float | None:
        if not self.n:
            return None
        rank = max(1, math.ceil(q * self.n))
        seen = 0
        for bucket in sorted(self.counts):
            seen += self.counts[bucket]
            if seen >= rank:
                return round(self._BASE * math.exp((bucket + 0.5) * self._STEP), 4)
        return None


def _final(records: Iterable[Any]) -> Iterator[Any]:
    """Each key's final record, streamed: its ``ok`` record, else its last error.

    A unit's ``ok`` record is written once (resume skips finished keys), so only
    keys still in error are remembered — not every key, and never the records —
    which keeps summaries of 10^5-unit sweeps small.
    """
    failing: dict[str, Any] = {}
    for record in records:
        if record.status == "ok":
            failing.pop(record.key, None)
            yield record
        else:
            failing[record.key] = record
    yield from failing.values()


def _current(records: Iterable[Any], keys: set[str] | None, left_out: list[int]) -> Iterator[Any]:
    """The records of the current experiment's units (every record where no key list was kept)."""
    for record in records:
        if keys is None or record.key in keys:
            yield record
        else:
            left_out[0] += 1


def _unit_key(call_key: str) -> str | None:
    """The sweep unit an LLM call belongs to (``run-…/turn2`` -> ``run-…``), None for calls of other suites."""
    unit = call_key.split("/", 1)[0]
    return unit if unit.startswith(("run-", "judge-")) else None


def summarize(out_dir: str | Path) -> Summary:
    """Build the summary of a sweep directory from its JSONL files, streaming them once each."""
    out_dir = Path(out_dir)
    keys = read_experiment_keys(out_dir)
    left_out = [0]
    models: dict[str, ModelSummary] = {}
    views: dict[tuple[str, str], JudgeView] = {}
    moments: dict[tuple[str, str, str, str], _Moments] = defaultdict(_Moments)
    # Per run: ARS sum × 16 + judge count, one small int per run (needed only for runs without checks).
    ars_by_run: dict[int, int] = {}
    judgement_count = 0
    for record in _final(_current(iter_jsonl(out_dir / "judgements.jsonl", type_=_JudgeView), keys, left_out)):
        judgement_count += 1
        view = views.setdefault((record.agent_model, record.judge_model), JudgeView(judge_model=record.judge_model))
        judgement = record.judgement
        if record.status == "error" or judgement is None:
            view.errors += 1
        elif judgement.verdict == "unscored" or judgement.scores is None:
            view.unscored += 1
        else:
            view.scored += 1
            ars = judgement.scores.answer_requirements_satisfaction.score
            sgr = judgement.scores.source_grounded_reasoning.score
            for task_type in ("*", record.task_type):
                moments[(record.agent_model, record.judge_model, task_type, "ars")].add(ars)
                moments[(record.agent_model, record.judge_model, task_type, "sgr")].add(sgr)
            run = hash(record.run_key)
            ars_by_run[run] = ars_by_run.get(run, 0) + ars * 16 + 1
    trials: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # [runs, passed]
    run_count = 0
    for record in _final(_current(iter_jsonl(out_dir / "runs.jsonl", type_=_RunView), keys, left_out)):
        run_count += 1
        summary = models.setdefault(record.model, ModelSummary(model=record.model))
        summary.runs += 1
        counts = trials[(record.model, record.task_id)]
        counts[0] += 1
        if record.status != "ok":
            summary.errors += 1
            continue
        summary.ok += 1
        summary.max_turns += bool(record.run and record.run.stop_reason == "max_turns")
        applied = [c.outcome for c in record.checks if c.outcome != "n/a"]
        summary.checks_total += len(applied)
        summary.checks_passed += applied.count("pass")
        if applied:
            passed = all(outcome == "pass" for outcome in applied)
        else:
            packed = ars_by_run.get(hash(record.key), 0)
            total, n = divmod(packed, 16)
            passed = n > 0 and total / n >= 4
        counts[1] += passed
    for (model, judge), view in views.items():
        for (m, j, task_type, axis), values in moments.items():
            if (m, j) != (model, judge) or axis != "ars":
                continue
            pair = {"ars": values.stats(), "sgr": moments[(m, j, task_type, "sgr")].stats()}
            if task_type == "*":
                view.ars, view.sgr = pair["ars"], pair["sgr"]
            else:
                view.by_task_type[task_type] = pair
        models.setdefault(model, ModelSummary(model=model)).judges.append(view)
    for model, summary in models.items():
        summary.judges.sort(key=lambda v: v.judge_model)
        if summary.checks_total:
            summary.check_pass_rate = round(summary.checks_passed / summary.checks_total, 4)
        per_task = [counts for (m, _), counts in trials.items() if m == model]
        if per_task:
            summary.k = min(runs for runs, _ in per_task)
            summary.pass_at_k = round(sum(passed == runs for runs, passed in per_task) / len(per_task), 4)
    latencies: dict[tuple[str, str], _Quantiles] = defaultdict(_Quantiles)
    judge_calls: dict[str, dict[str, float]] = {}
    total_calls = 0
    for call in iter_jsonl(out_dir / "calls.jsonl", type_=LLMCallRecord):
        unit = _unit_key(call.key)
        if keys is not None and unit is not None and unit not in keys:
            continue
        total_calls += 1
        role = "judge" if call.key.startswith("judge-") else "agent"
        if role == "agent":
            summary = models.setdefault(call.model, ModelSummary(model=call.model))
            summary.calls += 1
            summary.tokens += call.usage.total_tokens
            summary.cost_usd += call.cost_usd
        else:
            bucket = judge_calls.setdefault(call.model, {"calls": 0, "tokens": 0, "cost_usd": 0.0})
            bucket["calls"] += 1
            bucket["tokens"] += call.usage.total_tokens
            bucket["cost_usd"] += call.cost_usd
        if call.status == "ok":
            latencies[(role, call.model)].add(call.latency_s)
    for model, summary in models.items():
        summary.cost_usd = round(summary.cost_usd, 6)
        summary.latency_p50_s = latencies[("agent", model)].quantile(0.5)
        summary.latency_p95_s = latencies[("agent", model)].quantile(0.95)
    for model, bucket in judge_calls.items():
        bucket["latency_p50_s"] = latencies[("judge", model)].quantile(0.5) or 0.0
        bucket["latency_p95_s"] = latencies[("judge", model)].quantile(0.95) or 0.0
    wall = None
    manifest_path = out_dir / "manifest.json"
    if manifest_path.exists():
        manifest = msgspec.json.decode(manifest_path.read_bytes(), type=Manifest)
        if manifest.finished_at:
            wall = (datetime.fromisoformat(manifest.finished_at) - datetime.fromisoformat(manifest.started_at)).total_seconds()
    return Summary(out_dir=str(out_dir), models=sorted(models.values(), key=lambda m: m.model),
                   judge_calls=judge_calls, wall_s=wall, runs=run_count, judgements=judgement_count, calls=total_calls,
                   other_experiments=left_out[0])


def _fmt(axis: AxisStats) -> str:
    return "–" if axis.mean is None else f"{axis.mean:.2f} ± {axis.stderr:.2f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def render_table(summary: Summary) -> str:
    """A plain-text table for the terminal."""
    head = f"{'agent model':24} {'judge':14} {'ARS':>12} {'SGR':>12} {'checks':>7} {'pass^k':>8} {'err':>4} {'unsc':>5} {'tokens':>9} {'cost $':>8} {'p50 s':>6} {'p95 s':>6}"
    lines = [head, "-" * len(head)]
    for m in summary.models:
        views = m.judges or [JudgeView(judge_model="–")]
        for v in views:
            lines.append(
                f"{m.model[:24]:24} {v.judge_model[:14]:14} {_fmt(v.ars):>12} {_fmt(v.sgr):>12} "
                f"{_pct(m.check_pass_rate):>7} {_pct(m.pass_at_k) + (f' k={m.k}' if m.k else ''):>8} "
                f"{m.errors + v.errors:>4} {v.unscored:>5} {m.tokens:>9} {m.cost_usd:>8.4f} "
                f"{(m.latency_p50_s or 0):>6.3f} {(m.latency_p95_s or 0):>6.3f}")
    if summary.wall_s is not None:
        lines.append(f"wall time {summary.wall_s:.1f} s; {summary.runs} runs, {summary.judgements} judgements, "
                     f"{summary.calls} calls")
    if summary.other_experiments:
        lines.append(_other_experiments(summary))
    return "\n".join(lines)


def _other_experiments(summary: Summary) -> str:
    return (f"{summary.other_experiments} record(s) of earlier experiments in this directory are not counted "
            "(see manifest.json)")


def render_markdown(summary: Summary) -> str:
    """``summary.md``: the overall table, then scores per task type."""
    lines = ["# Sweep summary", "", f"Directory: `{summary.out_dir}`. Runs {summary.runs}, judgements "
             f"{summary.judgements}, LLM calls {summary.calls}"
             + (f", wall time {summary.wall_s:.1f} s." if summary.wall_s is not None else ".")
             + (f" {_other_experiments(summary)}." if summary.other_experiments else ""), "",
             "ARS = answer_requirements_satisfaction, SGR = source_grounded_reasoning (0–5, mean ± stderr).", "",
             "| agent model | judge | ARS | SGR | checks passed | pass^k | errors | unscored | tokens | cost $ | "
             "latency p50 s | p95 s |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m in summary.models:
        for v in m.judges or [JudgeView(judge_model="–")]:
            lines.append(f"| {m.model} | {v.judge_model} | {_fmt(v.ars)} | {_fmt(v.sgr)} | {_pct(m.check_pass_rate)} "
                         f"| {_pct(m.pass_at_k)} (k={m.k}) | {m.errors + v.errors} | {v.unscored} | {m.tokens} | "
                         f"{m.cost_usd:.4f} | {m.latency_p50_s or 0:.3f} | {m.latency_p95_s or 0:.3f} |")
    lines += ["", "## By task type", "", "| agent model | judge | task type | n | ARS | SGR |", "|---|---|---|---:|---:|---:|"]
    for m in summary.models:
        for v in m.judges:
            for task_type, axes in sorted(v.by_task_type.items()):
                lines.append(f"| {m.model} | {v.judge_model} | {task_type} | {axes['ars'].n} | {_fmt(axes['ars'])} "
                             f"| {_fmt(axes['sgr'])} |")
    if summary.judge_calls:
        lines += ["", "## Judge calls", "", "| judge model | calls | tokens | cost $ | p50 s | p95 s |",
                  "|---|---:|---:|---:|---:|---:|"]
        for model, b in sorted(summary.judge_calls.items()):
            lines.append(f"| {model} | {b['calls']:.0f} | {b['tokens']:.0f} | {b['cost_usd']:.4f} | "
                         f"{b['latency_p50_s']:.3f} | {b['latency_p95_s']:.3f} |")
    return "\n".join(lines) + "\n"
