"""``sim/generator``, part 1: a deterministic world state from a scenario.

Every sub-scenario becomes concrete timeline events (Slack messages, e-mails,
calendar events, Jira issues, Drive documents) in the scenario's time zone,
with the facts its task needs guaranteed: a common free slot of the requested
length for the meeting participants (and a weekday with none), the rollout
issue with its fixVersion release date plus the response playbook, the week's
metrics and report template. ``noise_level`` adds unrelated and near-duplicate
events; ``depth`` spreads the clues over more messages and sources.
"""

from __future__ import annotations

import random
import re
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

__all__ = ["build_world_state", "window_days"]

_MEETING_TITLES = ["1:1", "Design review", "Standup", "Customer call", "Planning", "Interview", "Roadmap sync",
                   "Incident review", "Vendor call", "Team lunch", "Budget review", "Hiring panel", "Focus time"]
_NOISE_CHAT = ["Coffee machine on 3 is fixed.", "Who is up for lunch at 12:30?", "Reminder: all-hands on Friday.",
               "Parking garage closes early today.", "Happy birthday to the data team!",
               "New wiki page for onboarding.",
               "The VPN will restart tonight at 22:00.", "Anyone seen my charger?", "Book club picks are in."]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "x"


def window_days(kind: str, now: datetime) -> list[date]:
    """Weekdays of a meeting window: next week (Mon–Fri), this week (rest of it, after today),
    or the next three working days."""
    today = now.date()
    monday = today - timedelta(days=today.weekday())
    if kind == "next_3_working_days":
        days: list[date] = []
        d = today
        while len(days) < 3:
            d += timedelta(days=1)
            if d.weekday() < 5:
                days.append(d)
        return days
    if kind == "this_week_working_hours":
        rest = [today + timedelta(days=i) for i in range(1, 5 - today.weekday())]
        if len(rest) >= 1:
            return rest
    return [monday + timedelta(days=7 + i) for i in range(5)]


_PHRASE = {"next_week_working_hours": "next week", "this_week_working_hours": "this week",
           "next_3_working_days": "in the next 3 working days"}


class _World:
    def __init__(self, scenario: dict[str, Any], seed: str) -> None:
        self.s = scenario
        self.rng = random.Random(seed)
        self.tz = ZoneInfo(scenario["global_settings"]["timezone"])
        self.now = datetime.fromisoformat(scenario["reference_now"]).astimezone(self.tz)
        gs = scenario["global_settings"]
        self.work_start = time.fromisoformat(gs.get("workday_start", "09:00"))
        self.work_end = time.fromisoformat(gs.get("workday_end", "18:00"))
        self.people: list[dict[str, Any]] = [dict(p) for p in scenario["people"]]
        self.by_first = {p["name"].split()[0]: p for p in self.people}
        self.domain = self.people[0]["email"].split("@")[1]
        self.events: list[dict[str, Any]] = []
        self.cal_no = 0
        self.issue_no = 900

    # -- helpers -----------------------------------------------------------
    def at(self, day: date, clock: time) -> datetime:
        return datetime.combine(day, clock, tzinfo=self.tz)

    def stamp(self, dt: datetime) -> str:
        return dt.astimezone(self.tz).isoformat(timespec="seconds")

    def before_now(self, hours_lo: float, hours_hi: float) -> datetime:
        dt = self.now - timedelta(hours=self.rng.uniform(hours_lo, hours_hi))
        return dt.replace(second=0, microsecond=0)

    def add(self, source: str, type_: str, sub: str, when: datetime, text: str, participants: list[str],
            links: dict[str, Any], details: dict[str, Any], noise: bool = False) -> dict[str, Any]:
        event = {"id": f"evt_{len(self.events) + 1:03d}", "timestamp": self.stamp(when), "type": type_,
                 "sub_scenario_id": sub, "source": source, "participants": participants, "text": text,
                 "links": links, "details": details, "is_noise": noise}
        self.events.append(event)
        return event

    def slack(self, sub: str, channel: str, author: dict[str, Any], when: datetime, text: str,
              parent: dict[str, Any] | None = None, noise: bool = False) -> dict[str, Any]:
        details: dict[str, Any] = {"user": author["id"]}
        if parent is not None:
            details["thread_of"] = parent["id"]
        return self.add("slack", "message", sub, when, text, [author["id"]], {"slack_channel": channel}, details, noise)

    def meeting(self, sub: str, title: str, start: datetime, end: datetime, attendees: list[dict[str, Any]],
                noise: bool = False, description: str = "") -> None:
        self.cal_no += 1
        emails = [p["email"] for p in attendees]
        self.add("calendar", "meeting", sub, start, title, [p["id"] for p in attendees],
                 {"calendar_event": f"cal_{self.cal_no:03d}"},
                 {"title": title, "start": self.stamp(start), "end": self.stamp(end), "attendees": emails,
                  "organizer": emails[0], "description": description}, noise)

    def jira(self, sub: str, key: str, project: str, summary: str, status: str, updated: datetime,
             fix: dict[str, str] | None, description: str, noise: bool = False,
             comments: list[dict[str, str]] | None = None) -> None:
        assignee = self.rng.choice(self.people)["email"]
        utc = ZoneInfo("UTC")
        created = updated - timedelta(days=self.rng.randint(10, 40))
        self.add("jira", "jira_update", sub, updated, description, [], {"jira_issue": key},
                 {"summary": summary, "status": status, "project_key": project, "fix_version": fix,
                  "assignee": assignee, "reporter": self.people[0]["email"],
                  "priority": self.rng.choice(["High", "Medium", "Low"]), "description": description,
                  "created": created.astimezone(utc).isoformat(timespec="seconds"),
                  "updated": updated.astimezone(utc).isoformat(timespec="seconds"), "comments": comments or []},
                 noise)

    def doc(self, sub: str, name: str, content: str, when: datetime, owner: dict[str, Any], noise: bool = False,
            mime: str = "application/vnd.google-apps.document") -> None:
        self.add("drive", "document", sub, when, name, [owner["id"]], {"drive_file": name},
                 {"name": name, "mimeType": mime, "content": content, "owners": [owner["email"]],
                  "modifiedTime": self.stamp(when)}, noise)

    def email(self, sub: str, thread: str, sender: str, to: list[str], subject: str, body: str, when: datetime,
              noise: bool = False) -> None:
        self.add("gmail", "email", sub, when, body, [], {"gmail_thread": thread},
                 {"from": sender, "to": to, "cc": [], "subject": subject}, noise)

    def channel(self) -> str:
        projects = self.s.get("projects") or []
        return f"{projects[0]['project_key'].lower()}-team" if projects else "team-sync"

    # -- sub-scenarios -------------------------------------------------------
    def planning(self, sub: dict[str, Any]) -> None:
        hint = sub.get("constraints_hint") or {}
        if isinstance(hint, str):
            found = re.search(r"(\d+)\s*min", hint)
            hint = {"approx_duration_minutes": int(found.group(1)) if found else 45,
                    "time_window": "this_week_working_hours" if "this week" in hint else "next_week_working_hours"}
        duration = int(hint.get("approx_duration_minutes", 45))
        kind = str(hint.get("time_window", "next_week_working_hours"))
        people = [self.by_first[n.split()[0]] for n in sub.get("participants_hint") or []
                  if n.split()[0] in self.by_first]
        if len(people) < 2:
            people = self.people[:3]
        requester, others = people[0], people[1:]
        topic = (re.sub(r"^.*?\babout\b|^.*?\bto\b", "", sub["abstract_description"]).strip().rstrip(".")[:90]
                 or "the project")
        phrase = _PHRASE.get(kind, "next week")
        depth = float(self.s.get("depth", 0))
        channel = self.channel()
        asked = self.before_now(2, 30)
        full = [p["name"] for p in others]
        if depth < 0.34:
            root = self.slack(sub["id"], channel, requester, asked,
                              f"Hi all, I'd like to set up a {duration} minutes sync {phrase} with "
                              f"{', '.join(full[:-1]) + ' and ' + full[-1] if len(full) > 1 else full[0]} "
                              f"about {topic}. Could someone find a slot that works for everyone?")
        elif depth < 0.67:
            root = self.slack(sub["id"], channel, requester, asked,
                              f"Can we do a {duration} minutes session {phrase} about {topic}? {full[0]} should join.")
            self.slack(sub["id"], channel, others[0], asked + timedelta(minutes=17),
                       f"Sure. Please include {', '.join(full[1:]) or 'nobody else'} too." if full[1:] else "Sure.",
                       root)
        else:
            root = self.slack(sub["id"], channel, requester, asked, f"We need to sync {phrase} on {topic}.")
            self.slack(sub["id"], channel, others[0], asked + timedelta(minutes=11),
                       f"Agreed, loop in {' and '.join(full)}.", root)
            self.slack(sub["id"], channel, others[-1], asked + timedelta(minutes=26),
                       f"{duration} minutes should be enough for that.", root)
        days = [d for d in window_days(kind, self.now)]
        self._calendar(sub["id"], people, days, duration)
        root["details"].update(duration_minutes=duration, window=kind, window_start=days[0].isoformat(),
                               window_end=days[-1].isoformat(), participant_emails=[p["email"] for p in people])

    def _calendar(self, sub: str, people: list[dict[str, Any]], days: list[date], duration: int) -> None:
        """Busy time for every participant on every day, keeping one common slot free and one day full."""
        work = (datetime.combine(date.min, self.work_end) - datetime.combine(date.min, self.work_start)).seconds // 60
        free_day = self.rng.choice(days[1:] if len(days) > 1 else days)
        offset = self.rng.randrange(0, max(1, (work - duration - 30) // 30)) * 30
        reserved = (self.at(free_day, self.work_start) + timedelta(minutes=offset),
                    self.at(free_day, self.work_start) + timedelta(minutes=offset + duration))
        full_day = next((d for d in days if d != free_day), None)
        for day in days:
            for person in people:
                for _ in range(self.rng.randint(1, 3)):
                    length = self.rng.choice([30, 45, 60, 90, 120])
                    start = self.at(day, self.work_start) + timedelta(minutes=self.rng.randrange(0, work - 30, 15))
                    end = start + timedelta(minutes=length)
                    if day == free_day and start < reserved[1] and end > reserved[0]:
                        continue
                    others = [p for p in self.people if p is not person]
                    self.meeting(sub, self.rng.choice(_MEETING_TITLES), start, end,
                                 [person] + self.rng.sample(others, k=min(len(others), self.rng.randint(0, 2))))
        if full_day is not None:
            blocker = self.rng.choice(people)
            title = "Offsite" if float(self.s.get("depth", 0)) >= 0.5 else "Quarterly planning (all day)"
            self.meeting(sub, title, self.at(full_day, time(0)), self.at(full_day + timedelta(days=1), time(0)),
                         [blocker])
        # the rest of the free day is busy for someone, so the reserved slot is the only common time
        before = (self.at(free_day, self.work_start), reserved[0])
        after = (reserved[1], self.at(free_day, self.work_end))
        for span in (before, after):
            if span[1] - span[0] >= timedelta(minutes=duration):
                self.meeting(sub, "Customer workshop", span[0], span[1], [self.rng.choice(people)])

    def rollout(self, sub: dict[str, Any]) -> None:
        seeds = {s["issue_key"]: (s, p) for p in self.s.get("projects") or () for s in p.get("jira_seeds") or ()}
        seed, project = seeds.get(sub.get("issue_key_hint") or "", (None, None))
        if seed is None:
            return
        customer = sub.get("customer") or {"name": "Sam Customer", "email": "sam@customer.example"}
        ext = {"id": f"person_ext_{_slug(customer['name']).replace('-', '_')}", "name": customer["name"],
               "email": customer["email"], "team": "External", "role": "Customer"}
        if all(p["id"] != ext["id"] for p in self.people):
            self.people.append(ext)
        pm = next((p for p in self.s["people"] if re.search(r"PM|Product|Manager|Account", p.get("role", ""))),
                  self.s["people"][0])
        feature = seed["summary"]
        depth = float(self.s.get("depth", 0))
        words = feature.split()
        nickname = f"the {' '.join(words[-2:]).lower()} update" if depth >= 0.67 else feature.lower()
        thread = f"thr_{_slug(seed['issue_key'])}"
        subject = f"Question about {nickname}"
        first = self.before_now(72, 160)
        cust_first, pm_first = customer["name"].split()[0], pm["name"].split()[0]
        self.email(sub["id"], thread, customer["email"], [pm["email"]], subject,
                   f"Hi {pm_first},\n\nCould you let us know when {nickname} will be available for us? We are "
                   f"planning our own rollout around it.\n\nBest,\n{customer['name']}", first)
        self.email(sub["id"], thread, pm["email"], [customer["email"]], f"Re: {subject}",
                   f"Hi {cust_first},\n\nThanks for asking. Let me check with the team and get back to you.\n\n"
                   f"Kind regards,\n{pm['name']}", first + timedelta(hours=3))
        self.email(sub["id"], thread, customer["email"], [pm["email"]], f"Re: {subject}",
                   f"Hi {pm_first},\n\nAny update on the timing? Thanks!\n\n{cust_first}", self.before_now(2, 20))
        if depth >= 0.67:
            self.slack(sub["id"], self.channel(), pm, self.before_now(30, 60),
                       f"FYI: customers call {feature} '{nickname}' — it's tracked in {seed['issue_key']}.")
        fix = {"name": seed.get("fix_version") or "next", "releaseDate": seed.get("target_date")} \
            if seed.get("target_date") else None
        self.jira(sub["id"], seed["issue_key"], project["project_key"], feature, seed["status"],
                  self.before_now(20, 70), fix, f"{feature}. Target release {seed.get('target_date')}.")
        playbook = (sub.get("documents_hint") or ["Customer Response Playbook"])[0]
        self.doc(sub["id"], playbook,
                 f"{playbook}\n\nTone\nBe warm, concise and specific; thank the customer for their patience.\n\n"
                 "Communicating release ETAs\nUse cautious language such as 'we are currently targeting'. Give a "
                 "target window, for example 'the week of <date>', rather than a promise of an exact day. State "
                 "that dates may change as testing completes. Never share internal ticket numbers or names.\n\n"
                 "Escalations\nLoop in the account owner for contractual commitments.",
                 self.before_now(200, 900), pm)
        if float(self.s.get("noise_level", 0)) >= 0.5:
            self.doc("noise", f"{playbook.rsplit(' v', 1)[0]} v1 (deprecated)",
                     "Deprecated. Old guidance: always give customers an exact release date.",
                     self.before_now(2000, 4000), pm, noise=True)

    def report(self, sub: dict[str, Any]) -> None:
        key = sub.get("project_key_hint") or (self.s.get("projects") or [{"project_key": "PRJ"}])[0]["project_key"]
        project = next((p for p in self.s.get("projects") or () if p["project_key"] == key), {"name": key})
        author = self.by_first.get((sub.get("abstract_description") or "").split()[0], self.s["people"][0])
        channel = f"{key.lower()}-team"
        monday = self.now.date() - timedelta(days=self.now.weekday())
        depth = float(self.s.get("depth", 0))
        for i, (name, value) in enumerate((sub.get("metrics_hint") or {}).items()):
            line = _metric_line(name, value)
            week_start = self.at(monday, self.work_start)
            when = week_start + (self.now - week_start) * self.rng.uniform(0.2, 0.9)
            if depth >= 0.67 and i % 2 == 1:
                continue
            self.slack(sub["id"], channel, self.rng.choice(self.s["people"]), when, f"Metrics update: {line}")
        if depth >= 0.67:
            lines = [_metric_line(n, v) for i, (n, v) in enumerate((sub.get("metrics_hint") or {}).items()) if i % 2]
            self.doc(sub["id"], f"Metrics dashboard export {self.now.date().isoformat()}",
                     "Metrics dashboard export\n" + "\n".join(lines), self.now - timedelta(hours=2), author,
                     mime="text/markdown")
        for n in range(self.rng.randint(2, 4)):
            self.issue_no += 1
            self.jira(sub["id"], f"{key}-{self.issue_no}", key, self.rng.choice(
                ["Fix flaky integration test", "Improve error messages", "Update onboarding docs",
                 "Tune retry settings", "Add audit logging", "Clean up feature flags"]) + f" ({n + 1})", "Done",
                self.at(monday, time(12)) + (self.now - self.at(monday, time(12))) * self.rng.uniform(0.1, 0.9),
                None, "Completed this week.")
        template = (sub.get("documents_hint") or ["Weekly Report Template"])[0]
        self.doc(sub["id"], template, f"{template}\n\nHighlights\n\nMetrics\n\nCompleted work\n\nRisks\n\nNext week\n",
                 self.before_now(500, 1500), author)
        for title, day in (("Sprint review", 1), ("Customer demo", 2)):
            start = self.at(monday + timedelta(days=day), time(14))
            self.meeting(sub["id"], f"{project.get('name', key)} {title.lower()}", start, start + timedelta(hours=1),
                         self.s["people"][:3])

    def seeds(self) -> None:
        named = {e["links"].get("jira_issue") for e in self.events}
        for project in self.s.get("projects") or ():
            for seed in project.get("jira_seeds") or ():
                if seed["issue_key"] in named:
                    continue
                fix = {"name": seed.get("fix_version") or "next", "releaseDate": seed["target_date"]} \
                    if seed.get("target_date") else None
                self.jira("seeds", seed["issue_key"], project["project_key"], seed["summary"], seed["status"],
                          self.before_now(24, 200), fix, f"{seed['summary']}.")

    def noise(self) -> None:
        count = round(float(self.s.get("noise_level", 0)) * 12) + self.rng.randint(0, 2)
        keys = [p["project_key"] for p in self.s.get("projects") or ()] or ["PRJ"]
        for i in range(count):
            kind = i % 5
            person = self.rng.choice(self.s["people"])
            when = self.before_now(1, 120)
            if kind == 0:
                self.slack("noise", "random", person, when, self.rng.choice(_NOISE_CHAT), noise=True)
            elif kind == 1:
                self.email("noise", f"thr_news_{i}", "newsletter@industry-digest.example", [person["email"]],
                           "This week in the industry", "Top stories of the week, events and webinars.", when, True)
            elif kind == 2:
                self.issue_no += 1
                self.jira("noise", f"{keys[0]}-{self.issue_no}", keys[0], "Refactor logging module", "To Do", when,
                          None, "Unrelated housekeeping.", True)
            elif kind == 3:
                self.doc("noise", f"Team offsite ideas {i}", "Bowling, cooking class or a hike.", when, person, True)
            else:
                start = self.at(self.now.date() + timedelta(days=self.rng.randint(1, 9)), time(self.rng.randint(9, 15)))
                self.meeting("noise", "Lunch and learn", start, start + timedelta(minutes=45), [person], True)
        if float(self.s.get("noise_level", 0)) >= 0.5 and len(self.s["people"]) >= 2:
            old = self.now - timedelta(days=21)
            a, b = self.s["people"][-1], self.s["people"][-2]
            self.slack("noise", self.channel(), a, old,
                       f"Can we do a 30 minutes sync next week with {b['name']} about the old vendor contract?",
                       noise=True)


def _metric_line(name: str, value: Any) -> str:
    words = name.replace("_", " ")
    if name.endswith("_change_percent"):
        return f"{words.removesuffix(' change percent')} changed by {value:+g}% week over week"
    if name.endswith("_percent"):
        return f"{words.removesuffix(' percent')}: {value:g}%"
    return f"{words} this week: {value:g}"


def build_world_state(scenario: dict[str, Any], seed: str) -> dict[str, Any]:
    """The world state for ``scenario``; same scenario and seed → same bytes."""
    world = _World(scenario, seed)
    handlers = {"planning_meeting": world.planning, "feature_rollout_eta": world.rollout, "weekly_report": world.report}
    for sub in scenario.get("sub_scenarios") or ():
        handlers.get(sub.get("type"), lambda _s: None)(sub)
    world.seeds()
    world.noise()
    return {
        "scenario_id": scenario["scenario_id"], "seed": seed, "reference_now": scenario["reference_now"],
        "company": {"name": scenario.get("company") or world.domain.split(".")[0].title(),
                    "timezone": scenario["global_settings"]["timezone"]},
        "global_settings": scenario["global_settings"], "people": world.people,
        "projects": scenario.get("projects") or [], "timeline_events": world.events,
    }
