"""Reusing a sweep's summary when nothing it is computed from has changed (a resume with nothing to do).

Why: at 10^5 units the summary reads ~0.5 GB of records (seconds of CPU), while a
rerun that finds every unit done changes none of them. ``summary.inputs.json``
notes, when ``summary.json`` is written, the size and modification time of every
file the summary is computed from (each ``*.jsonl`` of the directory,
``experiment_keys.txt``, and the certificate's ``certificate_baselines.json`` and
``data_warnings.json``) and the ks of pass^k; a sweep that ends with the same
note reuses ``summary.json``, with only what the manifest says (this invocation's
wall time) computed again. Any change — a record appended, a file touched or
trimmed, another ``--pass-k`` — computes the summary afresh, and ``mpcbench-async
summarize`` always does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from ..runtime import atomic_write_bytes
from ._baselines import BASELINES
from ._data_warnings import DATA_WARNINGS
from ._experiment import KEYS_FILE
from ._summary import Summary, wall_time

__all__ = ["INPUTS_FILE", "note_inputs", "reusable_summary"]

INPUTS_FILE = "summary.inputs.json"
SUMMARY_FILE = "summary.json"


class _Inputs(msgspec.Struct, kw_only=True):
    pass_k: list[int] | None
    files: dict[str, str]  # name -> "size:mtime_ns"


def _inputs(out: Path, pass_k: Sequence[int] | None) -> _Inputs:
    files = {}
    for path in sorted([*out.glob("*.jsonl"), out / KEYS_FILE, out / BASELINES, out / DATA_WARNINGS]):
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        files[path.name] = f"{stat.st_size}:{stat.st_mtime_ns}"
    return _Inputs(pass_k=list(pass_k) if pass_k is not None else None, files=files)


def note_inputs(out: Path, pass_k: Sequence[int] | None) -> None:
    """Note the inputs of the ``summary.json`` just written (after it: the note vouches for it)."""
    atomic_write_bytes(out / INPUTS_FILE, msgspec.json.encode(_inputs(out, pass_k)) + b"\n", fsync=False)


def reusable_summary(out: Path, pass_k: Sequence[int] | None) -> Summary | None:
    """``summary.json`` of ``out`` with this invocation's wall time, when its inputs are as noted; else None."""
    try:
        noted = msgspec.json.decode((out / INPUTS_FILE).read_bytes(), type=_Inputs)
        if noted != _inputs(out, pass_k):
            return None
        if (out / SUMMARY_FILE).stat().st_mtime_ns > (out / INPUTS_FILE).stat().st_mtime_ns:
            return None  # written again since the note (by an older version): not vouched for
        summary = msgspec.json.decode((out / SUMMARY_FILE).read_bytes(), type=Summary)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    summary.out_dir = str(out)
    wall_time(out, summary)
    return summary
