"""Memory that grows with the sweep, counted in bytes per unit by ``tracemalloc`` (issue 31, points 3 and 6).

Each test measures the peak of Python allocations while one step runs over a small and a large sweep of the same
shape; the difference divided by the units between them is what each further unit costs. The bounds sit just above
what the packed columns cost (8-byte integers and doubles per unit, with the arrays' growth margin), far below a
Python object per unit (a tuple or a key string alone is 56–70 bytes), so a change that holds one object per unit
again fails here. Allocation counts do not depend on the machine's speed or load: no timing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from mpcbench_async.sweep import RunRow, summarize
from mpcbench_async.sweep._statistics import statistics
from tests.sweep.conftest import plan_of
from tests.traced import peak

SMALL, LARGE = 1_000, 11_000


def per_unit(step: Callable[[int], Any]) -> float:
    """Bytes of peak memory per unit beyond the small sweep's."""
    step(SMALL)  # warm: imports, caches and interned names are not per unit
    return (peak(lambda: step(LARGE)) - peak(lambda: step(SMALL))) / (LARGE - SMALL)


def rows(n: int) -> Iterator[RunRow]:
    """``n`` kept runs of one model over 10 tasks, in ``iter_run_rows``'s order, built as they are taken."""
    for task in range(10):
        for trial in range(n // 10):
            yield RunRow(key=f"run-{task:08x}{trial:08x}", agent_model="sim/agent", task_id=f"t{task}",
                         task_type="planning", trial=trial, status="ok", infra_error=False, checks_passed=trial % 2,
                         checks_total=1, passed=bool(trial % 2), scores={"sim/judge": [4, trial % 5]})


def test_the_statistics_hold_packed_columns_not_an_object_per_run():
    """A tuple per run and a dict of cells (the code before) cost 284 bytes a run here; the columns cost 55."""
    assert per_unit(lambda n: statistics(rows(n))) < 100


def test_the_experiment_key_list_is_written_from_packed_keys(workspace, tmp_path):
    """A set of key strings and a formatted line per key (the code before) cost 549 bytes per agent unit (its key and
    its judge's); packed, 193: the plan's own 8-byte key, two 8-byte integers and their sorted copies, the list's 44
    bytes of text, and the copies an array and a bytearray make while they grow."""
    from mpcbench_async.sweep._experiment import record_experiment_keys

    root = workspace("http://127.0.0.1:9")

    def write(n: int) -> None:
        _, _, plan = plan_of(root, trials=n // 8)  # 4 tasks × 2 agent models
        out = tmp_path / f"out{n}"
        out.mkdir(exist_ok=True)
        record_experiment_keys(out, plan, new_experiment=True)

    assert per_unit(write) < 250


def write_sweep(out: Path, units: int) -> None:
    """A finished sweep of ``units`` agent runs of one model over 10 tasks, each judged once and made by two agent
    calls and one judge call, with its key list; every 50th unit first failed (rate limit) and was redone."""
    out.mkdir(parents=True, exist_ok=True)
    keys: list[str] = []
    with (out / "runs.jsonl").open("wb") as runs, (out / "judgements.jsonl").open("wb") as judges, \
            (out / "calls.jsonl").open("wb") as calls:
        for i in range(units):
            run_key, judge_key, t = f"run-{i:016x}", f"judge-{i:016x}", 1_700_000_000.0 + 4 * i
            keys += [run_key, judge_key]
            base = {"key": run_key, "task_id": f"t{i % 10}", "task_type": "planning", "scenario_id": "s",
                    "model": "sim/agent", "trial": i // 10}
            if i % 50 == 0:
                runs.write(orjson.dumps({**base, "status": "error", "retryable": True, "error_class": "RateLimitError",
                                         "error_message": "HTTP 429", "started_at": t - 2, "finished_at": t - 1}))
                runs.write(b"\n")
            runs.write(orjson.dumps({**base, "status": "ok", "started_at": t, "finished_at": t + 1,
                                     "run": {"stop_reason": "final"},
                                     "checks": [{"name": "c", "status": "pass" if i % 3 else "fail"}]}) + b"\n")
            judges.write(orjson.dumps({
                "key": judge_key, "run_key": run_key, "status": "ok", "task_id": base["task_id"],
                "task_type": "planning", "agent_model": "sim/agent", "judge_model": "sim/judge", "trial": i // 10,
                "started_at": t + 2, "finished_at": t + 3, "judgement": {"verdict": "scored", "scores": {
                    "answer_requirements_satisfaction": {"score": i % 6}, "source_grounded_reasoning": {"score": 3}}}}))
            judges.write(b"\n")
            for key, model, at in ((f"{run_key}/turn1", "sim/agent", t + 0.2),
                                   (f"{run_key}/turn2", "sim/agent", t + 0.4),
                                   (f"{judge_key}/try1", "sim/judge", t + 2.5)):
                calls.write(orjson.dumps({"model": model, "key": key, "status": "ok", "started_at": at,
                                          "latency_s": 0.2, "usage": {"total_tokens": 1000}}) + b"\n")
    (out / "experiment_keys.txt").write_text("".join(f"{k}\n" for k in sorted(keys)))


@pytest.mark.slow  # a 11k-unit sweep written and summarized twice: ~7 s, in the full suite only
def test_summarize_holds_packed_columns_not_an_object_per_unit(tmp_path):
    """A slotted entry per run and per judgement, keyed by a dict of the key list's strings (the code before), cost
    827 bytes per agent unit (its run, its judgement, their keys and calls) here; the reader's packed columns, the
    numbered key index and the statistics' columns, 226; with 4-byte bucket starts and task order, and each table's
    key-number → slot array over its own kind of key only, 201; the statistics reading the reader's columns instead
    of a copy, names' numbers, check counts and ARS sums in 2 bytes, trials in 4, and a key-index bucket per 4–8
    keys, 127.
    One more object per unit (56 bytes or more), or the statistics' copy of the columns (~40), fails."""
    for n in (SMALL, LARGE):
        write_sweep(tmp_path / str(n), n)
    assert per_unit(lambda n: summarize(tmp_path / str(n))) < 150


def test_the_summary_statistics_read_the_reader_columns_not_a_copy(tmp_path):
    """The statistics of ``summarize`` over the reader's kept runs and judgements (read before the step measured):
    a copy of each run's task, trial, outcome, checks and scores, ordered through ``np.unique`` (the code before),
    cost 51 bytes per unit here; the runs' order and each run's first judgement, held as 4-byte slots, and the
    sort's transient arrays, 17."""
    from mpcbench_async.sweep._reading import Reader
    from mpcbench_async.sweep._statistics import statistics_of

    tables = {}
    for n in (SMALL, LARGE):
        write_sweep(tmp_path / str(n), n)
        reader = Reader(tmp_path / str(n))
        runs = reader.runs()
        tables[n] = runs, reader.judgements(runs)
    assert per_unit(lambda n: statistics_of(*tables[n])) < 25


class _Unit(msgspec.Struct):
    """A unit record as the done-index lists it: its key and status."""

    key: str
    status: str


def test_the_plan_outcome_holds_numbers_not_key_strings(workspace, tmp_path):
    """The end of every sweep (and every no-op resume) counts the plan's units by their records. Sets of the key
    strings of both files (the code before) cost ~460 bytes per agent unit here (its run and its judgement); one
    file's read at a time, its keys kept as 8-byte numbers, well under half. The counts are exact."""
    from mpcbench_async.mpcbench._suite import plan_outcome
    from mpcbench_async.runtime import JsonlWriter

    root = workspace("http://127.0.0.1:9")
    plans = {}
    for n in (SMALL, LARGE):
        _, _, plan = plan_of(root, trials=n // 8)  # 4 tasks × 2 agent models
        out = plans[n] = tmp_path / f"out{n}", plan
        with JsonlWriter(out[0] / "runs.jsonl", index=True) as runs, \
                JsonlWriter(out[0] / "judgements.jsonl", index=True) as judges:
            for i, unit in enumerate(plan.agent_units()):
                runs.write(_Unit(key=unit.key, status="error" if i % 10 == 9 else "ok"))  # an error: never judged
                if i % 10 == 9:
                    continue
                for key in plan.judge_keys(unit.key):
                    judges.write(_Unit(key=key, status="error" if i % 10 == 8 else "ok"))
    judges = len(plans[SMALL][1].judge_models)
    assert (SMALL * (1 + judges), SMALL * 0.8 * (1 + judges) + SMALL * 0.1, SMALL * 0.1 * (1 + judges),
            SMALL * 0.1 * judges) == tuple(getattr(plan_outcome(*plans[SMALL]), field)
                                           for field in ("units", "ok", "failed", "not_run"))
    assert per_unit(lambda n: plan_outcome(*plans[n])) < 200
