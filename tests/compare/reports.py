"""Two tariff reports (as ``tariff run`` writes them) with a known regression, improvement and new failure."""

from __future__ import annotations

from pathlib import Path

import msgspec

from mpcbench_async.tariff import BenchmarkReport
from tests.tariff.test_compare import BASELINE, CURRENT


def write_reports(root: Path) -> tuple[Path, Path]:
    """BASELINE and CURRENT of tests/tariff/test_compare.py: b passes then errors, c goes 0.35 → 1.0."""
    paths = root / "base.json", root / "cur.json"
    for path, report in zip(paths, (BASELINE, CURRENT), strict=True):
        path.write_bytes(msgspec.json.encode(report))
    return paths


def add_to_sweep(out_dir: Path, name: str, report: BenchmarkReport) -> None:
    """A tariff report as a sweep leaves it: ``<suite>_<model>.json`` beside its results ``.jsonl``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.jsonl").write_bytes(b"")
    (out_dir / f"{name}.json").write_bytes(msgspec.json.encode(report))
