"""A tiny self-contained MPCBench workspace, for tests and benchmarks.

``write_workspace(root, base_url=...)`` writes ``data/`` (two small scenarios),
``tasks/`` (any number of tasks), ``model_config.json`` and ``prompt_config.json``
so a sweep can run against a sim without the shipped data — the shape of a
real workspace, at a size chosen by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from .._resources import shipped_path

__all__ = ["write_workspace"]

_PROMPTS = shipped_path("prompt_config.json")
_TASK_TYPES = ("planning", "email_reply", "document_generation")
SOURCES: dict[str, Any] = {
    "slack": {"channels": [{"id": "C1", "name": "team"}],
              "users": [{"id": "U1", "name": "Ana Ruiz", "email": "ana@x.io"}],
              "messages": [{"id": "m1", "channel_id": "C1", "user_id": "U1",
                            "text": "Release review next week, 30 minutes", "timestamp": "2026-03-24T10:00:00+00:00"}]},
    "gmail": {"threads": []},
    "calendar": {"calendars": [], "events": []},
    "contacts": {"contacts": [{"id": "c1", "name": "Ana Ruiz", "email": "ana@x.io"}]},
    "jira": {"projects": [{"key": "AB", "name": "Alpha"}], "issues": []},
    "drive": {"files": []},
}


def write_workspace(
    root: str | Path,
    *,
    base_url: str | None = None,
    tasks: int = 4,
    agent_models: Sequence[str] = ("sim/lazy-agent", "sim/echo"),
    judge_models: Sequence[str] = ("sim/judge",),
    defaults: dict[str, Any] | None = None,
    prompts: Path | None = None,
) -> Path:
    """Write a small workspace under ``root``; sim models go to ``base_url`` when given."""
    root = Path(root)
    (root / "data").mkdir(parents=True, exist_ok=True)
    for scenario in ("sc_a", "sc_b"):
        world = {"scenario_id": scenario, "reference_now": "2026-03-24T11:00:00+00:00",
                 "global_settings": {"timezone": "Europe/London", "workday_start": "09:00", "workday_end": "18:00"}}
        (root / "data" / f"{scenario}_world_state.json").write_bytes(orjson.dumps(world))
        for name, doc in SOURCES.items():
            (root / "data" / f"{scenario}_{name}.json").write_bytes(orjson.dumps(doc))
    for i in range(tasks):
        kind = _TASK_TYPES[i % len(_TASK_TYPES)]
        (root / "tasks" / kind).mkdir(parents=True, exist_ok=True)
        task = {"task_id": f"t{i}", "scenario_id": ("sc_a", "sc_b")[i % 2], "task_type": kind,
                "user_prompt": f"Task number {i}: find the release review details.",
                "answer_requirements": ["Names the review and its length."]}
        (root / "tasks" / kind / f"t{i}.json").write_bytes(orjson.dumps(task))
    config_defaults = dict(defaults or {})
    if base_url:
        config_defaults["base_url"] = base_url
    config = {"agent_models": list(agent_models), "judge_models": list(judge_models), "defaults": config_defaults}
    (root / "model_config.json").write_bytes(orjson.dumps(config))
    (root / "prompt_config.json").write_bytes((prompts or _PROMPTS).read_bytes())
    return root
