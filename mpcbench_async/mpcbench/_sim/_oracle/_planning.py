"""The oracle agent's planning task: find the meeting request, its people, length and time frame; propose slots.

Look up the people the request names in Contacts; find the meeting request in Slack and in Gmail
(by meeting words, preferring the requester's own message) and read its whole thread; take the
duration, the time frame and — when the user did not list them — the attendees from that thread
(e-mail recipients, names and first names resolved through Contacts); ask the calendar for common
free time and propose up to three options.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

from ....sim import Reply
from .._judge_text import durations, period
from ._people import NOT_NAMES, known_contacts, name_candidates, resolve
from ._state import EMAIL, STOP, State, final, tool_call, words

__all__ = ["plan_meeting"]

_MEETING = re.compile(r"\b(meet|meeting|sync|syncing|session|call|chat|catch[- ]up|get together|discussion|"
                      r"discuss|review|rehearsal|workshop|planning|1:1)\b", re.I)
_WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_DAY_RANGE = re.compile(r"\b(mon|tue|wed|thu|fri)[a-z]*\.?\s*(?:–|—|-|to|through|thru)\s*(mon|tue|wed|thu|fri)[a-z]*\b",
                        re.I)
_OPTIONAL = re.compile(r"\b(optional|fyi|cc)\b", re.I)


class _Request:
    """The meeting request as found: its thread's texts (request first), author, recipients and members."""

    def __init__(self, texts: list[str], author: str, author_email: str, recipients: list[str], members: set[str],
                 where: str, stamp: str) -> None:
        self.texts = texts
        self.author = author
        self.author_email = author_email.lower()
        self.recipients = recipients
        self.members = members | {self.author_email, *recipients}
        self.where = where
        self.stamp = stamp

    def score(self, requester: str, topic: set[str]) -> int:
        """How much this looks like the request: meeting words, a duration, a time frame, the asker, the topic."""
        root = self.texts[0] if self.texts else ""
        points = min(2, len(_MEETING.findall(root))) + 2 * bool(_duration([root])) + 2 * (period(root) is not None)
        if requester and words(requester)[0] in words(f"{self.author} {self.author_email}"):
            points += 3
        return points + len(topic & set(words(" ".join(self.texts))))


def _slack_requests(state: State) -> list[_Request]:
    """Every root Slack message found so far with its replies (from every search result) as a candidate."""
    messages = {str(m.get("id") or (m.get("timestamp"), m.get("text"))): m
                for m in state.items("Slack_search_messages", "messages")}
    out = []
    for m in messages.values():
        if m.get("thread_ts") and m.get("thread_ts") != m.get("timestamp"):
            continue
        if not _asks_to_meet(str(m.get("text", ""))):
            continue
        replies = sorted((r for r in messages.values() if r.get("thread_ts") == m.get("timestamp") and r is not m),
                         key=lambda r: str(r.get("timestamp")))
        members = {str(r.get("author_email") or "").lower() for r in replies} - {""}
        out.append(_Request([str(m.get("text", ""))] + [str(r.get("text", "")) for r in replies],
                            str(m.get("author", "")), str(m.get("author_email") or ""), [], members,
                            f"Slack #{str(m.get('channel', '')).lstrip('#')}", str(m.get("timestamp", ""))))
    return out


def _gmail_requests(state: State) -> list[_Request]:
    """Every e-mail thread read so far whose first message is about meeting, as a candidate."""
    out = []
    for thread in state.all("Gmail_GetThread"):
        messages = [m for m in thread.get("messages") or () if isinstance(m, dict)]
        if not messages or not _asks_to_meet(f"{thread.get('subject', '')} {messages[0].get('body', '')}"):
            continue
        first = messages[0]
        sender = str(first.get("from", ""))
        recipients = [e.lower() for e in EMAIL.findall(" ".join(map(str, first.get("to") or [])))]
        members = {e.lower() for m in messages for e in EMAIL.findall(
            " ".join(map(str, [m.get("from"), *(m.get("to") or []), *(m.get("cc") or [])])))}
        out.append(_Request([f"{thread.get('subject', '')}\n{first.get('body', '')}"]
                            + [str(m.get("body", "")) for m in messages[1:]],
                            sender, next(iter(EMAIL.findall(sender)), sender), recipients, members,
                            f"the e-mail thread '{thread.get('subject')}'", str(first.get("date", ""))))
    return out


def _asks_to_meet(text: str) -> bool:
    """Whether a message may be a meeting request: it names a meeting, a length or a time frame."""
    return bool(_MEETING.search(text) or period(text) or durations(text))


def _duration(texts: list[str]) -> int | None:
    """The first meeting length stated in ``texts`` (minutes), in order."""
    return next((found[0] for text in texts if (found := durations(text))), None)


def _week_window(day: date) -> tuple[date, date]:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=4)


def _working_days(today: date, count: int) -> tuple[date, date]:
    """The first and last of the ``count`` working days after ``today``."""
    days: list[date] = []
    day = today
    while len(days) < count:
        day += timedelta(days=1)
        if day.weekday() < 5:
            days.append(day)
    return days[0], days[-1]


def _window(today: date, texts: list[str]) -> tuple[date, date]:
    """The days the meeting may fall on, from the first period the texts state (default: next week)."""
    for text in texts:
        asked = period(text)
        if asked is None:
            continue
        if asked.days is not None:
            return _working_days(today, asked.days)
        if asked.weeks == 0 and _week_window(today)[1] > today:
            return today, _week_window(today)[1]
        if asked.weeks:
            return _week_window(today + timedelta(days=7 * asked.weeks))
    return _week_window(today + timedelta(days=7))


def _preferred_days(texts: list[str]) -> set[int]:
    """Weekdays a range like ``Mon–Wed`` or ``Tue-Thu`` in the request prefers (empty when none)."""
    for text in texts:
        match = _DAY_RANGE.search(text)
        if match:
            first, last = (_WEEKDAYS.index(g.lower()[:3]) for g in match.groups())
            return set(range(first, last + 1))
    return set()


def _unique(people: Sequence[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """Contacts without repeats (by e-mail), in order."""
    return list({str(p.get("email")).lower(): p for p in people if p}.values())


def _thread_people(request: _Request, contacts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The attendees a request implies: its author, its e-mail recipients and the people its thread names.

    Names in a sentence that calls someone optional (or FYI, cc) are left out.
    """
    by_email = {str(c.get("email", "")).lower(): c for c in contacts}
    author = (by_email.get(request.author_email) or resolve(request.author, contacts, request.members)
              or ({"name": request.author_email, "email": request.author_email} if request.author_email else None))
    found = [author] + [by_email.get(e) or {"name": e, "email": e} for e in request.recipients]
    for text in request.texts:
        for sentence in _plain_sentences(text):
            found += [resolve(name, contacts, request.members) for name in name_candidates(sentence)]
    return _unique(found)


def _plain_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that do not call anyone optional."""
    return [s for s in re.split(r"(?<=[.!?\n])\s+", text) if not _OPTIONAL.search(s)]


def _unknown_names(state: State, request: _Request) -> list[str]:
    """Names in the request thread not yet looked up in Contacts (the author first)."""
    searched = {str(args.get("name", "")) for args, _ in state.results.get("GoogleContacts_SearchContactsByName", [])}
    contacts = known_contacts(state)
    names = [request.author] if request.author and "@" not in request.author else []
    names += [n for t in request.texts for s in _plain_sentences(t) for n in name_candidates(s)]
    return [n for n in dict.fromkeys(names) if n not in searched and not resolve(n, contacts, request.members)]


def plan_meeting(state: State) -> Reply:
    topic = {w for w in words(state.prompt) if len(w) > 2 and w not in STOP and w not in NOT_NAMES}
    names = name_candidates(state.prompt)
    if not state.ran("GoogleContacts_SearchContactsByName") and names:
        return Reply(tool_calls=[tool_call("GoogleContacts_SearchContactsByName", name=n, limit=5) for n in names])
    named = [n for n in names if resolve(n, known_contacts(state), set())]
    requester = named[0] if named else ""
    if not state.ran("Slack_search_messages") and not state.ran("Gmail_SearchThreads"):
        query = f"{requester} meet meeting sync session call chat minutes week {' '.join(sorted(topic))}".strip()
        return Reply(tool_calls=[tool_call("Slack_search_messages", query=query, limit=50),
                                 tool_call("Gmail_SearchThreads", query=query, max_results=10)])
    if not _read_threads(state):
        calls = _read_request_calls(state, requester, topic)
        if calls:
            return Reply(tool_calls=calls)
    candidates = _slack_requests(state) + _gmail_requests(state)
    if not candidates and not named:
        return final("I could not find the meeting request in Slack or Gmail.", "No request message was found.")
    ranked = sorted(candidates, key=lambda r: (r.score(requester, topic), r.stamp), reverse=True)
    # With no request message anywhere, the user's own words are the request.
    request = ranked[0] if ranked else _Request([state.prompt], "", "", [], set(), "the user's request", "")
    people = _unique([resolve(n, known_contacts(state), request.members) for n in named])
    if len(people) < 2:  # the user did not say who attends: the request thread does
        missing = _unknown_names(state, request)
        if missing and state.turn < 6:
            return Reply(tool_calls=[tool_call("GoogleContacts_SearchContactsByName", name=n, limit=5)
                                     for n in missing])
        people = _unique(people + _thread_people(request, known_contacts(state)))
    others = [t for other in ranked[1:] for t in other.texts[:1]]
    duration = _duration([state.prompt]) or _duration(request.texts) or _duration(others) or 30
    first, last = _window(state.today, [state.prompt, request.texts[0]])
    if not state.ran("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree"):
        return Reply(tool_calls=[tool_call("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
                                           email_addresses=[str(p.get("email")) for p in people],
                                           start_date=first.isoformat(), end_date=last.isoformat(),
                                           min_duration_minutes=duration)])
    return _propose(state, people, duration, request, _preferred_days(request.texts[:1]))


def _read_threads(state: State) -> bool:
    """Whether the candidate request threads were read (an e-mail thread opened or a Slack channel listed)."""
    return state.ran("Gmail_GetThread") or any(args.get("channel")
                                               for args, _ in state.results.get("Slack_search_messages", []))


def _read_request_calls(state: State, requester: str, topic: set[str]) -> list[dict[str, Any]]:
    """Read the two likeliest request threads in Gmail and the channel of the likeliest Slack request."""
    asker = words(requester)[:1]

    def likely(thread: dict[str, Any]) -> int:
        subject = str(thread.get("subject", ""))
        by_asker = bool(asker) and any(asker[0] in words(str(p)) for p in thread.get("participants") or ())
        return (3 * by_asker + min(2, len(_MEETING.findall(subject))) + (period(subject) is not None)
                + len(topic & set(words(subject))))

    threads = sorted(state.items("Gmail_SearchThreads", "threads"), key=likely, reverse=True)
    calls = [tool_call("Gmail_GetThread", thread_id=str(t.get("id"))) for t in threads[:2]]
    slack = sorted(_slack_requests(state), key=lambda r: r.score(requester, topic), reverse=True)
    if slack:
        calls.append(tool_call("Slack_search_messages", query="", channel=slack[0].where.removeprefix("Slack #"),
                               limit=100))
    return calls


def _instant(value: Any) -> datetime | None:
    """An aware datetime from an ISO timestamp in a tool result (None when it is not one)."""
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else None


def _propose(state: State, people: list[dict[str, Any]], duration: int, request: _Request,
             preferred: set[int]) -> Reply:
    """Up to three options on different days (preferred weekdays first), each the requested length."""
    slots = [start for s in state.items("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree", "slots")
             if (start := _instant(s.get("start")))]
    slots.sort(key=lambda s: (bool(preferred) and s.weekday() not in preferred, s))
    picked: list[datetime] = []
    for start in slots:
        if start.date() not in {p.date() for p in picked}:
            picked.append(start)
        if len(picked) == 3:
            break
    picked.sort()
    who = ", ".join(f"{p.get('name')} ({p.get('email')})" for p in people)
    if not picked:
        return final(f"There is no common free slot of {duration} minutes for {who} in that time frame.",
                     "The calendar shows no shared free time of that length.")
    zone = state.tz_name or picked[0].strftime("UTC%z")
    options = "; ".join(f"{s:%A} {s:%Y-%m-%d} {s:%H:%M}-{s + timedelta(minutes=duration):%H:%M}" for s in picked)
    answer = (f"Proposed options for the {duration}-minute meeting ({zone} time): {options}. Attendees: {who}.")
    rationale = (f"The request and its length ({duration} minutes) come from {request.where}; the attendees' "
                 "addresses from Contacts; every option is common free time from the calendar within working hours.")
    return final(answer, rationale)
