"""``--batch judge`` / ``--batch agent``: which models go in provider batches, and the agents' wave line.

Agents on a batch model move in lock-step waves (``llm/_waves``): each turn of every run still going is one
batch. The least wall time such a sweep can take is its longest run's turns × the batch latency (every run
advancing one turn per batch); the wave line says how close it came, e.g.
``agent waves: 8 batches (20 requests), wall 4.10 s, bound 4.00 s (8 turns x 0.50 s per batch), ratio 1.02``.
A ratio above 1 is the time spent gathering each wave, running tools between waves, and any wave a run missed
(more runs than ``concurrency``, so later runs start after earlier ones end, or a run whose requests were cut
into the next batch by ``max_requests`` or ``max_wait_s``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .._options import setting_error
from ..llm import ModelConfig, WaveLog

__all__ = ["batched", "wave_line"]


def batched(config: ModelConfig, kinds: Sequence[str], *, agents: Sequence[str] | None,
            judges: Sequence[str] | None, suites: Sequence[str] = ()) -> ModelConfig:
    """``config`` with ``"batch": true`` for every judge model (``judge`` in ``kinds``) and every agent model
    (``agent``); a model whose entry already sets ``batch`` keeps its own settings. ``agent`` with the levels suite
    is refused: its calls are keyed by their request, so two trials' first turns would be one request in a batch."""
    if "agent" in kinds and "levels" in suites:
        raise setting_error("batch", "batch: agent batches are built for the mpcbench suite's runs, not yet for the "
                                     "levels suite's (its calls carry no per-turn key): run the levels suite online")
    names = [*((judges or config.judge_models) if "judge" in kinds else ()),
             *((agents or config.agent_models) if "agent" in kinds else ())]
    for name in dict.fromkeys(names):
        if not config.settings_for(name).batch_settings:
            config = config.with_overrides(name, {"batch": True})
    return config


def wave_line(logs: Sequence[WaveLog]) -> str | None:
    """The agents' waves against their bound in one line; ``None`` when no agent ran on a batch model."""
    reports = [report for log in logs for report in log.reports]
    if not reports:
        return None
    from statistics import fmean  # here: every sweep imports this module, few run on batches (statistics ~2 ms)

    turns = max(log.turns for log in logs)
    wall = max(r.ended for r in reports) - min(r.started for r in reports)
    latency = fmean(r.latency_s for r in reports)
    bound = turns * latency
    ratio = f"{wall / bound:.2f}" if bound > 0 else "n/a"
    return (f"agent waves: {len(reports)} batches ({sum(r.requests for r in reports)} requests), wall {wall:.2f} s, "
            f"bound {bound:.2f} s ({turns} turns x {latency:.2f} s per batch), ratio {ratio}")
