"""The tool backend: nine workplace tools over one scenario's in-memory data.

``ToolBackend(data).schemas()`` gives the tools as the model sees them (API
names use ``_`` where the tool names have ``.``); ``call(name, arguments)``
runs one and always returns a JSON-able dict: invalid arguments, unknown
tools and failures come back as ``{"error": "..."}`` so the agent can recover.
Tools read only the loaded data; nothing the model sends reaches the file system.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, time, timedelta
from functools import lru_cache
from typing import Any

import msgspec
import orjson

from ...records import FunctionSchema, ToolSchema
from .._data import ScenarioData, parse_timestamp
from . import _params as p
from ._calendar import attendee_emails, busy_intervals, common_free_slots, event_interval
from ._dates import DateError, resolve_date, resolve_range
from ._jql import JqlError, parse_jql
from ..._text import rank, words

__all__ = ["TOOL_NAMES", "ToolBackend", "api_name", "tool_name"]

TOOL_NAMES = (
    "Slack.search_messages",
    "GoogleContacts.SearchContactsByName",
    "GoogleCalendar.FindTimeSlotsWhenEveryoneIsFree",
    "GoogleCalendar.ListEvents",
    "Gmail.SearchThreads",
    "Gmail.GetThread",
    "GoogleDrive.gdrive_search",
    "GoogleDrive.gdrive_read_file",
    "Jira.SearchIssuesWithJql",
)
_ARGS: dict[str, type[msgspec.Struct]] = dict(zip(TOOL_NAMES, (
    p.SearchMessages, p.SearchContacts, p.FindFreeSlots, p.ListEvents, p.SearchThreads, p.GetThread,
    p.SearchFiles, p.ReadFile, p.JiraSearch)))
SNIPPET = 240


def api_name(name: str) -> str:
    """``Slack.search_messages`` → ``Slack_search_messages`` (function names may not contain dots)."""
    return name.replace(".", "_")


def tool_name(name: str) -> str:
    """The dotted tool name for an API name (either form accepted)."""
    for known in TOOL_NAMES:
        if name in (known, api_name(known)):
            return known
    return name


def _schema(args_type: type[msgspec.Struct]) -> dict[str, Any]:
    schema = msgspec.json.schema(args_type)
    body = dict(schema["$defs"][args_type.__name__])
    body.pop("title", None)
    body.pop("description", None)
    return body


@lru_cache(maxsize=1)
def _tool_schemas() -> tuple[ToolSchema, ...]:
    return tuple(ToolSchema(function=FunctionSchema(name=api_name(name), description=(_ARGS[name].__doc__ or "").strip(),
                                                    parameters=_schema(_ARGS[name])))
                 for name in TOOL_NAMES)


def _clock(text: str | None, default: time) -> time:
    if text is None:
        return default
    try:
        return time.fromisoformat(text)
    except ValueError:
        raise DateError(f"cannot read the time {text!r}; use HH:MM") from None


def _matches_person(value: str, needle: str) -> bool:
    """Whole-word match of a name or e-mail: 'Dan' finds Dan Ray, not Jordan; an address must match fully."""
    wanted = words(needle)
    return bool(wanted) and set(wanted) <= set(words(value))


class ToolBackend:
    """The nine tools over one ``ScenarioData``."""

    def __init__(self, data: ScenarioData) -> None:
        self.data = data
        self.tz = data.tz
        self.now = data.reference_now
        slack = data.source("slack")
        self._users = {str(u.get("id")): u for u in slack.get("users") or () if isinstance(u, dict)}
        self._channels = {str(c.get("id")): c for c in slack.get("channels") or () if isinstance(c, dict)}
        self._handlers: dict[str, Callable[[Any], dict[str, Any]]] = dict(zip(TOOL_NAMES, (
            self.search_messages, self.search_contacts, self.find_free_slots, self.list_events,
            self.search_threads, self.get_thread, self.drive_search, self.drive_read, self.jira_search)))

    # -- the model's view ----------------------------------------------------
    def schemas(self) -> tuple[ToolSchema, ...]:
        """The nine tools as the model sees them (built once per process: they never change)."""
        return _tool_schemas()

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> dict[str, Any]:
        """Run one tool; every failure is returned as ``{"error": ...}``, never raised."""
        dotted = tool_name(name)
        handler = self._handlers.get(dotted)
        if handler is None:
            return {"error": f"unknown tool {name!r}; available tools: {', '.join(api_name(t) for t in TOOL_NAMES)}"}
        try:
            raw = arguments if isinstance(arguments, dict) else orjson.loads(arguments or "{}")
            if not isinstance(raw, dict):
                raise TypeError(f"arguments must be a JSON object, got {type(raw).__name__}")
            args = msgspec.convert(raw, _ARGS[dotted])
        except (orjson.JSONDecodeError, TypeError) as exc:
            return {"error": f"invalid arguments for {dotted}: not a JSON object ({exc})"}
        except msgspec.ValidationError as exc:
            return {"error": f"invalid arguments for {dotted}: {exc}"}
        try:
            return handler(args)
        except (DateError, JqlError) as exc:
            return {"error": f"{dotted}: {exc}"}
        except Exception as exc:  # a tool bug must not end the agent's run; the model sees what happened
            return {"error": f"{dotted} failed: {type(exc).__name__}: {exc}"}

    # -- helpers ---------------------------------------------------------------
    def _local(self, stamp: Any) -> str | None:
        parsed = parse_timestamp(stamp, self.tz)
        return parsed.astimezone(self.tz).isoformat() if parsed else (stamp if isinstance(stamp, str) else None)

    def _instant(self, stamp: Any) -> float:
        """A sortable instant for recency ties (offsets differ between records)."""
        parsed = parse_timestamp(stamp, self.tz)
        return parsed.timestamp() if parsed else float("-inf")

    def _user(self, user_id: Any) -> dict[str, Any]:
        return self._users.get(str(user_id)) or {}

    # -- Slack -------------------------------------------------------------------
    def search_messages(self, args: p.SearchMessages) -> dict[str, Any]:
        messages = [m for m in self.data.source("slack").get("messages") or () if isinstance(m, dict)]
        if args.channel:
            wanted = args.channel.lstrip("#").lower()
            messages = [m for m in messages if wanted in (
                str(self._channels.get(str(m.get("channel_id")), {}).get("name", "")).lower(),
                str(m.get("channel_id", "")).lower())]
        if args.user:
            messages = [m for m in messages if _matches_person(
                f"{self._user(m.get('user_id')).get('name', '')} {self._user(m.get('user_id')).get('email', '')} "
                f"{m.get('user_id', '')}", args.user)]

        def fields(m: dict[str, Any]) -> list[tuple[str, float]]:
            return [(str(m.get("text", "")), 3.0), (str(self._user(m.get("user_id")).get("name", "")), 1.0),
                    (str(self._channels.get(str(m.get("channel_id")), {}).get("name", "")), 1.0)]

        ranked = rank(messages, args.query, fields, recency=lambda m: self._instant(m.get("timestamp")))
        out = []
        for _, m in ranked[:args.limit]:
            user = self._user(m.get("user_id"))
            item = {"id": m.get("id"), "channel": self._channels.get(str(m.get("channel_id")), {}).get(
                        "name", m.get("channel_id")),
                    "author": user.get("name", m.get("user_id")), "author_email": user.get("email"),
                    "timestamp": self._local(m.get("timestamp")), "text": m.get("text")}
            if m.get("thread_ts"):
                item["thread_ts"] = self._local(m.get("thread_ts"))
            out.append(item)
        return {"messages": out, "total_matches": len(ranked)}

    # -- Contacts ----------------------------------------------------------------
    def search_contacts(self, args: p.SearchContacts) -> dict[str, Any]:
        contacts = [c for c in self.data.source("contacts").get("contacts") or () if isinstance(c, dict)]
        ranked = rank(contacts, args.name, lambda c: [(str(c.get("name", "")), 3.0), (str(c.get("email", "")), 2.0),
                                                      (str(c.get("organization", "")), 0.5)])
        keys = ("name", "email", "organization", "title", "phone")
        return {"contacts": [{k: c[k] for k in keys if c.get(k)} for _, c in ranked[:args.limit]]}

    # -- Calendar ----------------------------------------------------------------
    def find_free_slots(self, args: p.FindFreeSlots) -> dict[str, Any]:
        first, last = resolve_range(args.start_date, args.end_date, self.now)
        start_clock = _clock(args.workday_start, self.data.workday_start)
        end_clock = _clock(args.workday_end, self.data.workday_end)
        if end_clock <= start_clock:
            raise DateError(f"workday_end {end_clock:%H:%M} must be after workday_start {start_clock:%H:%M}")
        calendar = self.data.source("calendar")
        known = {str(c.get("email", "")).lower() for c in calendar.get("calendars") or () if isinstance(c, dict)}
        known |= {str(c.get("email", "")).lower() for c in self.data.source("contacts").get("contacts") or ()
                  if isinstance(c, dict)}
        emails = [e.strip().lower() for e in args.email_addresses]
        busy = busy_intervals(calendar, emails, self.tz)
        slots = common_free_slots(busy, first, last, self.tz, start_clock, end_clock,
                                  min_minutes=max(args.min_duration_minutes, args.slot_minutes or 0),
                                  include_weekends=args.include_weekends)
        # Time before the reference now is gone: slots start at the next quarter hour at the earliest.
        earliest = self.now.replace(second=0, microsecond=0) + timedelta(minutes=-self.now.minute % 15)
        minimum = timedelta(minutes=max(args.min_duration_minutes, args.slot_minutes or 0))
        slots = [(max(s, earliest), e) for s, e in slots if e - max(s, earliest) >= minimum]
        if args.slot_minutes:
            length = timedelta(minutes=args.slot_minutes)
            pieces = []
            for start, end in slots:
                while start + length <= end:
                    pieces.append((start, start + length))
                    start += length
            slots = pieces
        result: dict[str, Any] = {
            "timezone": self.data.timezone_name,
            "date_range": {"start": first.isoformat(), "end": last.isoformat()},
            "working_hours": f"{start_clock:%H:%M}-{end_clock:%H:%M}",
            "weekends_included": args.include_weekends,
            "slots": [{"start": s.astimezone(self.tz).isoformat(), "end": e.astimezone(self.tz).isoformat(),
                       "duration_minutes": int((e - s).total_seconds() // 60)} for s, e in slots],
        }
        unknown = [e for e in emails if e not in known]
        if unknown:
            result["unknown_emails"] = unknown
        return result

    def list_events(self, args: p.ListEvents) -> dict[str, Any]:
        first, last = resolve_range(args.start_date, args.end_date, self.now)
        lo = datetime.combine(first, time(0), tzinfo=self.tz)
        hi = datetime.combine(last + timedelta(days=1), time(0), tzinfo=self.tz)
        calendar = self.data.source("calendar")
        owners = {str(c.get("id")): str(c.get("email", "")).lower()
                  for c in calendar.get("calendars") or () if isinstance(c, dict)}
        wanted = args.attendee_email.lower() if args.attendee_email else None
        out = []
        for event in calendar.get("events") or ():
            if not isinstance(event, dict) or str(event.get("status", "")).lower() == "cancelled":
                continue
            interval = event_interval(event, self.tz)
            if interval is None or interval[1] <= lo or interval[0] >= hi:
                continue
            if wanted and wanted not in attendee_emails(event) | {owners.get(str(event.get("calendar_id")), "")}:
                continue
            if args.query and not rank([event], args.query, lambda e: [(str(e.get("title", "")), 1.0),
                                                                       (str(e.get("description", "")), 1.0)]):
                continue
            out.append((interval[0], {
                "id": event.get("id"), "title": event.get("title"),
                "start": interval[0].astimezone(self.tz).isoformat(), "end": interval[1].astimezone(self.tz).isoformat(),
                "attendees": [a.get("email") if isinstance(a, dict) else a for a in event.get("attendees") or ()],
                **({"description": event["description"]} if event.get("description") else {}),
            }))
        out.sort(key=lambda item: item[0])
        return {"timezone": self.data.timezone_name, "events": [e for _, e in out[:args.limit]],
                "total": len(out)}

    # -- Gmail -------------------------------------------------------------------
    def _threads(self) -> list[dict[str, Any]]:
        return [t for t in self.data.source("gmail").get("threads") or () if isinstance(t, dict)]

    def search_threads(self, args: p.SearchThreads) -> dict[str, Any]:
        threads = self._threads()
        after = resolve_date(args.after, self.now) if args.after else None
        before = resolve_date(args.before, self.now) if args.before else None

        def keep(thread: dict[str, Any]) -> bool:
            messages = [m for m in thread.get("messages") or () if isinstance(m, dict)]
            if args.sender and not any(_matches_person(str(m.get("from", "")), args.sender) for m in messages):
                return False
            if args.recipient and not any(_matches_person(" ".join(map(str, (m.get("to") or []) + (m.get("cc") or []))),
                                                          args.recipient) for m in messages):
                return False
            days = [d.astimezone(self.tz).date() for m in messages if (d := parse_timestamp(m.get("date"), self.tz))]
            if after and not any(d >= after for d in days):
                return False
            return not (before and not any(d <= before for d in days))

        def fields(thread: dict[str, Any]) -> list[tuple[str, float]]:
            bodies = " ".join(str(m.get("body", "")) for m in thread.get("messages") or () if isinstance(m, dict))
            return [(str(thread.get("subject", "")), 3.0), (bodies, 1.0)]

        def latest(thread: dict[str, Any]) -> str:
            stamps = [parse_timestamp(m.get("date"), self.tz) for m in thread.get("messages") or () if isinstance(m, dict)]
            stamps = [s for s in stamps if s]
            return max(stamps).astimezone(self.tz).isoformat() if stamps else ""

        ranked = rank([t for t in threads if keep(t)], args.query or "", fields, recency=latest)
        out = []
        for _, thread in ranked[:args.max_results]:
            messages = [m for m in thread.get("messages") or () if isinstance(m, dict)]
            last_body = str(messages[-1].get("body", "")) if messages else ""
            out.append({"id": thread.get("id"), "subject": thread.get("subject"),
                        "participants": sorted({str(m.get("from")) for m in messages if m.get("from")}),
                        "message_count": len(messages), "last_date": latest(thread),
                        "snippet": last_body[:SNIPPET]})
        return {"threads": out, "total_matches": len(ranked)}

    def get_thread(self, args: p.GetThread) -> dict[str, Any]:
        for thread in self._threads():
            if str(thread.get("id")) == args.thread_id:
                messages = [{"from": m.get("from"), "to": m.get("to"), "cc": m.get("cc") or [],
                             "date": self._local(m.get("date")), "subject": m.get("subject"), "body": m.get("body")}
                            for m in thread.get("messages") or () if isinstance(m, dict)]
                return {"id": thread.get("id"), "subject": thread.get("subject"), "messages": messages}
        return {"error": f"no thread with id {args.thread_id!r}; use Gmail_SearchThreads to find thread ids"}

    # -- Drive -------------------------------------------------------------------
    def _files(self) -> list[dict[str, Any]]:
        return [f for f in self.data.source("drive").get("files") or () if isinstance(f, dict)]

    def drive_search(self, args: p.SearchFiles) -> dict[str, Any]:
        ranked = rank(self._files(), args.query,
                      lambda f: [(str(f.get("name", "")), 3.0), (str(f.get("content", "")), 1.0)],
                      recency=lambda f: self._instant(f.get("modifiedTime")))
        return {"files": [{"id": f.get("id"), "name": f.get("name"), "mimeType": f.get("mimeType"),
                           "modifiedTime": self._local(f.get("modifiedTime")),
                           "snippet": str(f.get("content", ""))[:SNIPPET]} for _, f in ranked[:args.limit]],
                "total_matches": len(ranked)}

    def drive_read(self, args: p.ReadFile) -> dict[str, Any]:
        files = self._files()
        found = next((f for f in files if str(f.get("id")) == args.file_id), None)
        found = found or next((f for f in files if str(f.get("name", "")).lower() == args.file_id.lower()), None)
        if found is None:
            return {"error": f"no file with id or name {args.file_id!r}; use GoogleDrive_gdrive_search to find files"}
        return {"id": found.get("id"), "name": found.get("name"), "mimeType": found.get("mimeType"),
                "modifiedTime": self._local(found.get("modifiedTime")), "content": found.get("content", "")}

    # -- Jira --------------------------------------------------------------------
    def jira_search(self, args: p.JiraSearch) -> dict[str, Any]:
        query = parse_jql(args.jql, now=self.now, tz=self.tz)
        issues = query.run([i for i in self.data.source("jira").get("issues") or () if isinstance(i, dict)], self.tz)
        keys = ("key", "summary", "status", "assignee", "reporter", "priority", "fixVersions", "description",
                "comments")
        out = []
        for issue in issues[:args.max_results]:
            item = {k: issue[k] for k in keys if issue.get(k) not in (None, "", [])}
            project = issue.get("project")
            item["project"] = project.get("key") if isinstance(project, dict) else project
            for stamp in ("created", "updated"):
                if issue.get(stamp):
                    item[stamp] = self._local(issue[stamp])
            out.append(item)
        result: dict[str, Any] = {"issues": out, "total": len(issues)}
        if query.unsupported:
            result["unsupported_clauses"] = query.unsupported
            result["note"] = "these clauses are outside the supported JQL subset and were NOT applied"
        return result
