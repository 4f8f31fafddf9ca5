"""MPCBench as its authors run it today: the three-level scheduling benchmark.

A world per level (calendars, policies, communication threads and, at level 3, a
people directory and a room system), instances labelled by a deterministic oracle
(``solve``), eleven tools (``LevelTools``), the original's agent loop
(``run_levels_agent``), answer parser and set-F1 / exact-match scoring
(``parse_answer``, ``score``), and replay of recorded real-model runs
(``verify_file``). The data is read from where the user has it (``find_output_dir``,
``load_level_set``): it is not shipped.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._agent import MAX_TURNS, LevelsRun, ReplaySource, agent_prompts, run_levels_agent
    from ._answer import AnswerError, Metrics, candidate_tuples, parse_answer, score
    from ._catalog import (
        DEFAULT_DATA,
        LabelCheck,
        check_labels,
        import_data,
        instance_index,
        load_all,
        results_identity,
        scored_results,
    )
    from ._data import LevelSet, discover, find_output_dir, instance_problems, load_level_set, world_problems
    from ._generate import GeneratedSet, ValidityReport, generate_level, render_validity, write_generated
    from ._oracle import CONSTRAINT_TYPES, OracleResult, OracleSettings, solve
    from ._records import LevelsRecord
    from ._stats import PUBLISHED, LevelRow, ScoredRun, level_rows, render_levels_table, write_levels_summary
    from ._suite import LevelsSuite, LevelsUnit
    from ._tools import TOOL_NAMES, LevelTools, ToolOptions, sanitize, tool_schemas
    from ._verify import FileVerdict, LineVerdict, read_results, render_verdicts, verify_file

__all__ = [
    "LevelsSuite",
    "LevelsUnit",
    "CONSTRAINT_TYPES",
    "DEFAULT_DATA",
    "MAX_TURNS",
    "PUBLISHED",
    "TOOL_NAMES",
    "AnswerError",
    "FileVerdict",
    "GeneratedSet",
    "LabelCheck",
    "LevelRow",
    "LevelSet",
    "LevelTools",
    "LevelsRecord",
    "LevelsRun",
    "LineVerdict",
    "Metrics",
    "OracleResult",
    "OracleSettings",
    "ReplaySource",
    "ScoredRun",
    "ToolOptions",
    "ValidityReport",
    "agent_prompts",
    "candidate_tuples",
    "check_labels",
    "discover",
    "find_output_dir",
    "generate_level",
    "import_data",
    "instance_index",
    "instance_problems",
    "level_rows",
    "load_all",
    "load_level_set",
    "parse_answer",
    "read_results",
    "render_levels_table",
    "render_validity",
    "render_verdicts",
    "results_identity",
    "run_levels_agent",
    "sanitize",
    "score",
    "scored_results",
    "solve",
    "tool_schemas",
    "verify_file",
    "world_problems",
    "write_generated",
    "write_levels_summary",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
