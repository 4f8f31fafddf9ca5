"""The three-level MPCBench as a sweep suite (``sweep --suite levels``): instances × models × trials.

One unit is one instance run by one model in one trial through the original's
agent loop (``levels.run_levels_agent``) on the shared client, so each model's
limits, retries, budget and response cache hold here as in every suite; its
record (``levels.LevelsRecord``, in ``levels.jsonl``) carries the original's
result-line fields (``metrics``, ``pred``, ``gold``, ``trace``). A unit's key
hashes the world and the instance, the model and its settings, the agent prompt,
the tool options, the turn limit and the trial, so a resume skips what is done
and a changed instance runs again. An invalid instance is a per-instance error
record (``InvalidInstance``), not a refused sweep. A failed model call is an
error record that a resume retries when the failure is transient.

``finish`` writes ``levels_summary.md`` / ``.json``: per level × model × split,
mean F1 with its bootstrap CI, EM rate and pass^k, beside the published table.

The suite registers as ``levels`` at import (``runner.register_suite``): its
factory reads the chosen levels and splits of the data directory (``LevelsInputs``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from .._exceptions import InputError
from .._prompts import PromptConfig
from .._resources import workspace_path
from ..llm import BudgetExceeded, LLMClient, ModelConfig, cache_scope, is_sim_model
from ..records import unit_key
from ..runner import Outcome, SuiteRequest, register_suite, sim_model_problem
from ..runtime import UnitFailure, log_unit_error, unit_failure
from ._agent import MAX_TURNS, run_levels_agent
from ._answer import candidate_tuples, score
from ._data import LevelSet, discover, find_output_dir, load_level_set
from ._inputs import LevelsInputs
from ._oracle import solve
from ._records import LevelsRecord
from ._stats import ScoredRun, level_rows, write_levels_summary
from ._tools import ToolOptions

__all__ = ["LevelsInputs", "LevelsSuite", "LevelsUnit", "levels_suites"]

log = logging.getLogger("mpcbench_async.sweep")


class LevelsUnit(NamedTuple):
    key: str
    model: str
    level_set: LevelSet
    instance: dict[str, Any]
    trial: int
    problem: str | None = None  # why the instance cannot run (an invalid instance): its record is this error


def _digest(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False).encode()


class LevelsSuite:
    """Every instance of ``sets`` × ``models`` × ``trials`` (see the module docstring)."""

    name, record_type = "levels", LevelsRecord
    remote = True  # its units run on the runner's executor (Ray workers) when it has one

    def __init__(self, sets: Sequence[LevelSet], models: Sequence[str], *, prompts: PromptConfig,
                 config: ModelConfig, trials: int = 1, max_turns: int = MAX_TURNS,
                 tool_options: ToolOptions | None = None) -> None:
        prompts.require("levels_agent")
        self.sets, self.models, self.prompts, self.trials = list(sets), list(models), prompts, trials
        self.max_turns, self.tool_options = max_turns, tool_options or ToolOptions()
        digest = prompts.digest("levels_agent")
        options = msgspec.json.encode(self.tool_options)
        fingerprints = {model: config.settings_for(model).fingerprint() for model in self.models}
        # each world and instance serialised once, however many models and trials
        entries: list[tuple[LevelSet, bytes, bytes, dict[str, Any], str | None]] = []
        for level_set in self.sets:
            world = _digest(level_set.world)
            entries += [(level_set, world, _digest(i), i, None) for i in level_set.instances]
            entries += [(level_set, world, _digest({"instance_id": iid}), {"instance_id": iid}, why)
                        for iid, why in level_set.invalid.items()]
        self._units: list[LevelsUnit] = [
            LevelsUnit(unit_key(world, content, model, fingerprints[model], digest, options, str(max_turns),
                                str(trial), prefix="levels-"), model, level_set, instance, trial, problem)
            for trial in range(trials) for level_set, world, content, instance, problem in entries
            for model in self.models]

    def units(self) -> list[LevelsUnit]:
        return list(self._units)

    async def prepare(self) -> None:
        return None

    def _record(self, unit: LevelsUnit) -> LevelsRecord:
        return LevelsRecord(key=unit.key, status="error", instance_id=unit.instance["instance_id"],
                            level=unit.level_set.level, split=unit.level_set.split, model=unit.model,
                            trial=unit.trial, started_at=time.time())

    async def run(self, unit: LevelsUnit, client: LLMClient) -> LevelsRecord:
        record = self._record(unit)
        if unit.problem is not None:
            record.error_class, record.error_message = "InvalidInstance", unit.problem
            record.finished_at = time.time()
            return record
        level_set = unit.level_set

        async def reply(messages: Sequence[Any], tools: Sequence[Any]) -> Any:
            return await client.chat(unit.model, messages, tools)

        try:
            oracle = solve(level_set.world, unit.instance)
            gold = candidate_tuples(oracle.feasible_candidates, level_set.level)
            with cache_scope(trial=unit.trial):  # a response cache keeps each trial's replies apart
                run = await run_levels_agent(reply, level_set.world, unit.instance, self.prompts,
                                             max_turns=self.max_turns, tool_options=self.tool_options)
        except BudgetExceeded:
            raise  # the unit did not run: the runner stops the sweep and writes no record for it
        except Exception as exc:  # one instance fails alone
            failure = unit_failure(log, exc, kind="levels_run", key=unit.key, model=unit.model)
            record.error_class, record.error_message = failure.error_class, failure.message
            record.finished_at = time.time()
            return record
        record.trace, record.turns, record.stop_reason = run.trace, run.turns, run.stop_reason
        record.usage, record.cost_usd, record.gold = run.usage, run.cost_usd, [list(g) for g in gold]
        record.finished_at = time.time()
        record.elapsed_s = record.finished_at - record.started_at
        if run.stop_reason == "error":
            record.error_class, record.error_message, record.retryable = run.error_class, run.error, run.retryable
            log_unit_error(log, kind="levels_run", key=unit.key, model=unit.model, error_class=run.error_class,
                           message=run.error)
            return record
        record.status, record.pred = "ok", run.pred
        record.metrics = score(gold, [tuple(p) for p in run.pred])
        return record

    def failed(self, unit: LevelsUnit, failure: UnitFailure) -> LevelsRecord:
        record = self._record(unit)
        record.error_class, record.error_message, record.finished_at = failure.error_class, failure.message, time.time()
        return record

    def finish(self, records: list[LevelsRecord], out_dir: Path) -> Outcome:
        scored = [ScoredRun(instance_id=r.instance_id, level=r.level, split=r.split, model=r.model,
                            f1=r.metrics.f1, exact_match=r.metrics.exact_match, tokens=r.usage.total_tokens,
                            cost_usd=r.cost_usd)
                  for r in records if r.status == "ok" and r.metrics is not None]
        if scored:
            write_levels_summary(out_dir, level_rows(scored), title="MPCBench levels: this sweep")
        ok = sum(r.status == "ok" for r in records)
        return Outcome(units=len(self._units), ok=ok, failed=len(records) - ok, not_run=len(self._units) - len(records))


def levels_suites(request: SuiteRequest) -> list[LevelsSuite]:
    """The levels suite of a sweep: the chosen levels and splits of ``data`` × the agent models."""
    inputs, config = request.settings(LevelsInputs), request.config
    inputs.check(request.run)
    try:
        base = find_output_dir(workspace_path(inputs.data))
    except InputError as exc:
        raise InputError(f"{exc}; import the data first: mpcbench-async levels import PATH/TO/MPCBench") from None
    found = [(level, split) for level, split in discover(base) if level in inputs.levels
             and (inputs.splits is None or split in inputs.splits)]
    if not found:
        raise InputError(f"{base}: no level {', '.join(map(str, inputs.levels))} data"
                         + (f" of split {', '.join(inputs.splits)}" if inputs.splits else ""))
    models = list(request.run.models or config.agent_models)
    if not models:
        raise InputError(f"{config.source}: $.agent_models is empty (or pass ``models``)")
    problems = [p for m in dict.fromkeys(models) if is_sim_model(m) and (p := sim_model_problem(m)) is not None]
    if problems:
        raise InputError("; ".join(problems))
    return [LevelsSuite([load_level_set(base, level, split) for level, split in found], models,
                        prompts=request.prompts, config=config, trials=request.run.trials)]


register_suite("levels", levels_suites)
