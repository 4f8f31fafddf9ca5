"""What the summary counts: last ok record per key, no duplicates, no stale or orphan judgements, no undecodable
lines, no other experiments; pass^k without infrastructure errors; tokens kept and spent; tariff apart."""

from __future__ import annotations

import logging

from mpcbench_async.sweep import summarize

from .summary_lines import call, case, judgement, run, write


class TestWhatCounts:
    def test_a_key_fragment_is_skipped_not_counted(self, tmp_path):
        """A line ``{"key": …}`` (or with only key and status) is not a run: skipped and counted per file."""
        write(tmp_path / "runs.jsonl", {"key": "a"}, {"key": "b", "status": "ok"}, run("c"), b"not json")
        summary = summarize(tmp_path)
        assert (1, {"runs.jsonl": 3}) == (summary.runs, summary.skipped_lines)
        assert ["m"] == [m.model for m in summary.models]

    def test_duplicate_ok_lines_count_once_and_the_last_ok_wins(self, tmp_path):
        """Two ok lines of one key count once (the later one: its checks); an error after an ok is ignored too."""
        write(tmp_path / "runs.jsonl", run("a", checks="f"), run("a", checks="p"), run("b", checks="p"),
              run("b", status="error", error_class="RateLimitError", retryable=True))
        summary = summarize(tmp_path)
        [model] = summary.models
        assert (2, 2, 0, 0, 2, 2, 1.0) == (summary.runs, model.ok, model.errors, model.infra_errors,
                                           model.checks_passed, model.checks_total, model.pass_at_k)
        assert 2 == summary.duplicates_ignored

    def test_a_resumed_error_is_replaced_by_its_ok(self, tmp_path):
        """An error line followed by the key's ok line is history, not a duplicate: the unit counts once, ok."""
        write(tmp_path / "runs.jsonl", run("a", status="error", retryable=True, error_class="ServerError"),
              run("a", checks="p"))
        summary = summarize(tmp_path)
        assert (1, 1, 0, 0, 0, []) == (summary.runs, summary.models[0].ok, summary.models[0].infra_errors,
                                       summary.duplicates_ignored, summary.other_experiments, summary.errors)

    def test_records_of_other_experiments_are_left_out_with_a_count(self, tmp_path):
        """Only keys of experiment_keys.txt count; the others (runs, judgements, calls) are counted apart."""
        (tmp_path / "experiment_keys.txt").write_text("run-a\njudge-a\n")
        write(tmp_path / "runs.jsonl", run("run-a", checks="p"), run("run-old", checks="f"))
        write(tmp_path / "judgements.jsonl", judgement("judge-a", "run-a"), judgement("judge-old", "run-old"))
        write(tmp_path / "calls.jsonl", call("run-a/turn1", tokens=10), call("run-old/turn1", tokens=1000))
        summary = summarize(tmp_path)
        assert (1, 1, 2, 1, 1010) == (summary.runs, summary.judgements, summary.other_experiments, summary.calls,
                                      summary.directory_calls.tokens)


class TestJudgements:
    def test_a_judgement_of_an_earlier_run_of_the_key_is_stale(self, tmp_path):
        """Run a finished at 100 and was judged (ARS 5); it ran again (finished 200): the old verdict is dropped,
        the verdict given after the new run (ARS 2) counts."""
        write(tmp_path / "runs.jsonl", run("a", started=90, finished=100), run("a", started=190, finished=200))
        write(tmp_path / "judgements.jsonl", judgement("ja", "a", ars=5, started=101, finished=102),
              judgement("ja", "a", ars=2, started=201, finished=202))
        summary = summarize(tmp_path)
        [view] = summary.models[0].judges
        assert (1, 1, 1, 2.0, 1) == (summary.judgements, summary.stale_judgements, summary.duplicates_ignored,
                                     view.ars.mean, view.ars.n)

    def test_a_judgement_of_a_run_without_an_ok_record_is_an_orphan(self, tmp_path):
        """Judgements whose run has no record, or only an error record, are not counted."""
        write(tmp_path / "runs.jsonl", run("a"), run("b", status="error", error_class="X"))
        write(tmp_path / "judgements.jsonl", judgement("ja", "a"), judgement("jb", "b"), judgement("jz", "zz"))
        summary = summarize(tmp_path)
        assert (1, 2) == (summary.judgements, summary.orphan_judgements)

    def test_duplicate_judgements_count_once(self, tmp_path):
        """Two ok verdicts of one judge key count once: the last one."""
        write(tmp_path / "runs.jsonl", run("a"))
        write(tmp_path / "judgements.jsonl", judgement("ja", "a", ars=1), judgement("ja", "a", ars=5))
        summary = summarize(tmp_path)
        [view] = summary.models[0].judges
        assert (1, 1, 5.0) == (view.scored, summary.duplicates_ignored, view.ars.mean)


class TestPassAtK:
    def test_infrastructure_errors_are_not_trials(self, tmp_path):
        """t1: a pass and a rate-limit error -> 1 trial, passed; t2: a pass and a task-level error -> 2 trials,
        failed. pass^k = 1/2 with k = 1; the rate-limit error is counted apart."""
        write(tmp_path / "runs.jsonl",
              run("a", task="t1", trial=0, checks="p"),
              run("b", task="t1", trial=1, status="error", retryable=True, error_class="RateLimitError"),
              run("c", task="t2", trial=0, checks="p"),
              run("d", task="t2", trial=1, status="error", error_class="PermanentLLMError"))
        [model] = summarize(tmp_path).models
        assert (4, 2, 1, 1, 2, 1, 0.5) == (model.runs, model.ok, model.errors, model.infra_errors, model.tasks,
                                           model.k, model.pass_at_k)

    def test_a_task_with_only_infrastructure_errors_is_not_in_pass_at_k(self, tmp_path):
        """A task never really tried is left out of pass^k instead of counting as a failure."""
        write(tmp_path / "runs.jsonl", run("a", task="t1", checks="p"),
              run("b", task="t2", status="error", retryable=True, error_class="LLMTimeoutError"))
        [model] = summarize(tmp_path).models
        assert (1, 1, 1.0, 1) == (model.tasks, model.k, model.pass_at_k, model.infra_errors)

    def test_infrastructure_judge_errors_are_counted_apart(self, tmp_path):
        """A judge's timeout is an infrastructure error of its row, not a task-level error."""
        write(tmp_path / "runs.jsonl", run("a"), run("b"))
        write(tmp_path / "judgements.jsonl", judgement("ja", "a"),
              judgement("jb", "b", status="error", retryable=True, error_class="LLMTimeoutError"))
        [view] = summarize(tmp_path).models[0].judges
        assert (1, 0, 1) == (view.scored, view.errors, view.infra_errors)


class TestTokens:
    def test_kept_counts_the_calls_of_kept_records_and_spent_counts_every_call(self, tmp_path):
        """Run a failed (10–20 s, one call of 100 tokens) and was redone (30–40 s, two calls of 200); run b was
        killed (one call of 70, no record). Kept: 2 calls, 400 tokens; spent: 4 calls, 570 tokens."""
        write(tmp_path / "runs.jsonl",
              run("run-a", status="error", retryable=True, error_class="ServerError", started=10, finished=20),
              run("run-a", started=30, finished=40))
        write(tmp_path / "judgements.jsonl", judgement("judge-a", "run-a", judge="j", started=41, finished=45))
        write(tmp_path / "calls.jsonl",
              call("run-a/turn1", tokens=100, cost=0.1, started=15),
              call("run-a/turn1", tokens=200, cost=0.2, started=31),
              call("run-a/turn2", tokens=200, cost=0.2, started=35),
              call("run-b/turn1", tokens=70, cost=0.07, started=50),
              call("judge-a/try1", model="j", tokens=50, cost=0.05, started=42))
        summary = summarize(tmp_path)
        [model] = summary.models
        [judge] = summary.judge_calls
        assert ((2, 400, 0.4), (4, 570, 0.57)) == ((model.kept.calls, model.kept.tokens, model.kept.cost_usd),
                                                   (model.spent.calls, model.spent.tokens, model.spent.cost_usd))
        assert ("j", 1, 50, 1, 50) == (judge.model, judge.kept.calls, judge.kept.tokens, judge.spent.calls,
                                       judge.spent.tokens)
        assert (5, 5) == (summary.calls, summary.directory_calls.calls)

    def test_tariff_calls_stay_out_of_the_agent_rows(self, tmp_path):
        """Calls keyed ``tariff/<case>/…`` go to the tariff section, never into the agent row of the same model."""
        write(tmp_path / "runs.jsonl", run("run-r", model="m"))
        write(tmp_path / "tariff_m.jsonl", case("case-1", "c1", model="m"))
        write(tmp_path / "calls.jsonl", call("run-r/turn1", model="m", tokens=10),
              call("tariff/c1/iter1", model="m", tokens=1000), call("tariff/c1/iter2", model="m", tokens=1000))
        summary = summarize(tmp_path)
        assert (1, 10) == (summary.models[0].spent.calls, summary.models[0].spent.tokens)
        assert (2, 2000, 2, 2000) == (summary.tariff[0].kept.calls, summary.tariff[0].kept.tokens,
                                      summary.tariff[0].spent.calls, summary.tariff[0].spent.tokens)


class TestTariffSection:
    def test_per_suite_and_model(self, tmp_path):
        """tariff × m: a pass (1.0), a fail (0.3), a task-level error (0) and a rate-limit error: 4 cases, 1 passed,
        average 0.325; hscodecomp × m apart. A case with calls but no record stays out of the rows."""
        write(tmp_path / "tariff_m.jsonl", case("case-1", "c1"), case("case-2", "c2", score=0.3, passed=False),
              case("case-2", "c2", score=0.3, passed=False),
              case("case-3", "c3", status="error", error_class="PermanentLLMError", error_message="bad"),
              case("case-4", "c4", status="error", retryable=True, error_class="RateLimitError"))
        write(tmp_path / "hscodecomp_m.jsonl", case("case-9", "h1", score=0.7, passed=False))
        write(tmp_path / "calls.jsonl", call("tariff/c1/iter1", tokens=30), call("tariff/c3/iter1", tokens=0),
              call("tariff/h1/iter1", tokens=5), call("tariff/lost/iter1", tokens=99))
        summary = summarize(tmp_path)
        rows = [(t.suite, t.model, t.cases, t.passed, t.pass_rate, t.average_score, t.errors, t.infra_errors,
                 t.spent.calls, t.spent.tokens) for t in summary.tariff]
        assert [("hscodecomp", "m", 1, 0, 0.0, 0.7, 0, 0, 1, 5),
                ("tariff", "m", 4, 1, 0.25, 0.325, 1, 1, 2, 30)] == rows
        assert (5, 1, 3, 4) == (summary.tariff_cases, summary.duplicates_ignored, summary.calls,
                                summary.directory_calls.calls)
        assert [] == summary.models

    def test_tariff_records_follow_the_experiment_when_it_lists_case_keys(self, tmp_path):
        """When experiment_keys.txt lists tariff case keys, tariff records of other keys are other experiments."""
        (tmp_path / "experiment_keys.txt").write_text("case-1\n")
        write(tmp_path / "tariff_m.jsonl", case("case-1", "c1"), case("case-old", "c1", score=0.0, passed=False))
        summary = summarize(tmp_path)
        assert (1, 1.0, 1) == (summary.tariff[0].cases, summary.tariff[0].pass_rate, summary.other_experiments)


class TestUndecodableLines:
    def test_one_warning_per_file_even_when_a_file_is_read_twice(self, tmp_path, caplog):
        """Three bad lines in runs.jsonl give one warning naming the file (also when the error example needs a
        second read of it), and the summary counts them."""
        write(tmp_path / "runs.jsonl", b"{", {"key": "run-x"},
              run("run-a", status="error", retryable=True, error_class="RateLimitError", error_message="first"),
              b"[]", run("run-b", status="error", retryable=True, error_class="RateLimitError", error_message="2nd"),
              run("run-b"))
        with caplog.at_level(logging.WARNING):
            summary = summarize(tmp_path)
        warnings = [r for r in caplog.records if r.name == "mpcbench_async.runtime._jsonl"]
        assert 1 == len(warnings)
        assert str(tmp_path / "runs.jsonl") in f"{warnings[0].getMessage()} {vars(warnings[0])}"
        assert ({"runs.jsonl": 3}, "first") == (summary.skipped_lines, summary.errors[0].example)
