"""The oracle agent's e-mail reply: find the customer's question and the tracking issue; reply with its date.

Find the customer's thread (by address, name, or the words of the question) and read it, read the
response playbook, find the Jira issue (by the keys the thread or Slack names, else by its words)
and reply with its fixVersion release date in cautious terms — or, once it has shipped, as a fact.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from ....sim import Reply
from ._people import name_candidates
from ._state import DONE, EMAIL, STOP, WORD, State, final, tool_call, words

__all__ = ["email_reply"]

_ISSUE = re.compile(r"\b[A-Z][A-Z0-9]+-\d+\b")
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_ETA_WORDS = "when release released available availability ETA timeline launch date update feature"


def email_reply(state: State) -> Reply:
    customer = next(iter(EMAIL.findall(state.prompt)), None)
    named = name_candidates(state.prompt)
    if not state.ran("Gmail_SearchThreads"):
        prompt_topic = " ".join(w for w in words(state.prompt) if w not in STOP)
        search = (tool_call("Gmail_SearchThreads", sender=customer, max_results=5) if customer
                  else tool_call("Gmail_SearchThreads", query=f"{_ETA_WORDS} {prompt_topic}", max_results=5))
        playbooks = tool_call("GoogleDrive_gdrive_search", query="customer response playbook guidelines communication",
                              limit=10)
        return Reply(tool_calls=[search, playbooks])
    threads = state.items("Gmail_SearchThreads", "threads")
    if not threads and named and len(state.results["Gmail_SearchThreads"]) == 1:
        return Reply(tool_calls=[tool_call("Gmail_SearchThreads", sender=named[0], max_results=5)])
    if not state.ran("Gmail_GetThread") and not state.ran("GoogleDrive_gdrive_read_file"):
        calls = [tool_call("Gmail_GetThread", thread_id=str(t.get("id"))) for t in threads[:1 if customer else 2]]
        playbook = _playbook(state.items("GoogleDrive_gdrive_search", "files"))
        if playbook:
            calls.append(tool_call("GoogleDrive_gdrive_read_file", file_id=str(playbook.get("id"))))
        if calls:
            return Reply(tool_calls=calls)
    thread = _question_thread(state.all("Gmail_GetThread"), customer)
    text = " ".join(str(m.get("body", "")) for m in thread.get("messages") or () if isinstance(m, dict))
    subject = re.sub(r"^(?:(?:re|fwd?|aw):\s*)+", "", str(thread.get("subject", "")), flags=re.I)
    keys = list(dict.fromkeys(_ISSUE.findall(f"{subject} {text}")))
    topic = [w for w in WORD.findall(re.sub(r"^question about\s*", "", subject, flags=re.I))
             if len(w) > 3 and w.lower() not in STOP]
    if not keys and not state.ran("Slack_search_messages"):
        return Reply(tool_calls=[tool_call("Slack_search_messages", query=" ".join(topic[:4]) or "feature", limit=10)])
    wanted = {w.lower() for w in topic}
    for m in state.items("Slack_search_messages", "messages"):
        if len(wanted & set(words(str(m.get("text", ""))))) >= 2:  # a message about this feature naming its issue
            keys += [k for k in _ISSUE.findall(str(m.get("text", ""))) if k not in keys]
    if not state.ran("Jira_SearchIssuesWithJql"):
        clauses = [f'summary ~ "{w}"' for w in topic[:5]]
        if keys:
            clauses.insert(0, "key IN (" + ", ".join(keys) + ")")
        jql = " OR ".join(clauses or ['status != Done']) + " ORDER BY updated DESC"
        return Reply(tool_calls=[tool_call("Jira_SearchIssuesWithJql", jql=jql, max_results=20)])
    issues = state.items("Jira_SearchIssuesWithJql", "issues")
    issues.sort(key=lambda i: (i.get("key") not in keys, _release_date(i) is None,
                               -len(wanted & set(words(str(i.get("summary")))))))
    if not issues:
        return final("Thank you for your message. We are checking the release timing and will follow up shortly.",
                     "No tracking issue was found in Jira.")
    senders = " ".join(str(m.get("from", "")) for m in thread.get("messages") or () if isinstance(m, dict))
    greet = next((n for n in named if words(n)[0] in words(senders)), "")  # a name the prompt gives, if they wrote
    return _reply(issues[0], subject, greet, state.today)


def _playbook(files: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The current (not deprecated) guidance document among the Drive results."""
    current = [f for f in files if not re.search(r"deprecated|outdated|archive|old\b", str(f.get("name")), re.I)]
    guidance = [f for f in current if re.search(r"playbook|guideline|macro|policy|response|communication",
                                                str(f.get("name")), re.I)]
    return guidance[0] if guidance else current[0] if current else None


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
    if release and release <= today and status.lower() in DONE:  # shipped: a target "that may change" would mislead
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
    return final(answer, rationale)
