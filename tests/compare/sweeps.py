"""Two hand-written sweep directories with known scores (record shapes as the runner writes them).

Model ``m``, judges ``j1`` and ``j2``; B against A:

- ``t1``: trials 0 and 1 on both sides (B also has an infrastructure error in trial 2, not a trial); ARS
  4.5 → 2.5 in both trials (paired CI [-2, -2]: a regression), SGR 3 → 3, checks all pass.
- ``t2``: A trials 0, 1 with ARS 2; B trials 0, 1, 2 with ARS 4 (unpaired CI [2, 2]: an improvement).
- ``t3``: one trial; A ok (checks pass), B a task-level error: a new failure ``ok → error``.
- ``t4``: one trial; checks 2/2 → 1/2 (no CI: checks passed → failed, a regression) and a new failure
  ``passed → failed``; SGR 2 → 4 (no CI: a rise of 2, an improvement).
- ``t5`` only in A, ``t6`` only in B; model ``m2`` only in B.
"""

from __future__ import annotations

from pathlib import Path

from tests.sweep.summary_lines import judgement, run, write


def _judged(key: str, task: str, trial: int, checks: str, scores: dict[str, tuple[int, int]], *,
            model: str = "m") -> tuple[dict, list[dict]]:
    """An ok run and one scored judgement per judge (its task and trial set to the run's)."""
    record = run(key, model=model, task=task, trial=trial, checks=checks)
    verdicts = [judgement(f"{key}-{judge}", key, ars=ars, sgr=sgr, model=model, judge=judge)
                | {"task_id": task, "trial": trial} for judge, (ars, sgr) in scores.items()]
    return record, verdicts


def _both(score: tuple[int, int], other: tuple[int, int] | None = None) -> dict[str, tuple[int, int]]:
    return {"j1": score, "j2": other or score}


def write_sweep(root: Path, entries: list[tuple[dict, list[dict]]], extra_runs: list[dict] = ()) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write(root / "runs.jsonl", *(r for r, _ in entries), *extra_runs)
    write(root / "judgements.jsonl", *(v for _, verdicts in entries for v in verdicts))
    return root


def sweep_a(root: Path) -> Path:
    return write_sweep(root, [
        _judged("a-t1-0", "t1", 0, "pp", _both((4, 3), (5, 3))),
        _judged("a-t1-1", "t1", 1, "pp", _both((4, 3), (5, 3))),
        _judged("a-t2-0", "t2", 0, "p", _both((2, 3))),
        _judged("a-t2-1", "t2", 1, "p", _both((2, 3))),
        _judged("a-t3-0", "t3", 0, "pp", _both((4, 4))),
        _judged("a-t4-0", "t4", 0, "pp", _both((4, 2))),
        _judged("a-t5-0", "t5", 0, "p", _both((5, 5))),
    ])


def sweep_b(root: Path) -> Path:
    return write_sweep(root, [
        _judged("b-t1-0", "t1", 0, "pp", _both((2, 3), (3, 3))),
        _judged("b-t1-1", "t1", 1, "pp", _both((2, 3), (3, 3))),
        _judged("b-t2-0", "t2", 0, "p", _both((4, 3))),
        _judged("b-t2-1", "t2", 1, "p", _both((4, 3))),
        _judged("b-t2-2", "t2", 2, "p", _both((4, 3))),
        _judged("b-t4-0", "t4", 0, "pf", _both((4, 4))),
        _judged("b-t6-0", "t6", 0, "p", _both((5, 5))),
        _judged("b2-t1-0", "t1", 0, "p", _both((5, 5)), model="m2"),
    ], extra_runs=[
        run("b-t1-2", task="t1", trial=2, status="error", retryable=True, error_class="RateLimitError",
            error_message="429"),
        run("b-t3-0", task="t3", trial=0, status="error", error_class="PermanentLLMError", error_message="HTTP 400"),
    ])
