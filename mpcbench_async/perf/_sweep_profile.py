"""``profile sweep DIR``: where a sweep's wall time went, from its JSONL files alone.

From ``calls.jsonl`` (start, limiter queueing, retry backoff, final-attempt
latency per call), ``runs.jsonl`` (model vs tool time per agent run) and
``manifest.json`` (wall clock) it reports: time waiting on each model, tool
execution, queueing behind limiters, retries and backoff, the remainder
(bookkeeping and file I/O); achieved concurrency and calls/s over time per
model against the configured caps; and the critical path (the longest run).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from pathlib import Path

import msgspec

from .._exceptions import InputError
from ..mpcbench import RunTimings
from ..records import LLMCallRecord
from ..runtime import iter_jsonl
from ._svg import line_chart

__all__ = ["SweepProfile", "profile_sweep", "render_sweep_profile"]


class _RunTimings(msgspec.Struct):
    timings: RunTimings = msgspec.field(default_factory=RunTimings)
    turns: int = 0


class _Run(msgspec.Struct):
    key: str
    task_id: str
    model: str
    status: str
    run: _RunTimings | None = None


class ModelTime(msgspec.Struct, kw_only=True):
    model: str
    calls: int = 0
    attempts: int = 0
    tokens: int = 0
    waiting_s: float = 0.0
    queued_s: float = 0.0
    retry_wait_s: float = 0.0
    peak_concurrency: int = 0
    mean_concurrency: float = 0.0


class SweepProfile(msgspec.Struct, kw_only=True):
    out_dir: str
    wall_s: float | None
    calls: int
    tokens: int
    models: list[ModelTime]
    tool_s: float
    agent_model_s: float
    agent_other_s: float = 0.0
    caps: dict[str, int] = {}
    timeline_bucket_s: float = 1.0
    calls_per_s: list[tuple[float, float]] = []
    concurrency: dict[str, list[tuple[float, float]]] = {}
    critical_path: dict[str, float | str] = {}


def profile_sweep(out_dir: str | Path, *, buckets: int = 60) -> SweepProfile:
    out_dir = Path(out_dir)
    if not (out_dir / "calls.jsonl").exists():
        raise InputError(f"{out_dir}: no calls.jsonl here; is it a sweep output directory?")
    calls = list(iter_jsonl(out_dir / "calls.jsonl", type_=LLMCallRecord))
    models: dict[str, ModelTime] = {}
    for call in calls:
        m = models.setdefault(call.model, ModelTime(model=call.model))
        m.calls += 1
        m.attempts += call.attempts
        m.tokens += call.usage.total_tokens
        m.waiting_s += call.latency_s
        m.queued_s += call.queued_s
        m.retry_wait_s += call.retry_wait_s
    intervals = [(c.model, c.started_at + c.queued_s + c.retry_wait_s,
                  c.started_at + c.queued_s + c.retry_wait_s + c.latency_s) for c in calls if c.started_at]
    t0 = min((s for _, s, _ in intervals), default=0.0)
    t1 = max((e for _, _, e in intervals), default=t0 + 1.0)
    width = max((t1 - t0) / buckets, 1e-3)
    events: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for model, start, end in intervals:
        events[model] += [(start, 1), (end, -1)]
    concurrency: dict[str, list[tuple[float, float]]] = {}
    for model, points in events.items():
        points.sort()
        level, peak, area, last = 0, 0, 0.0, t0
        series = [0.0] * buckets
        for t, delta in points:
            area += level * (t - last)
            first, last_bucket = int((last - t0) / width), int((t - t0) / width)
            for b in range(max(0, first), min(buckets, last_bucket + 1)):
                lo, hi = max(last, t0 + b * width), min(t, t0 + (b + 1) * width)
                if hi > lo:
                    series[b] += level * (hi - lo) / width
            level += delta
            peak = max(peak, level)
            last = t
        models[model].peak_concurrency = peak
        models[model].mean_concurrency = round(area / (t1 - t0), 3) if t1 > t0 else 0.0
        concurrency[model] = [(round(b * width, 3), round(v, 3)) for b, v in enumerate(series)]
    per_bucket = [0] * buckets
    for _, _, end in intervals:
        per_bucket[min(buckets - 1, int((end - t0) / width))] += 1
    tool_s = model_s = other_s = 0.0
    critical: dict[str, float | str] = {}
    for run in iter_jsonl(out_dir / "runs.jsonl", type_=_Run):
        if run.run is None:
            continue
        timing = run.run
        tool_s += timing.timings.tools_s
        model_s += timing.timings.model_s
        other_s += max(0.0, timing.timings.total_s - timing.timings.model_s - timing.timings.tools_s)
        if timing.timings.total_s > float(critical.get("total_s", -1.0)):
            critical = {"key": run.key, "task_id": run.task_id, "model": run.model, "turns": timing.turns,
                        "total_s": round(timing.timings.total_s, 4), "model_s": round(timing.timings.model_s, 4),
                        "tools_s": round(timing.timings.tools_s, 4)}
    wall = None
    caps: dict[str, int] = {}
    manifest = out_dir / "manifest.json"
    if manifest.exists():
        raw = msgspec.json.decode(manifest.read_bytes())
        if raw.get("finished_at"):
            started, finished = datetime.fromisoformat(raw["started_at"]), datetime.fromisoformat(raw["finished_at"])
            wall = (finished - started).total_seconds()
        caps = {str(k): int(v) for k, v in (raw.get("caps") or {}).items()}
    return SweepProfile(
        out_dir=str(out_dir), wall_s=wall, calls=len(calls), tokens=sum(m.tokens for m in models.values()),
        models=sorted(models.values(), key=lambda m: m.model), tool_s=round(tool_s, 4),
        agent_model_s=round(model_s, 4), agent_other_s=round(other_s, 4), caps=caps, timeline_bucket_s=round(width, 4),
        calls_per_s=[(round(b * width, 3), round(n / width, 3)) for b, n in enumerate(per_bucket)],
        concurrency=concurrency, critical_path=critical)


def render_sweep_profile(profile: SweepProfile) -> tuple[str, str]:
    """(Markdown, SVG timeline) for a sweep profile."""
    wall = f"Wall time {profile.wall_s:.2f} s; " if profile.wall_s is not None else ""
    lines = [f"# Sweep profile: `{profile.out_dir}`", "",
             f"{wall}{profile.calls} LLM calls, {profile.tokens:,} tokens. Sums below are over all calls (they "
             "overlap in time, so they exceed wall time at concurrency > 1).", "",
             "| model | calls | attempts | waiting on model s | queued behind limiter s | retry backoff s | "
             "peak concurrency | mean concurrency | cap |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m in profile.models:
        cap = profile.caps.get(m.model)
        lines.append(f"| {m.model} | {m.calls} | {m.attempts} | {m.waiting_s:.2f} | {m.queued_s:.2f} | "
                     f"{m.retry_wait_s:.2f} | {m.peak_concurrency} | {m.mean_concurrency:.2f} | "
                     f"{cap if cap is not None else '–'} |")
    lines += ["", f"Inside agent runs: model calls {profile.agent_model_s:.2f} s (including limiter queueing and "
              f"retries), tool execution {profile.tool_s:.3f} s, everything else (prompt building, parsing, "
              f"bookkeeping) {profile.agent_other_s:.3f} s. Records are appended once per finished unit (one "
              "write and flush each), so file I/O is part of the time between units, not inside them.", ""]
    if profile.critical_path:
        c = profile.critical_path
        lines += [f"Critical path: the longest agent run, `{c['task_id']}` with `{c['model']}` ({c['turns']} turns): "
                  f"{c['total_s']} s ({c['model_s']} s model, {c['tools_s']} s tools).", ""]
    peak_rate = max((r for _, r in profile.calls_per_s), default=0.0)
    lines += [f"Calls per second (bucket {profile.timeline_bucket_s:g} s): peak {peak_rate:.1f}. "
              "The SVG beside this file plots calls/s and per-model concurrency over time."]
    svg = line_chart("Sweep timeline", "seconds since the first call",
                     [("calls/s", profile.calls_per_s)]
                     + [(f"in flight: {model}", points) for model, points in profile.concurrency.items()])
    return "\n".join(lines) + "\n", svg


