"""A labelled corpus of answer texts for the deterministic checks, in the styles real models write.

Each case is an answer to one of a few small in-memory scenarios, labelled with what a careful human
reader would say for every check the task runs (``pass`` / ``fail`` / ``n/a``). The labels were written
from the scenario facts below, before the checks were made to agree with them.

Scenarios
    P1 planning, Asia/Kathmandu (+05:45). Now Wed 2026-01-21 10:05. Window Mon 26 – Fri 30 Jan 2026,
       60 min, working hours 09:00–18:00; Sabina Shrestha, Bikash Thapa, Nisha Gurung (contacts also
       hold Nisha Rai, so "Nisha" alone is ambiguous, and Prakash Adhikari). Busy: Mon 26 Sabina
       09:00–10:30, Bikash 13:00–14:00; Tue 27 standup (all) 09:30–10:00, Nisha 11:00–12:30, Sabina
       14:00–18:00; Wed 28 Bikash 09:00–12:00; Thu 29 Nisha out of office all day; Fri 30 Sabina
       15:00–16:00. Common free: Mon 10:30–13:00, 14:00–18:00; Tue 09:00–09:30, 10:00–11:00,
       12:30–14:00; Wed 12:00–18:00; Fri 09:00–15:00, 16:00–18:00.
    P2 planning, America/St_Johns (NDT, −02:30). Now Tue 2025-09-16 09:20. Window Thu 18 – Mon 22 Sep
       2025, 30 min, working hours 08:30–17:00; Siobhán Walsh, Gwen Tobin, Olumide Adeyemi. Busy: Thu 18
       Siobhán 08:30–10:00, Gwen 13:00–14:30; Fri 19 Olumide 10:00–11:00, weekly sync (all) 15:00–15:45;
       Mon 22 Gwen 08:30–12:00. Common free: Thu 10:00–13:00, 14:30–17:00; Fri 08:30–10:00,
       11:00–15:00, 15:45–17:00; Mon 12:00–17:00.
    P3 planning, Asia/Seoul (+09:00). Now Mon 2025-11-17 10:12. Window Mon 24 – Fri 28 Nov 2025, 45 min,
       09:00–18:00; Tom Park, Alice Kim, Min Lee (contacts also hold Alice Park). Busy: Mon 24 Tom
       09:00–12:00; Tue 25 Alice Kim 10:00–11:00; Wed 26 API sync (all) 15:00–15:45; Thu 27 Min
       09:00–12:00; Fri 28 Tom 13:00–18:00. Common free: Mon 12:00–18:00; Tue 09:00–10:00, 11:00–18:00;
       Wed 09:00–15:00, 15:45–18:00; Thu 12:00–18:00; Fri 09:00–13:00.
    E1 email reply; Jira TWB-227 fixVersion v1.6 releaseDate 2025-12-18 (a Thursday). Now Mon 2025-12-01.
    E2 email reply; facts.target_date 2026-02-16 (a Monday). Now Wed 2026-01-21.
    E3 email reply; Jira ABC-9 has no release, due or target date (nothing to verify).
    E4 email reply, an original v1 task (data_dependencies.jira_issue_key APP-412, releaseDate
       2025-11-28, a Friday). Now Mon 2025-11-17.
    D1 weekly report; expected avg_gate_turnaround_minutes_change_percent −12,
       partner_api_calls_change_percent 34, bugs_closed 17. Sources: Slack "avg gate turnaround is down
       12% w/w (41 min vs 47 min)", "Partner API calls up 34% week over week", "Bugs closed this week: 17",
       "APP-412 ships with v2.12 on 12/18", "Uptime SLA remains 99.5%"; Drive "Q4 OKR: reduce gate
       turnaround by 20%".
    D2 weekly report; expected beta_daily_active_users_change_percent 15, crash_free_sessions_percent 99.2,
       matchmaking_wait_p50_seconds_change_percent −27. Sources: a Drive export whose numbers are JSON
       fields (beta_dau_change_percent 15, crash_free_sessions_percent 99.2), Slack "p50 matchmaking wait
       dropped 27% after the new queue logic".

    D3 weekly report; expected weekly_active_users_change_percent 10, cold_start_p95_ms_change_percent −14.3,
       support_tickets_change_percent −15. Sources: a Drive CSV export (header metric,last_week,this_week,change;
       rows for weekly active users +10%, cold start p95 (ms) 1200 → 1028 −14.3%, checkout conversion 3.1% → 3.4%
       +9.7%), Slack "WAU 50,000 → 55,000 (+10%)", "Android cold start is down 15%", "Support tickets: 212 → 180
       this week (15%)" (down), Jira field api_error_reduction_pct 22 (down).
    E5 email reply, Pacific/Chatham (+13:45); Jira KIW-88 releaseDate 2025-11-20 (a Thursday). Now Mon 2025-11-03.
    P4 planning, Asia/Tehran (+03:30). Now Sat 2026-02-28 11:00. The request states its own window: Tue 3 or Wed 4
       Mar 2026, "any time between 10:00 and 16:00"; 30 min, working hours 09:00–17:00; Leila Ahmadi, Reza Karimi,
       Dariush Mohammadi (contacts also hold Reza Tehrani, so "Reza" alone is ambiguous, and the mailing list
       eng@parsa.example). Busy: Tue 3 Reza 10:00–12:00, Leila 15:00–16:00; Wed 4 team sync (all) 10:00–10:30,
       Dariush 13:00–14:30. Common free: Tue 09:00–10:00, 12:00–15:00, 16:00–17:00; Wed 09:00–10:00,
       10:30–13:00, 14:30–17:00.
    E7, E8, D5, D7 the shipped tasks with the shipped data: ``email_reply/sc07`` (PSK-621, 2026-10-13, now Mon
       2026-09-14), ``email_reply/sc03`` (QPX-512, 2025-09-10, now Tue 2025-08-19), ``document_generation/sc05``
       (forecast MAPE −14%, API requests +21%, 5 regions covered) and ``document_generation/sc07`` (alert latency
       p95 −41%, false excursion alerts −18%, 26 bugs closed).

Planning labels are ``found/free/duration/participants``; email labels the target date; report labels are
``quoted/in_sources`` (D1, D2 declare metrics).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo

from mpcbench_async.mpcbench import ScenarioData, Task, load_task, load_task_data
from mpcbench_async.mpcbench._task import PlanningFacts, TaskFacts
from tests.conftest import REPO
from tests.mpcbench.tools.conftest import make_data

__all__ = ["CASES", "CHECK_NAMES", "Case", "jira_issue", "report_task", "scenario"]

LAZY = ("Thanks for the question. Based on what I usually see, the team is working on it and I would suggest "
        "following up early next week; I can share more details once I have checked. (Request: {prompt})")


@dataclass(frozen=True)
class Case:
    scenario: str
    answer: str
    labels: str  # statuses ("pass", "fail", "n/a") joined by "/", in the order of the scenario's checks

    def expected(self, names: list[str]) -> dict[str, str]:
        statuses = re.findall(r"n/a|pass|fail", self.labels)
        assert len(statuses) == len(names), f"{self.scenario}: {len(names)} checks, labels {self.labels!r}"
        return dict(zip(names, statuses, strict=True))


P1_ALL = "Sabina Shrestha, Bikash Thapa, Nisha Gurung"
P2_ALL = "Siobhan Walsh, Gwen Tobin, Olumide Adeyemi"
P3_ALL = "Tom Park, Alice Kim, Min Lee"
P4_ALL = "Leila Ahmadi, Reza Karimi, Dariush Mohammadi"

PLANNING = [
    # --- P1: Asia/Kathmandu ---
    Case("P1", f"Mon Jan 26, 11:00–12:00 NPT; Wed Jan 28, 14:00–15:00. Attendees: {P1_ALL}.", "pass/pass/pass/pass"),
    Case("P1", "Here are a few options for the 60-minute sync with Sabina, Bikash and Nisha Gurung:\n\n"
               "Option 1: Monday, January 26, 2026 — 10:30 AM to 11:30 AM (Asia/Kathmandu)\n"
               "Option 2: Wednesday, January 28, 2026 — 1:00 PM to 2:00 PM\n"
               "Option 3: Friday, January 30, 2026 — 9:00 AM to 10:00 AM\n\n"
               "All three are free on everyone's calendar.", "pass/pass/pass/pass"),
    Case("P1", "Mon 26 Jan 14:00-15:00 works for Sabina, Bikash and Nisha.", "pass/pass/pass/fail"),
    Case("P1", f"Proposed: Tuesday 27 Jan, 11:00-12:00. Participants: {P1_ALL}", "pass/fail/pass/pass"),
    Case("P1", "How about Thursday, Jan 29 at 10:00–11:00 NPT? Invitees: sabina.shrestha@brightloom.org, "
               "bikash.thapa@brightloom.org, nisha.gurung@brightloom.org", "pass/fail/pass/pass"),
    Case("P1", f"Mon 1/26 10:30–11:00 with {P1_ALL}.", "pass/pass/fail/pass"),
    Case("P1", f"Sat Jan 31 10:00–11:00 — {P1_ALL}", "pass/fail/pass/pass"),
    Case("P1", f"Wed Jan 21 15:00–16:00 — {P1_ALL}", "pass/fail/pass/pass"),
    Case("P1", "Working hours are 09:00–18:00 (NPT). Sabina is busy Monday 09:00–10:30 and Bikash has a 1:1 "
               "13:00–14:00. I propose Monday Jan 26, 10:30–11:30 with Sabina Shrestha, Bikash Thapa and Nisha "
               "Gurung.", "pass/pass/pass/pass"),
    Case("P1", f"After the 09:30 standup on Tuesday, the team is free 10:00–11:00 — I suggest Tue 27 Jan "
               f"10:00–11:00 for {P1_ALL}.", "pass/pass/pass/pass"),
    Case("P1", f"Avoid 12:00-13:00 (lunch). Options: Fri Jan 30 10:00–11:00 or Fri Jan 30 13:00–14:00. "
               f"Attendees: {P1_ALL}.", "pass/pass/pass/pass"),
    Case("P1", "Note the existing standup on Tue 09:30–10:00. Best option: Tue Jan 27, 12:30–1:30 PM.",
         "pass/pass/pass/fail"),
    Case("P1", "| Option | Day | Time (NPT) | Attendees |\n|---|---|---|---|\n"
               f"| 1 | Mon 26 Jan | 11:00–12:00 | {P1_ALL} |\n| 2 | Fri 30 Jan | 16:00–17:00 | same |",
         "pass/pass/pass/pass"),
    Case("P1", "| Date | Start (UTC) | End (UTC) |\n|---|---|---|\n| 2026-01-26 | 05:15 | 06:15 |",
         "pass/pass/pass/fail"),
    Case("P1", f"Monday 26 January 2026, 05:15–06:15 UTC (11:00–12:00 Kathmandu time). {P1_ALL}.",
         "pass/pass/pass/pass"),
    Case("P1", f"Tuesday 27 January, 08:00–09:00 UTC. {P1_ALL}.", "pass/fail/pass/pass"),
    Case("P1", f"Wed 2026-01-28 12:00+05:45 to 13:00+05:45 — {P1_ALL}", "pass/pass/pass/pass"),
    Case("P1", f"Proposed: 2026-01-28T14:00:00+05:45 – 2026-01-28T15:00:00+05:45 ({P1_ALL})", "pass/pass/pass/pass"),
    Case("P1", f"Friday Jan 30 at 9:00 AM for 60 minutes. Attendees: {P1_ALL}.", "pass/pass/pass/pass"),
    Case("P1", f"Friday Jan 30 at 9:00 AM (45 min). Attendees: {P1_ALL}.", "pass/pass/fail/pass"),
    Case("P1", "How about Wednesday the 28th at 2 PM? Sabina Shrestha, Bikash Thapa and Nisha Gurung.",
         "pass/pass/n/a/pass"),
    Case("P1", "For the 1-hour review: Wed Jan 28 at 2 PM, or Fri Jan 30 at 10 AM.", "pass/pass/pass/fail"),
    Case("P1", "I'm sorry, I couldn't access the calendars. Could you share everyone's availability?",
         "fail/n/a/n/a/n/a"),
    Case("P1", "Option 1: [Day], [Date] — [Start]–[End]\nOption 2: [Day], [Date] — [Start]–[End]\nAttendees: [Names]",
         "fail/n/a/n/a/n/a"),
    Case("P1", "See above.", "fail/n/a/n/a/n/a"),
    Case("P1", LAZY.format(prompt="Sabina mentioned in Slack wanting to meet with some colleagues sometime next "
                                  "week. Please find a few possible time slots for that meeting and say who "
                                  "should attend."), "fail/n/a/n/a/n/a"),
    Case("P1", f"Monday 11:00–12:00 or Friday 10:00–11:00 (NPT), with {P1_ALL}.", "pass/pass/pass/pass"),
    Case("P1", f"next Monday at 10:30–11:30 — {P1_ALL}", "pass/pass/pass/pass"),
    Case("P1", "1) Mon Jan 26 10:30–11:30\n2) Tue Jan 27 09:00–10:00", "pass/fail/pass/fail"),
    Case("P1", "Everyone is free on Wednesday Jan 28 from 12:00 to 18:00; I'd suggest 12:00–13:00.",
         "pass/pass/pass/fail"),
    Case("P1", "Common free windows: Mon Jan 26 14:00–18:00, Wed Jan 28 12:00–18:00.", "pass/pass/fail/fail"),
    Case("P1", "Busy times:\n- Sabina: Mon 26 Jan 09:00–10:30\n- Bikash: Mon 26 Jan 13:00–14:00\n\n"
               "Proposed slots:\n- Mon 26 Jan 10:30–11:30\n- Mon 26 Jan 14:00–15:00\n\n"
               f"Attendees: {P1_ALL}", "pass/pass/pass/pass"),
    Case("P1", "Tue 27 Jan 11:00–12:00 doesn't work (Nisha is busy). Instead: Tue 27 Jan 12:30–13:30.",
         "pass/pass/pass/fail"),
    Case("P1", "Thu 29 Jan 10:00–11:00 — conflicts with Nisha's out-of-office, so not recommended. Recommended: "
               f"Fri 30 Jan 11:00–12:00 with {P1_ALL}.", "pass/pass/pass/pass"),
    Case("P1", f"Mon Jan 26, 2–3pm ({P1_ALL})", "pass/pass/pass/pass"),
    Case("P1", f"Mon Jan 26, 1–2pm ({P1_ALL})", "pass/fail/pass/pass"),
    Case("P1", f"Mon 26/01 2:00-3:00 — {P1_ALL}", "pass/pass/pass/pass"),
    Case("P1", f"01/26/2026 11:00 - 12:00, attendees {P1_ALL}", "pass/pass/pass/pass"),
    Case("P1", f"January 28th, 12:30 PM – 1:30 PM NPT. Invite {P1_ALL}.", "pass/pass/pass/pass"),
    Case("P1", f"Wed 28 Jan, 12:00–13:00 Nepal Time ({P1_ALL})", "pass/pass/pass/pass"),
    Case("P1", f"Wed 28 Jan, 11:45 AM – 12:45 PM IST ({P1_ALL})", "pass/pass/pass/pass"),
    Case("P1", f"Tuesday, January 27, 2026 at 12:45 AM – 1:45 AM ET ({P1_ALL})", "pass/fail/pass/pass"),
    Case("P1", "**Monday, January 26**\n- 11:00–12:00\n- 15:00–16:00\n\n**Friday, January 30**\n- 10:00–11:00\n\n"
               f"Invite: {P1_ALL}", "pass/pass/pass/pass"),
    Case("P1", "Sabina wrote on Jan 20 at 16:40: \"can we find an hour next week?\" Proposed: Wed Jan 28 15:00–16:00.",
         "pass/pass/pass/fail"),
    Case("P1", "Let's meet on Monday Jan 26 after the standup at 9:30.", "fail/n/a/n/a/n/a"),
    Case("P1", "> Sabina: let's do Tue 27 Jan 09:00–10:00?\nThat conflicts with the standup. I suggest Tue 27 Jan "
               "10:00–11:00 instead.", "pass/pass/pass/fail"),
    Case("P1", f"Options: Mon Jan 26 11:00–12:00; Mon Feb 2 11:00–12:00. {P1_ALL}", "pass/fail/pass/pass"),
    Case("P1", "Working hours in Kathmandu are 09:00–18:00, and Sabina is busy Monday 09:00–10:30.",
         "fail/n/a/n/a/n/a"),
    Case("P1", "I checked the calendars of Sabina Shrestha, Bikash Thapa and Nisha Gurung for Jan 26–30.\n\n"
               "Constraints:\n- Tue 27: standup 09:30–10:00 (all), Nisha 11:00–12:30, Sabina 14:00–18:00\n"
               "- Thu 29: Nisha out of office\n\nRecommended options (60 min, NPT):\n1. Mon 26 Jan, 10:30–11:30\n"
               "2. Wed 28 Jan, 13:00–14:00\n3. Fri 30 Jan, 09:30–10:30", "pass/pass/pass/pass"),
    Case("P1", "Wed 28 Jan 13:00–14:00. Attendees: Sabina, Bikash, Nisha (all from the programme team)",
         "pass/pass/pass/fail"),
    Case("P1", "Wed 28 Jan 13:00–14:00. Attendees: Sabina, Bikash, nisha.gurung@brightloom.org", "pass/pass/pass/pass"),
    Case("P1", "Fri 30 Jan 16:00–17:00 with Shrestha, Thapa and Gurung.", "pass/pass/pass/pass"),
    # --- P2: America/St_Johns ---
    Case("P2", f"Thu Sep 18, 10:00–10:30 NDT; Fri Sep 19, 11:30–12:00 NDT. Attendees: {P2_ALL}.",
         "pass/pass/pass/pass"),
    Case("P2", "Thursday 18 September 2025, 2:30–3:00 PM Newfoundland Time — Siobhán, Gwen and Olumide",
         "pass/pass/pass/pass"),
    Case("P2", "Friday, Sept 19, 13:30–14:00 UTC", "pass/pass/pass/fail"),
    Case("P2", f"Friday Sep 19, 2025 at 10:00–10:30 AM ET. {P2_ALL}", "pass/pass/pass/pass"),
    Case("P2", f"Fri Sep 19, 2:00–2:30 PM EDT. {P2_ALL}", "pass/fail/pass/pass"),
    Case("P2", "The existing sync on Fri 15:00–15:45 rules out mid-afternoon. Proposed: Fri 19 Sep 16:00–16:30.",
         "pass/pass/pass/fail"),
    Case("P2", f"Option: Friday Sep 19, 3:00–3:30 PM. Attendees: {P2_ALL}", "pass/fail/pass/pass"),
    Case("P2", f"Saturday, September 20, 10:00–10:30 ({P2_ALL})", "pass/fail/pass/pass"),
    Case("P2", f"Monday 9/22 at 1:00 PM for 30 min — {P2_ALL}", "pass/pass/pass/pass"),
    Case("P2", f"Mon 22 Sep 9:00 AM – 9:30 AM — {P2_ALL}", "pass/fail/pass/pass"),
    Case("P2", f"Thu Sep 18 17:00–17:30 — {P2_ALL}", "pass/fail/pass/pass"),
    Case("P2", f"Fri Sep 19, 8:00–8:30 AM — {P2_ALL}", "pass/fail/pass/pass"),
    Case("P2", f"Thu 18 Sep 10:00–11:00 — {P2_ALL}", "pass/pass/fail/pass"),
    Case("P2", f"Thu 18/09 10:30–11:00 — {P2_ALL}", "pass/pass/pass/pass"),
    Case("P2", f"Thu 09/18 10:30–11:00 — {P2_ALL}", "pass/pass/pass/pass"),
    Case("P2", f"Fri 19.09.2025 12:00–12:30 — {P2_ALL}", "pass/pass/pass/pass"),
    Case("P2", f"Sept 19th, noon–12:30 — {P2_ALL}", "pass/pass/pass/pass"),
    Case("P2", f"Thursday Sep 18 at 11:00 (UTC-02:30), 30 minutes. {P2_ALL}", "pass/pass/pass/pass"),
    Case("P2", f"Thu Sep 18, 7:00–7:30 AM PT. {P2_ALL}", "pass/pass/pass/pass"),
    Case("P2", "I need more information about who should attend before suggesting times.", "fail/n/a/n/a/n/a"),
    Case("P2", "Proposed time: <DATE> <START>-<END> (NDT)", "fail/n/a/n/a/n/a"),
    Case("P2", f"The sync at 3:00 PM on Friday is busy; how about Friday at 3:45 PM for 30 minutes? {P2_ALL}",
         "pass/pass/pass/pass"),
    Case("P2", "Thu Sep 18 between 10:00 and 13:00 everyone is free; any 30 minutes works.", "pass/pass/fail/fail"),
    Case("P2", "- Thu 18 Sep 13:00–13:30 (Gwen busy)\n- Thu 18 Sep 14:30–15:00\n- Fri 19 Sep 11:00–11:30",
         "pass/pass/pass/fail"),
    Case("P2", "Option A — Thursday 9/18, 10:00 a.m.–10:30 a.m.; Option B — Friday 9/19, 11:00 a.m.–11:30 a.m. "
               "Invite Siobhán Walsh, Gwen Tobin and Olumide Adeyemi.", "pass/pass/pass/pass"),
    Case("P2", "Let's do it between 2:30 and 3:00 PM on Thursday, Sept 18.", "pass/pass/pass/fail"),
    Case("P2", f"Thu Sep 18 10:00–10:30 local time — {P2_ALL}", "pass/pass/pass/pass"),
    Case("P2", f"Fri Sep 19 12:00–12:30 St. John's time — {P2_ALL}", "pass/pass/pass/pass"),
    Case("P2", "Fri Sep 19 9:00–9:30 AM, 11:00–11:30 AM or 4:00–4:30 PM. Siobhan, Gwen, Olumide.",
         "pass/pass/pass/pass"),
    Case("P2", "Sorry — the calendars show no common free time next week.", "fail/n/a/n/a/n/a"),
    Case("P2", "siobhan.walsh@harbourlight.ca, gwen.tobin@harbourlight.ca, olumide.adeyemi@harbourlight.ca: "
               "Thursday 18 Sep 11:00–11:30 or 11:30–12:00.", "pass/pass/pass/pass"),
    # --- P3: Asia/Seoul ---
    Case("P3", f"Tue Nov 25, 11:00–11:45 KST — {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", "Wed 11/26 10:00-10:45 with Tom, Alice and Min.", "pass/pass/pass/fail"),
    Case("P3", "Monday, Nov 24, 9:00–9:45 PM ET", "pass/pass/pass/fail"),
    Case("P3", f"Monday, Nov 24, 8:00 PM – 8:45 PM EST ({P3_ALL})", "pass/fail/pass/pass"),
    Case("P3", f"2025-11-26 01:00–01:45 UTC — {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", f"Thu Nov 27 at 12:00–12:45 JST — {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", f"Fri 2025-11-28T09:00+09:00 – 2025-11-28T09:45+09:00 ({P3_ALL})", "pass/pass/pass/pass"),
    Case("P3", f"Wednesday Nov 26, 2025 — 10:45 PM – 11:30 PM PT ({P3_ALL})", "pass/pass/pass/pass"),
    Case("P3", "The API Launch Planning Sync already sits on Wed 15:00–15:45, so I suggest Wed Nov 26 16:00–16:45 "
               "instead.", "pass/pass/pass/fail"),
    Case("P3", f"Wed Nov 26 at 3:00 PM (45 minutes) — {P3_ALL}", "pass/fail/pass/pass"),
    Case("P3", f"Thursday 11/27 at 11:30 AM — {P3_ALL}", "pass/fail/n/a/pass"),
    Case("P3", f"Fri Nov 28, 10:00–10:45 (Korea Standard Time) — {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", f"Tuesday 25th November 2025, 14:00–14:45 Seoul time — {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", f"Tue 25 Nov 06:00–06:45 CET — {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", f"Tue Nov 25 2:00-3:00 PM KST — {P3_ALL}", "pass/pass/fail/pass"),
    Case("P3", "Option 1: Monday, Nov 24 — 1:00 PM–1:45 PM\nOption 2: Tuesday, Nov 25 — 9:00 AM–9:45 AM\n"
               "Option 3: Friday, Nov 28 — 11:00 AM–11:45 AM\nParticipants: Tom Park (tom@partner.co), Alice Kim, "
               "Min Lee", "pass/pass/pass/pass"),
    Case("P3", f"next Wednesday 9:30–10:15 — {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", f"this Friday 10:00–10:45 — {P3_ALL}", "pass/fail/pass/pass"),
    Case("P3", "| Day | Time (KST) |\n|---|---|\n| Thursday | 13:00–13:45 |\n| Friday | 09:00–09:45 |",
         "pass/pass/pass/fail"),
    Case("P3", "Min is busy Thursday morning 9:00–12:00; Tom is out Friday afternoon from 1 PM. Proposed: Thu "
               f"Nov 27 1:00–1:45 PM. {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", "Free for everyone: Mon 24 Nov 12:00–18:00, Tue 25 Nov 11:00–18:00. Pick: Tue 25 Nov 11:00–11:45.",
         "pass/pass/pass/fail"),
    Case("P3", "Which week do you mean? Tom's message didn't specify.", "fail/n/a/n/a/n/a"),
    Case("P3", f"Tue Nov 25 – 10:00–10:45 — {P3_ALL}", "pass/fail/pass/pass"),
    Case("P3", f"Wed 26/11 14h00-14h45 — {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", f"Wednesday, 26 November: 09:00 - 09:45 or 11:15 - 12:00. {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", "I would suggest meeting sometime early next week; let me know what works.", "fail/n/a/n/a/n/a"),
    Case("P3", f"11/25 at 4pm KST for 45 mins — {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", f"Nov 28th, 12:30–1:15pm — {P3_ALL}", "pass/fail/pass/pass"),
    Case("P3", "Tom Park <tom@partner.co>, Alice Kim <alice.kim@company.com>, Min Lee <min.lee@company.com>\n"
               "When: Tuesday, November 25, 2025 3:00 PM-3:45 PM (UTC+09:00) Seoul", "pass/pass/pass/pass"),
    Case("P3", "Suggested times (all KST, 45 min):\n* Mon 11/24 — 14:00\n* Tue 11/25 — 16:30\n* Thu 11/27 — 15:00\n"
               f"Attendees: {P3_ALL}", "pass/pass/pass/pass"),
    Case("P3", "Suggested times (KST):\n* Mon 11/24 — 10:00\n* Fri 11/28 — 14:00", "pass/fail/n/a/fail"),
    Case("P3", f"Tue Nov 25, 9:00–9:45 and Wed Nov 26, 15:30–16:15. {P3_ALL}", "pass/fail/pass/pass"),
    Case("P3", "Everyone's calendars are open on Tuesday after 11:00. I recommend Tuesday, 25 November at 11:30 "
               f"(45 minutes). {P3_ALL}", "pass/pass/pass/pass"),
]

EMAIL = [
    # --- E1: target 2025-12-18 ---
    Case("E1", "Hi Minseo,\n\nThanks for checking in. The rescheduling endpoint is in QA and we are targeting a "
               "release on December 18, 2025 (subject to final QA).\n\nBest regards,\nYuna", "pass"),
    Case("E1", "We currently expect the release in the week of December 15.", "pass"),
    Case("E1", "It should be available by December 18.", "pass"),
    Case("E1", "The update is planned for mid-December.", "pass"),
    Case("E1", "The update is planned for the end of December.", "fail"),
    Case("E1", "We expect to roll it out by the end of December at the latest.", "pass"),
    Case("E1", "Our target release date is 12/18.", "pass"),
    Case("E1", "Our target release date is 18/12/2025.", "pass"),
    Case("E1", "The release is scheduled for 2025-12-18.", "pass"),
    Case("E1", "It is targeted for Thursday, 18 Dec.", "pass"),
    Case("E1", "We expect to ship it on December 12.", "fail"),
    Case("E1", "The feature is expected in January 2026.", "fail"),
    Case("E1", "It will be released in the coming weeks; we'll keep you posted.", "fail"),
    Case("E1", "Thanks for your email of Nov 28. The update is expected on Dec 18.", "pass"),
    Case("E1", "Thanks for your email of Nov 28. We'll follow up by Dec 5 with a firm date.", "fail"),
    Case("E1", "We expect the release between Dec 15 and Dec 19.", "pass"),
    Case("E1", "We are aiming for Dec 15–19.", "pass"),
    Case("E1", "We are aiming for Dec 19–23.", "fail"),
    Case("E1", "The release is planned for sometime in December.", "pass"),
    Case("E1", "To be safe, we are promising it by early January.", "pass"),
    Case("E1", "Hi Minseo, thanks for reaching out! I'll check with the team and get back to you.", "fail"),
    Case("E1", "Hi [Customer Name], the feature will be released on [DATE].", "fail"),
    Case("E1", "See above.", "fail"),
    Case("E1", LAZY.format(prompt="Minseo Ryu has emailed us asking when a feature they are waiting for will be "
                                  "released. Draft a reply email to them."), "fail"),
    Case("E1", "QA finished on Dec 1 and the target release date is Thursday the 18th.", "pass"),
    Case("E1", "The release is planned for next week.", "fail"),
    Case("E1", "We expect it within the next two to three weeks.", "pass"),
    Case("E1", "We're aiming for December 18, 2026.", "fail"),
    Case("E1", "The release (v1.6) is due 18 December.", "pass"),
    Case("E1", "ETA: Dec 18 (tentative)", "pass"),
    Case("E1", "The release was moved from Dec 11 to Dec 18.", "pass"),
    Case("E1", "It will be live on the 18th.", "pass"),
    Case("E1", "We hope to release before the holidays.", "fail"),
    Case("E1", "Dear Minseo,\n\nThank you for your patience. Feature work is complete and the endpoint is now in "
               "QA. We currently plan to release it later this month; as with any release this may shift.\n\n"
               "Kind regards,\nSupport team\nSent: Monday, December 1, 2025", "pass"),
    Case("E1", "Subject: Re: rescheduling endpoint\n\nHello Minseo — the team is working through the final QA "
               "items for TWB-227. The current target is the week of Dec 8, and we'll confirm the exact day soon.",
         "fail"),
    # --- E2: target 2026-02-16 ---
    Case("E2", "We expect delta sync to be released on 16 February 2026.", "pass"),
    Case("E2", "Current target: Feb 16.", "pass"),
    Case("E2", "We are planning the week of February 16.", "pass"),
    Case("E2", "We are planning the week of Feb 9.", "fail"),
    Case("E2", "We expect it mid-February.", "pass"),
    Case("E2", "We expect it in early February.", "fail"),
    Case("E2", "It should ship by end of February.", "pass"),
    Case("E2", "Planned release: 02/16/2026.", "pass"),
    Case("E2", "Planned release: 16/02/2026.", "pass"),
    Case("E2", "We plan to release it on Monday, Feb 16th.", "pass"),
    Case("E2", "We plan to release it on 2026-02-26.", "fail"),
    Case("E2", "We expect it to be available in about four weeks.", "pass"),
    Case("E2", "We'll release it next Monday.", "fail"),
    Case("E2", "I've forwarded your question to the product team.", "fail"),
    Case("E2", "We're planning to roll it out in February.", "pass"),
    Case("E2", "Expected availability: 16.02.2026", "pass"),
    Case("E2", "We expect it in the first half of February.", "fail"),
    Case("E2", "We expect it in the second half of February.", "pass"),
    Case("E2", "It will be available no later than Feb 16.", "pass"),
    Case("E2", "It will be available before Feb 16.", "fail"),
    Case("E2", "Target date: Feb. 16.", "pass"),
    Case("E2", "As of Jan 21 it is in progress; we'll send an update on Feb 2.", "fail"),
    Case("E2", "Dear Meera,\n\nThank you for writing on 19 January. Delta sync over 2G is in development; our "
               "internal target is Monday 16 February, though it may move if testing finds issues.\n\nWarm "
               "regards", "pass"),
    # --- E3: no target date in the data ---
    Case("E3", "We expect the release on March 3.", "n/a"),
    Case("E3", "I'll get back to you soon.", "n/a"),
    Case("E3", "We're planning the week of March 2.", "n/a"),
    # --- E4: original v1 task, APP-412, 2025-11-28 ---
    Case("E4", "Feature X is currently in QA and targeted for November 28, 2025.", "pass"),
    Case("E4", "We expect Feature X toward the end of November.", "pass"),
    Case("E4", "Rollout is planned for the week of Nov 24.", "pass"),
    Case("E4", "We expect it in late November or early December.", "pass"),
    Case("E4", "We expect to launch on Nov 21.", "fail"),
    Case("E4", "It should be live by Friday, Nov 28.", "pass"),
    Case("E4", "We're targeting this Friday.", "fail"),
    Case("E4", "Target date: 11/28", "pass"),
    Case("E4", "We plan to release Feature X on Dec 5.", "fail"),
]

REPORTS = [
    # --- D1 ---
    Case("D1", "Highlights: Avg gate turnaround down 12% w/w; partner API calls up 34%; 17 bugs closed.", "pass/pass"),
    Case("D1", "| Metric | Change |\n|---|---|\n| Avg gate turnaround | -12% |\n| Partner API calls | +34% |\n"
               "| Bugs closed | 17 |", "pass/pass"),
    Case("D1", "Gate turnaround dropped 12%; partner API calls grew 34%; we closed 17 bugs.", "pass/pass"),
    Case("D1", "Gate turnaround up 12%; partner API calls up 34%; bugs closed: 17.", "fail/fail"),
    Case("D1", "Turnaround -12%, partner API calls +34%.", "fail/pass"),
    Case("D1", "Turnaround −12%, partner API calls +34%, 17 bugs closed, and customer satisfaction rose 8%.",
         "pass/fail"),
    Case("D1", "Release v2.12 adoption reached 12%. Partner API calls +34%. Bugs closed: 17.", "fail/fail"),
    Case("D1", "Gate turnaround -12%; partner API calls +34%; bugs closed rose 12%; 17 bugs closed in total.",
         "pass/fail"),
    Case("D1", "We saw a 12% latency improvement and partner API calls +34%; 17 bugs closed.", "fail/fail"),
    Case("D1", "Gate turnaround −12%, partner API calls +34%, bugs closed 17. Uptime held at 99.5% (SLA).",
         "pass/pass"),
    Case("D1", "This week the team closed 17 bugs and shipped the gate scanner fix.", "fail/n/a"),
    Case("D1", "I couldn't find enough information to write the report.", "fail/n/a"),
    Case("D1", "## Goals\n- [goal]\n## Key Results\n- [metric]: [value]%\n## Highlights\n- [highlight]\n## Risks\n"
               "- [risk]\n## Next Week\n- [plan]", "fail/n/a"),
    Case("D1", LAZY.format(prompt="Write this week's status report for the Truck Appointment API project."),
         "fail/n/a"),
    Case("D1", "Turnaround -12%, API calls +34%, bugs closed 17%.", "fail/fail"),
    Case("D1", "Turnaround down 12%. We had 34 more partner API calls. 17 bugs closed.", "fail/pass"),
    Case("D1", "Week of Dec 1–5, 2025\n\nKey results\n- Avg gate turnaround: 41 min (−12% vs last week)\n"
               "- Partner API calls: +34% WoW\n- Bugs closed: 17\n\nMeetings: API review on Dec 3 at 12:00.",
         "pass/pass"),
    Case("D1", "Partner API calls: 34% ↑; gate turnaround: 12% ↓; bugs closed: 17", "pass/pass"),
    Case("D1", "Turnaround down 12%, partner API calls up 34%, bugs closed 17, release readiness 18%.", "pass/fail"),
    Case("D1", "Gate turnaround improved by 12%, partner API calls increased by 34% and 17 bugs were closed.",
         "pass/pass"),
    Case("D1", "Gate turnaround went from 47 to 41 minutes (a 12% reduction); partner API calls increased 34%; "
               "17 bugs closed.", "pass/pass"),
    Case("D1", "Gate turnaround −12.0%; partner API calls +34.0%; bugs closed: 17.", "pass/pass"),
    Case("D1", "Gate turnaround -13%; partner API calls +34%; bugs closed: 17.", "fail/fail"),
    Case("D1", "Gate turnaround -12%; partner API calls +34 %; bugs closed: 17.", "pass/pass"),
    Case("D1", "Gate turnaround fell 12 percent while partner API calls increased 34 percent; 17 bugs closed.",
         "pass/pass"),
    Case("D1", "Goal: reduce gate turnaround by 20% this quarter (OKR).", "fail/pass"),
    Case("D1", "See above.", "fail/n/a"),
    Case("D1", "**Key Results**\n1. Avg gate turnaround: -12% WoW\n2. Partner API calls: +34% WoW\n3. Bugs closed: 17",
         "pass/pass"),
    Case("D1", "Turnaround down 12%, API calls up 34%, and 412 bugs closed (APP-412).", "fail/pass"),
    Case("D1", "Partner API calls rose 34% and gate turnaround fell 12%; bugs closed: seventeen.", "pass/pass"),
    Case("D1", "Gate turnaround: 12% faster; partner API calls +34%; bugs closed: 17.", "pass/pass"),
    Case("D1", "Gate turnaround -12%; partner API calls -34%; bugs closed: 17.", "fail/fail"),
    Case("D1", "Highlights\n- Gate turnaround is down 12% (41 vs 47 min)\n- Partner API calls up 34%\n"
               "- 17 bugs closed\nRisks\n- APP-412 depends on v2.12 release on 12/18", "pass/pass"),
    Case("D1", "Everything is on track; no metrics to report this week.", "fail/n/a"),
    Case("D1", "Gate turnaround -12% | partner API calls +34% | bugs closed 17 | test coverage 80%", "pass/fail"),
    # --- D2 ---
    Case("D2", "Beta DAU +15% WoW; crash-free sessions 99.2%; p50 matchmaking wait −27%.", "pass/pass"),
    Case("D2", "Beta daily active users grew 15%. Crash-free sessions held at 99.2%. Median matchmaking wait fell 27%.",
         "pass/pass"),
    Case("D2", "Beta DAU +15%; crash-free sessions at 99%; matchmaking wait -27%.", "fail/fail"),
    Case("D2", "Beta DAU +15%; crash-free sessions 99.2%; matchmaking wait time +27%.", "fail/fail"),
    Case("D2", "DAU +15%", "fail/pass"),
    Case("D2", "N/A", "fail/n/a"),
    Case("D2", "Beta DAU +15%, matchmaking wait -27%, crash rate down to 0.8%.", "fail/fail"),
    Case("D2", "| KPI | Value |\n|---|---|\n| Beta DAU (w/w) | +15% |\n| Crash-free sessions | 99.2% |\n"
               "| Matchmaking wait (p50) | -27% |", "pass/pass"),
    Case("D2", "DAUs up 15 percent, crash-free 99.2%, p50 wait down 27 pct", "pass/pass"),
    Case("D2", "Matchmaking wait dropped 27% and beta DAU grew 15%.", "fail/pass"),
    Case("D2", "Beta DAU grew 27%; crash-free sessions 99.2%; matchmaking wait down 15%.", "fail/fail"),
    Case("D2", "Crash-free sessions reached 99.2% and beta daily active users rose by 15%; the p50 matchmaking wait "
               "is 27% lower than last week.", "pass/pass"),
    Case("D2", "Weekly Report Template\n- Goals: see above\n- Key results: TBD", "fail/n/a"),
    Case("D2", "Beta DAU +15% (target was +20%); crash-free sessions 99.2%; matchmaking wait -27%.", "pass/fail"),
]

# A second wave, labelled and added after the checks agreed with the first, to see whether they generalise.
SECOND_WAVE = [
    Case("P3", "I looked at Tom's Slack message and everyone's calendars for next week (Nov 24–28).\n\n"
               "**Participants:** Tom Park, Alice Kim, Min Lee\n\n**Constraints found**\n"
               "- Tom has a partner workshop Monday 9:00–12:00 KST\n- Alice has a design review Tuesday 10:00–11:00\n"
               "- Everyone already has the API Launch Planning Sync on Wednesday 15:00–15:45\n"
               "- Min is on call Thursday morning until 12:00\n- Tom is travelling Friday afternoon\n\n"
               "**Suggested 45-minute slots (KST)**\n1. **Monday, Nov 24 — 13:00–13:45**\n"
               "2. **Tuesday, Nov 25 — 11:00–11:45**\n3. **Thursday, Nov 27 — 14:00–14:45**\n\n"
               "Let me know which one works and I can send the invite.", "pass/pass/pass/pass"),
    Case("P3", "| # | Date | Start | End | Timezone |\n|---|---|---|---|---|\n"
               "| 1 | 2025-11-24 | 14:00 | 14:45 | Asia/Seoul |\n| 2 | 2025-11-26 | 16:00 | 16:45 | Asia/Seoul |\n\n"
               "Attendees: tom@partner.co, alice.kim@company.com, min.lee@company.com", "pass/pass/pass/pass"),
    Case("P3", "Options (ET): Mon Nov 24 10:00–10:45 AM; Tue Nov 25 9:00–9:45 AM", "pass/fail/pass/fail"),
    Case("P3", "Sure! Based on everyone's calendars, the best time would be Tuesday afternoon — say 2:00 to 2:45 PM on "
               "the 25th. If that doesn't suit, Thursday the 27th from 3 to 3:45 PM also works for Tom, Alice Kim and "
               "Min.", "pass/pass/pass/pass"),
    Case("P1", "Proposed meeting: **Wednesday 28 January 2026, 15:00–16:00 NPT** (all three free; Bikash's deep dive "
               f"ends at 12:00).\nAttendees: {P1_ALL}.", "pass/pass/pass/pass"),
    Case("P1", "| Option | Kathmandu (NPT) | UTC |\n|---|---|---|\n| A | Mon 26 Jan 11:00–12:00 | 05:15–06:15 |\n"
               f"| B | Fri 30 Jan 14:00–15:00 | 08:15–09:15 |\n\nParticipants: {P1_ALL}", "pass/pass/pass/pass"),
    Case("P1", "mon 26/1 11-12 or wed 28/1 3-4pm? sabina, bikash, nisha gurung", "pass/pass/pass/pass"),
    Case("P2", "Given the Harbourlight weekly sync (Fri 3:00–3:45 PM NDT), I'd avoid Friday afternoon. My "
               "recommendation: Thursday, September 18, from 11:00 to 11:30 AM NDT. Backup: Monday, September 22, "
               f"1:30–2:00 PM NDT. Invite {P2_ALL}.", "pass/pass/pass/pass"),
    Case("P2", "How about Thursday at 10:30 am NT? It's a 30-min slot and Siobhán's clinic rounds end at 10.",
         "pass/pass/pass/fail"),
    Case("P2", "Unfortunately there's no 30-minute window where all three are free on Friday, so I'd go with Monday "
               "22 September 12:00–12:30 (right after Gwen's training).", "pass/pass/pass/fail"),
    Case("P2", "Thu Sep 18, 10:00–10:30 AM (UTC−2:30)", "pass/pass/pass/fail"),
    Case("P2", "Thu Sep 18 at 4:45 PM for 30 minutes", "pass/fail/pass/fail"),
    Case("P1", "Subject: Programme sync\nWhen: Friday, January 30, 2026 10:00 AM-11:00 AM (UTC+05:45) Kathmandu\n"
               "Attendees: Sabina Shrestha; Bikash Thapa; Nisha Gurung", "pass/pass/pass/pass"),
    Case("P1", "I'd schedule it for Monday the 26th, 4–5 pm Nepal time, with Sabina, Bikash and Nisha Gurung.",
         "pass/pass/pass/pass"),
    Case("P1", "Common availability next week (NPT):\n- Mon 26: 10:30–13:00, 14:00–18:00\n- Tue 27: 10:00–11:00, "
               "12:30–14:00\n- Wed 28: 12:00–18:00\n- Thu 29: none (Nisha OOO)\n- Fri 30: 09:00–15:00, 16:00–18:00\n\n"
               "Recommended: Wed 28 Jan 12:00–13:00 or Fri 30 Jan 09:00–10:00.", "pass/pass/pass/fail"),
    Case("P1", "Tuesday 27 January, 15:00–16:00 NPT looks good — Sabina's offsite should be over by then.",
         "pass/fail/pass/fail"),
    Case("P1", "I can't schedule meetings, but Nepal working hours are usually 10:00 to 17:00.", "fail/n/a/n/a/n/a"),
    Case("P3", "Let's lock in Tue 25 Nov 4:00–4:45 PM KST. I've also held Fri 28 Nov 9:30–10:15 AM KST as a backup. "
               f"Invite: {P3_ALL}.", "pass/pass/pass/pass"),
    Case("P3", "Saturday Nov 29 at 10:00–10:45", "pass/fail/pass/fail"),
    Case("P3", "Option 1 – 24.11.2025, 15:00–15:45 KST\nOption 2 – 27.11.2025, 16:00–16:45 KST\n"
               f"Participants: {P3_ALL}",
         "pass/pass/pass/pass"),
    Case("P3", f"11/26 (Wed) 09:00-09:45 / 11/27 (Thu) 12:00-12:45 — {P3_ALL}", "pass/pass/pass/pass"),
    Case("P2", "Siobhán, Gwen and Olumide are all free Thursday 10:00–13:00 NDT.", "pass/pass/fail/pass"),
    Case("E1", "Hi Minseo,\n\nGreat question! The rescheduling endpoint (TWB-227) is currently in QA. Per our release "
               "plan, v1.6 is slated for Thursday, December 18th. As with any release, this date could shift if QA "
               "uncovers issues — I'll let you know right away if anything changes.\n\nBest,\nYuna Seo\n"
               "Product Manager, Tidewell", "pass"),
    Case("E1", "We're looking at the third week of December.", "pass"),
    Case("E1", "We plan to release the feature shortly after our v1.6 release on Dec 18.", "fail"),
    Case("E1", "Expected release: 2025/12/18", "pass"),
    Case("E1", "We're targeting a release on Dec. 18 but it could slip to early January.", "pass"),
    Case("E1", "The feature will go live 18th December 2025.", "pass"),
    Case("E1", "Our team is aiming for the 2nd week of December.", "fail"),
    Case("E1", "Thanks for your patience! I don't have a confirmed date yet, but I will update you as soon as I know "
               "more.", "fail"),
    Case("E2", "We are targeting February 16 (Monday) for the release of delta sync.", "pass"),
    Case("E2", "We expect the release within a month.", "pass"),
    Case("E2", "It should be ready by Valentine's Day.", "fail"),
    Case("E2", "The release is scheduled for the week commencing 16 Feb.", "pass"),
    Case("E4", "Feature X is in QA; we expect GA on 28 November, barring any last-minute issues.", "pass"),
    Case("E4", "Feature X should be available in the first week of December.", "fail"),
    Case("E4", "We expect the rollout on Friday, November 28th or shortly after.", "pass"),
    Case("D1", "# Weekly Report — Truck Appointment API (Dec 1–5)\n\n## Goals\n- Reduce gate turnaround (Q4 OKR: -20%)"
               "\n\n## Key Results\n| Metric | This week | Change |\n|---|---|---|\n"
               "| Avg gate turnaround | 41 min | ▼ 12% |"
               "\n| Partner API calls | — | ▲ 34% |\n| Bugs closed | 17 | — |\n\n## Highlights\n- APP-412 (Gate 12 "
               "scanner timeout) fixed\n\n## Risks\n- v2.12 release on 12/18 depends on QA\n\n## Next Week\n"
               "- Continue turnaround work", "pass/pass"),
    Case("D1", "Partner API call volume grew by roughly a third (+34%) and average gate turnaround fell 12% (47 → 41 "
               "min). The team closed 17 bugs.", "pass/pass"),
    Case("D1", "Avg gate turnaround: 41 minutes (was 47). Partner API calls: +34%. Bugs closed: 17.", "fail/pass"),
    Case("D1", "Gate turnaround −12%; partner API calls +34%; bugs closed: 17 (+21% vs last week).", "pass/fail"),
    Case("D1", "gate turnaround ↓12% · partner API calls ↑34% · 17 bugs closed", "pass/pass"),
    Case("D1", "Gate turnaround -12% (OKR target -20%); partner API calls +34%; 17 bugs closed.", "pass/pass"),
    Case("D2", "Beta DAU +15%; matchmaking wait −27%; crash-free sessions improved to 99.2% (from 98.7%).",
         "pass/fail"),
    Case("D2", "Beta daily actives +15%, crash-free 99.2 %, p50 wait −27%", "pass/pass"),
    Case("D2", "The dashboard shows 15% more beta DAU and 27% shorter matchmaking waits; crash-free sessions at 99.2%.",
         "pass/pass"),
]

# A third wave (issue 26): arrows, CSV rows, tables, directions, hedges, late promises, relative days, echoed
# request windows, mailing lists and odd zones, over new scenarios (D3, E5, P4) and the shipped tasks (E7 = sc07
# e-mail, E8 = sc03 e-mail, D5 = sc05 report, D7 = sc07 report). Labelled by reading before the checks changed.
THIRD_WAVE = [
    # --- D3: CSV export, arrows and a Jira metrics field ---
    Case("D3", "WAU 50,000 → 55,000 (+10%); cold start p95 1,200 → 1,028 ms (−14.3%); support tickets 212 → 180 "
               "(−15%).", "pass/pass"),
    Case("D3", "metric,before,after,change\nWAU,50000,55000,+10%\ncold start p95 ms,1200,1028,-14.3%\n"
               "support tickets,212,180,-15%", "pass/pass"),
    Case("D3", "| Metric | Last week | This week | Change |\n|---|---|---|---|\n"
               "| Weekly active users | 50,000 | 55,000 | 10% |\n| Cold start p95 | 1,200 ms | 1,028 ms | 14.3% |\n"
               "| Support tickets | 212 | 180 | 15% |", "pass/pass"),
    Case("D3", "WAU +10%, cold start p95 -14.3%, support tickets -15%, Android cold start up 15%.", "pass/fail"),
    Case("D3", "Android cold start down 15%; WAU +10%; cold start p95 −14.3%; support tickets −15%.", "pass/pass"),
    Case("D3", "WAU 55,000 (+10%), cold start p95 1,028 ms (-14.3%), support tickets 180 (-15%)", "pass/pass"),
    Case("D3", "WAU +10%; cold start p95 +14.3%; support tickets −15%", "fail/fail"),
    Case("D3", "WAU grew 10% (50,000 → 55,000). Cold start p95 improved 14.3% (1,200 → 1,028 ms). Support tickets fell "
               "from 212 to 180 (15%).", "pass/pass"),
    Case("D3", "WAU +10%, cold start p95 −14.3%, support tickets −15%; checkout conversion 3.4% (+9.7%).", "pass/pass"),
    Case("D3", "API errors down 22% (Jira), WAU +10%, cold start p95 −14.3%, support tickets −15%", "pass/pass"),
    Case("D3", "API errors up 22%, WAU +10%, cold start p95 −14.3%, support tickets −15%", "pass/fail"),
    Case("D3", "WAU +10%", "fail/pass"),
    Case("D3", "Weekly actives: 55k, +10% w/w. Cold start p95: 1.03 s, −14.3%. Tickets: 180, −15%.", "pass/pass"),
    Case("D3", "WAU +10%; cold start p95 −14.3%; tickets 212 → 180 (+15%).", "fail/fail"),
    Case("D3", "week,wau,cold_start_p95_ms,support_tickets\nW47,50000,1200,212\nW48,55000,1028,180", "fail/n/a"),
    Case("D3", "metric,wau,cold start p95,support tickets\nchange_pct,10,-14.3,-15", "pass/pass"),
    Case("D3", "WAU: 50,000 → 55,000; cold start p95 −14.3%; support tickets −15%.", "fail/pass"),
    Case("D3", "Cold start p95 -14.3%, WAU +10%, support tickets -15%, and checkout conversion +12%.", "pass/fail"),
    Case("D3", "WAU +10%, cold start p95 −14.3%, support tickets changed by 15% (212 → 180).", "pass/pass"),
    Case("D3", "WAU ↑10% · cold start p95 ↓14.3% · support tickets ↓15%", "pass/pass"),
    Case("D3", "WAU ↓10% · cold start p95 ↓14.3% · support tickets ↓15%", "fail/fail"),
    Case("D3", "Android cold start is 15% faster and support tickets are 15% lower; WAU +10%; cold start p95 −14.3%.",
         "pass/pass"),
    Case("D3", "Android cold start is 15% slower; WAU +10%; cold start p95 −14.3%; support tickets −15%.", "pass/fail"),
    Case("D3", "I'll compile the CSV export into a report once I have access.", "fail/n/a"),
    Case("D3", "| KPI | Δ w/w |\n|---|---|\n| WAU | +10% |\n| Cold start p95 | −14.3% |\n| Support tickets | −15% |",
         "pass/pass"),
    Case("D3", "WAU 50k -> 55k (+10%), cold start p95 1200ms -> 1028ms (-14.3%), tickets 212 -> 180 (-15%)",
         "pass/pass"),
    Case("D3", "WAU +10%; cold start p95 −14.3%; support tickets 212 → 180.", "fail/pass"),
    Case("D3", "```csv\nmetric,change_pct\nweekly active users,10\ncold start p95,-14.3\nsupport tickets,-15\n```",
         "pass/pass"),
    Case("D3", "```csv\nmetric,change_pct\nweekly active users,10\ncold start p95,14.3\nsupport tickets,-15\n```",
         "fail/fail"),
    # --- E5: Pacific/Chatham, KIW-88 releases Thu 2025-11-20; now Mon 2025-11-03 ---
    Case("E5", "We're targeting Thursday, 20 November.", "pass"),
    Case("E5", "Either Nov 10 or Nov 20.", "fail"),
    Case("E5", "It will be ready by the Nov 30 launch.", "fail"),
    Case("E5", "We expect the release between Nov 10 and Nov 30.", "fail"),
    Case("E5", "We expect the release between Nov 17 and Nov 21.", "pass"),
    Case("E5", "The release is planned for the week of Nov 17.", "pass"),
    Case("E5", "We plan to release it on Nov 20 or 21.", "pass"),
    Case("E5", "The target is Nov 20, though it could be Nov 27.", "pass"),
    Case("E5", "It'll ship Nov 13 or Nov 20, depending on QA.", "fail"),
    Case("E5", "We're aiming for Nov 20 — by the end of November at the latest.", "pass"),
    Case("E5", "Expected release: 20/11/2025.", "pass"),
    Case("E5", "The release is scheduled for next Thursday.", "fail"),
    Case("E5", "We're targeting Thursday the 20th.", "pass"),
    Case("E5", "It'll be out in the third week of November.", "pass"),
    Case("E5", "We'll have it by Nov 20 at the latest.", "pass"),
    Case("E5", "We'll have it before Nov 20.", "fail"),
    Case("E5", "We'll have an update for you by Nov 10; the release itself is planned for Nov 20.", "pass"),
    Case("E5", "We'll have an update for you by Nov 10.", "fail"),
    Case("E5", "We currently expect it on 20 November, but we can't promise an exact day yet.", "pass"),
    Case("E5", "We promise it will be live on November 20th, guaranteed.", "pass"),
    Case("E5", "Our target window is Nov 17–28.", "pass"),
    Case("E5", "Our target window is Nov 3–24.", "fail"),
    Case("E5", "It should be live sometime in November.", "pass"),
    Case("E5", "Either the 13th or the 20th.", "fail"),
    Case("E5", "Release: 2025-11-20T09:00+13:45.", "pass"),
    Case("E5", "It will be available in 17 days.", "pass"),
    Case("E5", "It will be available within the next three weeks.", "pass"),
    Case("E5", "It will be available within the next 10 days.", "fail"),
    Case("E5", "We're planning Nov 20, or possibly Nov 24 if QA slips.", "pass"),
    Case("E5", "We're planning Nov 13, or possibly Nov 20.", "fail"),
    Case("E5", "It will be released tomorrow.", "fail"),
    # --- P4: Asia/Tehran (+03:30); the request states its own window 10:00–16:00 ---
    Case("P4", "Thanks — I'll look for a 30-minute slot on Tuesday 3 March or Wednesday 4 March, between 10:00 and "
               "16:00, and come back to you.", "fail/n/a/n/a/n/a"),
    Case("P4", "Leila Ahmadi asked for a 30-minute call with Reza Karimi and Dariush Mohammadi on Tuesday 3 March or "
               "Wednesday 4 March, any time between 10:00 and 16:00 Tehran time. Let me check the calendars.",
         "fail/n/a/n/a/n/a"),
    Case("P4", f"Tue 3 Mar 12:00–12:30 (Tehran) with {P4_ALL}.", "pass/pass/pass/pass"),
    Case("P4", f"Between 10:00 and 16:00 on Wednesday, the best slot is 11:00–11:30. Attendees: {P4_ALL}.",
         "pass/pass/pass/pass"),
    Case("P4", "Wed 4 Mar, 10:00–10:30 — Leila, Reza Karimi, Dariush", "pass/fail/pass/pass"),
    Case("P4", "Wed 4 Mar 11:00–11:30 with Leila, Reza and Dariush.", "pass/pass/pass/fail"),
    Case("P4", "Wed 4 Mar 11:00–11:30. Invite: eng@parsa.example", "pass/pass/pass/fail"),
    Case("P4", f"Wed 4 Mar 11:00–11:30. Invite {P4_ALL} (cc eng@parsa.example).", "pass/pass/pass/pass"),
    Case("P4", "Tue 3 Mar, 08:30–09:00 UTC", "pass/pass/pass/fail"),
    Case("P4", f"Tue 3 Mar 10:30–11:00 — {P4_ALL}", "pass/fail/pass/pass"),
    Case("P4", f"Wednesday 4 March at 2:45 PM for 30 minutes — {P4_ALL}.", "pass/pass/pass/pass"),
    Case("P4", "Wednesday 4 March at 2:00 PM (30 min)", "pass/fail/pass/fail"),
    Case("P4", f"Tue 3 Mar 12:00–13:00 — {P4_ALL}", "pass/pass/fail/pass"),
    Case("P4", "Thu 5 Mar 11:00–11:30 — all three", "pass/fail/pass/fail"),
    Case("P4", f"Everyone is free on Tuesday between 12:00 and 15:00; I suggest 12:15–12:45. {P4_ALL}.",
         "pass/pass/pass/pass"),
    Case("P4", "Window requested: Tue 3 – Wed 4 Mar, 10:00–16:00. Proposed: Tue 3 Mar 13:00–13:30 and Wed 4 Mar "
               f"15:00–15:30. Attendees: {P4_ALL}.", "pass/pass/pass/pass"),
    Case("P4", "Noted: 30 minutes, Tuesday or Wednesday, 10:00–16:00 Tehran time. I'll confirm once I hear back from "
               "Reza.", "fail/n/a/n/a/n/a"),
    Case("P4", f"Tue 3 Mar 16:00–16:30 — {P4_ALL}", "pass/pass/pass/pass"),
    Case("P4", f"Wed 4 Mar, 07:00–07:30 UTC (10:30–11:00 Tehran) — {P4_ALL}", "pass/pass/pass/pass"),
    # --- E7: shipped sc07, PSK-621 target Tue 2026-10-13; now Mon 2026-09-14 ---
    Case("E7", "We are currently targeting the week of 12 October for the SMS and webhook alerts.", "pass"),
    Case("E7", "We're targeting Tuesday, October 13.", "pass"),
    Case("E7", "Either October 6 or October 13, depending on QA.", "fail"),
    Case("E7", "It will be available by the October 31 release train.", "fail"),
    Case("E7", "Target: mid-October.", "pass"),
    Case("E7", "We expect it in October.", "pass"),
    Case("E7", "It should be live within four weeks.", "fail"),
    Case("E7", "We are currently targeting the week of <date>.", "fail"),
    Case("E7", "The feature is in QA; we're currently targeting 13/10/2026.", "pass"),
    Case("E7", "Current target is Oct 13 — but please treat that as a target, not a promise.", "pass"),
    Case("E7", "The SMS alerts should be live on 10/13, the webhook ones by the Oct 20 release.", "pass"),
    Case("E7", "We expect it between September 28 and October 18.", "fail"),
    Case("E7", "We expect it sometime between October 1 and October 31.", "pass"),
    Case("E7", "Either the week of Oct 5 or the week of Oct 12.", "pass"),
    Case("E7", "It will be ready by the Oct 13 release.", "pass"),
    # --- E8: shipped sc03, QPX-512 target Wed 2025-09-10; now Tue 2025-08-19 ---
    Case("E8", "We're targeting September 10.", "pass"),
    Case("E8", "We expect it between Aug 25 and Sep 15.", "fail"),
    Case("E8", "It will ship Sept 3 or Sept 10.", "fail"),
    Case("E8", "The release is planned for early September.", "pass"),
    Case("E8", "It will be live by the Sep 15 launch event.", "fail"),
    Case("E8", "We expect to release it in about three weeks.", "pass"),
    # --- D5: shipped sc05 (forecast MAPE −14%, API requests +21%, 5 regions covered) ---
    Case("D5", "Forecast MAPE −14% w/w; API requests +21%; regions covered: 5.", "pass/pass"),
    Case("D5", "| Metric | Change |\n|---|---|\n| Forecast MAPE | -14% |\n| API requests | +21% |\n"
               "| Regions covered | 5 |", "pass/pass"),
    Case("D5", "Forecast MAPE up 14%; API requests +21%; 5 regions covered.", "fail/fail"),
    Case("D5", "metric,value\nforecast_mape_change_pct,-14\napi_requests_change_pct,21\nregions_covered,5",
         "pass/pass"),
    Case("D5", "Forecast error (MAPE) improved 14%; API traffic grew 21%; Tasmania added, so 5 regions are covered.",
         "pass/pass"),
    Case("D5", "Forecast MAPE −14%; API requests fell 21%; regions covered: 5.", "fail/fail"),
    Case("D5", "Forecast MAPE -14%, API requests +21%, regions covered 5, uptime 99.9%.", "pass/fail"),
    Case("D5", "We covered 5 regions and API requests grew 21%.", "fail/pass"),
    Case("D5", "forecast MAPE ▼14% | API requests ▲21% | regions covered 5", "pass/pass"),
    # --- D7: shipped sc07 (alert latency p95 −41%, false excursion alerts −18%, 26 bugs closed) ---
    Case("D7", "Alert latency (p95) −41% w/w; false excursion alerts −18%; 26 bugs closed.", "pass/pass"),
    Case("D7", "Alert latency p95 dropped 41%, false excursion alerts fell 18%, and the team closed 26 bugs.",
         "pass/pass"),
    Case("D7", "Alert latency p95 +41%; false excursion alerts −18%; 26 bugs closed.", "fail/fail"),
    Case("D7", "Alert latency p95 −41%; false excursion alerts −18%; 26 issues resolved.", "pass/pass"),
    Case("D7", "alert_latency_p95_change_pct,-41\nfalse_excursion_alerts_change_pct,-18\nbugs_closed,26", "pass/pass"),
    Case("D7", "p95 alert latency 41% faster; false excursion alerts 18% fewer; 26 bugs closed.", "pass/pass"),
    Case("D7", "p95 alert latency 41% slower; false excursion alerts 18% fewer; 26 bugs closed.", "fail/fail"),
    Case("D7", "Alert latency p95 -41%, false excursion alerts -18%, 26 bugs closed, SMS delivery rate 97%.",
         "pass/fail"),
    Case("D7", "False excursion alerts: -18%. Bugs closed: 26.", "fail/pass"),
    Case("D7", "See the Product Weekly Report Template.", "fail/n/a"),
]

CASES: list[Case] = PLANNING + EMAIL + REPORTS + SECOND_WAVE + THIRD_WAVE


# -- the scenarios -------------------------------------------------------------------------------------------------

def _event(title: str, start: str, end: str, *people: tuple[str, str]) -> dict[str, Any]:
    return {"id": title.lower().replace(" ", "_") + start[:10], "title": title, "start": start, "end": end,
            "attendees": [{"email": email, "name": name} for name, email in people]}


def _contacts(*people: tuple[str, str]) -> dict[str, Any]:
    return {"contacts": [{"id": f"c{i}", "name": name, "email": email, "organization": "Org"}
                         for i, (name, email) in enumerate(people)]}


def _planning(prompt: str, people: list[tuple[str, str]], minutes: int, window: tuple[str, str]) -> Task:
    return Task(task_id="corpus_planning", scenario_id="corpus", task_type="planning", user_prompt=prompt,
                answer_requirements=["Proposes concrete free slots of the right length with all participants."],
                facts=TaskFacts(planning=PlanningFacts(participants=[email for _, email in people],
                                                       duration_minutes=minutes, window_start=window[0],
                                                       window_end=window[1])))


SABINA, BIKASH = ("Sabina Shrestha", "sabina.shrestha@brightloom.org"), ("Bikash Thapa", "bikash.thapa@brightloom.org")
NISHA = ("Nisha Gurung", "nisha.gurung@brightloom.org")
SIOBHAN, GWEN = ("Siobhán Walsh", "siobhan.walsh@harbourlight.ca"), ("Gwen Tobin", "gwen.tobin@harbourlight.ca")
OLUMIDE = ("Olumide Adeyemi", "olumide.adeyemi@harbourlight.ca")
TOM = ("Tom Park", "tom@partner.co")
ALICE = ("Alice Kim", "alice.kim@company.com")
MIN = ("Min Lee", "min.lee@company.com")


def _p1() -> tuple[Task, ScenarioData]:
    tz = ZoneInfo("Asia/Kathmandu")
    events = [_event("Programme review", "2026-01-26T09:00:00+05:45", "2026-01-26T10:30:00+05:45", SABINA),
              _event("1:1 with Prakash", "2026-01-26T13:00:00+05:45", "2026-01-26T14:00:00+05:45", BIKASH),
              _event("Team standup", "2026-01-27T09:30:00+05:45", "2026-01-27T10:00:00+05:45", SABINA, BIKASH, NISHA),
              _event("School visit call", "2026-01-27T11:00:00+05:45", "2026-01-27T12:30:00+05:45", NISHA),
              _event("Donor offsite", "2026-01-27T14:00:00+05:45", "2026-01-27T18:00:00+05:45", SABINA),
              _event("Sync engine deep dive", "2026-01-28T09:00:00+05:45", "2026-01-28T12:00:00+05:45", BIKASH),
              {"id": "ooo", "title": "Out of office", "start": "2026-01-29", "end": "2026-01-30",
               "attendees": [{"email": NISHA[1]}]},
              _event("Budget check-in", "2026-01-30T15:00:00+05:45", "2026-01-30T16:00:00+05:45", SABINA)]
    data = make_data(tz=tz, now=datetime(2026, 1, 21, 10, 5, tzinfo=tz), calendar={"events": events},
                     contacts=_contacts(SABINA, BIKASH, NISHA, ("Nisha Rai", "nisha.rai@brightloom.org"),
                                        ("Prakash Adhikari", "prakash.adhikari@brightloom.org")))
    return _planning("Sabina wants to meet next week; find slots.", [SABINA, BIKASH, NISHA], 60,
                     ("2026-01-26", "2026-01-30")), data


def _p2() -> tuple[Task, ScenarioData]:
    tz = ZoneInfo("America/St_Johns")
    events = [_event("Clinic rounds", "2025-09-18T08:30:00-02:30", "2025-09-18T10:00:00-02:30", SIOBHAN),
              _event("Vendor call", "2025-09-18T13:00:00-02:30", "2025-09-18T14:30:00-02:30", GWEN),
              _event("Interview", "2025-09-19T10:00:00-02:30", "2025-09-19T11:00:00-02:30", OLUMIDE),
              _event("Harbourlight weekly sync", "2025-09-19T15:00:00-02:30", "2025-09-19T15:45:00-02:30",
                     SIOBHAN, GWEN, OLUMIDE),
              _event("Training", "2025-09-22T08:30:00-02:30", "2025-09-22T12:00:00-02:30", GWEN)]
    data = make_data(tz=tz, now=datetime(2025, 9, 16, 9, 20, tzinfo=tz), workday=(time(8, 30), time(17)),
                     calendar={"events": events}, contacts=_contacts(SIOBHAN, GWEN, OLUMIDE))
    return _planning("Siobhán wants a short meeting; find slots.", [SIOBHAN, GWEN, OLUMIDE], 30,
                     ("2025-09-18", "2025-09-22")), data


def _p3() -> tuple[Task, ScenarioData]:
    tz = ZoneInfo("Asia/Seoul")
    events = [_event("Partner workshop", "2025-11-24T09:00:00+09:00", "2025-11-24T12:00:00+09:00", TOM),
              _event("Design review", "2025-11-25T10:00:00+09:00", "2025-11-25T11:00:00+09:00", ALICE),
              _event("API Launch Planning Sync", "2025-11-26T15:00:00+09:00", "2025-11-26T15:45:00+09:00",
                     TOM, ALICE, MIN),
              _event("On-call handover", "2025-11-27T09:00:00+09:00", "2025-11-27T12:00:00+09:00", MIN),
              _event("Travel", "2025-11-28T13:00:00+09:00", "2025-11-28T18:00:00+09:00", TOM)]
    data = make_data(tz=tz, now=datetime(2025, 11, 17, 10, 12, tzinfo=tz), calendar={"events": events},
                     contacts=_contacts(TOM, ALICE, MIN, ("Alice Park", "alice.park@company.com"),
                                        ("Dana Choi", "dana.choi@company.com")))
    return _planning("Tom mentioned syncing with Alice and Min next week; find slots.", [TOM, ALICE, MIN], 45,
                     ("2025-11-24", "2025-11-28")), data


def _email(facts: TaskFacts, data_dependencies: dict[str, Any] | None = None) -> Task:
    return Task(task_id="corpus_email", scenario_id="corpus", task_type="email_reply",
                user_prompt="A customer asks when a feature will be released. Draft a reply.",
                answer_requirements=["States a release time frame consistent with Jira."], facts=facts,
                data_dependencies=data_dependencies or {})


def jira_issue(key: str, **fields: Any) -> dict[str, Any]:
    return {"key": key, "summary": f"{key} work", "status": "In QA", "project": {"key": key.split("-")[0]}} | fields


def _e1() -> tuple[Task, ScenarioData]:
    tz = ZoneInfo("Asia/Seoul")
    jira = {"issues": [jira_issue("TWB-214", status="Done", fixVersions=[]),
                       jira_issue("TWB-227", fixVersions=[{"name": "v1.6", "releaseDate": "2025-12-18"}])]}
    return _email(TaskFacts(issue_key="TWB-227")), make_data(tz=tz, now=datetime(2025, 12, 1, 9, 30, tzinfo=tz),
                                                             jira=jira)


def _e2() -> tuple[Task, ScenarioData]:
    tz = ZoneInfo("Asia/Kathmandu")
    return (_email(TaskFacts(issue_key="BLS-140", target_date="2026-02-16")),
            make_data(tz=tz, now=datetime(2026, 1, 21, 10, 5, tzinfo=tz), jira={"issues": [jira_issue("BLS-140")]}))


def _e3() -> tuple[Task, ScenarioData]:
    return _email(TaskFacts(issue_key="ABC-9")), make_data(jira={"issues": [jira_issue("ABC-9", fixVersions=[])]})


def _e4() -> tuple[Task, ScenarioData]:
    tz = ZoneInfo("Asia/Seoul")
    jira = {"issues": [jira_issue("APP-412",
                                  fixVersions=[{"name": "API Launch 2025-11-28", "releaseDate": "2025-11-28"}])]}
    return (_email(TaskFacts(), {"jira_issue_key": "APP-412"}),
            make_data(tz=tz, now=datetime(2025, 11, 17, 10, 12, tzinfo=tz), jira=jira))


def report_task(metrics: dict[str, float]) -> Task:
    return Task(task_id="corpus_report", scenario_id="corpus", task_type="document_generation",
                user_prompt="Write this week's status report.", answer_requirements=["Quotes the week's metrics."],
                facts=TaskFacts(metrics=metrics))


def _slack(*texts: str) -> dict[str, Any]:
    return {"channels": [{"id": "C1", "name": "team"}],
            "messages": [{"id": f"m{i}", "channel": "team", "user": "yuna", "ts": f"2025-12-0{i + 1}T10:00:00+09:00",
                          "text": text} for i, text in enumerate(texts)]}


def _d1() -> tuple[Task, ScenarioData]:
    slack = _slack("Metrics update: avg gate turnaround is down 12% w/w (41 min vs 47 min).",
                   "Partner API calls up 34% week over week — nice!", "Bugs closed this week: 17",
                   "Reminder: APP-412 ships with v2.12 on 12/18", "Uptime SLA remains 99.5%")
    drive = {"files": [{"id": "f1", "name": "Weekly Report Template", "content": "Goals / Key Results / Highlights / "
                        "Risks / Next Week"},
                       {"id": "f2", "name": "Q4 OKRs", "content": "Q4 OKR: reduce gate turnaround by 20%."}]}
    jira = {"issues": [jira_issue("APP-412", summary="Gate 12 scanner timeout", updated="2025-12-02T12:30:00+09:00")]}
    calendar = {"events": [_event("API review", "2025-12-03T12:00:00+09:00", "2025-12-03T12:30:00+09:00")]}
    return (report_task({"avg_gate_turnaround_minutes_change_percent": -12, "partner_api_calls_change_percent": 34,
                     "bugs_closed": 17}),
            make_data(slack=slack, drive=drive, jira=jira, calendar=calendar))


def _d2() -> tuple[Task, ScenarioData]:
    drive = {"files": [{"id": "f1", "name": "Metrics dashboard export 2026-03-24",
                        "metrics": {"beta_dau_change_percent": 15, "crash_free_sessions_percent": 99.2,
                                    "bugs_closed": 41}}]}
    slack = _slack("p50 matchmaking wait dropped 27% after the new queue logic")
    return (report_task({"beta_daily_active_users_change_percent": 15, "crash_free_sessions_percent": 99.2,
                     "matchmaking_wait_p50_seconds_change_percent": -27}), make_data(slack=slack, drive=drive))


def _d3() -> tuple[Task, ScenarioData]:
    drive = {"files": [{"id": "f1", "name": "weekly_metrics.csv", "mimeType": "text/csv",
                        "content": "metric,last_week,this_week,change\nweekly active users,\"50,000\",\"55,000\",+10%\n"
                                   "cold start p95 (ms), 1200, 1028, -14.3%\ncheckout conversion,3.1%,3.4%,+9.7%\n"}]}
    slack = _slack("WAU 50,000 → 55,000 (+10%) — best week since launch",
                   "Android cold start is down 15% after the lazy-init fix",
                   "Support tickets: 212 → 180 this week (15%)")
    jira = {"issues": [jira_issue("MOB-77", summary="API error budget", metrics={"api_error_reduction_pct": 22})]}
    return (report_task({"weekly_active_users_change_percent": 10, "cold_start_p95_ms_change_percent": -14.3,
                         "support_tickets_change_percent": -15}), make_data(slack=slack, drive=drive, jira=jira))


def _e5() -> tuple[Task, ScenarioData]:
    tz = ZoneInfo("Pacific/Chatham")
    jira = {"issues": [jira_issue("KIW-88", fixVersions=[{"name": "2025.11", "releaseDate": "2025-11-20"}])]}
    return _email(TaskFacts(issue_key="KIW-88")), make_data(tz=tz, now=datetime(2025, 11, 3, 9, 0, tzinfo=tz),
                                                            jira=jira)


LEILA, REZA = ("Leila Ahmadi", "leila.ahmadi@parsa.example"), ("Reza Karimi", "reza.karimi@parsa.example")
DARIUSH = ("Dariush Mohammadi", "dariush.mohammadi@parsa.example")


def _p4() -> tuple[Task, ScenarioData]:
    tz = ZoneInfo("Asia/Tehran")
    events = [_event("Vendor review", "2026-03-03T10:00:00+03:30", "2026-03-03T12:00:00+03:30", REZA),
              _event("Budget call", "2026-03-03T15:00:00+03:30", "2026-03-03T16:00:00+03:30", LEILA),
              _event("Team sync", "2026-03-04T10:00:00+03:30", "2026-03-04T10:30:00+03:30", LEILA, REZA, DARIUSH),
              _event("Interview", "2026-03-04T13:00:00+03:30", "2026-03-04T14:30:00+03:30", DARIUSH)]
    data = make_data(tz=tz, now=datetime(2026, 2, 28, 11, 0, tzinfo=tz), workday=(time(9), time(17)),
                     calendar={"events": events},
                     contacts=_contacts(LEILA, REZA, DARIUSH, ("Reza Tehrani", "reza.tehrani@parsa.example"),
                                        ("Engineering list", "eng@parsa.example")))
    task = _planning("Leila Ahmadi asked for a 30-minute call with Reza Karimi and Dariush Mohammadi on Tuesday 3 "
                     "March or Wednesday 4 March, any time between 10:00 and 16:00 Tehran time. Find slots.",
                     [LEILA, REZA, DARIUSH], 30, ("2026-03-03", "2026-03-04"))
    return task, data


def _shipped(path: str) -> tuple[Task, ScenarioData]:
    """A task of the shipped benchmark with its shipped data."""
    task = load_task(REPO / "tasks" / path)
    return task, load_task_data(task, REPO / "data", REPO / "scenarios")


_BUILDERS = {"P1": _p1, "P2": _p2, "P3": _p3, "P4": _p4, "E1": _e1, "E2": _e2, "E3": _e3, "E4": _e4, "E5": _e5,
             "E7": lambda: _shipped("email_reply/sc07_email_reply.json"),
             "E8": lambda: _shipped("email_reply/sc03_email_reply.json"), "D1": _d1, "D2": _d2, "D3": _d3,
             "D5": lambda: _shipped("document_generation/sc05_weekly_report.json"),
             "D7": lambda: _shipped("document_generation/sc07_weekly_report.json")}
CHECK_NAMES = {"P": ["planning.slots_found", "planning.slots_free", "planning.duration", "planning.participants"],
               "E": ["email_reply.target_date"], "D": ["report.metrics_quoted", "report.metrics_in_sources"]}


@cache
def scenario(name: str) -> tuple[Task, ScenarioData]:
    """The task and in-memory data of a corpus scenario (``P1`` … ``D2``)."""
    return _BUILDERS[name]()
