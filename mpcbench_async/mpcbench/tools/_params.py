"""Argument types of the nine tools: msgspec Structs, which give both validation and JSON Schema."""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = [
    "FindFreeSlots", "GetThread", "JiraSearch", "ListEvents", "ReadFile", "SearchContacts", "SearchFiles",
    "SearchMessages", "SearchThreads",
]

DATE_HELP = ("YYYY-MM-DD, an ISO datetime, or relative to the scenario's today: today, tomorrow, yesterday, "
             "this_week, next_week, last_week, +Nd, -Nd")


def _d(text: str) -> msgspec.Meta:
    return msgspec.Meta(description=text)


class _Args(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class SearchMessages(_Args):
    """Search Slack messages by words (ranked; every result names its author and channel)."""

    query: Annotated[str, _d("words to look for, e.g. 'sync next week API launch'")]
    channel: Annotated[str | None, _d("only this channel: its name (with or without #) or id, e.g. a result's "
                                      "'channel'")] = None
    user: Annotated[str | None, _d("only messages by this person (name or email)")] = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=100, description="maximum results (default 20)")] = 20


class SearchContacts(_Args):
    """Find contacts by (part of) a name or an email address."""

    name: Annotated[str, _d("a name such as 'Alice' or 'Alice Kim', or an email")]
    limit: Annotated[int, msgspec.Meta(ge=1, le=100, description="maximum results (default 10)")] = 10


class FindFreeSlots(_Args):
    """Free time that ALL the given people share, inside working hours, weekends skipped unless asked."""

    email_addresses: Annotated[list[str], msgspec.Meta(min_length=1, description="attendee emails")]
    start_date: Annotated[str, _d("first day; " + DATE_HELP)] = "today"
    end_date: Annotated[str | None, _d("last day, inclusive (default: six days after start_date)")] = None
    min_duration_minutes: Annotated[int, msgspec.Meta(ge=1, le=1440, description="shortest slot to return")] = 30
    slot_minutes: Annotated[int, msgspec.Meta(ge=5, le=480, description=(
        "if set, cut free time into consecutive meeting-length slots of this many minutes"))] | None = None
    workday_start: Annotated[str | None, _d("HH:MM (default: the company's working hours)")] = None
    workday_end: Annotated[str | None, _d("HH:MM (default: the company's working hours)")] = None
    include_weekends: Annotated[bool, _d("also search Saturdays and Sundays")] = False


class ListEvents(_Args):
    """Calendar events in a date range, optionally for one attendee or matching words."""

    start_date: Annotated[str, _d("first day; " + DATE_HELP)] = "today"
    end_date: Annotated[str | None, _d("last day, inclusive (default: six days after start_date)")] = None
    attendee_email: Annotated[str | None, _d("only events this person attends")] = None
    query: Annotated[str | None, _d("only events whose title/description contain these words")] = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=200, description="maximum results (default 50)")] = 50


class SearchThreads(_Args):
    """Search email threads by words, sender, recipient and date."""

    query: Annotated[str | None, _d("words in subject or body")] = None
    sender: Annotated[str | None, _d("sender name or email")] = None
    recipient: Annotated[str | None, _d("recipient name or email")] = None
    after: Annotated[str | None, _d("only threads with a message on/after this day; " + DATE_HELP)] = None
    before: Annotated[str | None, _d("only threads with a message on/before this day; " + DATE_HELP)] = None
    max_results: Annotated[int, msgspec.Meta(ge=1, le=100, description="maximum threads (default 10)")] = 10


class GetThread(_Args):
    """Read one email thread in full."""

    thread_id: Annotated[str, _d("a thread id from Gmail.SearchThreads")]


class SearchFiles(_Args):
    """Search Drive files by words in their name and content."""

    query: Annotated[str, _d("words to look for")]
    limit: Annotated[int, msgspec.Meta(ge=1, le=100, description="maximum results (default 10)")] = 10


class ReadFile(_Args):
    """Read a Drive file's content."""

    file_id: Annotated[str, _d("a file id from GoogleDrive.gdrive_search (an exact file name also works)")]


class JiraSearch(_Args):
    """Search Jira issues with a JQL subset (unsupported clauses are named in the result)."""

    jql: Annotated[str, _d("e.g. project = APP AND text ~ \"rollout\" ORDER BY updated DESC; fields: project "
                           "(key or name), key, status, assignee, reporter, priority, fixVersion, summary, "
                           "description, text, updated, created; operators = != ~ !~ IN, NOT IN, IS [NOT] EMPTY, "
                           "> >= < <= for dates and priority (dates also -7d, now(), startOfDay/Week/Month(), "
                           "endOfDay/Week/Month(), e.g. startOfWeek(-1)); AND OR NOT ( ); ORDER BY")]
    max_results: Annotated[int, msgspec.Meta(ge=1, le=200, description="maximum issues (default 20)")] = 20
