"""MPCBench: scenarios, data generation and validation (evaluation follows)."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from .._prompts import PromptConfig, load_prompts
    from ._agent import RunLog, RunTimings, agent_messages, run_agent
    from ._checks import CheckResult, run_checks
    from ._data import ScenarioData
    from ._evaluate import TaskEvaluation, evaluate_task, load_task_data
    from ._generation import DataGenerator, GenerationOutcome, GenerationRecord
    from ._generation_suite import GenerationSuite
    from ._judge import Judgement, build_judge_input, judge_messages, run_judge
    from ._plan import SweepPlan, build_plan, load_inputs
    from ._provenance import (
        SIM_JUDGE,
        baselines_version,
        checks_version,
        judge_input_digest,
        sim_judge_scores,
        sim_judge_version,
    )
    from ._records import AgentRunRecord, JudgeRecord
    from ._scenario import Scenario, list_scenarios, load_scenario
    from ._schemas import SOURCES, SchemaSet, load_schemas
    from ._suite import MPCBenchInputs, MPCBenchSuite
    from ._task import Task, list_tasks, load_task

__all__ = ["AgentRunRecord", "CheckResult", "DataGenerator", "GenerationRecord", "GenerationSuite", "JudgeRecord",
           "Judgement", "MPCBenchInputs", "MPCBenchSuite", "PromptConfig", "RunLog", "Scenario", "ScenarioData",
           "SchemaSet", "SweepPlan", "Task", "TaskEvaluation", "build_judge_input", "build_plan", "evaluate_task",
           "list_scenarios", "list_tasks", "load_prompts", "load_scenario", "load_schemas", "load_task",
           "load_task_data", "run_agent", "run_checks", "run_judge"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["SIM_JUDGE", "SOURCES", "GenerationOutcome", "RunTimings", "agent_messages", "baselines_version",
             "checks_version", "judge_input_digest", "judge_messages", "load_inputs", "sim_judge_scores",
             "sim_judge_version"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
