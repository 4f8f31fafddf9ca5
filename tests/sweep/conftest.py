"""A small sweep workspace (mpcbench_async.testing) pointed at a sim, with fast retries."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpcbench_async.llm import ModelConfig, load_model_config
from mpcbench_async.mpcbench import PromptConfig, SweepPlan, build_plan, load_prompts
from mpcbench_async.testing import write_workspace

FAST_RETRY = {"retry": {"initial_backoff": 0.01, "max_backoff": 0.05, "max_attempts": 10}, "timeout_s": 1.0}


@pytest.fixture
def workspace(tmp_path: Path):
    return lambda base_url: write_workspace(tmp_path, base_url=base_url, defaults=FAST_RETRY)


def plan_of(root: Path, trials: int = 1) -> tuple[ModelConfig, PromptConfig, SweepPlan]:
    """The model config, prompts and sweep plan of a workspace written by ``write_workspace``."""
    config = load_model_config(root / "model_config.json")
    prompts = load_prompts(root / "prompt_config.json")
    plan = build_plan(config=config, prompts=prompts, tasks_dir=root / "tasks", data_dir=root / "data",
                      scenarios_dir=root / "scenarios", trials=trials)
    return config, prompts, plan
