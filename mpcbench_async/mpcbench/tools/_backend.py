"""The tool backend: nine workplace tools over one scenario's in-memory data.

``ToolBackend(data).schemas()`` gives the tools as the model sees them (API
names use ``_`` where the tool names have ``.``); ``call(name, arguments)``
runs one and always returns a JSON-able dict: invalid arguments, unknown
tools and failures come back as ``{"error": "..."}`` so the agent can recover.
Tools read only the loaded data; nothing the model sends reaches the file system.
Every loop whose length the arguments control (date ranges, slots, people,
records × query words, JQL clauses × issues) stops at a ``checkpoint()`` per
step when the call's time limit passes (``tools._execution``).
A call has no effect but its result (what it derives from the data is kept on
the data only once whole, ``ScenarioData.derived``, and equal on every build),
so a call stopped part-way can be run again from its start: that is what lets
``run_tool`` try it on the event loop first (``checkpointed``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

import msgspec
import orjson

from ..._checkpoint import checkpoint
from ..._text import rank, words
from ...records import FunctionSchema, ToolSchema
from .._availability import title_of
from .._data import GMAIL_TIME_KEYS, SLACK_TIME_KEYS, ScenarioData, first_of, parse_timestamp
from . import _params as p
from ._calendar import Block, Interval, common_free_slots, intersect, merge, scenario_blocks
from ._dates import DateError, local_datetime, resolve_date, resolve_range
from ._jql import JqlError, parse_jql

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
    p.SearchFiles, p.ReadFile, p.JiraSearch), strict=True))
SNIPPET = 240
USER_KEYS = ("user_id", "user")
# A Slack message, its ranked fields, its instant and the channel names it is found by (``_slack_rows``).
_SlackRow = tuple[dict[str, Any], list[tuple[str, float]], float, set[str]]
# A record with its ranked fields and its recency (``rank`` reads them with C getters: no Python call per record).
_Row = tuple[dict[str, Any], list[tuple[str, float]], float | str]
FIELDS, RECENCY = itemgetter(1), itemgetter(2)


class _ThreadRow(NamedTuple):
    """A Gmail thread with what every search reads of it (``ToolBackend._thread_rows``)."""

    thread: dict[str, Any]
    fields: list[tuple[str, float]]
    instant: float
    messages: list[dict[str, Any]]
    days: list[date]
    latest: datetime | None


def api_name(name: str) -> str:
    """``Slack.search_messages`` → ``Slack_search_messages`` (function names may not contain dots)."""
    return name.replace(".", "_")


_DOTTED = {form: known for known in TOOL_NAMES for form in (known, api_name(known))}


def tool_name(name: str) -> str:
    """The dotted tool name for an API name (either form accepted)."""
    return _DOTTED.get(name, name)


def _schema(args_type: type[msgspec.Struct]) -> dict[str, Any]:
    schema = msgspec.json.schema(args_type)
    body = dict(schema["$defs"][args_type.__name__])
    body.pop("title", None)
    body.pop("description", None)
    return body


@lru_cache(maxsize=1)
def _tool_schemas() -> tuple[ToolSchema, ...]:
    return tuple(ToolSchema(function=FunctionSchema(name=api_name(name), parameters=_schema(_ARGS[name]),
                                                    description=(_ARGS[name].__doc__ or "").strip()))
                 for name in TOOL_NAMES)


def _clock(text: str | None, default: time) -> time:
    if text is None:
        return default
    try:
        return time.fromisoformat(text)
    except ValueError:
        raise DateError(f"cannot read the time {text!r}; use HH:MM") from None


def _bare(channel: Any) -> str:
    """A channel name without its leading ``#``."""
    return str(channel).strip().lstrip("#").strip()


def _matches_person(value: str, needle: str) -> bool:
    """Whole-word match of a name or e-mail: 'Dan' finds Dan Ray, not Jordan; an address must match fully."""
    checkpoint()
    wanted = words(needle)
    return bool(wanted) and set(wanted) <= set(words(value))


def _slack_tables(data: ScenarioData) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Slack's users by id and channel names (without ``#``) by id: read once per data, not once per run."""
    slack = data.source("slack")
    users = {str(u.get("id")): u for u in slack.get("users") or () if isinstance(u, dict)}
    channel_names = {str(c.get("id")): _bare(c["name"]) for c in slack.get("channels") or ()
                     if isinstance(c, dict) and c.get("name")}
    return users, channel_names


class ToolBackend:
    """The nine tools over one ``ScenarioData``."""

    def __init__(self, data: ScenarioData) -> None:
        self.data = data
        self.tz = data.tz
        self.now = data.reference_now
        self._users, self._channel_names = data.derived("slack_tables", lambda: _slack_tables(data))
        self._handlers: dict[str, Callable[[Any], dict[str, Any]]] = dict(zip(TOOL_NAMES, (
            self.search_messages, self.search_contacts, self.find_free_slots, self.list_events,
            self.search_threads, self.get_thread, self.drive_search, self.drive_read, self.jira_search),
            strict=True))
        self.checkpointed = type(self) is ToolBackend and _as_shipped()
        """Whether every call is this module's own code, which reaches a checkpoint in each loop its arguments can
        make long and has no effect but its result: such calls may run on the event loop under a budget
        (``tools._execution.run_tool``). False for a subclass, and when any method of the class was replaced (a
        test's blocking tool, a user's own): code not known to checkpoint runs in a thread, always."""

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
    def _when(self, stamp: Any) -> datetime | None:
        return stamp if isinstance(stamp, datetime) else parse_timestamp(stamp, self.tz)

    def _local(self, stamp: Any) -> str | None:
        """A stamp in any form as ISO 8601 in the scenario's zone; an unreadable one as written."""
        parsed = stamp if isinstance(stamp, datetime) else parse_timestamp(stamp, self.tz)  # _when, inline: per stamp
        return parsed.astimezone(self.tz).isoformat() if parsed else (stamp if isinstance(stamp, str) else None)

    def _instant(self, stamp: Any) -> float:
        """A sortable instant for recency ties (offsets and stamp forms differ between records)."""
        parsed = self._when(stamp)
        return parsed.timestamp() if parsed else float("-inf")

    def _author(self, message: dict[str, Any]) -> dict[str, Any]:
        return self._users.get(str(first_of(message, USER_KEYS))) or {}

    # -- Slack -------------------------------------------------------------------
    def _channel(self, message: dict[str, Any]) -> tuple[str, set[str]]:
        """The label printed for a message's channel, and every name the channel filter may use for it.

        The label is the channel's name without ``#`` (data stores ``#general`` or ``general``), or the
        channel id as written when the channel list does not name it; passed back as ``channel`` it always
        finds the message.
        """
        raw = str(first_of(message, ("channel_id", "channel")) or "")
        label = self._channel_names.get(raw) or _bare(raw)
        return label, {label.lower(), raw.lower(), _bare(raw).lower()}

    def _messages(self) -> list[dict[str, Any]]:
        """Slack's messages (the objects among them), listed once per data; callers filter into lists of their own."""
        return self.data.derived("slack_messages", lambda: [m for m in self.data.source("slack").get("messages") or ()
                                                             if isinstance(m, dict)])

    def _slack_rows(self) -> list[_SlackRow]:
        """Each Slack message with what every search reads of it, once per data: its ranked fields (text, author,
        channel), its instant (ties go to the newest), and the names the channel filter knows it by."""
        def build() -> list[_SlackRow]:
            rows = []
            for m in self._messages():
                label, names = self._channel(m)
                fields = [(str(m.get("text", "")), 3.0), (str(self._author(m).get("name", "")), 1.0), (label, 1.0)]
                rows.append((m, fields, self._instant(first_of(m, SLACK_TIME_KEYS)), names))
            return rows

        return self.data.derived("slack_rows", build)

    def _thread_roots(self, messages: list[dict[str, Any]]) -> dict[tuple[str, int], str | None]:
        """Printed stamps of messages by (channel, whole second): replies find their root in whatever form
        either stamp is written (epoch, ISO with any offset, naive local)."""
        roots: dict[tuple[str, int], str | None] = {}
        for m in messages:
            stamp = parse_timestamp(first_of(m, SLACK_TIME_KEYS), self.tz)
            if stamp is not None:
                roots.setdefault((self._channel(m)[0], math.floor(stamp.timestamp())), self._local(stamp))
        return roots

    def _root_stamp(self, thread_ts: Any, channel: str, roots: dict[tuple[str, int], str | None]) -> str | None:
        """A reply's thread stamp printed exactly as its root's timestamp is (as written when unreadable)."""
        stamp = parse_timestamp(thread_ts, self.tz)
        if stamp is None:
            return self._local(thread_ts)
        return roots.get((channel, math.floor(stamp.timestamp()))) or self._local(stamp)

    def _channel_keys(self, messages: list[dict[str, Any]]) -> set[str]:
        """Every name the channel filter knows: the channel list's ids and names, and those messages use."""
        keys = {k.lower() for pair in self._channel_names.items() for k in pair}
        return keys.union(*(self._channel(m)[1] for m in messages))

    def search_messages(self, args: p.SearchMessages) -> dict[str, Any]:
        all_messages = self._messages()
        rows = self._slack_rows()
        if args.channel:
            wanted = _bare(args.channel).lower()
            rows = [row for row in rows if wanted in row[3]]
        if args.user:
            rows = [row for row in rows if _matches_person(
                f"{self._author(row[0]).get('name', '')} {self._author(row[0]).get('email', '')} "
                f"{first_of(row[0], USER_KEYS) or ''}", args.user)]
        ranked = rank(rows, args.query, FIELDS, recency=RECENCY)
        roots = self.data.derived("slack_thread_roots", lambda: self._thread_roots(all_messages))
        out = []
        for _, (m, *_) in ranked[:args.limit]:
            user = self._author(m)
            channel = self._channel(m)[0]
            item = {"id": m.get("id"), "channel": channel, "author": user.get("name", first_of(m, USER_KEYS)),
                    "author_email": user.get("email"), "timestamp": self._local(first_of(m, SLACK_TIME_KEYS)),
                    "text": m.get("text")}
            if m.get("thread_ts"):
                item["thread_ts"] = self._root_stamp(m["thread_ts"], channel, roots)
            out.append(item)
        result: dict[str, Any] = {"messages": out, "total_matches": len(ranked)}
        if args.channel and _bare(args.channel).lower() not in self._channel_keys(all_messages):
            labels = sorted({self._channel(m)[0] for m in all_messages} | set(self._channel_names.values()))
            result["note"] = f"no channel matches {args.channel!r}; channels: {', '.join(labels)}"
        return result

    # -- Contacts ----------------------------------------------------------------
    def _contact_rows(self) -> list[_Row]:
        """Each contact with its ranked fields, once per data (no recency: ties keep the listed order)."""
        return self.data.derived("contact_rows", lambda: [
            (c, [(str(c.get("name", "")), 3.0), (str(c.get("email", "")), 2.0), (str(c.get("organization", "")), 0.5)],
             "") for c in self.data.source("contacts").get("contacts") or () if isinstance(c, dict)])

    def search_contacts(self, args: p.SearchContacts) -> dict[str, Any]:
        ranked = rank(self._contact_rows(), args.name, FIELDS, recency=RECENCY)
        keys = ("name", "email", "organization", "title", "phone")
        return {"contacts": [{k: c[k] for k in keys if c.get(k)} for _, (c, *_) in ranked[:args.limit]]}

    # -- Calendar ----------------------------------------------------------------
    def _slot_list(self, free: list[Interval], args: p.FindFreeSlots) -> list[dict[str, Any]]:
        """Free intervals as the model sees them: none before the reference now, each long enough, optionally
        cut into meeting-length slots."""
        # Time before the reference now is gone: slots start at the next quarter hour at the earliest.
        earliest = self.now.replace(second=0, microsecond=0) + timedelta(minutes=-self.now.minute % 15)
        minimum = timedelta(minutes=max(args.min_duration_minutes, args.slot_minutes or 0))
        slots = [(max(s, earliest), e) for s, e in free if e - max(s, earliest) >= minimum]
        if args.slot_minutes:
            length = timedelta(minutes=args.slot_minutes)
            pieces = []
            for start, end in slots:
                while start + length <= end:
                    checkpoint()
                    pieces.append((start, start + length))
                    start += length
            slots = pieces
        listed = []
        for s, e in slots:
            checkpoint()
            listed.append({"start": s.astimezone(self.tz).isoformat(), "end": e.astimezone(self.tz).isoformat(),
                           "duration_minutes": int((e - s).total_seconds() // 60)})
        return listed

    def _row_view(self, block: Block, who: set[str]) -> dict[str, Any]:
        """A stated-availability or unclear row as the free-slot tool lists it."""
        view = {"who": sorted(block.people & who), "start": self._local(block.interval[0]),
                "end": self._local(block.interval[1]), "title": title_of(block.row.record) or None}
        if block.row.reading.kind == "unclear":
            view["why"] = f"{block.row.reading.why}; counted as busy"
        return view

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
        wanted = set(emails)
        blocks = [b for b in scenario_blocks(self.data) if b.people & wanted]
        free = common_free_slots([b.interval for b in blocks if b.row.reading.kind != "available"], first, last,
                                 self.tz, start_clock, end_clock,
                                 min_minutes=max(args.min_duration_minutes, args.slot_minutes or 0),
                                 include_weekends=args.include_weekends)
        result: dict[str, Any] = {
            "timezone": self.data.timezone_name,
            "date_range": {"start": first.isoformat(), "end": last.isoformat()},
            "working_hours": f"{start_clock:%H:%M}-{end_clock:%H:%M}",
            "weekends_included": args.include_weekends,
            "slots": self._slot_list(free, args),
        }
        lo, hi = local_datetime(first, time(0), self.tz), local_datetime(last + timedelta(days=1), time(0), self.tz)
        shown = [b for b in blocks if b.row.reading.kind != "busy" and b.interval[1] > lo and b.interval[0] < hi]
        stated = [b for b in shown if b.row.reading.kind == "available"]
        if stated:
            result["stated_availability"] = [self._row_view(b, wanted) for b in stated]
            for email in emails:  # the same free time, kept to the windows each person states
                checkpoint()
                windows = merge(b.interval for b in stated if email in b.people)
                free = intersect(free, windows) if windows else free
            result["slots_within_stated_availability"] = self._slot_list(free, args)
        if unclear := [b for b in shown if b.row.reading.kind == "unclear"]:
            result["unclear_rows"] = [self._row_view(b, wanted) for b in unclear]
        unknown = [e for e in emails if e not in known]
        if unknown:
            result["unknown_emails"] = unknown
        return result

    def list_events(self, args: p.ListEvents) -> dict[str, Any]:
        first, last = resolve_range(args.start_date, args.end_date, self.now)
        lo = local_datetime(first, time(0), self.tz)
        hi = local_datetime(last + timedelta(days=1), time(0), self.tz)
        wanted = args.attendee_email.lower() if args.attendee_email else None
        out = []
        for block in scenario_blocks(self.data):
            checkpoint()
            row, (start, end) = block.row, block.interval
            if row.owner and row.reading.kind != "available":
                continue  # busy free/busy slots repeat the events; stated availability exists only there
            if end <= lo or start >= hi or (wanted and wanted not in block.people):
                continue
            if args.query and not rank([row.record], args.query, lambda e: [(title_of(e), 1.0),
                                                                            (str(e.get("description", "")), 1.0)]):
                continue
            record = row.record
            attendees = [a.get("email") if isinstance(a, dict) else a for a in record.get("attendees") or ()]
            item = {"id": record.get("id"), "title": title_of(record) or ("Available" if row.owner else None),
                    "start": self._local(start), "end": self._local(end),
                    "attendees": [row.owner] if row.owner else attendees}
            if record.get("description"):
                item["description"] = record["description"]
            if row.reading.kind == "available":
                item["availability"] = True
            elif row.reading.kind == "unclear":
                item["availability_unclear"] = f"{row.reading.why}; counted as busy"
            out.append((start, item))
        out.sort(key=lambda pair: pair[0])
        return {"timezone": self.data.timezone_name, "events": [e for _, e in out[:args.limit]],
                "total": len(out)}

    # -- Gmail -------------------------------------------------------------------
    def _threads(self) -> list[dict[str, Any]]:
        return [t for t in self.data.source("gmail").get("threads") or () if isinstance(t, dict)]

    def _dates(self, messages: Any) -> list[datetime]:
        """The readable dates of a thread's messages, whatever form each is written in."""
        stamps = (parse_timestamp(first_of(m, GMAIL_TIME_KEYS), self.tz) for m in messages if isinstance(m, dict))
        return [s for s in stamps if s is not None]

    def _thread_rows(self) -> list[_ThreadRow]:
        """Each Gmail thread with its messages, ranked fields (subject, bodies), message days in the scenario's
        zone and latest date, read once per data: a search filters and ranks these."""
        def row(thread: dict[str, Any]) -> _ThreadRow:
            messages = [m for m in thread.get("messages") or () if isinstance(m, dict)]
            bodies = " ".join(str(m.get("body", "")) for m in messages)
            dates = self._dates(messages)
            latest = max(dates, default=None)
            return _ThreadRow(thread, [(str(thread.get("subject", "")), 3.0), (bodies, 1.0)], self._instant(latest),
                              messages, [d.astimezone(self.tz).date() for d in dates], latest)

        return self.data.derived("gmail_rows", lambda: [row(t) for t in self._threads()])

    def search_threads(self, args: p.SearchThreads) -> dict[str, Any]:
        after = resolve_date(args.after, self.now) if args.after else None
        before = resolve_date(args.before, self.now) if args.before else None

        def keep(row: _ThreadRow) -> bool:
            checkpoint()
            messages = row.messages
            if args.sender and not any(_matches_person(str(m.get("from", "")), args.sender) for m in messages):
                return False
            if args.recipient and not any(_matches_person(" ".join(map(str, (m.get("to") or []) + (m.get("cc") or []))),
                                                          args.recipient) for m in messages):
                return False
            days = row.days
            if after and not any(d >= after for d in days):
                return False
            return not (before and not any(d <= before for d in days))

        ranked = rank([row for row in self._thread_rows() if keep(row)], args.query or "", attrgetter("fields"),
                      recency=attrgetter("instant"))
        out = []
        for _, row in ranked[:args.max_results]:
            thread, messages = row.thread, row.messages
            last_body = str(messages[-1].get("body", "")) if messages else ""
            out.append({"id": thread.get("id"), "subject": thread.get("subject"),
                        "participants": sorted({str(m.get("from")) for m in messages if m.get("from")}),
                        "message_count": len(messages), "last_date": self._local(row.latest) or "",
                        "snippet": last_body[:SNIPPET]})
        return {"threads": out, "total_matches": len(ranked)}

    def get_thread(self, args: p.GetThread) -> dict[str, Any]:
        for thread in self._threads():
            if str(thread.get("id")) == args.thread_id:
                messages = [{"from": m.get("from"), "to": m.get("to"), "cc": m.get("cc") or [],
                             "date": self._local(first_of(m, GMAIL_TIME_KEYS)), "subject": m.get("subject"),
                             "body": m.get("body")}
                            for m in thread.get("messages") or () if isinstance(m, dict)]
                return {"id": thread.get("id"), "subject": thread.get("subject"), "messages": messages}
        return {"error": f"no thread with id {args.thread_id!r}; use Gmail_SearchThreads to find thread ids"}

    # -- Drive -------------------------------------------------------------------
    def _files(self) -> list[dict[str, Any]]:
        return [f for f in self.data.source("drive").get("files") or () if isinstance(f, dict)]

    def drive_search(self, args: p.SearchFiles) -> dict[str, Any]:
        rows = self.data.derived("drive_rows", lambda: [
            (f, [(str(f.get("name", "")), 3.0), (str(f.get("content", "")), 1.0)], self._instant(f.get("modifiedTime")))
            for f in self._files()])
        ranked = rank(rows, args.query, FIELDS, recency=RECENCY)
        return {"files": [{"id": f.get("id"), "name": f.get("name"), "mimeType": f.get("mimeType"),
                           "modifiedTime": self._local(f.get("modifiedTime")),
                           "snippet": str(f.get("content", ""))[:SNIPPET]} for _, (f, *_) in ranked[:args.limit]],
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
        jira = self.data.source("jira")
        query = parse_jql(args.jql, now=self.now, tz=self.tz, projects=jira.get("projects") or ())
        issues = query.run([i for i in jira.get("issues") or () if isinstance(i, dict)], self.tz)
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


_SHIPPED = dict(vars(ToolBackend))
"""The class's own attributes as this module defines them (``checkpointed`` compares them)."""


def _as_shipped() -> bool:
    """Whether no attribute of ``ToolBackend`` was replaced, added or removed since import.

    One comparison of the two mappings, made in C (a generator over the ~60 attributes cost ~33 Python calls a run,
    issue 31): each value compares by identity first, and the class's values (functions, descriptors, strings)
    are equal only when identical or, for a string, of the same text, which replaces nothing."""
    return vars(ToolBackend) == _SHIPPED
