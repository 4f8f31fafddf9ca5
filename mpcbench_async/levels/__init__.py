"""MPCBench as its authors run it today: the three-level scheduling benchmark.

A world per level (calendars, policies, communication threads and, at level 3, a
people directory and a room system), instances labelled by a deterministic oracle
(``solve``), eleven tools (``LevelTools``), the original's agent loop
(``run_levels_agent``), answer parser and set-F1 / exact-match scoring
(``parse_answer``, ``score``), and replay of recorded real-model runs
(``verify_file``). The data is read from where the user has it (``_data.find_output_dir``,
``load_level_set``): it is not shipped.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._agent import run_levels_agent
    from ._answer import Metrics, parse_answer, score
    from ._catalog import LabelCheck, check_labels, import_data, instance_index, load_all, scored_results
    from ._data import LevelSet, load_level_set
    from ._generate import generate_level, render_validity, write_generated
    from ._inputs import LevelsInputs
    from ._oracle import OracleSettings, solve
    from ._records import LevelsRecord
    from ._stats import level_rows, render_levels_table, write_levels_summary
    from ._suite import LevelsSuite
    from ._tools import ToolOptions
    from ._verify import FileVerdict, read_results, render_verdicts, verify_file

__all__ = ["LevelSet", "LevelsInputs", "LevelsRecord", "LevelsSuite", "Metrics", "OracleSettings", "ToolOptions",
           "generate_level", "level_rows", "load_level_set", "parse_answer", "render_levels_table", "run_levels_agent",
           "score", "solve", "verify_file"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["FileVerdict", "LabelCheck", "check_labels", "import_data", "instance_index", "load_all", "read_results",
             "render_validity", "render_verdicts", "scored_results", "write_generated", "write_levels_summary"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
