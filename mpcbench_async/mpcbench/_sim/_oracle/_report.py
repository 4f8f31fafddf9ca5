"""The oracle agent's weekly report: fill the team's template from this week's work, metrics and meetings.

Read the report template when there is one, this week's Jira changes of the team's main project,
the metric statements of the week in Slack, Gmail, Drive and Jira, and the project's meetings,
then fill the template's sections quoting every number exactly as its source states it.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from ....sim import Reply
from ._state import DONE, STOP, State, final, tool_call, words

__all__ = ["weekly_report"]

_METRIC_WORDS = ("metrics update WoW week-over-week growth increase decrease improved improvement dropped reduction "
                 "percent KPI dashboard closed users latency")
_NUMBER = re.compile(r"[-+−]?\d+(?:[.,]\d+)?")
_SIGNED = re.compile(r"[-+−]\d+(?:\.\d+)?\s*%")
_DEFAULT_SECTIONS = ["Highlights", "Key metrics", "Completed work", "In progress", "Risks", "Next week", "Meetings"]


def weekly_report(state: State) -> Reply:
    template = re.search(r"['‘“\"]([^'’”\"]{4,})['’”\"]", state.prompt)
    project = re.search(r"\(([A-Z][A-Z0-9]+)\)", state.prompt)
    monday = state.today - timedelta(days=state.today.weekday())
    if not state.ran("GoogleDrive_gdrive_search"):
        jql = ((f"project = {project.group(1)} AND " if project else "")
               + "updated >= startOfWeek() ORDER BY updated DESC")
        return Reply(tool_calls=[
            tool_call("GoogleDrive_gdrive_search", query=template.group(1) if template else "weekly report template",
                      limit=5),
            tool_call("GoogleDrive_gdrive_search", query="metrics dashboard export", limit=5),
            tool_call("Slack_search_messages", query=_METRIC_WORDS, limit=50),
            tool_call("Gmail_SearchThreads", query="weekly update summary metrics report", after=monday.isoformat(),
                      max_results=5),
            tool_call("GoogleCalendar_ListEvents", start_date=monday.isoformat(),
                      end_date=(monday + timedelta(days=6)).isoformat()),
            tool_call("Jira_SearchIssuesWithJql", jql=jql, max_results=50)])
    files = state.items("GoogleDrive_gdrive_search", "files")
    template_file = _template(files, template.group(1) if template else None)
    if not state.ran("GoogleDrive_gdrive_read_file") and not state.ran("Gmail_GetThread"):
        metric_files = [f for f in files if re.search(r"metric|dashboard|export", str(f.get("name")), re.I)]
        reads = {str(f.get("id")): f for f in ([template_file] if template_file else []) + metric_files[:2]}
        threads = [t for t in state.items("Gmail_SearchThreads", "threads")
                   if re.search(r"weekly|update|report|summary|metric", str(t.get("subject")), re.I)]
        calls = [tool_call("GoogleDrive_gdrive_read_file", file_id=i) for i in reads]
        calls += [tool_call("Gmail_GetThread", thread_id=str(t.get("id"))) for t in threads[:1]]
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
    done = [i for i in issues if str(i.get("status", "")).lower() in DONE]
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
    return final("\n".join(lines), "Structure from the report template in Drive (or a standard one when there is "
                                     "none); metrics quoted from Slack/Gmail/Drive/Jira; completed and open work from "
                                     "Jira (updated this week); meetings from Calendar.")


def _template(files: list[dict[str, Any]], name: str | None) -> dict[str, Any] | None:
    """The report template: the file the user named, else one whose name says it is a template."""
    exact = [f for f in files if name and str(f.get("name", "")).lower() == name.lower()]
    templates = [f for f in files if re.search(r"template", str(f.get("name")), re.I)]
    return exact[0] if exact else templates[0] if templates else None


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
    said = set(words(section))
    best = max(body, key=lambda k: len(said & set(aliases[k].split())))
    return best if said & set(aliases[best].split()) else None


def _metric_statements(state: State, documents: list[dict[str, Any]], issues: list[dict[str, Any]],
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


def _meetings(state: State, issues: list[dict[str, Any]]) -> list[str]:
    """This week's events that share words with the project's issues (all of them when none does)."""
    events = state.items("GoogleCalendar_ListEvents", "events")
    vocabulary = {w for i in issues for w in words(str(i.get("summary", ""))) if len(w) > 2 and w not in STOP}
    related = [e for e in events if vocabulary & set(words(str(e.get("title", ""))))] or events
    return [f"{e.get('title')} ({e.get('start')})" for e in related[:6]] or ["None"]
