"""``sim/oracle-agent``: a rule-based MPCBench agent that works only from what a model would see.

It reads the system prompt (the reference now), the user's request and the
tool results already in the conversation — never the data files — and
decides the next tool calls, like a careful human would:

* planning: search Slack for the request, resolve the people named in the
  thread through Contacts, ask the calendar for common free slots of the
  requested length in the requested window, and propose up to three;
* email reply: find the customer's thread and read it, read the response
  playbook, find the Jira issue (by key, or by the thread's words) and reply
  with the target window from its fixVersion release date, in cautious terms;
* weekly report: read the report template, this week's Jira changes, the
  metric updates in Slack (and any metrics export in Drive), and fill the
  template's sections with the numbers quoted exactly.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

import orjson

from ._policies import Reply, register_policy

__all__: list[str] = []

_NOW = re.compile(r"Current date and time: \w+ (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}) \(([^,]+), UTC([+-]\d{2}:\d{2})\)")
_FULL_NAME = re.compile(r"\b([A-Z][a-z]+(?:-[A-Z][a-z]+)?) ([A-Z][a-zA-Z'-]+)\b")
_DURATION = re.compile(r"\b(\d{2,3})[ -]?(?:minutes?|mins?)\b", re.I)
_ISSUE = re.compile(r"\b[A-Z][A-Z0-9]+-\d+\b")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NOT_NAMES = set("added api launch planning weekly design team feature customer project sprint meeting review qa "
                 "release update sync notes status the this next please thanks hi hello dear re".split())
_STOP = set("the a an and or to of for in on at with about is are be we you i it this that our your re fwd "
            "hi hello thanks please when will can could would what which".split())


class _State:
    """What the conversation has shown so far: the request and every tool result, by tool."""

    def __init__(self, request: dict[str, Any]) -> None:
        messages = request["messages"]
        self.system = next((str(m.get("content") or "") for m in messages if m.get("role") == "system"), "")
        self.prompt = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
        self.turn = sum(1 for m in messages if m.get("role") == "assistant")
        calls: dict[str, str] = {}
        for m in messages:
            for call in m.get("tool_calls") or ():
                calls[call["id"]] = call["function"]["name"]
        self.results: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        arguments: dict[str, Any] = {}
        for m in messages:
            for call in m.get("tool_calls") or ():
                try:
                    arguments[call["id"]] = orjson.loads(call["function"]["arguments"])
                except orjson.JSONDecodeError:
                    arguments[call["id"]] = {}
        for m in messages:
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                try:
                    result = orjson.loads(m.get("content") or "null")
                except orjson.JSONDecodeError:
                    result = None
                name = calls[m["tool_call_id"]]
                self.results.setdefault(name, []).append((arguments.get(m["tool_call_id"], {}), result))
        match = _NOW.search(self.system)
        self.today = date.fromisoformat(match.group(1)) if match else None
        self.tz_name = match.group(3) if match else ""

    def all(self, tool: str) -> list[Any]:
        return [result for _, result in self.results.get(tool, []) if isinstance(result, dict)]


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": orjson.dumps({k: v for k, v in arguments.items() if v is not None}).decode()}


def _final(answer: str, rationale: str) -> Reply:
    return Reply(content=orjson.dumps({"final_answer": answer, "rationale": rationale}).decode())


def _task_type(prompt: str) -> str:
    lowered = prompt.lower()
    if re.search(r"\b(report|status update|weekly update|digest)\b", lowered):
        return "report"
    if re.search(r"\b(reply|email|e-mail|customer|release)\b", lowered) and not re.search(r"\bslots?\b", lowered):
        return "email"
    return "planning"


# -- planning ------------------------------------------------------------------
def _window(state: _State, texts: list[str]) -> tuple[str, str | None]:
    joined = " ".join(texts + [state.prompt]).lower()
    today = state.today or date.today()
    if "next 3 working days" in joined or "next three working days" in joined:
        days, d = [], today
        while len(days) < 3:
            d += timedelta(days=1)
            if d.weekday() < 5:
                days.append(d)
        return days[0].isoformat(), days[-1].isoformat()
    if "this week" in joined or "end of this week" in joined:
        friday = today + timedelta(days=4 - today.weekday())
        if (friday - today).days >= 1:
            return today.isoformat(), friday.isoformat()
    return "next_week", None


def _requester(prompt: str) -> str:
    """The first capitalised word of the request that is not a common word (the person who asked)."""
    return next((w for w in re.findall(r"\b[A-Z][a-z]+\b", prompt) if w.lower() not in _STOP), "")


def _plan(state: _State) -> Reply:
    asker = _requester(state.prompt)
    if "Slack_search_messages" not in state.results:
        return Reply(tool_calls=[_call("Slack_search_messages", query=f"{asker} meet sync meeting session minutes week",
                                       limit=30)])
    found = [m for result in state.all("Slack_search_messages") for m in result.get("messages") or ()]
    asks = [m for m in found if str(m.get("author", "")).startswith(asker) and not m.get("thread_ts")
            and re.search(r"\b(sync|meet|meeting|session|review|call|minutes)\b", str(m.get("text")), re.I)]
    request = max(asks, key=lambda m: str(m.get("timestamp")), default=None)
    if request is None:
        return _final("I could not find the meeting request in Slack.", "Slack search returned no request.")
    if len(state.results["Slack_search_messages"]) == 1:  # read the request's whole channel to see the thread
        return Reply(tool_calls=[_call("Slack_search_messages", query="", channel=request.get("channel"), limit=100)])
    root_ts = request.get("timestamp")
    thread = [m for m in found if m.get("timestamp") == root_ts or m.get("thread_ts") == root_ts]
    texts = [str(m.get("text", "")) for m in thread]
    duration = next((int(d) for t in texts for d in _DURATION.findall(t)), 30)
    names: list[str] = []
    root = request
    for name in [str(root.get("author", ""))] + [" ".join(n) for t in texts for n in _FULL_NAME.findall(t)]:
        if name and name not in names and len(name.split()) == 2 and not (
                {w.lower() for w in name.split()} & _NOT_NAMES):
            names.append(name)
    contacts = {c.get("name"): c.get("email") for r in state.all("GoogleContacts_SearchContactsByName")
                for c in r.get("contacts") or ()}
    if "GoogleContacts_SearchContactsByName" not in state.results:
        return Reply(tool_calls=[_call("GoogleContacts_SearchContactsByName", name=n, limit=3) for n in names])
    people = [(n, contacts[n]) for n in names if n in contacts]
    if "GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree" not in state.results:
        start, end = _window(state, texts)
        return Reply(tool_calls=[_call("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree",
                                       email_addresses=[e for _, e in people], start_date=start, end_date=end,
                                       min_duration_minutes=duration)])
    slots = [s for r in state.all("GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree") for s in r.get("slots") or ()]
    picked, days = [], set()
    for slot in slots:
        start = datetime.fromisoformat(slot["start"])
        if start.date() in days:
            continue
        days.add(start.date())
        picked.append((start, start + timedelta(minutes=duration)))
        if len(picked) == 3:
            break
    who = ", ".join(n for n, _ in people)
    if not picked:
        return _final(f"There is no common free slot of {duration} minutes for {who} in that window.",
                      "The calendar shows no shared free time of that length.")
    options = "; ".join(f"{s:%A} {s:%Y-%m-%d} {s:%H:%M}-{e:%H:%M}" for s, e in picked)
    answer = (f"Proposed options for the {duration}-minute meeting with {who} ({state.tz_name} time): {options}. "
              f"Attendees: {who}.")
    rationale = (f"The request and duration ({duration} minutes) come from Slack ({root.get('channel')}); emails from "
                 "Contacts; the options are common free slots from the calendar within working hours.")
    return _final(answer, rationale)


# -- email reply -------------------------------------------------------------------
def _email(state: _State) -> Reply:
    customer = next(iter(_EMAIL.findall(state.prompt)), None)
    if "Gmail_SearchThreads" not in state.results:
        return Reply(tool_calls=[_call("Gmail_SearchThreads", sender=customer, query=None if customer else "release",
                                       max_results=5),
                                 _call("GoogleDrive_gdrive_search", query="playbook response guidelines", limit=10)])
    threads = [t for r in state.all("Gmail_SearchThreads") for t in r.get("threads") or ()]
    files = [f for r in state.all("GoogleDrive_gdrive_search") for f in r.get("files") or ()]
    if "Gmail_GetThread" not in state.results and "GoogleDrive_gdrive_read_file" not in state.results:
        calls = [_call("Gmail_GetThread", thread_id=threads[0]["id"])] if threads else []
        current = [f for f in files if not re.search(r"deprecated|outdated|archive", str(f.get("name")), re.I)]
        if current:
            calls.append(_call("GoogleDrive_gdrive_read_file", file_id=current[0]["id"]))
        if calls:
            return Reply(tool_calls=calls)
    thread = next(iter(state.all("Gmail_GetThread")), {})
    thread_text = " ".join(str(m.get("body", "")) for m in thread.get("messages") or ())
    subject = str(thread.get("subject", ""))
    keys = _ISSUE.findall(subject + " " + thread_text)
    if "Slack_search_messages" not in state.results and not keys:
        words = [w for w in re.findall(r"[A-Za-z]{4,}", re.sub(r"^(?:re:\s*)*(?:question about\s*)?", "", subject,
                                                                flags=re.I)) if w.lower() not in _STOP][:4]
        return Reply(tool_calls=[_call("Slack_search_messages", query=" ".join(words) or "feature", limit=10)])
    topic_words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", subject) if w.lower() not in _STOP}
    for result in state.all("Slack_search_messages"):
        for m in result.get("messages") or ():
            said = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", str(m.get("text", "")))}
            if len(said & topic_words) >= 2:  # a message about this feature that names its issue
                keys += _ISSUE.findall(str(m.get("text", "")))
    topic = [w for w in re.findall(r"[A-Za-z]{4,}", re.sub(r"^(?:re:\s*)*(?:question about\s*)?", "", subject, flags=re.I))
             if w.lower() not in _STOP]
    if "Jira_SearchIssuesWithJql" not in state.results:
        clauses = [f'summary ~ "{w}"' for w in topic[:5]]
        if keys:
            clauses.insert(0, "key IN (" + ", ".join(dict.fromkeys(keys)) + ")")
        jql = " OR ".join(clauses) + " ORDER BY updated DESC"
        return Reply(tool_calls=[_call("Jira_SearchIssuesWithJql", jql=jql, max_results=20)])
    issues = [i for r in state.all("Jira_SearchIssuesWithJql") for i in r.get("issues") or ()]
    wanted = {w.lower() for w in topic}
    issues.sort(key=lambda i: (i.get("key") not in keys,
                               -len(wanted & {w.lower() for w in re.findall(r"[A-Za-z]{4,}", str(i.get("summary")))}),
                               not i.get("fixVersions")))
    issue = issues[0] if issues else None
    if issue is None:
        return _final("Thank you for your message. We are checking the release timing and will follow up.",
                      "No tracking issue found.")
    version = next((v for v in issue.get("fixVersions") or () if isinstance(v, dict) and v.get("releaseDate")), {})
    release = date.fromisoformat(str(version.get("releaseDate"))[:10]) if version else None
    feature = str(issue.get("summary", "the feature"))
    if release:
        monday = release - timedelta(days=release.weekday())
        when = (f"we are currently targeting the week of {monday:%B} {monday.day}, {monday.year}, with a target date "
                f"of {release:%B} {release.day}, {release.year} ({release.isoformat()})")
    else:
        when = "we do not have a confirmed date yet"
    answer = (f"Subject: Re: {subject}\n\nHello,\n\nThank you for your patience and for checking in about "
              f"{feature.lower()}. Based on our current plan, {when}. The work is {str(issue.get('status', '')).lower()} "
              "today, and this timing may still change as we complete testing, so please treat it as a target rather "
              "than a commitment. We will confirm as soon as the release is scheduled.\n\nBest regards")
    rationale = (f"Release timing from Jira {issue.get('key')} (status {issue.get('status')}, fixVersion "
                 f"{version.get('name')} releaseDate {version.get('releaseDate')}); tone from the email thread "
                 f"'{subject}'; cautious ETA wording per the playbook in Drive.")
    return _final(answer, rationale)


# -- weekly report ---------------------------------------------------------------
def _report(state: _State) -> Reply:
    template = re.search(r"'([^']{4,})'\.?\s*$", state.prompt.strip())
    project = re.search(r"\(([A-Z][A-Z0-9]+)\)", state.prompt)
    if "GoogleDrive_gdrive_search" not in state.results:
        calls = [_call("GoogleDrive_gdrive_search", query=template.group(1) if template else "weekly report template",
                       limit=5),
                 _call("Slack_search_messages", query="week over week metrics percent closed", limit=40),
                 _call("GoogleCalendar_ListEvents", start_date="this_week")]
        if project:
            calls.append(_call("Jira_SearchIssuesWithJql", jql=f"project = {project.group(1)} AND updated >= "
                                                              "startOfWeek() ORDER BY updated DESC", max_results=30))
        calls.append(_call("GoogleDrive_gdrive_search", query="metrics dashboard export", limit=5))
        return Reply(tool_calls=calls)
    files = [f for r in state.all("GoogleDrive_gdrive_search") for f in r.get("files") or ()]
    if "GoogleDrive_gdrive_read_file" not in state.results and files:
        wanted = [f for f in files if template and f.get("name") == template.group(1)] or files[:1]
        extra = [f for f in files if re.search(r"metric|dashboard", str(f.get("name")), re.I)]
        return Reply(tool_calls=[_call("GoogleDrive_gdrive_read_file", file_id=f["id"])
                                 for f in {id(f): f for f in wanted + extra}.values()])
    documents = state.all("GoogleDrive_gdrive_read_file")
    template_doc = next((d for d in documents if template and d.get("name") == template.group(1)),
                        documents[0] if documents else {})
    sections = re.findall(r"^#*\s*([A-Z][A-Za-z ]{3,30})\s*$", str(template_doc.get("content", "")), re.M)
    metric_lines = []
    for r in state.all("Slack_search_messages"):
        for m in r.get("messages") or ():
            if re.search(r"\d", str(m.get("text"))) and re.search(r"%|closed|week", str(m.get("text")), re.I):
                metric_lines.append(f"{m.get('text')} (Slack #{m.get('channel')}, {m.get('author')})")
    for d in documents:
        if d is not template_doc and re.search(r"metric|dashboard", str(d.get("name")), re.I):
            metric_lines += [line.strip() for line in str(d.get("content", "")).splitlines()
                             if re.search(r"\d", line) and len(line.strip()) > 8][:8]
    issues = [i for r in state.all("Jira_SearchIssuesWithJql") for i in r.get("issues") or ()]
    done = [i for i in issues if str(i.get("status", "")).lower() in ("done", "closed", "resolved")]
    open_ = [i for i in issues if i not in done]
    for i in issues:
        for c in i.get("comments") or ():
            if re.search(r"\d+(?:\.\d+)?\s*%", str(c.get("body"))):
                metric_lines.append(f"{c.get('body')} (Jira {i.get('key')})")
    events = [e for r in state.all("GoogleCalendar_ListEvents") for e in r.get("events") or ()]
    body = {
        "Highlights": [f"{len(done)} issue(s) completed this week"] + metric_lines[:2],
        "Metrics": metric_lines or ["No metric updates found this week."],
        "Completed work": [f"{i.get('key')}: {i.get('summary')}" for i in done] or ["None"],
        "Risks": [f"{i.get('key')}: {i.get('summary')} ({i.get('status')})" for i in open_
                  if str(i.get("status", "")).lower() in ("blocked", "in review")] or ["None reported"],
        "Next week": [f"{i.get('key')}: {i.get('summary')} ({i.get('status')})" for i in open_] or ["Continue"],
        "Events": [f"{e.get('title')} ({e.get('start')})" for e in events[:5]],
    }
    order = sections or list(body)
    lines = [f"Weekly report — {project.group(1) if project else ''} (week of {state.today})"]
    for section in order:
        key = next((k for k in body if k.lower() in section.lower() or section.lower() in k.lower()), None)
        lines.append(f"\n{section}")
        lines += [f"- {item}" for item in (body[key] if key else ["See above"])]
    return _final("\n".join(lines), "Structure from the template in Drive; metrics quoted from Slack/Drive/Jira; "
                                     "completed and open work from Jira (updated this week); events from Calendar.")


@register_policy("oracle-agent")
def oracle_agent(request: dict[str, Any]) -> Reply:
    state = _State(request)
    kind = _task_type(state.prompt)
    if state.turn >= 8:
        return _final("I could not complete the task within my step budget.", "Stopped early.")
    return {"planning": _plan, "email": _email, "report": _report}[kind](state)
