"""Human labels of a sweep's runs: ``DIR/labels.jsonl``, appended, never rewritten; the latest label per item wins.

Why a file of its own: labels are people's work about the records, not records, so the sweep's files are never
touched (a resumed sweep appends to its own files and leaves this one alone; unit keys are stable, so a label
still names its run). Each line is one ``Label``: the run's key, the item, the value, who and when, and the
reason. Items:

- ``outcome``: the run's outcome, ``correct`` | ``wrong`` | ``unsure``;
- ``axis:<judge axis>``: the person's own score of that axis, 1–5;
- ``check:<check name>``: whether the check's verdict on this run is ``right`` | ``wrong``.

History is kept (every line stays); readers take the latest line per (run, item), in file order.

Two viewers labelling the same directory: each submission is appended with one ``write`` of whole lines to a
file opened ``O_APPEND`` while holding an exclusive ``flock``, so lines never interleave; a last line left torn
by a killed writer is ended first (the new lines start on a line of their own), so nothing is lost. Reading
reports, one warning line each, a torn last line and a foreign line (one that is not a label) — both skipped —
and ``LabelSet.orphans`` the labels of runs the sweep no longer keeps.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Container, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import msgspec

__all__ = ["AXES", "CHECK_VALUES", "LABELS", "OUTCOMES", "Label", "LabelSet", "append_labels", "label_problem",
           "now_iso", "read_labels"]

LABELS = "labels.jsonl"
OUTCOMES = ("correct", "wrong", "unsure")
CHECK_VALUES = ("right", "wrong")
AXES = ("answer_requirements_satisfaction", "source_grounded_reasoning")
REASON_MAX = 4000  # characters of a reason: a paragraph, not a document


class Label(msgspec.Struct, kw_only=True):
    """One person's label of one item of one run (see the module docstring for items and values)."""

    run_key: str
    item: str
    value: str | int
    annotator: str
    at: str  # ISO 8601, UTC
    reason: str = ""
    kind: Literal["label"] = "label"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def label_problem(item: str, value: object) -> str | None:
    """Why ``value`` is no label of ``item`` (None: it is one)."""
    if item == "outcome":
        return None if value in OUTCOMES else f"outcome must be one of {', '.join(OUTCOMES)}, not {value!r}"
    kind, _, name = item.partition(":")
    if kind == "axis" and name in AXES:
        ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 5
        return None if ok else f"{item} must be a whole score 1–5, not {value!r}"
    if kind == "check" and name:
        return None if value in CHECK_VALUES else f"{item} must be one of {', '.join(CHECK_VALUES)}, not {value!r}"
    return f"unknown item {item!r} (outcome, axis:<{' | '.join(AXES)}> or check:<name>)"


class LabelSet(msgspec.Struct, kw_only=True):
    """The labels of a directory as read: the latest per (run key, item), every line counted, and what was skipped.

    ``problems``: one warning line per torn or foreign line of the file, naming it and its line."""

    latest: dict[tuple[str, str], Label] = {}
    lines: int = 0  # label lines read (history included)
    torn_lines: int = 0
    foreign_lines: int = 0
    problems: list[str] = []

    def by_run(self) -> dict[str, dict[str, Label]]:
        """run key → item → its latest label."""
        runs: dict[str, dict[str, Label]] = {}
        for (run_key, item), label in self.latest.items():
            runs.setdefault(run_key, {})[item] = label
        return runs

    def orphans(self, kept: Container[str]) -> list[str]:
        """One warning line per labelled run key the sweep does not keep (its labels are kept, and not counted)."""
        counts: dict[str, int] = {}
        for run_key, _ in self.latest:
            if run_key not in kept:
                counts[run_key] = counts.get(run_key, 0) + 1
        return [f"{LABELS}: {n} label(s) of run {key}, which this sweep does not keep (a run of another experiment, "
                "or of a directory the labels were copied from): kept in the file, not counted"
                for key, n in sorted(counts.items())]


_decoder = msgspec.json.Decoder(Label)


def read_labels(out_dir: str | Path) -> LabelSet:
    """The directory's labels (an empty set when it has no ``labels.jsonl``)."""
    path = Path(out_dir) / LABELS
    labels = LabelSet(latest={}, problems=[])
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return labels
    lines = data.split(b"\n")
    last = lines.pop()  # b"" when the file ends with a newline; else a line whose write was cut short
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            label = _decoder.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            labels.foreign_lines += 1
            labels.problems.append(f"{path} line {number}: not a label ({exc}): skipped")
            continue
        problem = label_problem(label.item, label.value)
        if problem is not None:
            labels.foreign_lines += 1
            labels.problems.append(f"{path} line {number}: not a label ({problem}): skipped")
            continue
        labels.lines += 1
        labels.latest[(label.run_key, label.item)] = label
    if last.strip():
        labels.torn_lines += 1
        labels.problems.append(f"{path} line {len(lines) + 1}: torn (no newline at the end of the file: its write "
                               "was cut short): skipped")
    return labels


def append_labels(out_dir: str | Path, labels: Sequence[Label] | Iterable[Label]) -> None:
    """Append ``labels`` to ``DIR/labels.jsonl`` as whole lines, in one write under an exclusive lock, synced."""
    data = b"".join(msgspec.json.encode(label) + b"\n" for label in labels)
    if not data:
        return
    fd = os.open(Path(out_dir) / LABELS, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by close
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # end a torn last line first: it stays one (reported) line, ours stay whole
        view = memoryview(data)
        while view:  # one write; a short one (a full disk, a signal) continues where it stopped
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
