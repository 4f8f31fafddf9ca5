"""Deterministic checks beside the judge, where the truth is computable from the data.

Every check reports ``pass``, ``fail`` or ``n/a`` — ``n/a`` when there is nothing to verify, never a
pass — and a detail saying what was compared. How answers are read (dates, proposed slots, date
windows, quantities) is in ``mpcbench_async._answers``.

planning (``facts.planning``)
    * ``planning.slots_found`` — the answer proposes at least one slot (a date and a time); fail otherwise.
    * ``planning.slots_free`` — every proposed slot lies in the participants' common free time: a
      weekday inside the window, after the reference now, inside working hours, clear of every
      participant's busy time (a slot whose length the answer does not state is taken to last the
      requested duration). n/a when nothing is proposed.
    * ``planning.duration`` — every slot whose length the answer states lasts the requested
      duration. n/a when nothing is proposed or no proposed slot states its length.
    * ``planning.participants`` — the answer names every participant: by full name, by e-mail, or
      by first or last name when no other contact shares it (``Nisha`` is not enough when the
      contacts hold Nisha Gurung and Nisha Rai). Participants given as e-mails are named
      through the Contacts source (else the calendar's attendee names). n/a when nothing is
      proposed (the participants belong to a proposal).
    The request's own window repeated back (a range of the prompt, ``between 10:00 and 16:00``, longer than the
    meeting) is not a proposal: a non-answer that echoes the prompt proposes nothing.
email_reply (``facts.target_date``, else the release date of ``facts.issue_key`` /
``data_dependencies.jira_issue_key`` in the Jira data)
    * ``email_reply.target_date`` — a date or window the answer gives for the release contains the
      target date: the exact day, ``week of <Monday>``, a date range, a month or part of one
      (``mid-December``), at most 31 days long; or a deadline (``by <date>``) on or at most 31 days
      after the target. Dates the answer gives for something else — ``I'll follow up by Dec 5``,
      ``as of Nov 24``, ``your email of Nov 20`` — are not release dates. Hedges do not hold the
      target: alternatives joined by ``or`` with a gap between them (``either Nov 10 or Nov 20``;
      adjacent ones such as ``Dec 18 or 19`` or ``late Nov or early Dec`` make one window, and after a
      caveat — ``Nov 20, or possibly Nov 24`` — the first is the answer's date), a range whose two
      written ends are more than 14 days apart (``Nov 10 – Nov 30``), and a deadline naming an event
      (``by the Nov 30 launch`` says the release is on Nov 30). Fail when no release date or window
      contains the target (a wrong date, a hedge, or none at all); n/a when the data has no target
      date.
document_generation
    * ``report.metrics_quoted`` (``facts.metrics``) — the answer states each expected value as the
      right kind (a ``…_percent`` metric as a percentage, others as numbers) beside a label naming
      the metric (a shared word, a synonym bug/issue/ticket, closed/resolved, or an acronym); a
      written direction must agree with the metric's (``down 12%`` or ``-12%`` for -12, not ``up 12%``;
      the metric's direction is its sign for a change, or a reduction/increase word in its name).
    * ``report.metrics_in_sources`` — every percentage the answer quotes is grounded: some source
      states the same percentage, with no contradicting direction, beside a label sharing a
      significant word. Dates, times, ids (``APP-412``) and version numbers ground nothing. n/a when
      the answer quotes no percentage. Source percentages are read from texts that hold a percentage
      and from numeric fields whose key names one (``…_percent``, ``…_pct``, ``…_rate``, ``…ratio``).

Every loop whose length the answer sets calls ``checkpoint()`` once per step (here and in ``_answers``): the
agent stage runs the checks on the event loop under a short budget first and, past it, again in a thread
(``_suite.AgentStage``). A check has no effect but its result (what it derives from the data is kept once whole,
``ScenarioData.derived``), so the rerun gives the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Any, Literal

import msgspec

from .._answers import (
    Period,
    Quantity,
    Slot,
    clock_ranges,
    find_periods,
    find_quantities,
    find_slots,
    fold,
    json_quantities,
    key_direction,
    same_quantity,
)
from .._checkpoint import checkpoint
from ._data import ScenarioData
from ._task import Task
from .tools._calendar import busy_in, scenario_blocks

__all__ = ["CheckResult", "run_checks"]

Status = Literal["pass", "fail", "n/a"]


class CheckResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One check's outcome; ``n/a`` when there was nothing to verify.

    Logs written before checks had a status carry ``"passed": true|false``
    instead; they decode to ``pass``/``fail`` so old sweeps still resume.
    """

    name: str
    status: Status | Literal[""] = ""
    detail: str = ""
    legacy_passed: bool | None = msgspec.field(default=None, name="passed")

    def __post_init__(self) -> None:
        if not self.status:
            if self.legacy_passed is None:
                raise ValueError("a check needs a status (pass, fail or n/a)")
            self.status = _status(self.legacy_passed)
        self.legacy_passed = None

    @property
    def passed(self) -> bool:
        return self.status == "pass"


def _status(ok: bool) -> Status:
    return "pass" if ok else "fail"


# -- planning ---------------------------------------------------------------------------------------------------

def _contacts(data: ScenarioData) -> tuple[tuple[str, str], ...]:
    """(name, email) of every contact, in the shapes LLM-written contact lists take (read once per data)."""
    return data.derived("contact_pairs", lambda: tuple(_read_contacts(data)))


def _read_contacts(data: ScenarioData) -> list[tuple[str, str]]:
    out = []
    for c in data.source("contacts").get("contacts") or ():
        if not isinstance(c, dict):
            continue
        name = c.get("name") or c.get("display_name") or c.get("displayName") or " ".join(
            str(c.get(k) or "") for k in ("first_name", "last_name")).strip()
        listed = c.get("emails")
        emails = listed if isinstance(listed, list) else [c.get("email")]
        for email in emails:
            email = email.get("value") if isinstance(email, dict) else email
            if name or email:
                out.append((str(name or ""), str(email or "").lower()))
    return out


def _attendee_names(data: ScenarioData) -> dict[str, str]:
    """email → name from calendar attendee lists (for people missing from Contacts; read once per data)."""
    return data.derived("attendee_names", lambda: _read_attendee_names(data))


def _read_attendee_names(data: ScenarioData) -> dict[str, str]:
    out: dict[str, str] = {}
    for event in data.source("calendar").get("events") or ():
        for person in (event.get("attendees") or ()) if isinstance(event, dict) else ():
            if isinstance(person, dict) and person.get("email") and person.get("name"):
                out.setdefault(str(person["email"]).lower(), str(person["name"]))
    return out


def _people(participants: list[str], data: ScenarioData) -> list[tuple[str, str]]:
    """(name, email) per participant given by e-mail or name; the name through Contacts when it can be."""
    contacts = _contacts(data)
    attendees = _attendee_names(data)
    out = []
    for p in participants:
        key = p.strip().lower()
        match = next(((n, e) for n, e in contacts if e == key or fold(n) == fold(p.strip())), None)
        if match is None and "@" in key:
            local = re.sub(r"[._-]+", " ", key.split("@")[0]).title()
            match = (attendees.get(key, local), key)
        out.append(match or (p.strip(), ""))
    return out


_WORD = re.compile(r"[a-z0-9]+")


def _name_parts(name: str) -> list[str]:
    return _WORD.findall(fold(name))


def _named(name: str, email: str, answer: str, owners: dict[str, set[str]]) -> bool:
    """Named by e-mail, by full name, or by a first or last name no other contact shares."""
    text = fold(answer)
    if email and email in text:
        return True
    parts = _name_parts(name)
    if parts and re.search(r"\b" + r"[\s.]+".join(map(re.escape, parts)) + r"\b", text):
        return True
    words = set(_WORD.findall(text))
    ends = {parts[0], parts[-1]} if parts else set()  # a name in another script has no Latin parts
    return any(part in words and len(owners.get(part, ())) <= 1 for part in ends)


def _name_owners(people: list[tuple[str, str]]) -> dict[str, set[str]]:
    """First or last name → the distinct people (by e-mail) who carry it."""
    owners: dict[str, set[str]] = {}
    for name, email in people:
        if parts := _name_parts(name):
            for part in {parts[0], parts[-1]}:
                owners.setdefault(part, set()).add(email or name)
    return owners


def _label(slot: Slot) -> str:
    return f"{slot.start:%a %Y-%m-%d %H:%M}–{slot.end:%H:%M}"


def _slot_problem(slot: Slot, data: ScenarioData, window: tuple[date, date],
                  busy: list[tuple[str, list[tuple[datetime, datetime]]]]) -> str | None:
    """Why the slot is not common free time, or None when it is."""
    day, end = slot.start.date(), slot.end
    if not window[0] <= day <= window[1] or end.date() != day:
        return f"outside the window {window[0]}..{window[1]}"
    if day.weekday() >= 5:
        return f"on a {slot.start:%A}"
    if slot.start < data.reference_now:
        return f"before the reference now {data.reference_now:%Y-%m-%d %H:%M}"
    if slot.start.time() < data.workday_start or end.time() > data.workday_end or end <= slot.start:
        return f"outside working hours {data.workday_start:%H:%M}–{data.workday_end:%H:%M}"
    clashes = [f"{name} busy {s:%H:%M}–{e:%H:%M}" for name, intervals in busy for s, e in intervals
               if s < end and slot.start < e]
    return "; ".join(clashes) or None


def _free_check(slots: list[Slot], people: list[tuple[str, str]], data: ScenarioData,
                window: tuple[date, date]) -> CheckResult:
    blocks = scenario_blocks(data)
    busy = [(name or email, busy_in(blocks, [email])) for name, email in people if email]
    problems = []
    for s in slots:  # as many as the answer proposes, each against every busy interval
        checkpoint()
        problems.append((s, _slot_problem(s, data, window, busy)))
    return CheckResult(name="planning.slots_free", status=_status(not any(p for _, p in problems)),
                       detail="; ".join(f"{_label(s)}: {p or 'free'}" for s, p in problems))


def _duration_check(slots: list[Slot], minutes: int) -> CheckResult:
    lengths = [(s, round((s.end - s.start).total_seconds() / 60)) for s in slots if s.length_stated]
    if not lengths:
        return CheckResult(name="planning.duration", status="n/a",
                           detail="n/a: no proposed slot states its end or length")
    return CheckResult(name="planning.duration", status=_status(all(m == minutes for _, m in lengths)),
                       detail=f"requested {minutes} min; " + "; ".join(f"{_label(s)}: {m} min" for s, m in lengths))


def _participants_check(people: list[tuple[str, str]], answer: str, data: ScenarioData) -> CheckResult:
    owners = _name_owners([*_contacts(data), *people])
    missing = [name or email for name, email in people if not _named(name, email, answer, owners)]
    return CheckResult(name="planning.participants", status=_status(not missing),
                       detail=(f"missing: {', '.join(missing)}" if missing else "named")
                       + f" (of {', '.join(name or email for name, email in people)})")


def _planning(task: Task, answer: str, data: ScenarioData) -> list[CheckResult]:
    facts = task.facts.planning
    if facts is None:
        return []
    window = (date.fromisoformat(facts.window_start[:10]), date.fromisoformat(facts.window_end[:10]))
    # A start without a stated length is taken to last the requested duration (length_stated=False).
    slots = find_slots(answer, tz=data.tz, anchor=data.reference_now.date(), window=window,
                       default_minutes=facts.duration_minutes)
    # The request's own window repeated ("between 10:00 and 16:00") is longer than the meeting: not a proposal.
    windows, length = clock_ranges(task.user_prompt), timedelta(minutes=facts.duration_minutes)
    slots = [s for s in slots if not (s.end - s.start > length and (s.start.time(), s.end.time()) in windows)]
    if not slots:
        none = "n/a: nothing proposed"
        return [CheckResult(name="planning.slots_found", status="fail",
                            detail="no proposed slot (a date with a time) in the answer"),
                CheckResult(name="planning.slots_free", status="n/a", detail=none),
                CheckResult(name="planning.duration", status="n/a", detail=none),
                CheckResult(name="planning.participants", status="n/a", detail=none)]
    people = _people(facts.participants, data)
    found = f"{len(slots)} proposed slot(s) ({data.timezone_name}): " + "; ".join(map(_label, slots))
    return [CheckResult(name="planning.slots_found", status="pass", detail=found),
            _free_check(slots, people, data, window), _duration_check(slots, facts.duration_minutes),
            _participants_check(people, answer, data)]


# -- email reply ------------------------------------------------------------------------------------------------

_DATE_KEYS = ("duedate", "due_date", "dueDate", "target_date", "targetDate", "release_date", "releaseDate")


def _iso_day(value: Any) -> date | None:
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def _issue_target(issue: dict[str, Any]) -> date | None:
    """An issue's target: its fixVersion's release date, else a due/target/release date field."""
    nested = issue.get("fields")
    fields: dict[str, Any] = nested if isinstance(nested, dict) else {}
    for holder in (issue, fields):
        for version in holder.get("fixVersions") or ():
            if isinstance(version, dict) and (day := _iso_day(version.get("releaseDate") or "")):
                return day
    for holder in (issue, fields):
        for key in _DATE_KEYS:
            if holder.get(key) and (day := _iso_day(holder[key])):
                return day
    return None


def _target(task: Task, data: ScenarioData) -> tuple[str, date | None] | None:
    """(what, date) of the release target; None when the task names no target at all."""
    if task.facts.target_date:
        return "facts.target_date", date.fromisoformat(task.facts.target_date[:10])
    key = task.facts.issue_key or task.data_dependencies.get("jira_issue_key")
    if not key:
        return None
    for issue in data.source("jira").get("issues") or ():
        if isinstance(issue, dict) and str(issue.get("key", "")).upper() == str(key).upper():
            return str(key), _issue_target(issue)
    return str(key), None


_RELEASE_CUE = re.compile(
    r"(?i)\b(?:(?P<release>releas\w*|launch\w*|ship\w*|availab\w*|roll(?:ing|ed)?[\s-]?out|rollout|live|deploy\w*"
    r"|deliver\w*|eta|target\w*|expect\w*|planned|plan|scheduled|land\w*|ready|timeline|time\s*frame|window|date"
    r"|arriv\w*|go(?:es)?\s+out|ga)"
    r"|(?P<other>follow(?:ing)?[\s-]?up|an\s+update|get\s+back|check\s+in|reach\s+out|touch\s+base|keep\s+you"
    r"|your\s+(?:e-?mail|message|note|question|request)|you\s+(?:wrote|asked|mentioned)|as\s+of|since|last\s+week"
    r"|received|sent|wrote|meeting|call|today|yesterday|on\s+\w+\s+you))\b")


def _release_periods(answer: str, anchor: date) -> Iterator[Period]:
    """The dates and windows the answer gives for the release (the last cue before each, in its sentence).

    A deadline naming an event (``by the Nov 30 launch``) states that event's day as the release day."""
    for period in find_periods(answer, anchor=anchor):
        checkpoint()  # the sentence's cues are read per period: an answer of one long sentence is quadratic
        sentence_start = max(answer.rfind(c, 0, period.start) for c in ".!?\n") + 1
        cues = list(_RELEASE_CUE.finditer(answer, sentence_start, period.start))
        if not cues or cues[-1].group("release"):
            if period.deadline and _EVENT_AFTER.match(answer, period.end):
                period = replace(period, first=period.last, deadline=False)
            yield period


_EVENT_AFTER = re.compile(r"(?i)\s*(?:[\w.-]+\s+)?(?:launch|release|rollout|roll-out|go-live|ga|ship\s+date"
                          r"|deploy\w*|cutover|update|version|milestone|freeze)\b")
_ALTERNATIVE = re.compile(r"(?i)\s*,?\s*(?:or|/)\s+(?P<caveat>(?:possibly|maybe|perhaps|potentially|at\s+the\s+latest"
                          r"|at\s+worst|if\s+(?:it|QA|testing)\s+slips)\s+)?(?:(?:on|by|in|the|around)\s+)*")
_WIDEST_RANGE = 14  # days between the ends of a written range ("Dec 8 – Dec 29" hedges over three weeks)


def _alternatives(periods: list[Period], answer: str) -> list[tuple[Period, bool]]:
    """(period, hedged) after reading alternatives joined by ``or``: adjacent ones make one window (``Dec 18 or
    19``, ``late Nov or early Dec``); a caveat (``Dec 18, or possibly Dec 22``) leaves the first as the answer's
    date; other alternatives with a gap between them (``either Dec 11 or Dec 18``) are a hedge."""
    out: list[tuple[Period, bool]] = []
    for period in periods:
        checkpoint()
        joint = _ALTERNATIVE.fullmatch(answer, out[-1][0].end, period.start) if out else None
        if joint is None:
            out.append((period, False))
        elif not joint.group("caveat"):
            prev, hedged = out.pop()
            lo, hi = (prev, period) if prev.first <= period.first else (period, prev)
            joined = replace(prev, end=period.end, first=lo.first, last=max(prev.last, period.last),
                             text=answer[prev.start:period.end], explicit=False,
                             deadline=prev.deadline or period.deadline)
            out.append((joined, hedged or (hi.first - lo.last).days > 1))
    return out


def _contains(period: Period, target: date) -> bool:
    if not period.first <= target <= period.last or (period.last - target).days > 31:
        return False
    if period.explicit and (period.last - period.first).days > _WIDEST_RANGE:
        return False
    return period.deadline or (period.last - period.first).days <= 31


def _email_reply(task: Task, answer: str, data: ScenarioData) -> list[CheckResult]:
    target = _target(task, data)
    if target is None:
        return []
    source, day = target
    if day is None:
        return [CheckResult(name="email_reply.target_date", status="n/a",
                            detail=f"n/a: no target date for {source} in the Jira data")]
    periods = _alternatives(list(_release_periods(answer, data.reference_now.date())), answer)
    read = ", ".join((p.text if p.first == p.last and not p.deadline else f"{p.text} ({p.first}..{p.last})")
                     + (" [hedge: alternatives]" if hedged else "") for p, hedged in periods) or "none"
    ok = any(_contains(p, day) and not hedged for p, hedged in periods)
    return [CheckResult(name="email_reply.target_date", status=_status(ok),
                        detail=f"target {day.isoformat()} ({source}); release dates in the answer: {read}")]


# -- weekly report ---------------------------------------------------------------------------------------------

def _states_metric(name: str, expected: float, quantities: list[Quantity]) -> bool:
    """Some quoted quantity is this metric: right kind, same value, a label naming it, no contrary direction."""
    kind = "percent" if name.lower().endswith(("_percent", "_pct")) else "number"
    metric = Quantity(value=expected, kind=kind, label=name, start=0, end=0, direction=key_direction(name, expected))
    return any(same_quantity(q, metric) for q in quantities)


def _document(task: Task, answer: str, data: ScenarioData) -> list[CheckResult]:
    results = []
    quoted = find_quantities(answer)
    if task.facts.metrics:
        missing = [f"{k}={v:g}" for k, v in task.facts.metrics.items() if not _states_metric(k, v, quoted)]
        results.append(CheckResult(
            name="report.metrics_quoted", status=_status(not missing),
            detail=f"missing or misstated: {', '.join(missing)}" if missing
            else f"all {len(task.facts.metrics)} expected metrics stated"))
    percents = [q for q in quoted if q.kind == "percent"]
    if not percents:
        results.append(CheckResult(name="report.metrics_in_sources", status="n/a",
                                   detail="n/a: the answer quotes no percentage"))
        return results
    sources = data.derived("percentages", lambda: tuple(stated.quantity for stated in json_quantities(data.sources)))
    invented = []
    for q in percents:  # each quoted percentage against every one the sources state
        checkpoint()
        if not any(same_quantity(q, s) for s in sources):
            invented.append(q)
    results.append(CheckResult(
        name="report.metrics_in_sources", status=_status(not invented),
        detail=f"{len(percents) - len(invented)}/{len(percents)} quoted percentages found in the sources with the "
               "same label" + ("; not found: " + "; ".join(f"{q.value:+g}% ({q.label[:60]})" for q in invented)
                               if invented else "")))
    return results


def run_checks(task: Task, final_answer: str, data: ScenarioData) -> list[CheckResult]:
    """The deterministic checks that apply to ``task`` (none when its type has nothing computable)."""
    if task.task_type == "planning":
        return _planning(task, final_answer, data)
    if task.task_type == "email_reply":
        return _email_reply(task, final_answer, data)
    if task.task_type == "document_generation":
        return _document(task, final_answer, data)
    return []
