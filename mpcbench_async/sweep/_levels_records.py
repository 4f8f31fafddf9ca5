"""The levels records a sweep directory counts: the reader of ``levels.jsonl`` that knows the experiment's keys.

It lives in ``sweep`` (not beside the levels suite) because which records count is the sweep directory's
business: the current experiment's unit keys (``experiment_keys.txt``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, TypeVar

from ..runtime import iter_jsonl
from ._experiment import read_experiment_keys

__all__ = ["kept_levels_records"]


class _Kept(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def status(self) -> str: ...


KeptT = TypeVar("KeptT", bound=_Kept)


def kept_levels_records(out_dir: Path, record_type: type[KeptT]) -> list[KeptT]:
    """A sweep directory's levels records as its summary counts them: per unit of the current experiment its first
    ok record, else its last, in file order (``compare`` and ``view`` read them so).

    ``record_type``: ``LevelsRecord``, or a lighter view of the lines (key and status at least) for a reader that
    needs less than the whole record.
    """
    path = Path(out_dir) / "levels.jsonl"
    if not path.is_file():
        return []
    keys = read_experiment_keys(Path(out_dir))
    if keys is not None and not any(k.startswith("levels-") for k in keys):
        keys = None  # a key list written before the levels suite was added to the sweep
    kept: dict[str, KeptT] = {}
    for record in iter_jsonl(path, type_=record_type, warn=False):
        if (keys is None or record.key in keys) and (record.key not in kept or kept[record.key].status != "ok"):
            kept[record.key] = record
    return list(kept.values())
