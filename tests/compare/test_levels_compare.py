"""``compare A B`` on sweeps that ran the three-level MPCBench: B − A per level × model × split, paired by instance."""

from __future__ import annotations

from pathlib import Path

import msgspec

from mpcbench_async.compare import compare_paths, render_markdown
from mpcbench_async.levels import LevelsRecord, Metrics


def _write(out: Path, f1s: list[float], *, model: str = "m", extra: list[LevelsRecord] | None = None) -> None:
    out.mkdir(parents=True)
    records = [LevelsRecord(key=f"levels-{model}-{n}", status="ok", instance_id=f"i{n}", level=2, split="exp1",
                            model=model, metrics=Metrics(f1=f1, precision=f1, recall=f1, exact_match=f1 == 1.0),
                            pred=[], gold=[]) for n, f1 in enumerate(f1s)]
    (out / "levels.jsonl").write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in [*records, *(extra or [])]))


def test_a_drop_on_every_shared_instance_is_a_regression_with_its_new_failures(tmp_path):
    """A solves six instances exactly, B none: F1 1.00 → 0.00, a paired CI of [-1, -1], one regression naming the
    level and split, and six new failures; an infrastructure error in B is not a trial."""
    _write(tmp_path / "a", [1.0] * 6)
    error = LevelsRecord(key="levels-m-err", status="error", retryable=True, instance_id="i9", level=2, split="exp1",
                         model="m", error_class="RateLimitError")
    _write(tmp_path / "b", [0.0] * 6, extra=[error])
    comparison = compare_paths(tmp_path / "a", tmp_path / "b")
    [row] = comparison.levels
    assert (row.level, row.model, row.split, row.instances, row.a_f1, row.b_f1, row.delta) == (
        2, "m", "exp1", 6, 1.0, 0.0, -1.0)
    assert (row.ci.low, row.ci.high) == (-1.0, -1.0)
    assert [(f.task, f.metric, f.a, f.b) for f in comparison.regressions] == [("L2 exp1", "f1", 1.0, 0.0)]
    assert [f.task for f in comparison.new_failures] == [f"i{n}" for n in range(6)]
    text = render_markdown(comparison)
    assert "| 2 | m | exp1 | 6 | 1.00 | 0.00 | -1.00 [-1.00, -1.00] | 100% | 0% |" in text


def test_equal_sides_show_no_change(tmp_path):
    """The same scores on both sides: a zero change, nothing flagged."""
    _write(tmp_path / "a", [1.0, 0.5, 0.0])
    _write(tmp_path / "b", [1.0, 0.5, 0.0])
    comparison = compare_paths(tmp_path / "a", tmp_path / "b")
    assert [(r.delta, r.a_em, r.b_em) for r in comparison.levels] == [(0.0, 1 / 3, 1 / 3)]
    assert not comparison.regressions and not comparison.improvements and not comparison.new_failures
