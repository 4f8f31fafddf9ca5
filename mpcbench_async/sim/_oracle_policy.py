"""``sim/oracle-agent``: a rule-based MPCBench agent that works only from what a model would see.

It reads the system prompt (the reference now), the user's request and the
tool results already in the conversation — never the data files — and decides
the next tool calls the way a careful human would, without relying on how any
one generator phrases its data:

* planning: look up the people the request names in Contacts; find the
  meeting request in Slack and in Gmail (by meeting words, preferring the
  requester's own message) and read its whole thread; take the duration, the
  time frame and — when the user did not list them — the attendees from that
  thread (e-mail recipients, names and first names resolved through Contacts);
  ask the calendar for common free time and propose up to three options;
* email reply: find the customer's thread (by address, name, or the words of
  the question) and read it, read the response playbook, find the Jira issue
  (by the keys the thread or Slack names, else by its words) and reply with its
  fixVersion release date in cautious terms;
* weekly report: read the report template when there is one, this week's Jira
  changes of the team's main project, the metric statements of the week in
  Slack, Gmail, Drive and Jira, and the project's meetings, then fill the
  template's sections quoting every number exactly as its source states it.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date, datetime, timedelta
from typing import Any

import orjson

from ._judge_text import durations, period
from ._policies import Reply, register_policy

__all__: list[str] = []

_NOW = re.compile(r"Current date and time: \w+ (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}) \(([^,]+), UTC([+-]\d{2}:\d{2})\)")
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_ISSUE = re.compile(r"\b[A-Z][A-Z0-9]+-\d+\b")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_MEETING = re.compile(r"\b(meet|meeting|sync|syncing|session|call|chat|catch[- ]up|get together|discussion|"
                      r"discuss|review|rehearsal|workshop|planning|1:1)\b", re.I)
_WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_DAY_RANGE = re.compile(r"\b(mon|tue|wed|thu|fri)[a-z]*\.?\s*(?:–|—|-|to|through|thru)\s*(mon|tue|wed|thu|fri)[a-z]*\b",
                        re.I)
_OPTIONAL = re.compile(r"\b(optional|fyi|cc)\b", re.I)
# Capitalised words that are not people: greetings, calendar words, team and product nouns, tool names.
_NOT_NAMES = frozenset(
    "hi hello hey dear thanks thank please regards best cheers sounds great good perfect yes no ok okay sure also "
    "just quick agreed the a an this that these those next last our my your we i you they all everyone team "
    "could can would should will let lets shall may might do does did is are was were be it its if when what "
    "which who how why where there here and or but so for with about from to of in on at by re fwd fw subject "
    "agenda notes update meeting sync call session review planning invite invitation reminder heads up "
    "monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun today tomorrow "
    "january february march april may june july august september october november december "
    "product project engineering design sales marketing finance security operations ops people support "
    "customer customers client leads manager management calendar notifications system training office "
    "slack gmail google drive jira zoom teams meet figma confluence api qa hr it ceo cto pm "
    "main new old feature release launch sprint weekly week morning afternoon evening".split())
_STOP = frozenset("the a an and or to of for in on at with about is are be we you i it this that our your re fwd "
                  "hi hello thanks please when will can could would what which how draft reply email write "
                  "customer asking question find few possible time slots mentioned".split())
_DONE = ("done", "closed", "resolved", "released")
_METRIC_WORDS = ("metrics update WoW week-over-week growth increase decrease improved improvement dropped reduction "
                 "percent KPI dashboard closed users latency")


class _State:
    """What the conversation has shown so far: the request and every tool result, by tool."""

    def __init__(self, request: dict[str, Any]) -> None:
        messages = request["messages"]
        self.system = next((str(m.get("content") or "") for m in messages if m.get("role") == "system"), "")
        self.prompt = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
        self.turn = sum(1 for m in messages if m.get("role") == "assistant")
        calls: dict[str, tuple[str, Any]] = {}
        for m in messages:
            for call in m.get("tool_calls") or ():
                calls[call["id"]] = (call["function"]["name"], _loads(call["function"]["arguments"]))
        self.results: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        for m in messages:
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                name, arguments = calls[m["tool_call_id"]]
                args = arguments if isinstance(arguments, dict) else {}
                self.results.setdefault(name, []).append((args, _loads(m.get("content") or "null")))
        match = _NOW.search(self.system)
        self.today = date.fromisoformat(match.group(1)) if match else date.today()
        self.tz_name = match.group(3) if match else ""

    def ran(self, tool: str) -> bool:
        return tool in self.results

    def all(self, tool: str) -> list[dict[str, Any]]:
        return [result for _, result in self.results.get(tool, []) if isinstance(result, dict)]

    def items(self, tool: str, field: str) -> list[dict[str, Any]]:
        """Every dict in the ``field`` list of every result of ``tool``."""
        return [item for result in self.all(tool) for item in result.get(field) or () if isinstance(item, dict)]


def _loads(text: Any) -> Any:
    try:
        return orjson.loads(text) if isinstance(text, str | bytes) else text
    except orjson.JSONDecodeError:
        return None


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": orjson.dumps({k: v for k, v in arguments.items() if v is not None}).decode()}


def _final(answer: str, rationale: str) -> Reply:
    return Reply(content=orjson.dumps({"final_answer": answer, "rationale": rationale}).decode())


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _task_type(prompt: str) -> str:
    """``report``, ``email`` or ``planning`` from the request's wording."""
    lowered = prompt.lower()
    if re.search(r"\b(report|status update|weekly update|digest|recap|summary of (?:this|the) week"
                 r"|week['’]s (?:update|status|summary|recap))\b", lowered):
        return "report"
    replying = re.search(r"\b(reply|respond|answer|write back|get back to|draft (?:an? )?e-?mail)\b", lowered)
    if re.search(r"\b(slots?|meeting|meet|sync|syncing|chat|call|catch[- ]?up|availability|schedule|"
                 r"find (?:a |some |a few )?times?)\b", lowered) and not replying:
        return "planning"
    if replying or re.search(r"\b(e-?mail|customer|client|release|ship|eta)\b", lowered):
        return "email"
    return "planning"


# -- people --------------------------------------------------------------------
def _name_candidates(text: str) -> list[str]:
    """Runs of one to three capitalised words that may be a person (``@Jordan``, ``Alice``, ``Sam Williams``)."""
    found: list[str] = []
    run: list[str] = []
    last_end = 0
    for match in _WORD.finditer(text):
        token = re.sub(r"['’](?:s|m|ll|re|d|ve)$", "", match.group(0))  # "Tom's" → Tom, "Let's" → Let
        is_name = (token[0].isupper() and (len(token) == 1 or not token[1:].isupper())
                   and token.lower() not in _NOT_NAMES and len(token) > 1)
        joined = text[last_end:match.start()] == " "
        if is_name and run and joined and len(run) < 3:
            run.append(token)
        else:
            if run:
                found.append(" ".join(run))
            run = [token] if is_name else []
        last_end = match.end()
    if run:
        found.append(" ".join(run))
    return list(dict.fromkeys(found))


def _resolve(candidate: str, contacts: list[dict[str, Any]], known_emails: set[str]) -> dict[str, Any] | None:
    """The contact a name or first name refers to: given name equal, every word present; thread members first."""
    wanted = _words(candidate)
    if not wanted:
        return None
    matches = [c for c in contacts if (name := _words(str(c.get("name", ""))))
               and name[0] == wanted[0] and set(wanted) <= set(name)]
    matches.sort(key=lambda c: str(c.get("email", "")).lower() not in known_emails)
    return matches[0] if matches else None


def _contacts(state: _State) -> list[dict[str, Any]]:
    return state.items("GoogleContacts_SearchContactsByName", "contacts")


# -- planning ------------------------------------------------------------------
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
        if requester and _words(requester)[0] in _words(f"{self.author} {self.author_email}"):
            points += 3
        return points + len(topic & set(_words(" ".join(self.texts))))


def _slack_requests(state: _State) -> list[_Request]:
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


def _gmail_requests(state: _State) -> list[_Request]:
    """Every e-mail thread read so far whose first message is about meeting, as a candidate."""
    out = []
    for thread in state.all("Gmail_GetThread"):
        messages = [m for m in thread.get("messages") or () if isinstance(m, dict)]
        if not messages or not _asks_to_meet(f"{thread.get('subject', '')} {messages[0].get('body', '')}"):
            continue
        first = messages[0]
        sender = str(first.get("from", ""))
        recipients = [e.lower() for e in _EMAIL.findall(" ".join(map(str, first.get("to") or [])))]
        members = {e.lower() for m in messages for e in _EMAIL.findall(
            " ".join(map(str, [m.get("from"), *(m.get("to") or []), *(m.get("cc") or [])])))}
        out.append(_Request([f"{thread.get('subject', '')}\n{first.get('body', '')}"]
                            + [str(m.get("body", "")) for m in messages[1:]],
                            sender, next(iter(_EMAIL.findall(sender)), sender), recipients, members,
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
    days, day = [], today
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


def _unique(people: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """Contacts without repeats (by e-mail), in order."""
    return list({str(p.get("email")).lower(): p for p in people if p}.values())


def _thread_people(request: _Request, contacts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The attendees a request implies: its author, its e-mail recipients and the people its thread names.

    Names in a sentence that calls someone optional (or FYI, cc) are left out.
    """
    by_email = {str(c.get("email", "")).lower(): c for c in contacts}
    author = (by_email.get(request.author_email) or _resolve(request.author, contacts, request.members)
              or ({"name": request.author_email, "email": request.author_email} if request.author_email else None))
    found = [author] + [by_email.get(e) or {"name": e, "email": e} for e in request.recipients]
    for text in request.texts:
        for sentence in _plain_sentences(text):
            found += [_resolve(name, contacts, request.members) for name in _name_candidates(sentence)]
    return _unique(found)


def _plain_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that do not call anyone optional."""
    return [s for s in re.split(r"(?<=[.!?\n])\s+", text) if not _OPTIONAL.search(s)]


def _unknown_names(state: _State, request: _Request) -> list[str]:
    """Names in the request thread not yet looked up in Contacts (the author first)."""
    searched = {str(args.get("name", "")) for args, _ in state.results.get("GoogleContacts_SearchContactsByName", [])}
    contacts = _contacts(state)
    names = [request.author] if request.author and "@" not in request.author else []
    names += [n for t in request.texts for s in _plain_sentences(t) for n in _name_candidates(s)]
    return [n for n in dict.fromkeys(names) if n not in searched and not _resolve(n, contacts, request.members)]


def _plan(state: _State) -> Reply:
    topic = {w for w in _words(state.prompt) if len(w) > 2 and w not in _STOP and w not in _NOT_NAMES}
    names = _name_candidates(state.prompt)
    if not state.ran("GoogleContacts_SearchContactsByName") and names:
        return Reply(tool_calls=[_call("GoogleContacts_SearchContactsByName", name=n, limit=5) for n in names])
    named = [n for n in names if _resolve(n, _contacts(state), set())]
    requester = named[0] if named else ""
    if not state.ran("Slack_search_messages") and not state.ran("Gmail_SearchThreads"):
        query = f"{requester} meet meeting sync session call chat minutes week {' '.join(sorted(topic))}".strip()
        return Reply(tool_calls=[_call("Slack_search_messages", query=query, limit=50),
                                 _call("Gmail_SearchThreads", query=query, max_results=10)])
    if not _read_threads(state):
        calls = _read_request_calls(state, requester, topic)
        if calls:
            return Reply(tool_calls=calls)
    candidates = _slack_requests(state) + _gmail_requests(state)
    if not candidates and not named:
        return _final("I could not find the meeting request in Slack or Gmail.", "No request message was found.")
    ranked = sorted(candidates, key=lambda r: (r.score(requester, topic), r.stamp), reverse=True)
    # With no request message anywhere, the user's own words are the request.
    request = ranked[0] if ranked else _Request([state.prompt], "", "", [], set(), "the user's request", "")
    people = _unique([_resolve(n, _contacts(state), request.members) for n in named])
    if len(people) < 2:  # the user did not say who attends: the request thread does
        missing = _unknown_names(state, request)
        if missing and state.turn < 6:
            return Reply(tool_calls=[_call("GoogleContacts_SearchContactsByName", name=n, limit=5) for n in missing])
        people = _unique(people + _thread_people(request, _contacts(state)))
    others = [t for other in ranked[1:] for t in other.texts[:1]]
    duration = _duration([state.prompt]) or _duration(request.texts) or _duration(others) or 30
    first, last = _window(state.today, [state.prompt, request.texts[0]])
    if not state.ran("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree"):
        return Reply(tool_calls=[_call("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
                                       email_addresses=[str(p.get("email")) for p in people],
                                       start_date=first.isoformat(), end_date=last.isoformat(),
                                       min_duration_minutes=duration)])
    return _propose(state, people, duration, request, _preferred_days(request.texts[:1]))


def _read_threads(state: _State) -> bool:
    """Whether the candidate request threads were read (an e-mail thread opened or a Slack channel listed)."""
    return state.ran("Gmail_GetThread") or any(args.get("channel")
                                               for args, _ in state.results.get("Slack_search_messages", []))


def _read_request_calls(state: _State, requester: str, topic: set[str]) -> list[dict[str, Any]]:
    """Read the two likeliest request threads in Gmail and the channel of the likeliest Slack request."""
    asker = _words(requester)[:1]

    def likely(thread: dict[str, Any]) -> int:
        subject = str(thread.get("subject", ""))
        by_asker = bool(asker) and any(asker[0] in _words(str(p)) for p in thread.get("participants") or ())
        return (3 * by_asker + min(2, len(_MEETING.findall(subject))) + (period(subject) is not None)
                + len(topic & set(_words(subject))))

    threads = sorted(state.items("Gmail_SearchThreads", "threads"), key=likely, reverse=True)
    calls = [_call("Gmail_GetThread", thread_id=str(t.get("id"))) for t in threads[:2]]
    slack = sorted(_slack_requests(state), key=lambda r: r.score(requester, topic), reverse=True)
    if slack:
        calls.append(_call("Slack_search_messages", query="", channel=slack[0].where.removeprefix("Slack #"),
                           limit=100))
    return calls


def _instant(value: Any) -> datetime | None:
    """An aware datetime from an ISO timestamp in a tool result (None when it is not one)."""
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else None


def _propose(state: _State, people: list[dict[str, Any]], duration: int, request: _Request,
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
        return _final(f"There is no common free slot of {duration} minutes for {who} in that time frame.",
                      "The calendar shows no shared free time of that length.")
    zone = state.tz_name or picked[0].strftime("UTC%z")
    options = "; ".join(f"{s:%A} {s:%Y-%m-%d} {s:%H:%M}-{s + timedelta(minutes=duration):%H:%M}" for s in picked)
    answer = (f"Proposed options for the {duration}-minute meeting ({zone} time): {options}. Attendees: {who}.")
    rationale = (f"The request and its length ({duration} minutes) come from {request.where}; the attendees' "
                 "addresses from Contacts; every option is common free time from the calendar within working hours.")
    return _final(answer, rationale)


# -- email reply -------------------------------------------------------------------
_ETA_WORDS = "when release released available availability ETA timeline launch date update feature"


def _email(state: _State) -> Reply:
    customer = next(iter(_EMAIL.findall(state.prompt)), None)
    named = _name_candidates(state.prompt)
    if not state.ran("Gmail_SearchThreads"):
        topic = " ".join(w for w in _words(state.prompt) if w not in _STOP)
        search = (_call("Gmail_SearchThreads", sender=customer, max_results=5) if customer
                  else _call("Gmail_SearchThreads", query=f"{_ETA_WORDS} {topic}", max_results=5))
        return Reply(tool_calls=[search, _call("GoogleDrive_gdrive_search",
                                               query="customer response playbook guidelines communication", limit=10)])
    threads = state.items("Gmail_SearchThreads", "threads")
    if not threads and named and len(state.results["Gmail_SearchThreads"]) == 1:
        return Reply(tool_calls=[_call("Gmail_SearchThreads", sender=named[0], max_results=5)])
    if not state.ran("Gmail_GetThread") and not state.ran("GoogleDrive_gdrive_read_file"):
        calls = [_call("Gmail_GetThread", thread_id=str(t.get("id"))) for t in threads[:1 if customer else 2]]
        playbook = _playbook(state.items("GoogleDrive_gdrive_search", "files"))
        if playbook:
            calls.append(_call("GoogleDrive_gdrive_read_file", file_id=str(playbook.get("id"))))
        if calls:
            return Reply(tool_calls=calls)
    thread = _question_thread(state.all("Gmail_GetThread"), customer)
    text = " ".join(str(m.get("body", "")) for m in thread.get("messages") or () if isinstance(m, dict))
    subject = re.sub(r"^(?:(?:re|fwd?|aw):\s*)+", "", str(thread.get("subject", "")), flags=re.I)
    keys = list(dict.fromkeys(_ISSUE.findall(f"{subject} {text}")))
    topic = [w for w in _WORD.findall(re.sub(r"^question about\s*", "", subject, flags=re.I))
             if len(w) > 3 and w.lower() not in _STOP]
    if not keys and not state.ran("Slack_search_messages"):
        return Reply(tool_calls=[_call("Slack_search_messages", query=" ".join(topic[:4]) or "feature", limit=10)])
    wanted = {w.lower() for w in topic}
    for m in state.items("Slack_search_messages", "messages"):
        if len(wanted & set(_words(str(m.get("text", ""))))) >= 2:  # a message about this feature naming its issue
            keys += [k for k in _ISSUE.findall(str(m.get("text", ""))) if k not in keys]
    if not state.ran("Jira_SearchIssuesWithJql"):
        clauses = [f'summary ~ "{w}"' for w in topic[:5]]
        if keys:
            clauses.insert(0, "key IN (" + ", ".join(keys) + ")")
        jql = " OR ".join(clauses or ['status != Done']) + " ORDER BY updated DESC"
        return Reply(tool_calls=[_call("Jira_SearchIssuesWithJql", jql=jql, max_results=20)])
    issues = state.items("Jira_SearchIssuesWithJql", "issues")
    issues.sort(key=lambda i: (i.get("key") not in keys, _release_date(i) is None,
                               -len(wanted & set(_words(str(i.get("summary")))))))
    if not issues:
        return _final("Thank you for your message. We are checking the release timing and will follow up shortly.",
                      "No tracking issue was found in Jira.")
    senders = " ".join(str(m.get("from", "")) for m in thread.get("messages") or () if isinstance(m, dict))
    greet = next((n for n in named if _words(n)[0] in _words(senders)), "")  # a name the prompt gives, if they wrote
    return _reply(issues[0], subject, greet, state.today)


def _playbook(files: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The current (not deprecated) guidance document among the Drive results."""
    current = [f for f in files if not re.search(r"deprecated|outdated|archive|old\b", str(f.get("name")), re.I)]
    guidance = [f for f in current if re.search(r"playbook|guideline|macro|policy|response|communication",
                                                str(f.get("name")), re.I)]
    return (guidance or current or [None])[0]


def _question_thread(threads: list[dict[str, Any]], customer: str | None) -> dict[str, Any]:
    """The thread where the customer asks about timing: from their address, else the most timing words."""
    def score(thread: dict[str, Any]) -> tuple[bool, int]:
        text = " ".join(f"{m.get('from')} {m.get('body')}" for m in thread.get("messages") or () if isinstance(m, dict))
        timing = len(re.findall(r"\b(when|eta|release|available|availability|timeline|roll ?out)\b", text, re.I))
        return bool(customer and customer.lower() in text.lower()), timing

    return max(threads, key=score, default={})


def _release_date(issue: dict[str, Any]) -> date | None:
    """The target date of an issue: its fixVersion's releaseDate (a version written as a plain string counts)."""
    for version in issue.get("fixVersions") or ():
        value = version.get("releaseDate") if isinstance(version, dict) else version
        found = _ISO_DATE.search(str(value or ""))
        if found:
            return date.fromisoformat(found.group(0))
    return None


def _reply(issue: dict[str, Any], subject: str, customer_name: str, today: date) -> Reply:
    release = _release_date(issue)
    feature = str(issue.get("summary", "the feature"))
    status = str(issue.get("status", ""))
    greeting = f"Hi {customer_name.split()[0]}," if customer_name else "Hello,"
    opening = (f"Subject: Re: {subject}\n\n{greeting}\n\nThank you for your patience and for checking in about "
               f"{feature}.")
    if release and release <= today and status.lower() in _DONE:  # shipped: a target "that may change" would mislead
        answer = (f"{opening} Good news: it was released on {release:%B} {release.day}, {release.year} "
                  f"({release.isoformat()}) and is available now. Let us know if you need help turning it on."
                  "\n\nBest regards")
    else:
        if release:
            monday = release - timedelta(days=release.weekday())
            when = (f"we are currently targeting the week of {monday:%B} {monday.day}, {monday.year}, with a target "
                    f"date of {release:%B} {release.day}, {release.year} ({release.isoformat()})")
        else:
            when = "we do not have a confirmed release date yet"
        answer = (f"{opening} Based on our current plan, {when}. Its current status is \"{status or 'in progress'}\", "
                  "and this timing may still change as we complete testing, so please treat it as a target rather "
                  "than a commitment. We will confirm as soon as the release is scheduled.\n\nBest regards")
    versions = [v.get("name") if isinstance(v, dict) else v for v in issue.get("fixVersions") or ()]
    rationale = (f"Release timing from Jira {issue.get('key')} (status {issue.get('status')}, fixVersion "
                 f"{', '.join(map(str, versions)) or 'none'}); tone from the e-mail thread '{subject}'; cautious ETA "
                 "wording per the response guidance in Drive.")
    return _final(answer, rationale)


# -- weekly report ---------------------------------------------------------------
_NUMBER = re.compile(r"[-+−]?\d+(?:[.,]\d+)?")
_SIGNED = re.compile(r"[-+−]\d+(?:\.\d+)?\s*%")
_DEFAULT_SECTIONS = ["Highlights", "Key metrics", "Completed work", "In progress", "Risks", "Next week", "Meetings"]


def _report(state: _State) -> Reply:
    template = re.search(r"['‘“\"]([^'’”\"]{4,})['’”\"]", state.prompt)
    project = re.search(r"\(([A-Z][A-Z0-9]+)\)", state.prompt)
    monday = state.today - timedelta(days=state.today.weekday())
    if not state.ran("GoogleDrive_gdrive_search"):
        jql = (f"project = {project.group(1)} AND " if project else "") + "updated >= startOfWeek() ORDER BY updated DESC"
        return Reply(tool_calls=[
            _call("GoogleDrive_gdrive_search", query=template.group(1) if template else "weekly report template",
                  limit=5),
            _call("GoogleDrive_gdrive_search", query="metrics dashboard export", limit=5),
            _call("Slack_search_messages", query=_METRIC_WORDS, limit=50),
            _call("Gmail_SearchThreads", query="weekly update summary metrics report", after=monday.isoformat(),
                  max_results=5),
            _call("GoogleCalendar_ListEvents", start_date=monday.isoformat(),
                  end_date=(monday + timedelta(days=6)).isoformat()),
            _call("Jira_SearchIssuesWithJql", jql=jql, max_results=50)])
    files = state.items("GoogleDrive_gdrive_search", "files")
    template_file = _template(files, template.group(1) if template else None)
    if not state.ran("GoogleDrive_gdrive_read_file") and not state.ran("Gmail_GetThread"):
        metric_files = [f for f in files if re.search(r"metric|dashboard|export", str(f.get("name")), re.I)]
        reads = {str(f.get("id")): f for f in ([template_file] if template_file else []) + metric_files[:2]}
        threads = [t for t in state.items("Gmail_SearchThreads", "threads")
                   if re.search(r"weekly|update|report|summary|metric", str(t.get("subject")), re.I)]
        calls = [_call("GoogleDrive_gdrive_read_file", file_id=i) for i in reads]
        calls += [_call("Gmail_GetThread", thread_id=str(t.get("id"))) for t in threads[:1]]
        if calls:
            return Reply(tool_calls=calls)
    documents = state.all("GoogleDrive_gdrive_read_file")
    template_doc = next((d for d in documents if template_file and d.get("id") == template_file.get("id")), {})
    sections = re.findall(r"^#*\s*\d*[.)]?\s*([A-Z][A-Za-z &/]{3,30}?)\s*:?\s*$", str(template_doc.get("content", "")),
                          re.M)
    issues = state.items("Jira_SearchIssuesWithJql", "issues")
    main = project.group(1) if project else _main_project(issues)
    issues = [i for i in issues if not main or str(i.get("project") or str(i.get("key")).split("-")[0]) == main]
    since = datetime.combine(state.today - timedelta(days=7), datetime.min.time()).isoformat()
    metrics = _metric_statements(state, [d for d in documents if d is not template_doc], issues, since)
    done = [i for i in issues if str(i.get("status", "")).lower() in _DONE]
    open_ = [i for i in issues if i not in done]
    body = {
        "Highlights": [f"{len(done)} issue(s) completed this week"] + metrics[:2],
        "Key metrics": metrics or ["No metric updates found this week."],
        "Completed work": [f"{i.get('key')}: {i.get('summary')}" for i in done] or ["None"],
        "In progress": [f"{i.get('key')}: {i.get('summary')} ({i.get('status')})" for i in open_] or ["None"],
        "Risks": [f"{i.get('key')}: {i.get('summary')} ({i.get('status')})" for i in open_
                  if re.search(r"block|review|risk|qa", str(i.get("status", "")), re.I)] or ["None reported"],
        "Next week": [f"{i.get('key')}: {i.get('summary')} ({i.get('status')})" for i in open_] or ["Continue"],
        "Meetings": _meetings(state, issues),
    }
    lines = [f"Weekly report — {main or 'team'} (week of {monday.isoformat()})"]
    for section in sections or _DEFAULT_SECTIONS:
        key = _section_key(section, body)
        lines.append(f"\n{section}")
        lines += [f"- {item}" for item in (body[key] if key else ["Nothing new for this section this week."])]
    return _final("\n".join(lines), "Structure from the report template in Drive (or a standard one when there is "
                                     "none); metrics quoted from Slack/Gmail/Drive/Jira; completed and open work from "
                                     "Jira (updated this week); meetings from Calendar.")


def _template(files: list[dict[str, Any]], name: str | None) -> dict[str, Any] | None:
    """The report template: the file the user named, else one whose name says it is a template."""
    exact = [f for f in files if name and str(f.get("name", "")).lower() == name.lower()]
    templates = [f for f in files if re.search(r"template", str(f.get("name")), re.I)]
    return (exact or templates or [None])[0]


def _main_project(issues: list[dict[str, Any]]) -> str:
    """The project with the most issues changed this week (the team's own)."""
    counts = Counter(str(i.get("project") or str(i.get("key")).split("-")[0]) for i in issues)
    return counts.most_common(1)[0][0] if counts else ""


def _section_key(section: str, body: dict[str, list[str]]) -> str | None:
    """The body part a template section asks for, by shared words (``Wins`` → Highlights, ``Blockers`` → Risks)."""
    aliases = {"Highlights": "highlights headline wins summary achievements goals",
               "Key metrics": "metrics kpis numbers results",
               "Completed work": "completed done delivered shipped progress delivery status",
               "In progress": "in progress ongoing current", "Risks": "risks blockers issues concerns mitigations",
               "Next week": "next week plan plans upcoming priorities", "Meetings": "meetings events calendar"}
    said = set(_words(section))
    best = max(body, key=lambda k: len(said & set(aliases[k].split())))
    return best if said & set(aliases[best].split()) else None


def _metric_statements(state: _State, documents: list[dict[str, Any]], issues: list[dict[str, Any]],
                       since: str) -> list[str]:
    """Sentences of the week that state a number about a metric, each once, with its source."""
    found: list[tuple[str, str]] = []
    for m in state.items("Slack_search_messages", "messages"):
        if str(m.get("timestamp", "")) >= since:
            found += [(s, f"Slack #{m.get('channel')}, {m.get('author')}") for s in _sentences(str(m.get("text")))]
    for d in documents:
        found += [(s, f"Drive '{d.get('name')}'") for s in _sentences(str(d.get("content", "")))]
    for thread in state.all("Gmail_GetThread"):
        for m in thread.get("messages") or ():
            if isinstance(m, dict):
                found += [(s, f"e-mail '{thread.get('subject')}'") for s in _sentences(str(m.get("body", "")))]
    for issue in issues:
        for c in issue.get("comments") or ():
            body = c.get("body") if isinstance(c, dict) else c
            found += [(s, f"Jira {issue.get('key')}") for s in _sentences(str(body))]
    found.sort(key=lambda item: not _SIGNED.search(item[0]))  # "-20% WoW" says more than "the 20% improvement"
    out, seen = [], set()
    for sentence, source in found:
        numbers = frozenset(n.lstrip("+-−") for n in _NUMBER.findall(sentence))
        if numbers and numbers not in seen:
            seen.add(numbers)
            out.append(f"{sentence} ({source})")
    return out[:8]


# "Median alert latency: 41 s" — a labelled value, not a date ("Date: 2025-03-06"), a time ("Time: 13:00") or a
# version ("Version: 2.3.1").
_LABELLED_VALUE = re.compile(r"^[A-Za-z][^:\n]{2,40}:\s*[-+−]?\d+(?:[.,]\d+)?(?![\d:/-]|\.\d)")


def _sentences(text: str) -> list[str]:
    """Sentences or lines that state a percentage, a labelled value, or a count of closed work or covered items."""
    parts = [p.strip(" -•\t") for p in re.split(r"(?<=[.!?])\s+|\n+", text) if p.strip()]
    return [p for p in parts if re.search(r"\d\s*%", p) or _LABELLED_VALUE.search(p) or re.search(
        r"\b(closed|covered|active|resolved|shipped)\b[^.\n]{0,40}\b\d+\b|\bmetrics? update\b.*\d", p, re.I)]


def _meetings(state: _State, issues: list[dict[str, Any]]) -> list[str]:
    """This week's events that share words with the project's issues (all of them when none does)."""
    events = state.items("GoogleCalendar_ListEvents", "events")
    vocabulary = {w for i in issues for w in _words(str(i.get("summary", ""))) if len(w) > 2 and w not in _STOP}
    related = [e for e in events if vocabulary & set(_words(str(e.get("title", ""))))] or events
    return [f"{e.get('title')} ({e.get('start')})" for e in related[:6]] or ["None"]


@register_policy("oracle-agent")
def oracle_agent(request: dict[str, Any]) -> Reply:
    state = _State(request)
    kind = _task_type(state.prompt)
    if state.turn >= 8:
        return _final("I could not complete the task within my step budget.", "Stopped early.")
    return {"planning": _plan, "email": _email, "report": _report}[kind](state)
