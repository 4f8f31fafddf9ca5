"""MPCBench: scenarios, data generation and validation (evaluation follows)."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from .._prompts import PromptConfig, PromptTemplate, load_prompts
    from .._replies import ReplyParseError, extract_json_object
    from ._agent import RawToolCall, RunLog, RunTimings, agent_messages, run_agent
    from ._checks import CheckResult, run_checks
    from ._consistency import cross_source_problems, source_problems
    from ._data import ScenarioData, load_scenario_data, parse_timestamp
    from ._evaluate import TaskEvaluation, evaluate_task, load_task_data, safe_name
    from ._generation import (
        DataGenerator,
        GenerationError,
        GenerationOutcome,
        GenerationRecord,
        data_path,
        encode_document,
        scenario_json,
    )
    from ._generation_suite import GenerationSuite, ScenarioUnit
    from ._judge import AxisScore, Judgement, JudgeScores, build_judge_input, judge_messages, run_judge
    from ._plan import AgentUnit, JudgeUnit, SweepPlan, build_plan, load_inputs
    from ._provenance import (
        SIM_JUDGE,
        baselines_version,
        checks_version,
        judge_input_digest,
        sim_judge_scores,
        sim_judge_version,
    )
    from ._records import AgentRunRecord, JudgeRecord
    from ._scenario import (
        GlobalSettings,
        Person,
        Project,
        Scenario,
        SubScenario,
        list_scenarios,
        load_scenario,
    )
    from ._schemas import SOURCES, SchemaSet, format_path, load_schemas
    from ._suite import AgentStage, JudgeJob, JudgeStage, MPCBenchSuite, mpcbench_suites, plan_outcome
    from ._task import PlanningFacts, Task, TaskFacts, list_tasks, load_task

__all__ = [
    "AgentRunRecord",
    "AgentStage",
    "AgentUnit",
    "JudgeJob",
    "JudgeRecord",
    "JudgeStage",
    "JudgeUnit",
    "MPCBenchSuite",
    "SweepPlan",
    "build_plan",
    "load_inputs",
    "mpcbench_suites",
    "plan_outcome",
    "ScenarioUnit",
    "SIM_JUDGE",
    "SOURCES",
    "AxisScore",
    "CheckResult",
    "DataGenerator",
    "GenerationSuite",
    "GenerationError",
    "GenerationOutcome",
    "GenerationRecord",
    "GlobalSettings",
    "JudgeScores",
    "Judgement",
    "Person",
    "PlanningFacts",
    "Project",
    "PromptConfig",
    "PromptTemplate",
    "RawToolCall",
    "ReplyParseError",
    "RunLog",
    "RunTimings",
    "Scenario",
    "ScenarioData",
    "SchemaSet",
    "SubScenario",
    "Task",
    "TaskEvaluation",
    "TaskFacts",
    "agent_messages",
    "baselines_version",
    "build_judge_input",
    "checks_version",
    "cross_source_problems",
    "data_path",
    "encode_document",
    "evaluate_task",
    "extract_json_object",
    "format_path",
    "judge_input_digest",
    "judge_messages",
    "list_scenarios",
    "list_tasks",
    "load_prompts",
    "load_scenario",
    "load_scenario_data",
    "load_schemas",
    "load_task",
    "load_task_data",
    "parse_timestamp",
    "run_agent",
    "run_checks",
    "run_judge",
    "safe_name",
    "scenario_json",
    "sim_judge_scores",
    "sim_judge_version",
    "source_problems",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
