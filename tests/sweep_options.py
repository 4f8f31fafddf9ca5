"""``sweep_options(out=..., max_turns=...)``: a ``SweepOptions`` from the flat names of the CLI's flags, for tests.

The library takes a sweep's settings as a few small values (``runner.RunChoice``, ``runner.Limits``,
``sweep.Output``, ``sweep.Placement``, each benchmark's inputs); most tests change one or two settings of a sweep,
and name them as the CLI's flags do. This puts each where it belongs, so a test says what it changes.
"""

from __future__ import annotations

from typing import Any

from mpcbench_async.levels import LevelsInputs
from mpcbench_async.mpcbench import MPCBenchInputs
from mpcbench_async.runner import Limits, RunChoice
from mpcbench_async.sweep import Output, Placement, SweepOptions
from mpcbench_async.tariff import TariffInputs

# flat name -> (the value it belongs to, its name there)
_PLACES: dict[str, tuple[type, str]] = {
    **{name: (RunChoice, name) for name in ("suites", "models", "judges", "tasks", "trials", "retry_errors")},
    **{name: (Limits, name) for name in ("concurrency", "max_turns", "max_cost")},
    **{name: (Output, name) for name in ("out", "allow_changes", "cache", "cache_mode", "ledger_fsync", "certificate",
                                         "certificate_cache")},
    **{name: (Placement, name) for name in ("executor", "ray_address", "workers")},
    **{name: (MPCBenchInputs, name) for name in ("tasks_dir", "data_dir", "scenarios_dir", "scenario_id")},
    "tariff_path": (TariffInputs, "tariff_path"), "hscodecomp_path": (TariffInputs, "hscodecomp_path"),
    "pack": (TariffInputs, "pack"), "tariff_scoring": (TariffInputs, "scoring"),
    "levels_data": (LevelsInputs, "data"), "levels": (LevelsInputs, "levels"),
    "levels_splits": (LevelsInputs, "splits"),
}
_FIELDS = {RunChoice: "run", Limits: "limits", Output: "output", Placement: "placement"}


def sweep_options(**flat: Any) -> SweepOptions:
    """``SweepOptions`` with each flat setting in its value (``config``, ``prompts``, ``batch``, ``handle_signals``
    and ``command`` are ``SweepOptions``' own); a benchmark's inputs are given only when one of theirs is set."""
    parts: dict[type, dict[str, Any]] = {}
    own = {name: flat.pop(name) for name in ("config", "prompts", "batch", "handle_signals", "command") if name in flat}
    for name, value in flat.items():
        kind, field = _PLACES[name]
        parts.setdefault(kind, {})[field] = value
    values = {_FIELDS[kind]: kind(**fields) for kind, fields in parts.items() if kind in _FIELDS}
    inputs = [kind(**fields) for kind, fields in parts.items() if kind not in _FIELDS]
    return SweepOptions(**own, **values, inputs=inputs)
