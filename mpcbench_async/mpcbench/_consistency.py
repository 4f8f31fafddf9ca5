"""Consistency checks beyond the schemas: within one source, and across the six.

Each check returns human-readable problems (``"$.messages[3].channel_id: …"``)
that are sent back to the model for repair, like schema errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ._scenario import Scenario

__all__ = ["cross_source_problems", "source_problems"]


def _ids(items: Any, field: str) -> set[str]:
    return {str(item.get(field)) for item in items or () if isinstance(item, dict)}


def _slack(doc: dict[str, Any]) -> list[str]:
    channels, users = _ids(doc.get("channels"), "id"), _ids(doc.get("users"), "id")
    problems = []
    for i, message in enumerate(doc.get("messages") or ()):
        if message.get("channel_id") not in channels:
            problems.append(f"$.messages[{i}].channel_id: {message.get('channel_id')!r} is not a channel id")
        if message.get("user_id") not in users:
            problems.append(f"$.messages[{i}].user_id: {message.get('user_id')!r} is not a user id")
    return problems


def _jira(doc: dict[str, Any], scenario: Scenario) -> list[str]:
    keys = _ids(doc.get("issues"), "key")
    projects = _ids(doc.get("projects"), "key")
    wanted = {seed.issue_key for project in scenario.projects for seed in project.jira_seeds}
    wanted |= {sub.issue_key_hint for sub in scenario.sub_scenarios if sub.issue_key_hint}
    problems = [f"$.issues: issue {key} (named in the scenario) is missing" for key in sorted(wanted - keys)]
    for i, issue in enumerate(doc.get("issues") or ()):
        project = (issue.get("project") or {}).get("key")
        if project not in projects:
            problems.append(f"$.issues[{i}].project.key: {project!r} is not a project key")
    return problems


def _calendar(doc: dict[str, Any]) -> list[str]:
    problems = []
    for i, event in enumerate(doc.get("events") or ()):
        try:
            start, end = datetime.fromisoformat(event["start"]), datetime.fromisoformat(event["end"])
        except (KeyError, TypeError, ValueError):
            continue  # the schema reports missing or malformed timestamps
        if start.tzinfo is not None and end.tzinfo is not None and end <= start:
            problems.append(f"$.events[{i}]: end {event['end']} is not after start {event['start']}")
    return problems


def source_problems(source: str, doc: dict[str, Any], scenario: Scenario) -> list[str]:
    """Problems a single source can have on its own (dangling references, missing seeds)."""
    if source == "slack":
        return _slack(doc)
    if source == "jira":
        return _jira(doc, scenario)
    if source == "calendar":
        return _calendar(doc)
    return []


def cross_source_problems(docs: Mapping[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Problems between sources, keyed by the source to repair: attendees and users must be contacts."""
    contacts = {str(c.get("email", "")).lower() for c in (docs.get("contacts") or {}).get("contacts") or ()}
    problems: dict[str, list[str]] = {}
    if not contacts:
        return problems
    for i, event in enumerate((docs.get("calendar") or {}).get("events") or ()):
        for j, attendee in enumerate(event.get("attendees") or ()):
            email = str(attendee.get("email", "")).lower()
            if email not in contacts:
                problems.setdefault("calendar", []).append(
                    f"$.events[{i}].attendees[{j}].email: {email!r} is not in the contacts")
    for i, user in enumerate((docs.get("slack") or {}).get("users") or ()):
        email = str(user.get("email", "")).lower()
        if email not in contacts:
            problems.setdefault("slack", []).append(f"$.users[{i}].email: {email!r} is not in the contacts")
    return problems
