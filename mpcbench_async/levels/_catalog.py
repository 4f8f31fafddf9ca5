"""A folder of three-level MPCBench data as a whole: every level × split, their labels, and an import.

``levels import DIR`` copies the files of a checkout (or of a folder of its
``generate/output`` files) into the project's workspace (``storage/levels/`` by
default, which git ignores and no wheel ships), after checking them: every world
and instance (``_data``), and every oracle line reproduced by this project's
oracle. The sweep and ``levels verify`` then read them from there.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from .._exceptions import InputError
from ._data import LevelSet, discover, find_output_dir, load_level_set
from ._oracle import solve
from ._stats import ScoredRun

__all__ = ["DEFAULT_DATA", "LabelCheck", "check_labels", "import_data", "instance_index", "load_all",
           "results_identity", "scored_results"]

DEFAULT_DATA = Path("storage/levels")
_RESULTS = re.compile(r"^eval_L([123])_(.+)_(\d{8}_\d{6})\.jsonl$")
_INSTANCE = re.compile(r"^instance_level([123])_(.+)_[^_]+$")


class LabelCheck(msgspec.Struct, kw_only=True):
    """One level × split: instances, oracle lines, how many this project's oracle reproduces, and what differs."""

    name: str
    instances: int
    invalid: int
    oracle_lines: int
    discarded: int
    reproduced: int
    differences: list[str]

    @property
    def ok(self) -> bool:
        return not self.differences and not self.invalid


def load_all(directory: str | Path) -> list[LevelSet]:
    """Every level × split in ``directory`` (a checkout, or a folder of the files)."""
    base = find_output_dir(directory)
    return [load_level_set(base, level, split) for level, split in discover(base)]


def instance_index(sets: Sequence[LevelSet]) -> dict[str, tuple[LevelSet, dict[str, Any]]]:
    """Instance id → its level set and instance, over ``sets``."""
    return {i["instance_id"]: (s, i) for s in sets for i in s.instances}


def check_labels(level_set: LevelSet) -> LabelCheck:
    """This project's oracle against the set's ``oracle_level*.jsonl``: every line exactly, every discard absent."""
    differences = [f"{level_set.name} {iid}: invalid: {why}" for iid, why in level_set.invalid.items()]
    reproduced = discarded = 0
    for instance in level_set.instances:
        iid = instance["instance_id"]
        result = solve(level_set.world, instance)
        recorded = level_set.oracle.get(iid)
        discarded += result.discarded
        if result.discarded and recorded is None or recorded is not None and result.line() == recorded:
            reproduced += 1
        elif recorded is None:
            differences.append(f"{level_set.name} {iid}: no oracle line, but the oracle finds "
                               f"{len(result.feasible_candidates)} candidates")
        else:
            differences.append(f"{level_set.name} {iid}: oracle differs: ours {result.feasible_candidates} | file "
                               f"{recorded.get('feasible_candidates')}")
    return LabelCheck(name=level_set.name, instances=len(level_set.instances), invalid=len(level_set.invalid),
                      oracle_lines=len(level_set.oracle), discarded=discarded, reproduced=reproduced,
                      differences=differences)


def import_data(source: str | Path, dest: str | Path = DEFAULT_DATA) -> tuple[list[LabelCheck], list[Path]]:
    """Check every level × split of ``source`` and copy its files into ``dest``; refuses a broken world or file."""
    base = find_output_dir(source)
    sets = [load_level_set(base, level, split) for level, split in discover(base)]
    checks = [check_labels(s) for s in sets]
    out = Path(dest)
    if out.resolve() == base.resolve():
        raise InputError(f"{dest}: is the folder being imported")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for s in sets:
        for name in (f"world_level{s.level}_{s.split}.json", f"instances_level{s.level}_{s.split}.jsonl",
                     f"oracle_level{s.level}_{s.split}.jsonl"):
            if (base / name).is_file():
                tmp = out / f".{name}.tmp"
                shutil.copyfile(base / name, tmp)
                tmp.replace(out / name)
                written.append(out / name)
    return checks, written


def results_identity(path: Path, lines: Sequence[dict[str, Any]]) -> tuple[int, str, str]:
    """(level, split, model) of a recorded results file: ``eval_L{N}_{split}_{model}_{time}.jsonl`` (the January
    files have no split: ``test``), the split read from the instance ids when they carry one."""
    match = _RESULTS.match(path.name)
    if match is None:
        raise InputError(f"{path}: not named eval_L<level>_[<split>_]<model>_<YYYYmmdd_HHMMSS>.jsonl; pass ``model``")
    level, middle = int(match.group(1)), match.group(2)
    ids = {m.group(2) for line in lines if (m := _INSTANCE.match(str(line.get("instance_id", ""))))}
    split = ids.pop() if len(ids) == 1 else "test"
    model = middle[len(split) + 1:] if middle.startswith(f"{split}_") else middle
    return level, split, model


def scored_results(path: Path, lines: Sequence[dict[str, Any]], *, model: str | None = None) -> list[ScoredRun]:
    """The scored lines of a recorded results file. A line whose run raised (no ``metrics``) is left out, as the
    original's own average leaves it out."""
    level, split, named = results_identity(path, lines)
    out = []
    for line in lines:
        metrics = line.get("metrics")
        if not isinstance(metrics, dict):
            continue
        out.append(ScoredRun(instance_id=line["instance_id"], level=level, split=split, model=model or named,
                             f1=float(metrics.get("f1", 0.0)), exact_match=bool(metrics.get("exact_match", False))))
    return out
