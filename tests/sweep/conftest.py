"""A small sweep workspace: two scenarios' data, four tasks, and a config pointed at a sim."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import REPO

SLACK = {"channels": [{"id": "C1", "name": "team"}], "users": [{"id": "U1", "name": "Ana Ruiz", "email": "ana@x.io"}],
         "messages": [{"id": "m1", "channel_id": "C1", "user_id": "U1", "text": "Release review next week, 30 minutes",
                       "timestamp": "2026-03-24T10:00:00+00:00"}]}
SOURCES = {
    "slack": SLACK, "gmail": {"threads": []}, "calendar": {"calendars": [], "events": []},
    "contacts": {"contacts": [{"id": "c1", "name": "Ana Ruiz", "email": "ana@x.io"}]},
    "jira": {"projects": [{"key": "AB", "name": "Alpha"}], "issues": []}, "drive": {"files": []},
}


def write_workspace(root: Path, base_url: str, *, extra_model_options: str = "") -> Path:
    """Write data/, tasks/, model_config.json and a copy of prompt_config.json under ``root``."""
    for scenario in ("sc_a", "sc_b"):
        world = {"scenario_id": scenario, "reference_now": "2026-03-24T11:00:00+00:00",
                 "global_settings": {"timezone": "Europe/London", "workday_start": "09:00", "workday_end": "18:00"}}
        (root / "data").mkdir(parents=True, exist_ok=True)
        (root / "data" / f"{scenario}_world_state.json").write_bytes(orjson.dumps(world))
        for name, doc in SOURCES.items():
            (root / "data" / f"{scenario}_{name}.json").write_bytes(orjson.dumps(doc))
    for i, (kind, scenario) in enumerate([("planning", "sc_a"), ("email_reply", "sc_a"),
                                          ("document_generation", "sc_b"), ("planning", "sc_b")]):
        (root / "tasks" / kind).mkdir(parents=True, exist_ok=True)
        task = {"task_id": f"t{i}", "scenario_id": scenario, "task_type": kind,
                "user_prompt": f"Task number {i}: find the release review details.",
                "answer_requirements": ["Names the review and its length."]}
        (root / "tasks" / kind / f"t{i}.json").write_bytes(orjson.dumps(task))
    fast_retry = {"retry": {"initial_backoff": 0.01, "max_backoff": 0.05, "max_attempts": 10}, "timeout_s": 1.0}
    config = {
        "agent_models": [f"sim/lazy-agent{extra_model_options}", f"sim/echo{extra_model_options}"],
        "judge_models": [f"sim/judge{extra_model_options}"],
        "defaults": {"base_url": base_url, **fast_retry},
    }
    (root / "model_config.json").write_bytes(orjson.dumps(config))
    (root / "prompt_config.json").write_bytes((REPO / "prompt_config.json").read_bytes())
    return root


@pytest.fixture
def workspace(tmp_path: Path):
    return lambda base_url, **kw: write_workspace(tmp_path, base_url, **kw)
