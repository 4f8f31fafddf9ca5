"""``sim/judge``'s [stale] rule: a weekly report quotes the report week's figures, not an older week's.

The report week (Monday–Sunday) is now's week, read from the judge input in this order:

* a FindTimeSlots call with a relative start (how ``_judge_evidence`` reads "now");
* a ListEvents call with a week name (``start_date: "this_week"``, ``"last_week"``…): the week of
  the events it returned, shifted back by the name's offset;
* a JQL search bounded by ``startOfWeek()`` (``updated >= startOfWeek()``): the week of the oldest
  date the returned issues hold in that field (the bound puts every one in this week or later; a later
  edit or an automated touch may stamp one ahead of now);
* else the week of the newest message (Slack, e-mail), else of the newest date field of a file or
  other result (``modifiedTime``…), else of an issue (``updated``, the field later edits move most);
  never a date in a name, which may lie ahead;

one week earlier when the prompt asks for last week's report.

Each quantity a tool result states is dated by the innermost object holding it that carries a date
(a message's ``timestamp``, an e-mail's ``date``, a file's ``modifiedTime``, an issue's ``updated``…;
a date in a file's name or an e-mail's subject wins: it names the period the file covers). A
quantity its own text marks as the previous week's ("last week: −9%") counts as a week older.

A quantity the answer quotes is stale when every statement grounding it (same kind, value and
label, no contrary direction) is dated before the report week, and either a statement of the
same label with another value is dated inside the week or the grounding is a period figure (a
change, or in a text about a week, a sprint, an update, metrics or a report). Never stale: an
undated grounding, what the answer itself marks as past ("up from 9% last week", "vs 9%",
"(was 51)", "previous week: 9%", a "Last week" table column), a quantity quoted beside the
week's own value for the same label, and standing figures (targets, goals, SLAs, budgets).
Single-digit whole numbers are no claims here either.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

from ..._answers import Quantity, Stated, find_dates, find_quantities, labels_match, same_quantity
from ._judge_evidence import WEEK_NAMES, Evidence, read_stamp

__all__ = ["Dated", "compared_labels", "dated_statements", "marked_past", "report_week", "stale_quantities"]

_DATE_FIELDS = ("timestamp", "date", "sent_at", "sent", "posted_at", "last_date", "modifiedTime", "modified_time",
                "updated", "updated_at", "createdTime", "created", "created_at")
_TITLE_FIELDS = ("name", "title", "subject")
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_PERIODIC = re.compile(r"(?i)\b(?:weeks?|weekly|wow|w/w|wk|sprint|updates?|recap|reports?|digest|snapshot|metrics|"
                       r"kpis?)\b")
_STANDING = re.compile(r"(?i)\b(?:targets?|goals?|sla|slo|budgets?|thresholds?|limits?|baseline|quotas?|"
                       r"objectives?|okrs?)\b")
_EARLIER = r"(?:last|previous|prior|preceding)\s+(?:week|period|sprint)"
_PAST_BEFORE = re.compile(
    r"(?i)(?:\bfrom|\bvs\.?|\bversus|\bcompared\s+(?:to|with)|\bagainst|\bpreviously|\bprior|\bprev\.?|\(\s*was"
    rf"|\b{_EARLIER}(?:['’]s)?\s*[:=]?|\bLW\s*[:=]?)"
    r"\s*\(?\s*(?:(?:a|an|the|only|just|about|around|roughly)\s+)*~?\s*$")
_PAST_AFTER = re.compile(
    rf"(?i)^\s*\)?\s*,?\s*\(?\s*(?:(?:in|during|for|as\s+of)\s+)?(?:the\s+)?(?:{_EARLIER}|(?:last|previous)\s+report)"
    r"\b(?!\s*[:=])"
    r"|^\s*\(?\s*(?:a|one|two|\d+)\s+weeks?\s+(?:ago|earlier|before)\b|^\s*\(?\s*(?:the\s+)?week\s+before\b")
_PAST_COLUMN = re.compile(rf"(?i)\b{_EARLIER}\b|\bLW\b|\bprev\b|\bbefore\b|\bprior\b")
_JQL_WEEK = re.compile(r"(?i)\b(updated|created)\s*>=?\s*startOfWeek\(\s*\)")
_LAST_WEEKS_REPORT = re.compile(
    r"(?i)\blast\s+week['’]s\s+(?:\w+\s+)?(?:report|update|summary|recap)\b"
    r"|\b(?:report|update|summary|recap)\s+(?:for|of|on|covering)\s+(?:the\s+)?(?:last|previous)\s+week\b")


@dataclass(frozen=True, slots=True)
class Dated:
    """A quantity a tool result (or the prompt) states, the day of what states it, and how it is written there."""

    quantity: Quantity
    day: date | None
    figure: str  # the quantity as written ("−18%", "2,210")
    source: str  # the line stating it and who or what holds it
    periodic: bool  # a period's figure: a change, or in a text about a week, an update, metrics…
    earlier: bool = False  # its text gives it as the previous period's ("was 51"): dated a week back


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _field_day(holder: dict[str, Any], evidence: Evidence) -> date | None:
    """The day an object's date field gives (a message's timestamp, a file's modifiedTime, an issue's updated…)."""
    stamp = next((s for k in _DATE_FIELDS if (s := read_stamp(holder.get(k), evidence.tz))), None)
    return stamp.astimezone(evidence.tz).date() if stamp else None


def _holder_day(holder: dict[str, Any], evidence: Evidence) -> date | None:
    """The day an object (message, e-mail, file, issue) is from: a date its name/subject writes, else its date field."""
    day = _field_day(holder, evidence)
    for key in _TITLE_FIELDS:
        title = holder.get(key)
        if not isinstance(title, str):
            continue
        if day is not None:
            named = [m.value for m in find_dates(title, anchor=day) if m.kind == "date"]
        else:
            named = [date.fromisoformat(m) for m in _ISO_DAY.findall(title) if read_stamp(m)]
        if named:
            return named[0]
    return day


def _source(stated: Stated) -> str:
    """Where the quantity is stated: the line holding it (or its field's label) and who or what holds it."""
    holder = stated.holders[-1] if stated.holders else {}
    q, text = stated.quantity, stated.text
    line = text[text.rfind("\n", 0, q.start) + 1:].split("\n", 1)[0] if text else q.label
    line = " ".join(line.split())
    who = next((str(holder[k]) for k in ("author", "from", *_TITLE_FIELDS, "key") if isinstance(holder.get(k), str)),
               "")
    return (f"'{line[:60]}…'" if len(line) > 60 else f"'{line}'") + (f" ({who})" if who else "")


def compared_labels(text: str, quantities: list[Quantity]) -> list[Quantity]:
    """The quantities, those given as an earlier period's value ("18% this week, up from 9% last week") also
    labelled by the figure before them on their line: a comparison names the metric that figure names."""
    out = []
    for index, q in enumerate(quantities):
        before = quantities[index - 1] if index else None
        if before and "\n" not in text[before.end:q.start] and marked_past(text, q):
            q = replace(q, label=f"{before.label} {q.label}")
        out.append(q)
    return out


def marked_past(text: str, quantity: Quantity) -> bool:
    """Whether the text gives the quantity as an earlier period's: "from 9%", "9% last week", a "Last week" column."""
    before = text[max(0, quantity.start - 40):quantity.start]
    if _PAST_BEFORE.search(before) or _PAST_AFTER.match(text[quantity.end:quantity.end + 40]):
        return True
    line_start = text.rfind("\n", 0, quantity.start) + 1
    if not text[line_start:quantity.start].lstrip().startswith("|"):
        return False
    header = text[line_start:].split("\n", 1)[0]
    for line in reversed(text[:line_start].split("\n")[:-1]):
        if not line.lstrip().startswith("|"):
            break
        header = line
    column = text[line_start:quantity.start].count("|") - 1
    cells = header.strip().strip("|").split("|")
    return 0 <= column < len(cells) and bool(_PAST_COLUMN.search(cells[column]))


def dated_statements(evidence: Evidence) -> list[Dated]:
    """Every quantity the tool results state, dated (see the module docstring); the prompt's, undated."""
    prompt = evidence.texts[0]
    out = [Dated(q, None, prompt[q.start:q.end], "the request", False) for q in find_quantities(prompt)]
    for stated in evidence.stated:
        day = next((d for h in reversed(stated.holders) if (d := _holder_day(h, evidence))), None)
        earlier = bool(stated.text) and marked_past(stated.text, stated.quantity)
        if day is not None and earlier:
            day -= timedelta(days=7)
        holder_text = " ".join(str(v) for v in (stated.holders[-1] if stated.holders else {}).values()
                               if isinstance(v, str))
        periodic = bool(stated.quantity.direction or _PERIODIC.search(f"{stated.quantity.label} {holder_text}"))
        figure = stated.text[stated.quantity.start:stated.quantity.end] if stated.text else f"{stated.quantity.value:g}"
        out.append(Dated(stated.quantity, day, figure, _source(stated), periodic, earlier))
    return out


def _listed_week(evidence: Evidence) -> date | None:
    """Now's Monday from a ListEvents call with a week name: the week of its events, moved back by the name."""
    for key, arguments, result in evidence.steps:
        start = str(arguments.get("start_date") or "").strip().lower().replace(" ", "_")
        if not key.endswith("listevents") or start not in WEEK_NAMES or not isinstance(result, dict):
            continue
        days = [s.astimezone(evidence.tz).date() for e in result.get("events") or () if isinstance(e, dict)
                and (s := read_stamp(e.get("start"), evidence.tz))]
        if days:
            return _monday(min(days)) - timedelta(days=WEEK_NAMES[start])
    return None


def _jql_week(evidence: Evidence) -> date | None:
    """Now's Monday from a JQL search bounded by ``startOfWeek()``: the week of the oldest date in that field."""
    for key, arguments, result in evidence.steps:
        match = _JQL_WEEK.search(str(arguments.get("jql") or ""))
        if not key.endswith("searchissueswithjql") or not match or not isinstance(result, dict):
            continue
        days = [s.astimezone(evidence.tz).date() for i in result.get("issues") or () if isinstance(i, dict)
                and (s := read_stamp(i.get(match.group(1).lower()), evidence.tz))]
        if days:
            return _monday(min(days))
    return None


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object inside a value, itself included."""
    if isinstance(value, dict):
        yield value
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            yield from _objects(item)


def _newest_day(evidence: Evidence) -> date | None:
    """The newest day a message was sent, else the newest date field of a non-issue result, else of an issue
    (names may give future dates; an issue's ``updated`` moves with every later edit)."""
    sent = [m.when.astimezone(evidence.tz).date() for m in evidence.messages if m.when]
    issues = [i for r in evidence.results for i in r.get("issues") or () if isinstance(i, dict)]
    stamped = [d for r in evidence.results for o in _objects({k: v for k, v in r.items() if k != "issues"})
               if (d := _field_day(o, evidence))]
    touched = [d for i in issues for o in _objects(i) if (d := _field_day(o, evidence))]
    return max(sent or stamped or touched, default=None)


def report_week(evidence: Evidence) -> tuple[date, str] | None:
    """(the Monday of the week the report covers, how it was read), or ``None`` when nothing is dated."""
    found: tuple[date, str] | None = None
    if evidence.anchor is not None:
        found = _monday(evidence.anchor), "a FindTimeSlots call's relative start"
    elif listed := _listed_week(evidence):
        found = listed, "a ListEvents call's relative start"
    elif jql := _jql_week(evidence):
        found = jql, "a JQL search from startOfWeek()"
    elif newest := _newest_day(evidence):
        found = _monday(newest), "the newest dated tool result"
    if found and _LAST_WEEKS_REPORT.search(evidence.texts[0]):
        return found[0] - timedelta(days=7), found[1] + ", one week back as the request asks for last week's"
    return found


def _claimed(quantity: Quantity) -> bool:
    return quantity.kind == "percent" or not (quantity.value.is_integer() and abs(quantity.value) < 10)


def stale_quantities(evidence: Evidence, answer: str) -> list[str]:
    """Why each stale quantity of the answer is stale (see the module docstring); empty when none is."""
    week = report_week(evidence)
    if week is None:
        return []
    monday, how = week
    dated = dated_statements(evidence)
    quoted = [q for q in find_quantities(answer) if _claimed(q)]
    out = []
    for q in quoted:
        grounds = [d for d in dated if same_quantity(q, d.quantity)]
        if not grounds or any(d.day is None or d.day >= monday for d in grounds):
            continue
        if marked_past(answer, q) or _STANDING.search(q.label):
            continue
        current = [d for d in dated if d.day and d.day >= monday and d.quantity.kind == q.kind
                   and abs(abs(d.quantity.value) - abs(q.value)) > 1e-9 and labels_match(q.label, d.quantity.label)]
        if any(same_quantity(other, d.quantity) for other in quoted for d in current):
            continue  # quoted beside this week's value: a comparison
        if not current and not any(d.periodic for d in grounds):
            continue
        newest = max(grounds, key=lambda d: (d.day or monday, not d.earlier))
        why = (f"{answer[q.start:q.end].strip()} is stated only by {newest.source} of {newest.day}"
               + (" (as the week before's value)" if newest.earlier else "")
               + f", before the report week of {monday} (read from {how})")
        if current:
            latest = max(current, key=lambda d: d.day or monday)
            why += f"; {latest.source} of {latest.day} gives {latest.figure}"
        out.append(why)
    return out
