"""``kept_runs``: one row per run the summary counts, with the judgements it counts — read by the same rules."""

from __future__ import annotations

from mpcbench_async.sweep import RunRow, kept_runs, summarize

from .summary_lines import judgement, run, write


def _sweep(tmp_path):
    """Two models; every kind of kept record, and every kind of line the summary leaves out."""
    (tmp_path / "experiment_keys.txt").write_text(" ".join(
        ["r1", "r2", "r3", "r4", "r5", "r6", "j1a", "j1b", "j3a", "j3b", "j4a", "j5a", "j6a"]))
    write(tmp_path / "runs.jsonl",
          run("r1", checks="ff", started=1, finished=2),
          run("r1", checks="pnp", started=10, finished=20),  # a rerun: the last ok record counts
          run("r2", trial=1, checks="pf"),
          run("r3", task="t2", checks="nn"),  # no check applied: unverified, whatever its ARS (4.5)
          run("r4", task="t2", trial=1),  # no checks and judged 3: unverified too
          run("r5", model="m2", status="error", error_class="RateLimitError", retryable=True),
          run("r6", model="m2", trial=1, status="error", error_class="AgentError"),
          run("old", checks="p"))  # an earlier experiment's record
    write(tmp_path / "judgements.jsonl",
          judgement("j1a", "r1", ars=1, sgr=1, judge="ja", started=3),  # judged the first r1: stale
          judgement("j1a", "r1", ars=5, sgr=4, judge="ja", started=21),
          judgement("j1b", "r1", ars=None, judge="jb", started=21),  # unscored
          judgement("j3a", "r3", ars=4, sgr=2, judge="ja"),
          judgement("j3b", "r3", ars=5, sgr=5, judge="jb"),
          judgement("j4a", "r4", ars=3, sgr=3, judge="jb", status="error", error_class="JudgeError"),
          judgement("j4a", "r4", ars=3, sgr=3, judge="jb"),  # the error was redone: the ok counts
          judgement("j5a", "r5", judge="ja"),  # a judgement of a run with no ok record: an orphan
          judgement("j6a", "r1", judge="jc", status="error", error_class="JudgeError"))  # an error: no score


def test_one_row_per_kept_run_with_its_kept_judgements(tmp_path):
    _sweep(tmp_path)
    ok = {"status": "ok", "infra_error": False}
    assert [
        RunRow(key="r1", agent_model="m", task_id="t1", task_type="planning", trial=0, **ok, checks_passed=2,
               checks_total=2, passed=True, scores={"ja": [5, 4], "jb": [None, None]}),
        RunRow(key="r2", agent_model="m", task_id="t1", task_type="planning", trial=1, **ok, checks_passed=1,
               checks_total=2, passed=False, scores={}),
        RunRow(key="r3", agent_model="m", task_id="t2", task_type="planning", trial=0, **ok, checks_passed=0,
               checks_total=0, passed=None, unverified=True, scores={"ja": [4, 2], "jb": [5, 5]}),
        RunRow(key="r4", agent_model="m", task_id="t2", task_type="planning", trial=1, **ok, checks_passed=0,
               checks_total=0, passed=None, unverified=True, scores={"jb": [3, 3]}),
        RunRow(key="r5", agent_model="m2", task_id="t1", task_type="planning", trial=0, status="error",
               infra_error=True, checks_passed=0, checks_total=0, passed=None, scores={},
               error_class="RateLimitError"),
        RunRow(key="r6", agent_model="m2", task_id="t1", task_type="planning", trial=1, status="error",
               infra_error=False, checks_passed=0, checks_total=0, passed=False, scores={}, error_class="AgentError"),
    ] == kept_runs(tmp_path)


def test_rows_agree_with_the_summary(tmp_path):
    """The rows are the runs the summary counts: same runs, checks, infra errors and passes (pass^k)."""
    _sweep(tmp_path)
    rows, summary = kept_runs(tmp_path), summarize(tmp_path)
    assert summary.runs == len(rows)
    for model in summary.models:
        mine = [r for r in rows if r.agent_model == model.model]
        assert (model.ok, model.infra_errors, model.checks_passed, model.checks_total) == (
            sum(r.status == "ok" for r in mine), sum(r.infra_error for r in mine),
            sum(r.checks_passed for r in mine), sum(r.checks_total for r in mine))
    assert [0.0, 0.0] == [m.pass_at_k for m in summary.models]  # m: t1 and t2 each have a failed trial


def test_an_empty_directory_has_no_rows(tmp_path):
    assert [] == kept_runs(tmp_path)


def test_a_score_out_of_range_is_not_a_judgement(tmp_path):
    """A judgement line scoring 7 does not decode as a judgement record (scores are 0–5): it is skipped and
    counted, never a score (the statistics would otherwise take it as a seventh category)."""
    write(tmp_path / "runs.jsonl", run("r1"))
    write(tmp_path / "judgements.jsonl", judgement("j1", "r1", ars=7, sgr=3), judgement("j2", "r1", judge="k"))
    assert {"k": [4, 3]} == kept_runs(tmp_path)[0].scores
    assert {"judgements.jsonl": 1} == summarize(tmp_path).skipped_lines
