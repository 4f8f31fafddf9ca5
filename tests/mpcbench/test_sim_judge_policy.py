"""sim/judge's rubric on hand-written judge inputs.

Wrong answers are capped, good ones scored well, and every score is explained.
"""

from __future__ import annotations

import copy
import json
from datetime import date
from pathlib import Path
from typing import Any

import orjson
import pytest

from mpcbench_async._answers import find_periods, find_quantities
from mpcbench_async.llm import LLMClient
from mpcbench_async.mpcbench import load_prompts, run_judge
from mpcbench_async.mpcbench._sim._judge_evidence import Person, read_evidence
from mpcbench_async.mpcbench._sim._judge_figures import invented_percentages
from mpcbench_async.mpcbench._sim._judge_policy import judge_scores, lazy_agent
from mpcbench_async.mpcbench._sim._judge_release import asked_issue, named_issues, promised, tracked_issues
from mpcbench_async.mpcbench._sim._judge_stale import dated_statements, marked_past, report_week
from mpcbench_async.mpcbench._sim._judge_text import (
    asked_day,
    durations,
    inline_placeholders,
    is_email,
    meeting_lengths,
    period,
    range_lengths,
    sections,
    states_time_frame,
)
from tests.conftest import REPO

CASES_FILE = Path(__file__).with_name("judge_cases.json")
LABELLED = json.loads(CASES_FILE.read_text())
BANDS = {">=4": range(4, 6), "3": range(3, 4), "<=2": range(0, 3)}
RULES = {"empty", "non-answer", "empty-template", "task-type", "placeholder", "empty-section", "no-slot",
         "participants", "weekend", "period", "length", "conflict", "time-frame", "wrong-issue", "invented", "stale",
         "promise", "not-email", "template", "signature"}  # every rule that caps answer_requirements_satisfaction


def judge_input(case: dict[str, Any]) -> dict[str, Any]:
    """The case's base judge input with its answer (and any other fields) replaced, steps derived from the trace."""
    built = copy.deepcopy(LABELLED["bases"][case["base"]])
    built.update({k: v for k, v in case.items() if k not in ("id", "base", "band", "rule")})
    built["tool_trace_steps"] = [f"Step {s['step']}: {s['tool_name']}({orjson.dumps(s['arguments']).decode()})"
                                 for s in built["tool_trace"]]
    return built


def ars(scores: dict[str, Any]) -> tuple[int, str]:
    axis = scores["answer_requirements_satisfaction"]
    return axis["score"], axis["justification"]


def base(name: str, answer: str) -> dict[str, Any]:
    return judge_input({"base": name, "final_answer": answer})


def headline(built: dict[str, Any]) -> tuple[int, str]:
    """The satisfaction score and what set it: the capping rule's clause, or "no rule capped it"."""
    score, why = ars(judge_scores(built))
    return score, why.split("; base")[0] if why.startswith("capped") else why.rsplit("; ", 1)[-1]


class TestLabelledSet:
    def test_the_set_covers_every_band_and_wrong_kind(self):
        """At least 120 labelled inputs: good answers of all three task types, and for every rule of the rubric an
        answer it caps and a right answer that resembles the flaw and must not be capped (the rule's floor)."""
        cases = LABELLED["cases"]
        assert 120 <= len(cases)
        assert len({c["id"] for c in cases}) == len(cases)
        good_types = {LABELLED["bases"][c["base"]]["task_type"] for c in cases if c["band"] == ">=4"}
        assert {"planning", "email_reply", "document_generation"} == good_types
        capped = {c.get("rule") for c in cases if c["band"] in ("<=2", "3") or c.get("rule") == "signature"}
        floors = {c["near"] for c in cases if "near" in c and c["band"] in (">=4", "3")}
        assert RULES <= capped, RULES - capped
        assert RULES <= floors, RULES - floors
        assert {c.get("rule") for c in cases} - {None} <= RULES

    def test_wrong_week_length_and_issue_answers_are_at_most_2(self):
        """Every answer in the wrong week or on the wrong day, of the wrong length or about the wrong issue: ARS ≤ 2."""
        wrong = [c for c in LABELLED["cases"] if c.get("rule") in ("period", "length", "wrong-issue")]
        assert 30 <= len(wrong)
        assert [] == [(c["id"], s) for c in wrong if (s := ars(judge_scores(judge_input(c)))[0]) > 2]

    @pytest.mark.parametrize("case", LABELLED["cases"], ids=lambda c: c["id"])
    def test_each_case_lands_in_its_band_for_the_stated_reason(self, case):
        """judge_scores puts the answer in its labelled band; a capped answer's justification names the rule."""
        score, why = ars(judge_scores(judge_input(case)))
        assert score in BANDS[case["band"]], why
        if "rule" in case:
            assert f"[{case['rule']}]" in why, why

    async def test_every_case_lands_in_its_band_through_the_sim_over_http(self, sim):
        """run_judge → LLMClient → the sim server on loopback scores every pair in its band."""
        prompts = load_prompts(REPO / "prompt_config.json")
        misplaced = []
        async with LLMClient(sim_base_url=sim.base_url) as client:
            for case in LABELLED["cases"]:
                judgement = await run_judge(client, "sim/judge", judge_input(case), prompts, agent_model="hand",
                                            scenario_id="labelled", key=f"labelled/{case['id']}")
                axis = judgement.scores.answer_requirements_satisfaction
                if judgement.verdict != "scored" or axis.score not in BANDS[case["band"]]:
                    misplaced.append((case["id"], case["band"], axis.score, axis.justification))
        assert [] == misplaced


class TestPlanningRules:
    def test_a_good_answer_gets_full_marks_and_says_no_rule_capped_it(self):
        """A correct planning answer scores 5/5 and its justification says no rule capped it."""
        case = base("planning_seoul", "Tue 9 Dec 10:00–10:45 KST with Mina Cho, Taeyang Ko, Jisoo Park and Hyejin Lim.")
        assert (5, "no rule capped it") == headline(case)
        assert 5 == judge_scores(case)["source_grounded_reasoning"]["score"]

    def test_the_conflict_detail_names_the_event_and_person(self):
        """A slot over a listed event is explained with the event's title, time and the busy attendees."""
        _, why = ars(judge_scores(base("planning_seoul", "Tue Dec 9, 13:30–14:15 KST with Mina Cho, Taeyang Ko, "
                                                         "Jisoo Park and Hyejin Lim.")))
        assert ("also [conflict] Tue 2025-12-09 13:30–14:15 overlaps 'Firmware design review' (Tue 13:00–14:30) "
                "of jisoo.park@haneul.io, taeyang.ko@haneul.io") in why

    def test_weekends_are_allowed_when_the_request_asks_for_them(self):
        """A Saturday slot is not capped as a weekend when the request says the weekend is fine."""
        case = base("planning_berlin", "Saturday 22 Nov, 10:00–10:30 — Lena Vogel and Jonas Weber.")
        case["tool_trace"][0]["result"]["messages"][0]["text"] += " Saturday is fine too."
        assert (5, "no rule capped it") == headline(case)

    def test_an_already_booked_meeting_is_not_its_own_conflict(self):
        """A slot identical to a calendar event of all the participants is that meeting, not a clash."""
        case = base("planning_berlin", "Thursday 20 Nov, 16:00–16:30 — Lena Vogel and Jonas Weber.")
        case["tool_trace"][2]["result"]["events"].append(
            {"id": "e9", "title": "Pricing copy check-in", "start": "2025-11-20T16:00:00+01:00",
             "end": "2025-11-20T16:30:00+01:00", "attendees": ["lena.vogel@preisland.de", "jonas.weber@preisland.de"]})
        assert (5, "no rule capped it") == headline(case)

    def test_an_ambiguous_first_name_does_not_count_as_naming_the_participant(self):
        """With two people called Jisoo, "Jisoo" alone does not name Jisoo Park: she is reported missing."""
        case = base("planning_seoul", "Tue 9 Dec 10:00–10:45 KST with Mina, Taeyang, Jisoo and Hyejin.")
        case["tool_trace"][2]["result"]["contacts"].append({"name": "Jisoo Han", "email": "jisoo.han@haneul.io"})
        assert (2, "capped at 2 by [participants] leaves out Jisoo Park (named by the request or its thread)") == (
            headline(case))

    def test_a_shared_first_name_resolves_to_the_addressee_of_the_request(self):
        """"Hi Declan, Priya" in a mail to priya.raman@ names Priya Raman, not the vendor's Priya Sharma."""
        mail = {"id": "thr_fw", "subject": "Firmware review", "messages": [
            {"from": "siobhan.power@harbourline.ca",
             "to": ["declan.hynes@harbourline.ca", "priya.raman@harbourline.ca"],
             "date": "Thu, 20 Nov 2025 09:41:00 -0330",
             "body": "Hi Declan, Priya,\n\nCan the three of us meet for an hour next week?\n\nSiobhan"}]}
        contacts = {"contacts": [{"name": n, "email": e} for n, e in [
            ("Siobhan Power", "siobhan.power@harbourline.ca"), ("Declan Hynes", "declan.hynes@harbourline.ca"),
            ("Priya Raman", "priya.raman@harbourline.ca"), ("Priya Sharma", "priya.sharma@arcticsensor.io")]]}
        case = {"task_type": "planning", "user_prompt": "Siobhan emailed about meeting next week. Find slots.",
                "answer_requirements": ["All participants are included."], "stop_reason": "final",
                "final_answer": "Mon 24 Nov 12:00–13:00 with Siobhan Power and Declan Hynes.",
                "tool_trace": [{"step": 1, "tool_name": "Gmail.GetThread", "arguments": {"thread_id": "thr_fw"},
                                "result": mail},
                               {"step": 2, "tool_name": "GoogleContacts.SearchContactsByName",
                                "arguments": {"name": "Priya"}, "result": contacts}]}
        assert ["Declan Hynes", "Priya Raman", "Siobhan Power"] == sorted(
            p.label for p in read_evidence(case).request.participants)
        assert "[participants] leaves out Priya Raman" in ars(judge_scores(case))[1]

    def test_the_duration_falls_back_to_the_free_slot_search(self):
        """When no message states the length, FindTimeSlots' min_duration_minutes is the meeting's length."""
        case = base("planning_seoul", "Wed Dec 10 09:00–09:30 with Mina Cho, Taeyang Ko, Jisoo Park and Hyejin Lim.")
        message = case["tool_trace"][0]["result"]["messages"][0]
        message["text"] = message["text"].replace("a 45-minute sync", "a sync")
        assert (2, "capped at 2 by [length] Wed 2025-12-10 09:00–09:30 lasts 30 min; the meeting is 45 min (stated by "
                   "the FindTimeSlots call)") == headline(case)


class TestRequestedDayAndLength:
    def _request(self, name: str):
        return read_evidence(LABELLED["bases"][name]).request

    def test_this_friday_is_that_friday_and_not_next_weeks(self):
        """"this Friday" in Tuesday's message allows that Friday only; next week's Friday is the wrong week."""
        request = self._request("planning_kathmandu_friday")
        assert ("2026-04-17", "2026-04-17", "'this Friday' counted from 2026-04-14") == (
            request.window[0].isoformat(), request.window[1].isoformat(), request.window_source)
        case = base("planning_kathmandu_friday", "Friday 24 April, 10:00–10:30 NPT — Anil Shrestha and Sita Gurung.")
        assert (2, "capped at 2 by [period] Fri 2026-04-24 10:00–10:30 is outside the requested period "
                   "2026-04-17–2026-04-17 ('this Friday' counted from 2026-04-14)") == headline(case)

    def test_next_friday_allows_the_coming_friday_or_next_weeks_and_no_other_day(self):
        """Readers differ on "next Friday" (sent on a Tuesday): both Fridays pass, a Thursday between them does not."""
        slots = ("Fri 16 Jan 09:00–09:45", "Fri 23 Jan 14:00–14:45", "Thu 22 Jan 13:00–13:45")
        scored = [headline(base("planning_chatham_next_friday", f"{slot} — Moana Tuhiwai and Rewi Karaka."))
                  for slot in slots]
        assert [(5, "no rule capped it"), (5, "no rule capped it"),
                (2, "capped at 2 by [period] Thu 2026-01-22 13:00–13:45 falls on a Thursday; the request asks for "
                    "'next Friday' counted from 2026-01-13")] == scored

    @pytest.mark.parametrize("text, window", [
        ("Could we do a 30-minute call on Thursday or Friday with Sita Gurung?", ("2026-04-16", "2026-04-17")),
        ("The permit file is due on Friday, so could we do a 30-minute call next week with Sita Gurung?",
         ("2026-04-20", "2026-04-26")),
        ("Could we do a 30-minute call by Thursday with Sita Gurung?", ("2026-04-14", "2026-04-16")),
    ])
    def test_days_offered_together_deadlines_and_due_dates(self, text, window):
        """"on Thursday or Friday" allows both; a day something is due on is no meeting day; "by" is a deadline."""
        case = copy.deepcopy(LABELLED["bases"]["planning_kathmandu_friday"])
        case["tool_trace"][0]["result"]["messages"][0]["text"] = text
        case["user_prompt"] = "Anil asked on Slack for a call. Please find possible time slots."
        request = read_evidence(case).request
        assert window == (request.window[0].isoformat(), request.window[1].isoformat())

    def test_tomorrow_counts_from_the_messages_day_in_the_scenario_zone(self):
        """A mail sent Wed 21:40 at -03:30 (Thu in UTC) asking for "tomorrow" means Thursday, exactly: not Friday."""
        request = self._request("planning_stjohns_tomorrow")
        assert ("2026-11-19", "2026-11-19") == (request.window[0].isoformat(), request.window[1].isoformat())
        assert [5, 2] == [headline(base("planning_stjohns_tomorrow", f"{slot} NST — Declan Hynes, Siobhan Power and "
                                                                     "Priya Raman."))[0]
                          for slot in ("Thu 19 Nov 13:00–14:00", "Fri 20 Nov 10:00–11:00")]

    def test_a_range_the_thread_proposes_is_the_meeting_length(self):
        """"Thinking 10:00–10:45" sets 45 minutes over FindTimeSlots' 30; "I'm free 09:00–12:00" is no length."""
        request = self._request("planning_adelaide_range")
        assert (45, "a time range in a message by Ruby Nguyen") == (request.duration, request.duration_source)

    def test_a_parts_length_is_not_the_meetings(self):
        """"a 30-min sync … I'll add a 5-min bullet" is a 30-minute meeting."""
        assert (30, "a message by Hana Sato") == (self._request("planning_tokyo_bullet").duration,
                                                   self._request("planning_tokyo_bullet").duration_source)

    def test_mailing_lists_are_not_required_attendees(self):
        """A list copied "for visibility" ("design-list@", "All Staff <all@>", greeted "Hi All") is no participant."""
        assert ["Grace Okafor", "Tunde Bello"] == [p.label for p in self._request("planning_lagos_list").participants]
        assert [True, True, False, False] == [Person(name, mail).is_group for name, mail in (
            ("Finance Team", "finance@x.io"), ("", "eng-leads@x.io"), ("Dev Patel", "dev.patel@x.io"),
            ("Allie Board", "allie.board@x.io"))]


class TestEmailRules:
    def _shipped(self, answer: str) -> dict[str, Any]:
        """The e-mail base with DAT-318 already Done, released 2026-01-06 (the day before the customer's follow-up)."""
        case = base("email_reply", answer)
        issue = case["tool_trace"][4]["result"]["issues"][0]
        issue.update(status="Done", fixVersions=[{"name": "v3.1", "releaseDate": "2026-01-06"}])
        return case

    def test_a_release_that_already_happened_is_no_promise(self):
        """Saying a shipped feature was released on its date is a fact, not a promise the guidance forbids."""
        case = self._shipped("Hi Hannah,\n\nGood news: the bulk CSV export was released on January 6, 2026 and is "
                             "available now.\n\nBest regards,\nOwen Price")
        assert (5, "no rule capped it") == headline(case)

    def test_a_future_date_stated_firmly_is_still_a_promise(self):
        """A firm future date for the same shipped issue's follow-up is still capped as a promise."""
        case = base("email_reply", "Hi Hannah,\n\nThe bulk CSV export will ship on January 22, 2026.\n\nBest,\nOwen")
        assert (3, "capped at 3 by [promise] states the date as a promise ('The bulk CSV export will ship on January "
                   "22, 2026'); the guidance asks for cautious language") == headline(case)


class TestReleaseReading:
    def test_the_asked_issue_comes_from_the_question_even_when_only_a_snippet_was_read(self):
        """The issue whose summary shares most words with the customer's mail (or thread snippet) is the one asked."""
        found = []
        for name in ("email_two_issues", "email_mobile_offline", "email_reply"):
            evidence = read_evidence(LABELLED["bases"][name])
            found.append(asked_issue(evidence, tracked_issues(evidence)).key)
        assert ["IDP-77", "MOB-12", "DAT-318"] == found

    def test_the_issues_an_answer_is_about_are_read_sentence_by_sentence(self):
        """"iOS offline mode" names MOB-15, not MOB-12 (two shared words); a key names its issue."""
        evidence = read_evidence(LABELLED["bases"]["email_mobile_offline"])
        issues = tracked_issues(evidence)
        texts = ("iOS offline mode is planned for November.", "Android offline mode (MOB-12) is coming.",
                 "Offline mode is coming to both apps.")
        assert [["MOB-15"], ["MOB-12"], ["MOB-15", "MOB-12"]] == [[i.key for i in named_issues(t, issues)]
                                                                  for t in texts]

    def test_a_reply_about_another_issue_is_capped(self):
        """A grounded, hedged reply about SCIM when the customer asked about SAML SSO is the wrong answer."""
        case = base("email_two_issues", "Hi Lucía,\n\nSCIM user provisioning (IDP-81) is currently targeted for late "
                                        "June 2026; this may change.\n\nBest,\nMarco")
        assert (2, "capped at 2 by [wrong-issue] the reply is about IDP-81 'SCIM user provisioning'; the customer asks "
                   "about IDP-77 'SAML single sign-on for enterprise workspaces'") == headline(case)

    @pytest.mark.parametrize("text, firm", [
        ("SSO will be released on May 12, so your team can plan around it. Should you have questions, ask.", True),
        ("We expect everything ready, and SSO is guaranteed to go live on May 12.", True),
        ("We are currently targeting May 12 for SSO.", False),
        ("SSO will ship on May 12. Dates may change until testing completes.", False),
        ("The date is not yet confirmed, but we are aiming for May 12.", False),
        ("Our current ETA for SSO is May 12, 2026.", False),
        ("SSO is slated for the 4.8 release on May 12; we'll confirm closer to the date.", False),
        ("SSO is scheduled for release on 12 May 2026.", True),
    ])
    def test_a_date_is_promised_by_its_own_clause(self, text, firm):
        """Hedge words elsewhere ("plan around it", "Should you…") do not soften a firm clause; a change note does."""
        dates = [p for p in find_periods(text, anchor=date(2026, 4, 14))]
        assert firm == (promised(text, dates) is not None)


class TestReportRules:
    REPORT = ("Summary\n- Two items completed.\n\nKey metrics\n- {metric}\n- Connected ledgers: 312\n\n"
              "Done this week\n- LSY-401\n- LSY-402\n\nIn progress\n- LSY-388\n\nRisks and blockers\n- None")

    @pytest.mark.parametrize("metric, score", [
        ("Sync failures: down 18% WoW (Slack)", 5),
        ("Sync failures: up 18% WoW", 2),
        ("Sync failures: down 18% WoW, ledger latency down 25%", 2),
    ])
    def test_a_percentage_the_results_do_not_give_is_capped(self, metric, score):
        """A report quoting a percentage no tool result gives (or with its sign flipped) is capped as invented."""
        got, why = ars(judge_scores(base("weekly_report", self.REPORT.format(metric=metric))))
        assert (score, score == 2) == (got, "[invented]" in why), why

    def test_a_numeric_percentage_field_grounds_the_percentage(self):
        """``"uptime_percent": 99.2`` in a tool result grounds "Uptime: 99.2%" on both axes; 99.5% stays invented."""
        case = base("weekly_report", self.REPORT.format(metric="Uptime: 99.2%"))
        case["tool_trace"].append({"step": 6, "tool_name": "Monitoring.GetServiceHealth", "arguments": {},
                                   "result": {"service": "ledger-sync", "uptime_percent": 99.2, "incidents": 0}})
        scores = judge_scores(case)
        assert (5, 5) == (scores["answer_requirements_satisfaction"]["score"],
                          scores["source_grounded_reasoning"]["score"])
        case["final_answer"] = case["final_answer"].replace("99.2%", "99.5%")
        assert "capped at 2 by [invented] quotes percentages the sources do not give: +99.5% (- Uptime:): no tool " \
               "result gives it" == headline(case)[1]


class TestFigures:
    def test_csv_cells_and_changes_between_numbers_ground_a_percentage(self):
        """``churn_pct,2.1,2.4`` gives 2.1%; 1,200 → 1,380 gives +15%; 25% and "WAU down 10%" are not the sources'."""
        evidence = read_evidence(LABELLED["bases"]["report_growth_csv"])
        assert [] == invented_percentages(evidence, "Signups +15% to 1,380; churn 2.1% (from 2.4%); WAU up 10%.")
        reversed_ = "the tool results give it for that label in the other direction"
        assert [(25.0, "no tool result gives it"), (-10.0, reversed_)] \
            == [(q.value, why) for q, why in invented_percentages(evidence, "Signups +25%.\nWAU down 10% to 55,000.")]

    def test_a_figure_worded_differently_is_the_sources(self):
        """"18% fewer sync failures than last week" is the source's "sync failures down 18% week over week"."""
        evidence = read_evidence(LABELLED["bases"]["weekly_report"])
        assert [] == invented_percentages(evidence, "18% fewer sync failures than last week")


class TestStaleRule:
    def _two_weeks(self, answer: str = "") -> dict[str, Any]:
        return base("weekly_report_two_weeks", answer)

    def _week(self, case: dict[str, Any]) -> tuple[str, str]:
        evidence = read_evidence(case)
        monday, how = report_week(evidence)
        return monday.isoformat(), how

    def test_the_report_week_comes_from_a_jql_search_from_start_of_week(self):
        """``updated >= startOfWeek()`` returns this week's issues: their week is the report week."""
        assert ("2026-03-09", "a JQL search from startOfWeek()") == self._week(self._two_weeks())

    def test_a_list_events_week_name_comes_first(self):
        """ListEvents called with ``last_week`` returns last week's events: the report week is the one after."""
        case = self._two_weeks()
        case["tool_trace"].append({"step": 6, "tool_name": "GoogleCalendar.ListEvents",
                                   "arguments": {"start_date": "last_week"},
                                   "result": {"events": [{"id": "e1", "title": "Alert review",
                                                          "start": "2026-03-04T10:00:00-06:00",
                                                          "end": "2026-03-04T11:00:00-06:00"}]}})
        assert ("2026-03-09", "a ListEvents call's relative start") == self._week(case)

    def test_an_issue_touched_after_now_does_not_move_the_report_week(self):
        """An issue updated next Tuesday neither moves a startOfWeek() search's week (its oldest date sets it) nor,
        without one, the newest-result fallback (files come before issues): this week's figures are not stale."""
        weeks = [report_week(read_evidence(LABELLED["bases"][name])) for name in ("report_pay_jql",
                                                                                  "report_pay_updated")]
        assert [("2026-06-08", "a JQL search from startOfWeek()"), ("2026-06-08", "the newest dated tool result")] == [
            (monday.isoformat(), how) for monday, how in weeks]

    def test_without_a_relative_call_the_newest_dated_result_sets_the_week(self):
        """With no relative date in any call, the week of the newest message, file or issue is the report week."""
        case = self._two_weeks()
        case["tool_trace"][3]["arguments"]["jql"] = "project = SEN ORDER BY updated DESC"
        assert ("2026-03-09", "the newest dated tool result") == self._week(case)

    def test_a_request_for_last_weeks_report_moves_the_week_back(self):
        """"Write last week's status report" covers the week before now's week: its figures are not stale."""
        case = self._two_weeks("Highlights\n- Routing work.\n\nMetrics\n- False alarms: −9% WoW\n- Alert volume: "
                               "2,210\n\nCompleted\n- SEN-215\n\nOpen risks\n- None")
        case["user_prompt"] = "Write last week's status report for the Sentinel alerts team (SEN)."
        assert ("2026-03-02", "a JQL search from startOfWeek(), one week back as the request asks for last week's") \
            == self._week(case)
        assert "[stale]" not in ars(judge_scores(case))[1]

    def test_a_file_is_dated_by_the_week_its_name_gives(self):
        """A file named "… week of 2026-03-02" but edited on Monday 03-09 states that earlier week's figures."""
        evidence = read_evidence(self._two_weeks())
        assert {"2026-03-02"} == {d.day.isoformat() for d in dated_statements(evidence)
                                  if "SEN metrics" in d.source}

    def test_the_justification_names_the_old_post_and_this_weeks_value(self):
        """The cap says where the quoted figure comes from, the report week and what this week's post gives."""
        case = self._two_weeks("Highlights\n- Routing work.\n\nMetrics\n- Alert volume: 2,210\n\nCompleted\n"
                               "- SEN-212\n\nOpen risks\n- SEN-219 open")
        assert (2, "capped at 2 by [stale] quotes figures from before the report week: 2,210 is stated only by "
                   "'• Alert volume: 2,210' (Dana Ortiz) of 2026-03-03, before the report week of 2026-03-09 (read "
                   "from a JQL search from startOfWeek()); '• Alert volume: 1,930' (Dana Ortiz) of 2026-03-10 gives "
                   "1,930") == headline(case)

    def test_a_standing_figure_from_an_old_file_is_not_stale(self):
        """A target quoted from a months-old file ("SLA target: 99.9%") is a standing figure, not last week's."""
        case = self._two_weeks("Highlights\n- Routing work.\n\nMetrics\n- Ingest uptime: 99.2% (SLA target: "
                               "99.9%)\n\nCompleted\n- SEN-212\n\nOpen risks\n- SEN-219 open")
        case["tool_trace"][1]["result"]["content"] += "\nSLA target: 99.9% ingest uptime per weekly period.\n"
        assert (5, "no rule capped it") == headline(case)

    def test_an_undated_grounding_is_never_stale(self):
        """A figure the request itself gives has no date: quoting it is never stale."""
        case = self._two_weeks("Highlights\n- Routing work.\n\nMetrics\n- Alert volume: 2,210\n\nCompleted\n"
                               "- SEN-212\n\nOpen risks\n- SEN-219 open")
        case["user_prompt"] += " Leadership wants the alert volume of 2,210 repeated in the report."
        assert "[stale]" not in ars(judge_scores(case))[1]

    @pytest.mark.parametrize("text, expected", [
        ("False alarms down 18%, up from 9% last week", [False, True]),
        ("−18% this week (last week: −9%)", [False, True]),
        ("median triage 42 min (was 51)", [False, True]),
        ("alert volume 1,930 vs 2,210", [False, True]),
        ("false alarms down 18% from last week", [False]),
        ("false alarms −18% vs last week", [False]),
        ("false alarms −9% a week ago", [True]),
        ("| False alarms | −18% | −9% |", [False, True]),
    ])
    def test_figures_the_text_gives_as_the_previous_weeks(self, text, expected):
        """A comparison value ("from 9%", "last week: 9%", "(was 51)") is the past; "18% from last week" is not."""
        if text.startswith("|"):
            text = "| Metric | This week | Last week |\n|---|---|---|\n" + text
        assert expected == [marked_past(text, q) for q in find_quantities(text)]


class TestEvidence:
    def test_request_participants_duration_and_window_come_from_the_thread(self):
        """The request's author, the people it names and those a reply adds; its duration; next week from its date."""
        evidence = read_evidence(LABELLED["bases"]["planning_newyork"])
        request = evidence.request
        assert (["Rosa Delgado", "Liam Walsh", "Priya Nair", "Omar Haddad"], 60, "2026-02-09", "2026-02-15") == (
            [p.label for p in request.participants], request.duration, request.window[0].isoformat(),
            request.window[1].isoformat())
        assert "America/New_York" == evidence.tz_name

    def test_a_relative_search_gives_the_day_of_now(self):
        """FindTimeSlots called with next_week returns next week's range: now's week is the one before."""
        evidence = read_evidence(LABELLED["bases"]["planning_seoul"])
        assert ("2025-12-01", "2025-12-03") == (evidence.anchor.isoformat(), evidence.request.today.isoformat())

    def test_a_noise_request_by_someone_else_is_not_the_request(self):
        """Of two meeting requests, the one by the person the prompt names is read (not the older 30-minute one)."""
        request = read_evidence(LABELLED["bases"]["planning_seoul"]).request
        assert ("Mina Cho", 45) == (request.message.author.label, request.duration)


class TestGrounding:
    def test_dates_and_ids_do_not_ground_a_number(self):
        """'18 bugs closed' is not grounded by 2025-12-18 or LSY-18 in the results; the real metric is."""
        case = base("weekly_report", "Summary\n- 18 bugs closed.\n\nKey metrics\n- Connected ledgers: 312")
        case["tool_trace"][3]["result"]["issues"][0]["key"] = "LSY-18"
        case["tool_trace"][3]["result"]["issues"][0]["updated"] = "2025-12-18T11:00:00+01:00"
        axis = judge_scores(case)["source_grounded_reasoning"]
        assert (2, "50% of 2 concrete claim(s) appear in the results of 5 tool call(s); not found: number '18'") == (
            axis["score"], axis["justification"])

    def test_no_tool_calls_and_specific_claims_score_zero(self):
        """Claims with no tool call behind them score 0 on grounding."""
        case = base("email_reply", "Hi Hannah,\n\nDAT-318 ships 2026-01-22.\n\nBest,\nOwen")
        case["tool_trace"] = []
        assert 0 == judge_scores(case)["source_grounded_reasoning"]["score"]


class TestTextReaders:
    def test_meeting_lengths_leave_out_parts(self):
        """A bullet, a break, "10 minutes each" or the last minutes for Q&A size a part, not the meeting."""
        assert [[30], [60], [45], [60]] == [meeting_lengths(t) for t in (
            "a 30-min sync; I'll add a 5-min bullet at the end", "a 1-hour workshop incl. a 15-minute break",
            "a 45-minute review, 10 minutes each for the teams", "the last 15 minutes for Q&A of a 1-hour call")]

    def test_range_lengths(self):
        """Proposed ranges in several styles; availability, busy times and non-times are not lengths."""
        assert [[45], [30], [45], [60], [], [], []] == [range_lengths(t) for t in (
            "Thinking 10:00–10:45", "how about 2-2:30pm", "11:30-12:15pm", "10am to 11am",
            "I'm free 09:00–12:00", "I'm booked 9-11am Tuesday", "pages 5-10")]

    def test_asked_days(self):
        """The day a request names, unless its clause says someone is away then or looks back."""
        assert [("this", 4), ("rel", None), ("next", 1), ("by", 3), ("this", 4), None, None, None] == [
            (d.which, d.weekday) if d else None for d in map(asked_day, (
                "a call this Friday with Sita", "grab an hour tomorrow", "next Tuesday works", "by Thursday please",
                "Can we hold the release review this Friday?", "I'm out on Monday. Can we meet next week?",
                "since Friday the build is red", "the report is due on Friday"))]

    def test_durations(self):
        """Meeting lengths in several styles; spans that are not lengths are skipped."""
        assert [45, 60, 90, 30, 90] == durations("a 45 mins sync, an hour, 90-minute rehearsal, half an hour, "
                                                 "1.5 hours; reply within 2 hours; 10 minutes ago")

    def test_periods(self):
        """The requested period: next week, this week, the next N working days."""
        assert [(1, None), (0, None), (None, 3)] == [
            (p.weeks, p.days) for p in (period("sometime next week"), period("before the end of this week"),
                                        period("within the next three working days"))]

    def test_sections_under_template_headings(self):
        """Headings in several markups are found; a placeholder line is not content."""
        found = sections("**1. Summary**\nSee above\n\n## Key metrics\n- 312 ledgers\n\nRisks and blockers:\n- None",
                         ("Summary", "Key metrics", "Risks and blockers"))
        assert [("1. Summary", ()), ("Key metrics", ("312 ledgers",)), ("Risks and blockers", ("None",))] == [
            (s.heading, s.content) for s in found]

    def test_time_frames(self):
        """Dates, months, quarters and relative weeks name a time frame; "dates may change" does not."""
        assert [True, True, True, True, False, False] == [states_time_frame(t) for t in (
            "late January", "in May", "Q1", "the week of the 19th", "dates may change", "we are working on it")]

    def test_inline_placeholders_and_e_mail_shape(self):
        """Bracketed stand-ins are placeholders (a signature one apart); citations are not; a greeting+sign-off is
        mail."""
        assert (["[Customer Name]", "XX%"], ["[Your Name]"]) == inline_placeholders(
            "Dear [Customer Name], usage is up XX%. [Slack #lsy-team] [Team sync notes]\n[Your Name]")
        assert (True, False) == (is_email("Hi Hannah,\n\nIt ships in late January.\n\nBest,\nOwen"),
                                 is_email("Tue 10:00-10:45"))
        assert (True, True) == (is_email("Hola Lucía,\n\nMid-May.\n\nSaludos,\nMarco"),
                                is_email("Merhaba Emre,\n\nEarly October.\n\nBest,\nSupport"))


class TestLazyAgent:
    def test_answers_without_tools_in_the_required_format(self):
        """sim/lazy-agent replies at once with a final-answer JSON and no tool calls."""
        reply = lazy_agent({"messages": [{"role": "user", "content": "When does X ship?"}]})
        assert [] == reply.tool_calls
        assert {"final_answer", "rationale"} == set(orjson.loads(reply.content))
