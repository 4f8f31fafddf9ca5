"""``sim/generator`` building blocks: a world under construction and its timeline events.

``World`` holds what every storyline needs — the scenario's clock (reference
now, time zone, working hours), its people, a seeded random generator — and
the builders that turn a storyline's facts into timeline events of the shape
the six sources are later projected from. Calendar bookings pass one guard:
an event never covers a slot that a planning storyline promised to keep free
for one of its attendees, so later storylines and noise cannot break it.

Arithmetic on instants is done in UTC; local wall-clock times are turned into
instants through ``local`` (zoneinfo, so offsets are right across DST).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

__all__ = ["Span", "World", "join_names", "slug"]

Span = tuple[datetime, datetime]
DOC_MIME = "application/vnd.google-apps.document"


def slug(text: str, sep: str = "-") -> str:
    """Lower-case ``text`` with runs of other characters replaced by ``sep`` (ids, thread names)."""
    return re.sub(r"[^a-z0-9]+", sep, text.lower()).strip(sep)[:48] or "x"


def join_names(names: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B and C`` — how people list colleagues in a message."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def _overlaps(a: Span, b: Span) -> bool:
    return a[0] < b[1] and b[0] < a[1]


class World:
    """One world state under construction; storylines add events through its builders."""

    def __init__(self, scenario: dict[str, Any], seed: str) -> None:
        self.scenario = scenario
        self.seed = seed
        self.rng = random.Random(seed)
        given = scenario["global_settings"]
        # msgspec omits default working hours from the scenario JSON; the schema wants them
        self.settings = {"timezone": given["timezone"], "workday_start": "09:00", "workday_end": "18:00", **given}
        self.tz = ZoneInfo(self.settings["timezone"])
        self.work_start = _minutes(self.settings["workday_start"])
        self.work_end = _minutes(self.settings["workday_end"])
        self.now = datetime.fromisoformat(scenario["reference_now"]).astimezone(UTC)
        self.today = self.now.astimezone(self.tz).date()
        self.staff: list[dict[str, Any]] = []
        for person in scenario["people"]:
            copied = dict(person)
            copied.setdefault("team", "")
            copied.setdefault("role", "")
            self.staff.append(copied)
        self.people = list(self.staff)  # staff plus the external people storylines add
        self.domain = self.staff[0]["email"].split("@")[1]
        self.projects: list[dict[str, Any]] = list(scenario.get("projects") or ())
        self.depth = float(scenario.get("depth", 0.0))
        self.noise = float(scenario.get("noise_level", 0.0))
        self.events: list[dict[str, Any]] = []
        self._busy: dict[str, list[Span]] = {}
        self._kept_free: dict[str, list[Span]] = {}
        self._issue_numbers: dict[str, int] = {}

    # -- clock -----------------------------------------------------------------
    def local(self, day: date, minute: int) -> datetime:
        """The instant (UTC) of wall-clock ``minute`` after local midnight of ``day``."""
        day += timedelta(days=minute // 1440)
        minute %= 1440
        return datetime(day.year, day.month, day.day, minute // 60, minute % 60, tzinfo=self.tz).astimezone(UTC)

    def minute_of_day(self, instant: datetime) -> int:
        wall = instant.astimezone(self.tz)
        return wall.hour * 60 + wall.minute

    def stamp(self, instant: datetime) -> str:
        """ISO 8601 in the scenario's zone with that day's UTC offset."""
        return instant.astimezone(self.tz).isoformat(timespec="seconds")

    @staticmethod
    def utc_stamp(instant: datetime) -> str:
        """ISO 8601 in UTC (``+00:00``), as Jira reports times."""
        return instant.astimezone(UTC).isoformat(timespec="seconds")

    def past(self, hours_lo: float, hours_hi: float) -> datetime:
        """A moment ``hours_lo``–``hours_hi`` hours before now, preferring weekday office hours.

        People write during the day, so a few draws are tried before settling
        for an odd hour (short ranges may have no office hours at all).
        """
        instant = self.now
        for _ in range(24):
            instant = self.now - timedelta(minutes=self.rng.randint(int(hours_lo * 60), int(hours_hi * 60)))
            wall = instant.astimezone(self.tz)
            if wall.weekday() < 5 and self.work_start - 30 <= self.minute_of_day(instant) <= self.work_end + 60:
                break
        return instant.replace(second=0, microsecond=0)

    def week_monday(self) -> date:
        return self.today - timedelta(days=self.today.weekday())

    # -- people ----------------------------------------------------------------
    def person(self, hint: str) -> dict[str, Any] | None:
        """A staff member by first name, full name or id (case-insensitive)."""
        wanted = hint.strip().lower()
        for person in self.staff:
            name = person["name"].lower()
            if wanted in (name, name.split()[0], person["id"].lower()):
                return person
        return None

    def mentioned(self, text: str, exclude: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Staff whose first name appears as a word in ``text``, in order of appearance."""
        skip = {e.lower() for e in exclude}
        found = []
        for person in self.staff:
            first = person["name"].split()[0]
            match = re.search(rf"\b{re.escape(first)}\b", text)
            if match and first.lower() not in skip:
                found.append((match.start(), person))
        return [p for _, p in sorted(found, key=lambda item: item[0])]

    def by_role(self, pattern: str, default: dict[str, Any] | None = None) -> dict[str, Any]:
        """The first staff member whose role matches ``pattern``; else ``default`` or the first one."""
        found = next((p for p in self.staff if re.search(pattern, p.get("role", ""), re.I)), None)
        return found or default or self.staff[0]

    def add_person(self, person: dict[str, Any]) -> dict[str, Any]:
        """Add an external person once (by e-mail); return the one in the world."""
        existing = next((p for p in self.people if p["email"].lower() == person["email"].lower()), None)
        if existing is not None:
            return existing
        self.people.append(person)
        return person

    def person_id(self, email: str) -> str | None:
        return next((p["id"] for p in self.people if p["email"].lower() == email.lower()), None)

    # -- projects ----------------------------------------------------------------
    def channel(self, text: str = "") -> str:
        """The team channel of the project ``text`` mentions (by key or issue key), else the first project."""
        keys = [p["project_key"] for p in self.projects]
        named = next((k for k in re.findall(r"\b([A-Z][A-Z0-9]+)(?:-\d+)?\b", text) if k in keys), None)
        key = named or (keys[0] if keys else None)
        return f"{key.lower()}-team" if key else "team-sync"

    def new_issue_key(self, project_key: str) -> str:
        """A fresh issue key above every seeded one, so generated issues never collide with seeds."""
        if project_key not in self._issue_numbers:
            taken = [int(s["issue_key"].rsplit("-", 1)[1]) for p in self.projects for s in p.get("jira_seeds") or ()
                     if s["issue_key"].startswith(f"{project_key}-")]
            taken += [int(k.rsplit("-", 1)[1]) for sub in self.scenario.get("sub_scenarios") or ()
                      if (k := sub.get("issue_key_hint") or "").startswith(f"{project_key}-")]
            self._issue_numbers[project_key] = max(taken, default=100) + self.rng.randint(3, 12)
        self._issue_numbers[project_key] += self.rng.randint(1, 3)
        return f"{project_key}-{self._issue_numbers[project_key]}"

    # -- calendar bookkeeping ----------------------------------------------------
    def keep_free(self, people: Iterable[dict[str, Any]], span: Span) -> None:
        """Promise that none of ``people`` gets a booking overlapping ``span``."""
        for person in people:
            self._kept_free.setdefault(person["email"], []).append(span)

    def bookable(self, person: dict[str, Any], span: Span) -> bool:
        """Whether booking ``person`` for ``span`` keeps every promised free slot free."""
        return not any(_overlaps(span, kept) for kept in self._kept_free.get(person["email"], ()))

    def is_free(self, people: Iterable[dict[str, Any]], span: Span) -> bool:
        """Whether none of ``people`` has a booking overlapping ``span``."""
        return not any(_overlaps(span, busy) for p in people for busy in self._busy.get(p["email"], ()))

    def busy(self, people: Iterable[dict[str, Any]]) -> list[Span]:
        """Every booking of any of ``people``, sorted."""
        return sorted({span for p in people for span in self._busy.get(p["email"], ())})

    # -- event builders --------------------------------------------------------
    def _add(self, source: str, kind: str, sub: str, when: datetime, text: str, participants: list[str],
             links: dict[str, Any], details: dict[str, Any], noise: bool) -> dict[str, Any]:
        """Append one timeline event; ``id`` and cross references are filled in by ``finish``."""
        event = {"id": "", "timestamp": self.stamp(when), "type": kind, "sub_scenario_id": sub, "source": source,
                 "participants": list(dict.fromkeys(participants)), "text": text, "links": links,
                 "details": details, "is_noise": noise, "_when": when}
        self.events.append(event)
        return event

    def slack(self, sub: str, channel: str, author: dict[str, Any], when: datetime, text: str, *,
              parent: dict[str, Any] | None = None, kind: str = "slack_message", noise: bool = False
              ) -> dict[str, Any]:
        """A Slack message; a reply names its parent event (resolved to its id later)."""
        details: dict[str, Any] = {"user": author["id"]}
        if parent is not None:
            details["thread_of"] = parent
        return self._add("slack", kind, sub, when, text, [author["id"]], {"slack_channel": channel}, details, noise)

    def email(self, sub: str, thread: str, sender: dict[str, Any], to: Sequence[dict[str, Any]], subject: str,
              body: str, when: datetime, *, kind: str = "email", noise: bool = False) -> dict[str, Any]:
        """One e-mail of the thread ``thr_<thread>``."""
        details = {"from": sender["email"], "to": [p["email"] for p in to], "cc": [], "subject": subject}
        ids = [i for p in (sender, *to) if (i := self.person_id(p["email"]))]
        return self._add("gmail", kind, sub, when, body, ids, {"gmail_thread": f"thr_{thread}"}, details, noise)

    def meeting(self, sub: str, title: str, span: Span, attendees: Sequence[dict[str, Any]], *,
                description: str = "", kind: str = "meeting", noise: bool = False) -> dict[str, Any] | None:
        """A calendar event organised by the first attendee, or None when it would take a promised slot."""
        if not all(self.bookable(p, span) for p in attendees):
            return None
        for person in attendees:
            self._busy.setdefault(person["email"], []).append(span)
        emails = [p["email"] for p in attendees]
        details = {"title": title, "start": self.stamp(span[0]), "end": self.stamp(span[1]), "attendees": emails,
                   "organizer": emails[0], "description": description}
        return self._add("calendar", kind, sub, span[0], title, [p["id"] for p in attendees],
                         {"calendar_event": ""}, details, noise)

    def issue(self, sub: str, key: str, summary: str, status: str, updated: datetime, *, description: str,
              fix_version: dict[str, str] | None = None, assignee: dict[str, Any] | None = None,
              reporter: dict[str, Any] | None = None, comments: Sequence[tuple[dict[str, Any], str, datetime]] = (),
              kind: str = "jira_update", noise: bool = False) -> dict[str, Any]:
        """A Jira issue as last updated at ``updated``; comments are (author, body, when)."""
        assignee = assignee or self.rng.choice(self.staff)
        reporter = reporter or self.staff[0]
        created = updated - timedelta(days=self.rng.randint(9, 45), minutes=self.rng.randint(0, 600))
        details = {"summary": summary, "status": status, "project_key": key.rsplit("-", 1)[0],
                   "fix_version": fix_version, "assignee": assignee["email"], "reporter": reporter["email"],
                   "priority": self.rng.choice(["High", "Medium", "Medium", "Low"]), "description": description,
                   "created": self.utc_stamp(created), "updated": self.utc_stamp(updated),
                   "comments": [{"author": a["email"], "body": body, "created": self.utc_stamp(at)}
                                for a, body, at in comments]}
        return self._add("jira", kind, sub, updated, description, [assignee["id"], reporter["id"]],
                         {"jira_issue": key}, details, noise)

    def document(self, sub: str, name: str, content: str, modified: datetime, owner: dict[str, Any], *,
                 mime: str = DOC_MIME, kind: str = "document", noise: bool = False) -> dict[str, Any]:
        """A Drive file with its full text."""
        details = {"name": name, "mimeType": mime, "content": content, "owners": [owner["email"]],
                   "modifiedTime": self.stamp(modified)}
        return self._add("drive", kind, sub, modified, content, [owner["id"]], {"drive_file": name}, details, noise)

    # -- result ----------------------------------------------------------------
    def finish(self) -> list[dict[str, Any]]:
        """The timeline in time order with sequential event and calendar ids and resolved thread parents."""
        ordered = sorted(enumerate(self.events), key=lambda item: (item[1]["_when"], item[0]))
        events = [event for _, event in ordered]
        calendar_no = 0
        for number, event in enumerate(events, start=1):
            event["id"] = f"evt_{number:03d}"
            if event["source"] == "calendar":
                calendar_no += 1
                event["links"]["calendar_event"] = f"cal_{calendar_no:03d}"
        for event in events:
            parent = event["details"].get("thread_of")
            if isinstance(parent, dict):
                event["details"]["thread_of"] = parent["id"]
            del event["_when"]
        return events
