"""What ``compare A B`` was given: two sweep directories or two tariff reports, never one of each.

Decided from the paths alone before anything is read, so a wrong pair is one
message naming both paths and what each is. A file of a sweep (``runs.jsonl``,
``summary.json``…) given instead of its directory gets a hint to pass the directory.
"""

from __future__ import annotations

from pathlib import Path

from .._exceptions import InputError
from ._reports import ReportComparison, compare_tariff_reports
from ._sweeps import SweepComparison, compare_sweeps

__all__ = ["compare_paths", "input_kind"]

SWEEP = "a sweep directory"
REPORT = "a tariff report"
_SWEEP_MARKS = ("runs.jsonl", "manifest.json", "levels.jsonl")
_SWEEP_FILES = {*_SWEEP_MARKS, "judgements.jsonl", "calls.jsonl", "ledger.jsonl", "summary.json", "summary.md",
                "experiment_keys.txt"}


def input_kind(path: Path) -> str:
    """``SWEEP`` or ``REPORT`` (a file; whether it decodes as a report is checked when it is read)."""
    if path.is_dir():
        if any((path / name).is_file() for name in _SWEEP_MARKS):
            return SWEEP
        raise InputError(f"{path}: not a sweep directory (it has no runs.jsonl, levels.jsonl or manifest.json)")
    if path.is_file():
        if path.name in _SWEEP_FILES:
            raise InputError(f"{path}: a file of a sweep; to compare sweeps, give the directory {path.parent}")
        return REPORT
    raise InputError(f"{path}: no such file or directory")


def compare_paths(a: str | Path, b: str | Path, *, min_delta: float = 1.0, confidence: float = 0.95,
                  allow_mixed_scoring: bool = False) -> SweepComparison | ReportComparison:
    """Compare ``b`` against ``a``: two sweep directories, or two tariff report JSON files."""
    a, b = Path(a), Path(b)
    kind_a, kind_b = input_kind(a), input_kind(b)
    if kind_a != kind_b:
        raise InputError(f"cannot compare {a} ({kind_a}) with {b} ({kind_b}): give two sweep directories or two "
                         "tariff reports")
    if kind_a == SWEEP:
        return compare_sweeps(a, b, min_delta=min_delta, confidence=confidence,
                              allow_mixed_scoring=allow_mixed_scoring)
    return compare_tariff_reports(a, b, allow_mixed_scoring=allow_mixed_scoring)
