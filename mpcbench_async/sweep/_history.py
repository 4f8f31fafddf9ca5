"""What earlier sweeps observed per model and role: calls per unit, tokens per call, latency (for ``estimate_sweep``).

Why from ``calls.jsonl``: a sweep's own records keep only a run's totals, while a
dry run needs each call (how many a run made, how its prompt grew turn by turn,
what a reply cost in output tokens, how long a call took). Only units that ended
``ok`` in the same directory count (an interrupted or failed unit's calls say
nothing about a whole run); a unit redone after an infrastructure error keeps
its last call per call key. Call keys are ``<unit key>/turn<N>`` (agent runs,
``run-...``) and ``<unit key>/try<N>`` (judges, ``judge-...``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import msgspec

from ..records import Usage
from ..runtime import iter_jsonl
from ._reading import CALLS, JUDGEMENTS, RUNS

__all__ = ["Observed", "ok_units", "read_history"]

_CALL_KEY = re.compile(r"^((?:run|judge)-[^/]+)/(?:turn|try)(\d+)$")


class _Unit(msgspec.Struct):
    key: str
    status: str
    task_id: str = ""


class _Call(msgspec.Struct):
    model: str
    key: str
    usage: Usage = msgspec.field(default_factory=Usage)
    latency_s: float = 0.0
    cached: bool = False


class Observed(msgspec.Struct, kw_only=True):
    """One model in one role (``agent`` or ``judge``) across the history read.

    ``units`` holds, per finished unit, its calls' ``(prompt_tokens, completion_tokens)`` in call order, and
    ``task_ids`` the task of each unit (agent runs), in the same order. ``latencies`` are of calls actually sent.
    """

    units: list[list[tuple[int, int]]] = msgspec.field(default_factory=list)
    task_ids: list[str] = msgspec.field(default_factory=list)
    latencies: list[float] = msgspec.field(default_factory=list)


def ok_units(out_dir: Path) -> dict[str, str]:
    """Task id by key of every unit (agent run or judgement) with an ``ok`` record."""
    found: dict[str, str] = {}
    for name in (RUNS, JUDGEMENTS):
        for unit in iter_jsonl(out_dir / name, type_=_Unit, warn=False):
            if unit.status == "ok":
                found[unit.key] = unit.task_id
    return found


def read_history(dirs: Iterable[Path]) -> dict[tuple[str, str], Observed]:
    """``Observed`` by ``(model, role)`` over the sweep directories ``dirs`` (absent ones and files are skipped)."""
    observed: dict[tuple[str, str], Observed] = defaultdict(Observed)
    for out_dir in dict.fromkeys(Path(d) for d in dirs):
        if not (out_dir / CALLS).is_file():
            continue
        ok = ok_units(out_dir)
        calls: dict[str, dict[int, _Call]] = defaultdict(dict)
        for call in iter_jsonl(out_dir / CALLS, type_=_Call, warn=False):
            match = _CALL_KEY.match(call.key)
            if match and match[1] in ok:
                calls[match[1]][int(match[2])] = call  # the last attempt of a call key wins
        for unit_key, by_index in calls.items():
            first = next(iter(by_index.values()))
            entry = observed[first.model, "agent" if unit_key.startswith("run-") else "judge"]
            entry.units.append([(by_index[i].usage.prompt_tokens, by_index[i].usage.completion_tokens)
                                for i in sorted(by_index)])
            entry.task_ids.append(ok[unit_key])
            entry.latencies += [c.latency_s for c in by_index.values() if not c.cached]
    return dict(observed)
