"""The kept runs of a sweep as whole records, each with its kept judgements: what exports and labels read.

The summary and the viewer read a few fields of every line (``_reading``); an
export needs the whole run log and each judgement's justifications. This reads
both files once through the same ``Reader``, so the records it gives are exactly
those the summary counts: the current experiment's kept record per unit key,
and the kept judgement per judge unit of the run kept (stale and orphan
judgements dropped). Only the kept records are held.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from ..mpcbench import AgentRunRecord, JudgeRecord
from ._names import JUDGEMENTS, RUNS
from ._reading import Entry, Reader, Table

__all__ = ["KeptRun", "kept_records"]


class KeptRun(msgspec.Struct, kw_only=True):
    """One kept agent run record and the kept judgements of it (judge model order)."""

    record: AgentRunRecord
    judgements: list[JudgeRecord] = []


class _Held(Entry):
    """A kept entry that holds its whole record (the summary's entries hold a few fields)."""

    __slots__ = ("record",)

    def __init__(self, line: Any) -> None:
        super().__init__(line, "")
        self.record = line


def kept_records(out_dir: str | Path) -> list[KeptRun]:
    """The kept runs of the directory's current experiment, sorted by agent model, task, trial and key."""
    reader = Reader(Path(out_dir))
    runs = Table(_Held, reader.keys)
    reader.kept(reader.lines(RUNS, AgentRunRecord), runs)

    def judged(line: JudgeRecord) -> bool:
        run = runs.entries.get(line.run_key)
        return reader.judged(line, run is not None and run.ok, run.finished_at if run is not None else 0.0)

    kept = {key: KeptRun(record=held.record) for key, held in runs.entries.items()}
    judges = Table(_Held, reader.keys)
    reader.kept(reader.lines(JUDGEMENTS, JudgeRecord), judges, admit=judged)
    for held in sorted(judges.entries.values(), key=lambda h: h.record.judge_model):
        kept[held.record.run_key].judgements.append(held.record)
    return sorted(kept.values(), key=lambda k: (k.record.model, k.record.task_id, k.record.trial, k.record.key))
