"""The results table of the three-level MPCBench: measured per level × model, beside the published one.

Per level and model: instances, runs, mean F1 with a 95% percentile-bootstrap CI
over instances (each instance's mean over its trials, so repeated trials do not
narrow the interval as if they were new instances), the EM rate, and pass^k over
trials (tau-bench's estimator: the chance that k trials of an instance all match
exactly) for k = 1, 2, 4, 8, … and the most trials of an instance (``stats.pass_ks``),
or the ks the caller names. The original's README publishes one table (``PUBLISHED``); every
measured row is printed beside its published cell, and a cell the measurement
cannot support is named with the reason: no runs of that model, or fewer
instances than the published EM rate implies (70% of 5 instances is not a count).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from ..runtime import atomic_write_bytes
from ..stats import bootstrap_mean_ci, pass_hat_k, pass_ks

__all__ = ["PUBLISHED", "LevelRow", "Published", "ScoredRun", "level_rows", "render_levels_table",
           "write_levels_summary"]


class Published(msgspec.Struct, frozen=True, kw_only=True):
    f1: float
    em: float
    cause: str


# The original README's "Evaluation Results" (repository head 2026-02-11).
PUBLISHED: dict[tuple[int, str], Published] = {
    (1, "gpt-4o"): Published(f1=0.84, em=0.70, cause="Omission of simple constraints (Integration)"),
    (1, "o4-mini"): Published(f1=1.00, em=1.00, cause="-"),
    (1, "gpt-5"): Published(f1=1.00, em=1.00, cause="-"),
    (2, "gpt-4o"): Published(f1=0.53, em=0.35, cause="Lack of active discovery & context misjudgment"),
    (2, "o4-mini"): Published(f1=1.00, em=1.00, cause="-"),
    (2, "gpt-5"): Published(f1=1.00, em=1.00, cause="-"),
    (3, "gpt-4o"): Published(f1=0.22, em=0.10, cause="Failure in optimization & sorting complexity"),
    (3, "o4-mini"): Published(f1=0.80, em=0.80, cause="Over-filtering due to policy noise (Integration)"),
    (3, "gpt-5"): Published(f1=1.00, em=1.00, cause="-"),
}


class ScoredRun(msgspec.Struct, frozen=True, kw_only=True):
    """One scored run: which instance, level, split and model, and its F1 and exact match."""

    instance_id: str
    level: int
    split: str
    model: str
    f1: float
    exact_match: bool
    tokens: int = 0  # what the run spent, when it is known (a sweep's records; recorded files do not say)
    cost_usd: float | None = None


class LevelRow(msgspec.Struct, kw_only=True):
    """One level × model (× split, or ``all``): the measured figures and the published ones beside them."""

    level: int
    model: str
    split: str
    instances: int
    runs: int
    mean_f1: float
    f1_ci: list[float] | None
    em_rate: float
    pass_k: dict[str, float]
    tokens: int = 0
    cost_usd: float | None = None
    published_f1: float | None = None
    published_em: float | None = None
    supports_published: str = ""


def _base(model: str) -> str:
    """``gpt-4o`` for ``openai/gpt-4o-2024-08-06`` and the like: the published table's model names."""
    name = model.rsplit("/", 1)[-1].lower()
    for known in ("gpt-4o-mini", "o4-mini", "gpt-4o", "gpt-5"):
        if name.startswith(known):
            return known
    return name


def _row(level: int, model: str, split: str, runs: Sequence[ScoredRun], pass_k: Sequence[int] | None) -> LevelRow:
    by_instance: dict[str, list[ScoredRun]] = defaultdict(list)
    for run in runs:
        by_instance[run.instance_id].append(run)
    per_instance = [sum(r.f1 for r in rs) / len(rs) for rs in by_instance.values()]
    ci = bootstrap_mean_ci(per_instance)
    trials = [(len(rs), sum(r.exact_match for r in rs)) for rs in by_instance.values()]
    passes = {f"pass^{k}": value for k in pass_ks(max(n for n, _ in trials), pass_k)
              if (value := pass_hat_k(trials, k)) is not None}
    row = LevelRow(level=level, model=model, split=split, instances=len(by_instance), runs=len(runs),
                   mean_f1=sum(r.f1 for r in runs) / len(runs), f1_ci=[ci.low, ci.high] if ci else None,
                   em_rate=sum(r.exact_match for r in runs) / len(runs), pass_k=passes,
                   tokens=sum(r.tokens for r in runs),
                   cost_usd=None if any(r.cost_usd is None for r in runs) else sum(r.cost_usd or 0.0 for r in runs))
    published = PUBLISHED.get((level, _base(model)))
    if published is not None:
        row.published_f1, row.published_em = published.f1, published.em
        row.supports_published = _support(row, published)
    return row


def _support(row: LevelRow, published: Published) -> str:
    """Whether the measured runs could be the published cell, and if not, why (one short phrase)."""
    needed = next(n for n in range(1, 101) if math.isclose(round(published.em * n), published.em * n, abs_tol=1e-9))
    if row.instances % needed:
        return (f"cannot support: EM {published.em:.0%} needs a multiple of {needed} instances, these runs hold "
                f"{row.instances}")
    inside = row.f1_ci is not None and row.f1_ci[0] - 0.005 <= published.f1 <= row.f1_ci[1] + 0.005
    return "consistent (published F1 inside the CI)" if inside else "differs (published F1 outside the CI)"


def level_rows(runs: Iterable[ScoredRun], *, by_split: bool = True, pass_k: Sequence[int] | None = None
               ) -> list[LevelRow]:
    """Rows per level × model × split (and a pooled ``all`` row when a level × model has several splits).

    ``pass_k``: the ks of pass^k (default: 1, 2, 4, 8, … and the most trials of an instance)."""
    groups: dict[tuple[int, str, str], list[ScoredRun]] = defaultdict(list)
    for run in runs:
        groups[(run.level, run.model, run.split if by_split else "all")].append(run)
        if by_split:
            groups[(run.level, run.model, "all")].append(run)
    splits: dict[tuple[int, str], int] = defaultdict(int)
    for level, model, split in groups:
        splits[(level, model)] += split != "all"
    return [_row(level, model, split, groups[(level, model, split)], pass_k)
            for level, model, split in sorted(groups, key=lambda g: (g[0], g[1], g[2] == "all", g[2]))
            if split != "all" or splits[(level, model)] != 1 or not by_split]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def render_levels_table(rows: Sequence[LevelRow], *, title: str = "MPCBench levels") -> str:
    """Markdown: each measured row beside the published cell, then the published rows nothing here measured."""
    spent = any(r.tokens for r in rows)
    lines = [f"## {title}", "",
             "| level | model | split | instances | runs | mean F1 [95% CI] | EM | pass^k | "
             + ("tokens | cost $ | " if spent else "") + "published F1 / EM | published cell |",
             "|---:|---|---|---:|---:|---|---:|---|" + ("---:|---:|" if spent else "") + "---|---|"]
    for r in rows:
        ci = f" [{r.f1_ci[0]:.2f}, {r.f1_ci[1]:.2f}]" if r.f1_ci else ""
        passes = ", ".join(f"{k} {v:.2f}" for k, v in r.pass_k.items())
        published = (f"{r.published_f1:.2f} / {_pct(r.published_em)}" if r.published_f1 is not None else "—")
        cost = "unknown" if r.cost_usd is None else f"{r.cost_usd:.4f}"
        lines.append(f"| {r.level} | {r.model} | {r.split} | {r.instances} | {r.runs} | {r.mean_f1:.2f}{ci} | "
                     f"{_pct(r.em_rate)} | {passes} | " + (f"{r.tokens} | {cost} | " if spent else "")
                     + f"{published} | {r.supports_published or '—'} |")
    measured = {(r.level, _base(r.model)) for r in rows}
    missing = [(level, model, p) for (level, model), p in PUBLISHED.items() if (level, model) not in measured]
    if missing:
        lines += ["", "Published cells with no runs here (cannot be supported):", ""]
        lines += [f"- L{level} {model}: F1 {p.f1:.2f}, EM {p.em:.0%} ({p.cause})" for level, model, p in missing]
    return "\n".join(lines) + "\n"


def write_levels_summary(out_dir: Path, rows: Sequence[LevelRow], *, title: str = "MPCBench levels") -> None:
    """``levels_summary.md`` (the table) and ``levels_summary.json`` (the rows) in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out_dir / "levels_summary.md", render_levels_table(rows, title=title).encode(), fsync=False)
    atomic_write_bytes(out_dir / "levels_summary.json", msgspec.json.format(msgspec.json.encode(
        {"rows": rows, "published": {f"L{level} {model}": p for (level, model), p in PUBLISHED.items()}})) + b"\n",
        fsync=False)
