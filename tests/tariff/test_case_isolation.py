"""A tariff case that crashes at run time fails alone: an error record for it, logged with key and model."""

from __future__ import annotations

import logging

import orjson

from mpcbench_async.llm import LLMClient, load_model_config
from mpcbench_async.mpcbench import load_prompts
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from mpcbench_async.tariff import _runner as tariff_runner
from mpcbench_async.tariff import run_cases
from tests.conftest import REPO
from tests.tariff.conftest import make_case


async def test_a_case_whose_scoring_crashes_fails_alone(pack, tmp_path, monkeypatch, caplog):
    """Scoring that raises for case c2: c2 gets a non-retryable error record with the exception's class and
    message; c1 and c3 are scored ok; the crash is logged at warning with the case key and model."""
    real = tariff_runner.score_case

    def score_case(case, result, **options):
        if case.id == "c2":
            raise KeyError("duty line")
        return real(case, result, **options)

    monkeypatch.setattr(tariff_runner, "score_case", score_case)
    cases = [make_case(id=f"c{i}") for i in (1, 2, 3)]
    config = tmp_path / "model_config.json"
    async with SimServer(seed=32) as sim:
        config.write_bytes(orjson.dumps({"defaults": {"base_url": sim.base_url}}))
        with caplog.at_level(logging.WARNING, logger="mpcbench_async.tariff._runner"):
            async with LLMClient(load_model_config(config)) as client:
                records = await run_cases(cases, pack=pack, prompts=load_prompts(REPO / "prompt_config.json"),
                                          mode="live", model="sim/tariff", client=client,
                                          results_path=tmp_path / "results.jsonl",
                                          fixtures_dir=tmp_path / "fixtures", handle_signals=False)
    assert [("c1", "ok"), ("c2", "error"), ("c3", "ok")] == [(r.case_id, r.status) for r in records]
    failed = records[1]
    assert ("KeyError", "'duty line'", False) == (failed.error_class, failed.error_message, failed.retryable)
    [crash] = [r for r in caplog.records if r.getMessage() == "unit.crashed"]
    assert ("WARNING", failed.key, "sim/tariff", "tariff_case") == (crash.levelname, crash.key, crash.model,
                                                                    crash.kind)
    assert 3 == len(read_jsonl(tmp_path / "results.jsonl")[0])
