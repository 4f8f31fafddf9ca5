"""The deterministic checks: statuses (pass / fail / n/a), what they compare and what their details say."""

from __future__ import annotations

import msgspec
import pytest

from mpcbench_async.mpcbench import CheckResult, Task, run_checks
from mpcbench_async.mpcbench._task import TaskFacts
from tests.mpcbench.check_corpus import jira_issue, report_task, scenario
from tests.mpcbench.tools.conftest import make_data


def _statuses(results: list[CheckResult]) -> dict[str, str]:
    return {r.name: r.status for r in results}


class TestCheckResult:
    def test_passed_is_read_from_status(self):
        """``passed`` is true only for ``pass``; ``n/a`` is not a pass."""
        assert [True, False, False] == [CheckResult(name="x", status=s, detail="").passed
                                        for s in ("pass", "fail", "n/a")]

    def test_encodes_status_not_passed(self):
        """A result is stored as name, status and detail."""
        encoded = msgspec.json.encode(CheckResult(name="x", status="n/a", detail="d"))
        assert b'{"name":"x","status":"n/a","detail":"d"}' == encoded

    def test_old_logs_with_passed_decode(self):
        """A record written before statuses (``"passed": true|false``) decodes to pass/fail; no status at all is
        invalid."""
        decode = msgspec.json.Decoder(list[CheckResult]).decode
        old = decode(b'[{"name":"a","passed":true,"detail":"d"},{"name":"b","passed":false,"detail":"e"}]')
        assert [("a", "pass", "d"), ("b", "fail", "e")] == [(c.name, c.status, c.detail) for c in old]
        with pytest.raises(msgspec.ValidationError, match="a check needs a status"):
            decode(b'[{"name":"a","detail":"d"}]')


class TestPlanning:
    def test_details_name_what_was_compared(self):
        """Each check's detail shows the slots read (in the scenario zone), the busy person and the lengths."""
        task, data = scenario("P1")
        answer = "Option 1: Tue Jan 27 11:00–12:00\nOption 2: Fri Jan 30 09:00–09:45\nWith Sabina, Bikash and Nisha."
        assert [
            CheckResult(name="planning.slots_found", status="pass",
                        detail="2 proposed slot(s) (Asia/Kathmandu): Tue 2026-01-27 11:00–12:00; "
                               "Fri 2026-01-30 09:00–09:45"),
            CheckResult(name="planning.slots_free", status="fail",
                        detail="Tue 2026-01-27 11:00–12:00: Nisha Gurung busy 11:00–12:30; "
                               "Fri 2026-01-30 09:00–09:45: free"),
            CheckResult(name="planning.duration", status="fail",
                        detail="requested 60 min; Tue 2026-01-27 11:00–12:00: 60 min; "
                               "Fri 2026-01-30 09:00–09:45: 45 min"),
            CheckResult(name="planning.participants", status="fail",
                        detail="missing: Nisha Gurung (of Sabina Shrestha, Bikash Thapa, Nisha Gurung)"),
        ] == run_checks(task, answer, data)

    def test_nothing_proposed_is_not_a_pass(self):
        """An answer without a slot fails slots_found; the other checks have nothing to verify (n/a)."""
        task, data = scenario("P1")
        results = run_checks(task, "Sabina Shrestha, Bikash Thapa and Nisha Gurung should attend.", data)
        assert {"planning.slots_found": "fail", "planning.slots_free": "n/a", "planning.duration": "n/a",
                "planning.participants": "n/a"} == _statuses(results)
        assert "no proposed slot (a date with a time) in the answer" == results[0].detail

    def test_reasons_a_slot_is_not_free(self):
        """Outside the window, a weekend, before now and outside working hours are each named."""
        task, data = scenario("P2")
        answer = "Sat Sep 20 10:00–10:30; Mon Sep 15 10:00–10:30; Thu Sep 18 17:00–17:30"
        free = {r.name: r.detail for r in run_checks(task, answer, data)}["planning.slots_free"]
        assert ("Sat 2025-09-20 10:00–10:30: on a Saturday; Mon 2025-09-15 10:00–10:30: outside the window "
                "2025-09-18..2025-09-22; Thu 2025-09-18 17:00–17:30: outside working hours 08:30–17:00") == free

    def test_length_not_stated(self):
        """A start without a length is checked for the requested duration; the duration check is n/a."""
        task, data = scenario("P3")
        results = run_checks(task, "Tue Nov 25 at 9:15 AM with Tom Park, Alice Kim and Min Lee", data)
        assert [("planning.slots_free", "pass", "Tue 2025-11-25 09:15–10:00: free"),
                ("planning.duration", "n/a", "n/a: no proposed slot states its end or length")] == [
            (r.name, r.status, r.detail) for r in results[1:3]]

    def test_task_without_planning_facts_has_no_checks(self):
        """A planning task that declares no facts (the original v1 tasks) has nothing computable."""
        _, data = scenario("P1")
        task = Task(task_id="v1", user_prompt="p", answer_requirements=["r"], task_type="planning")
        assert [] == run_checks(task, "Mon Jan 26 10:30–11:30", data)


class TestEmailReply:
    def test_target_from_the_issue_release(self):
        """The target is the issue's fixVersion release date; the detail lists the release dates read."""
        task, data = scenario("E1")
        assert [CheckResult(name="email_reply.target_date", status="pass",
                            detail="target 2025-12-18 (TWB-227); release dates in the answer: the week of Dec 15 "
                                   "(2025-12-15..2025-12-21)")] == run_checks(
            task, "Expected the week of Dec 15.", data)

    def test_dates_given_for_something_else_do_not_count(self):
        """A follow-up date is not a release date: with no release date the check fails."""
        task, data = scenario("E1")
        assert [CheckResult(name="email_reply.target_date", status="fail",
                            detail="target 2025-12-18 (TWB-227); release dates in the answer: none")] == run_checks(
            task, "I'll follow up by Dec 18 with more news.", data)

    def test_target_from_a_due_date_field(self):
        """Without a fixVersion the issue's due date is the target."""
        task = Task(task_id="t", user_prompt="p", answer_requirements=["r"], task_type="email_reply",
                    facts=TaskFacts(issue_key="ABC-1"))
        data = make_data(jira={"issues": [jira_issue("ABC-1", fields={"duedate": "2025-12-05"})]})
        assert {"email_reply.target_date": "pass"} == _statuses(run_checks(task, "Planned for Dec 5.", data))

    def test_no_target_date_in_the_data_is_n_a(self):
        """An issue with no date gives nothing to verify: n/a, with the reason."""
        task, data = scenario("E3")
        assert [CheckResult(name="email_reply.target_date", status="n/a",
                            detail="n/a: no target date for ABC-9 in the Jira data")] == run_checks(
            task, "On March 3.", data)

    def test_task_naming_no_issue_has_no_check(self):
        """An email task with neither an issue nor a target date has no computable check."""
        task = Task(task_id="t", user_prompt="p", answer_requirements=["r"], task_type="email_reply")
        assert [] == run_checks(task, "On March 3.", make_data())


class TestReport:
    def test_details(self):
        """metrics_quoted names the metrics missing or misstated; metrics_in_sources the ungrounded percentages."""
        task, data = scenario("D1")
        results = run_checks(task, "Gate turnaround up 12%; partner API calls +34%; 17 bugs closed.", data)
        assert [CheckResult(name="report.metrics_quoted", status="fail",
                            detail="missing or misstated: avg_gate_turnaround_minutes_change_percent=-12"),
                CheckResult(name="report.metrics_in_sources", status="fail",
                            detail="1/2 quoted percentages found in the sources with the same label; not found: "
                                   "+12% (Gate turnaround up)")] == results

    def test_no_percentage_is_n_a(self):
        """An answer quoting no percentage leaves metrics_in_sources n/a."""
        task, data = scenario("D1")
        assert {"report.metrics_quoted": "fail", "report.metrics_in_sources": "n/a"} == _statuses(
            run_checks(task, "A quiet week.", data))

    def test_without_expected_metrics_only_grounding_runs(self):
        """A report task with no metrics facts runs only the grounding check."""
        _, data = scenario("D1")
        assert {"report.metrics_in_sources": "pass"} == _statuses(
            run_checks(report_task({}), "Partner API calls +34%.", data))

    def test_numeric_source_fields_ground_percentages(self):
        """A JSON field named ``…_percent`` in the sources grounds a percentage with a matching label."""
        task, data = scenario("D2")
        assert {"report.metrics_quoted": "fail", "report.metrics_in_sources": "pass"} == _statuses(
            run_checks(task, "Crash-free sessions: 99.2%", data))


class TestIssue26Details:
    """What each new rule says in the check's detail, so a reader of runs.jsonl sees why."""

    def test_a_hedge_is_named(self):
        task, data = scenario("E5")
        [result] = run_checks(task, "Either Nov 10 or Nov 20.", data)
        assert (result.status, result.detail) == (
            "fail", "target 2025-11-20 (KIW-88); release dates in the answer: Nov 10 or Nov 20 "
                    "(2025-11-10..2025-11-20) [hedge: alternatives]")

    def test_an_event_deadline_is_that_event_s_day(self):
        task, data = scenario("E5")
        [result] = run_checks(task, "It will be ready by the Nov 30 launch.", data)
        assert (result.status, result.detail) == (
            "fail", "target 2025-11-20 (KIW-88); release dates in the answer: by the Nov 30")

    def test_a_repeated_request_window_proposes_nothing(self):
        task, data = scenario("P4")
        found = run_checks(task, "Noted: Tuesday, 10:00–16:00. Will confirm.", data)[0]
        assert (found.status, found.detail) == ("fail", "no proposed slot (a date with a time) in the answer")

    def test_a_contradicted_direction_is_listed(self):
        task, data = scenario("D3")
        results = _statuses(run_checks(task, "WAU +10%; cold start p95 +14.3%; support tickets −15%", data))
        assert results == {"report.metrics_quoted": "fail", "report.metrics_in_sources": "fail"}
        detail = run_checks(task, "WAU +10%; cold start p95 +14.3%; support tickets −15%", data)[0].detail
        assert detail == "missing or misstated: cold_start_p95_ms_change_percent=-14.3"
