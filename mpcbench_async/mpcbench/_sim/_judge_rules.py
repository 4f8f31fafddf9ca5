"""``sim/judge``'s answer_requirements_satisfaction axis: a base score capped by the rules an answer breaks.

Base: 1, +1 for a final (not cut-off) answer, +1 when it states concrete facts (for an e-mail
reply, a time frame near the tracked target counts as one), +1 when those are at least 80%
grounded, +1 when it delivers what its task type asks (meeting options; a time frame for a
"when" e-mail; a filled section, or without a template a report stating facts) or covers the
requirements' key terms (30% of their distinctive words). Then the lowest cap of the rules the
answer breaks:

* 0 — no answer; 1 — a non-answer (a refusal or "I'll check and get back" with nothing
  delivered, a few words that state nothing), an empty template;
* 2 — a different task type than asked (a report for an e-mail reply, an e-mail without
  meeting options for a planning task…); placeholders ("See above", "as discussed", "[Date]",
  "TBD") or an empty section; for planning: no concrete option, a slot that overlaps a listed
  event of a participant or lies outside the free slots FindTimeSlots returned for them, a
  weekend slot (unless the request allows it), a slot outside the requested period or on
  another day than the one it names ("this Friday", "tomorrow", "next Friday"), a slot of the
  wrong length, a participant the request or its thread names left out (never a mailing list);
  for a report: a percentage the sources do not give, or give only in the other direction
  (``_judge_figures``), or a figure only a tool result from before the report week gives (stale:
  last week's metrics, ``_judge_stale``); for an e-mail reply to "when…?": a reply about another
  tracked issue than the one the customer asks about (``_judge_release``), no time frame, or one
  more than a week away from that issue's targets;
* 3 — a report missing template sections (4 when at most 40% are missing; a report need not be
  sectioned when no template asks for sections), a reply not written as an e-mail, a release date
  stated as a promise where the guidance or the requirements ask for cautious language (its own
  clause firm or unhedged, and no note that dates may change; a release that has already
  happened, reported as such, is no promise);
* 4 — a signature placeholder left in ("[Your Name]").

The justification gives the base, the rule that capped it and the others that fired.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from ..._answers import Period, Slot, find_periods, find_slots
from ._judge_evidence import Evidence, read_evidence
from ._judge_figures import invented_percentages
from ._judge_grounding import Claim, claims
from ._judge_release import asked_issue, caution_asked, named_issues, promised, tracked_issues
from ._judge_stale import stale_quantities
from ._judge_text import (
    durations,
    inline_placeholders,
    is_email,
    is_placeholder,
    known_heading,
    non_answer_marker,
    normal_heading,
    sections,
    states_time_frame,
    without_deferrals,
)

__all__ = ["Reading", "read_answer", "satisfaction"]

_WORD = re.compile(r"[a-z][a-z]+")
_STOP = set("the and that with from this answer answers should must user about which their there other into "
            "more than most when what where while also only each every over under".split())
_ASKS_WHEN = re.compile(r"\bwhen\b|\beta\b|\brelease|time ?frame|timeline|timing|\bavailab", re.I)
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(slots=True)
class Verdict:
    """The caps the answer's flaws impose: (cap, rule, detail), lowest decides."""

    caps: list[tuple[int, str, str]] = field(default_factory=list)

    def cap(self, score: int, rule: str, detail: str) -> None:
        self.caps.append((score, rule, detail))

    @property
    def limit(self) -> int:
        return min((c for c, _, _ in self.caps), default=5)


@dataclass(slots=True)
class Reading:
    """What the answer says, read against the evidence."""

    answer: str
    task_type: str
    evidence: Evidence
    slots: list[Slot]
    anchor: date
    window: tuple[date, date] | None
    claims: list[Claim]
    template: tuple[str, ...]
    periods: list[Period]  # the dates and windows the answer names, read once for every rule

    @property
    def grounded_share(self) -> float:
        return sum(c.grounded for c in self.claims) / len(self.claims) if self.claims else 1.0


def _anchor(evidence: Evidence) -> date:
    """The day relative dates in the answer count from: the request's day, a searched range, a message."""
    if evidence.request.today:
        return evidence.request.today
    if evidence.searches:
        return evidence.searches[0].first
    stamps = [m.when.astimezone(evidence.tz).date() for m in evidence.messages if m.when]
    if stamps:
        return max(stamps)
    for text in evidence.texts:
        for stamp in _ISO_DAY.findall(text):
            try:
                return date.fromisoformat(stamp)
            except ValueError:
                continue
    return date(2000, 1, 3)  # nothing dated at all: only explicit dates in the answer can be read


def _template(judge_input: dict[str, Any], evidence: Evidence) -> tuple[str, ...]:
    """The section headings of the template the task names (a Drive file called "…Template…" or quoted)."""
    prompt = str(judge_input.get("user_prompt") or "")
    quoted = {q.lower() for q in re.findall(r"['‘’\"“”]([^'‘’\"“”]{4,80})['‘’\"“”]", prompt)}
    best: tuple[str, ...] = ()
    for result in evidence.results:
        files = [result] if "content" in result else [f for f in result.get("files") or () if isinstance(f, dict)]
        for doc in files:
            name = str(doc.get("name") or "")
            body = doc.get("content") if isinstance(doc.get("content"), str) else doc.get("snippet")
            if not isinstance(body, str) or not ("template" in name.lower() or name.lower() in quoted):
                continue
            headings = tuple(s.heading for s in sections(body)
                             if normal_heading(s.heading) not in (normal_heading(name), "")
                             and "template" not in s.heading.lower())
            if len(headings) > len(best):
                best = headings
    return best


def read_answer(judge_input: dict[str, Any]) -> Reading:
    """Read the judge input's answer against its evidence: slots, claims, the template it should follow."""
    answer = str(judge_input.get("final_answer") or "")
    evidence = read_evidence(judge_input)
    anchor = _anchor(evidence)
    window = evidence.request.window or (
        (evidence.searches[-1].first, evidence.searches[-1].last) if evidence.searches else None)
    slots = find_slots(answer, tz=evidence.tz, anchor=anchor, window=window,
                       default_minutes=evidence.request.duration or 30)
    return Reading(answer=answer, task_type=str(judge_input.get("task_type") or ""), evidence=evidence, slots=slots,
                   anchor=anchor, window=window, claims=claims(answer, evidence, slots, anchor, window),
                   template=_template(judge_input, evidence), periods=find_periods(answer, anchor=anchor))


# -- satisfaction rules ---------------------------------------------------------------------------------------

def _placeholders(reading: Reading, verdict: Verdict) -> None:
    """Placeholder text instead of content: "See above", "as discussed", "[Date]", "TBD", a signature stub."""
    found, signature = inline_placeholders(reading.answer)
    lines = [line.strip() for line in reading.answer.splitlines()
             if line.strip() and not re.fullmatch(r"[-=*_—–\s]+", line.strip()) and is_placeholder(line)
             and line.strip() not in signature]
    if found or lines:
        verdict.cap(2, "placeholder", f"placeholder text instead of content: {', '.join((found + lines)[:4])}")
    elif signature:
        verdict.cap(4, "signature", f"signature placeholder left in: {', '.join(signature)}")


def _is_report(reading: Reading) -> bool:
    filled = [s for s in sections(reading.answer, reading.template) if s.content]
    return len(filled) >= 2 and not is_email(reading.answer)


_FORMS = (("an e-mail", lambda r: is_email(r.answer)), ("a sectioned report", _is_report),
          ("a list of meeting slots", lambda r: bool(r.slots)))
_OUTPUTS = {"planning": "meeting options", "email_reply": "an e-mail reply", "document_generation": "a report"}


def _wrong_type(reading: Reading, verdict: Verdict, own: str) -> bool:
    """Cap an answer shaped as another task type's output (an e-mail for a planning task…); whether it was."""
    form = next((name for name, test in _FORMS if name != own and test(reading)), None)
    if form:
        verdict.cap(2, "task-type", f"the answer is {form}, not {_OUTPUTS[reading.task_type]}")
    return form is not None


def _delivers(reading: Reading) -> bool:
    """Whether the answer delivers anything of what its task type asks for."""
    if reading.task_type == "planning":
        return bool(reading.slots)
    if reading.task_type == "email_reply":
        said = without_deferrals(reading.answer)
        return _addresses_release(reading, said) is not False and (states_time_frame(said) or not _asks_when(reading))
    if reading.task_type == "document_generation":
        # Without a template, a report in prose or bullets delivers when it states facts.
        return any(s.content for s in sections(reading.answer, reading.template)) or (
            not reading.template and not is_email(reading.answer) and len(reading.claims) >= 2)
    return bool(reading.claims)


def _non_answer(reading: Reading, verdict: Verdict) -> None:
    marker = non_answer_marker(reading.answer)
    if marker and not _delivers(reading):
        verdict.cap(1, "non-answer", f"declines or defers ({marker!r}) and delivers nothing")
    elif len(reading.answer.split()) < 4 and not reading.slots and not reading.claims:
        verdict.cap(1, "non-answer", f"a {len(reading.answer.split())}-word answer that states nothing")


def _participants(reading: Reading, verdict: Verdict) -> set[str]:
    """Flag participants the answer leaves out; return the e-mails of everyone in the meeting."""
    request, people = reading.evidence.request, reading.evidence.people
    named = people.named_in(reading.answer, loose=True)
    missing = [p for p in request.participants if p not in named]
    if missing:
        verdict.cap(2, "participants", "leaves out " + ", ".join(p.label for p in missing)
                    + " (named by the request or its thread)")
    return {p.email for p in [*request.participants, *named] if p.email}


def _slot_label(slot: Slot) -> str:
    return f"{slot.start:%a %Y-%m-%d %H:%M}–{slot.end:%H:%M}"


def _conflicts(slot: Slot, reading: Reading, meeting: set[str]) -> list[str]:
    """Why ``slot`` is not free: outside the returned free slots, over an event, outside working hours."""
    evidence, day = reading.evidence, slot.start.date()
    covering = [s for s in evidence.searches if s.covers(day)]
    relevant = [s for s in covering if s.emails and s.emails <= meeting] or (covering[-1:] if not meeting else [])
    out = [f"{_slot_label(slot)} lies outside every free slot FindTimeSlots returned for {', '.join(sorted(s.emails))}"
           for s in relevant[-1:] if not s.contains(slot.start, slot.end)]
    expected = {p.email for p in evidence.request.participants if p.email}
    for event in evidence.events:
        if not (event.attendees & meeting) or not (event.start < slot.end and slot.start < event.end):
            continue
        if (event.start, event.end) == (slot.start, slot.end) and expected and expected <= event.attendees:
            continue  # the meeting itself, already on the calendar
        out.append(f"{_slot_label(slot)} overlaps '{event.title}' ({event.start:%a %H:%M}–{event.end:%H:%M}) of "
                   + ", ".join(sorted(event.attendees & meeting)))
    hours = next((s.working_hours for s in evidence.searches if s.working_hours), None)
    if not out and hours and not covering and not (hours[0] <= slot.start.time() and slot.end.time() <= hours[1]):
        out.append(f"{_slot_label(slot)} is outside working hours {hours[0]:%H:%M}-{hours[1]:%H:%M}")
    return out


def _planning(reading: Reading, verdict: Verdict) -> None:
    request = reading.evidence.request
    if not reading.slots:
        if not _wrong_type(reading, verdict, "a list of meeting slots"):
            verdict.cap(2, "no-slot", "proposes no concrete meeting option (a date with a start and end time)")
        return
    meeting = _participants(reading, verdict)
    stated = durations(reading.answer)
    for slot in reading.slots:
        label = _slot_label(slot)
        if slot.start.weekday() >= 5 and not request.weekends_ok:
            verdict.cap(2, "weekend", f"{label} falls on a {slot.start:%A}")
        if request.window and not request.window[0] <= slot.start.date() <= request.window[1]:
            verdict.cap(2, "period", f"{label} is outside the requested period "
                                     f"{request.window[0]}–{request.window[1]} ({request.window_source})")
        elif request.weekdays and slot.start.weekday() not in request.weekdays:
            verdict.cap(2, "period", f"{label} falls on a {slot.start:%A}; the request asks for "
                                     f"{request.window_source}")
        minutes = round((slot.end - slot.start).total_seconds() / 60)
        if request.duration and (minutes < request.duration or (
                minutes > request.duration and request.duration not in stated)):
            verdict.cap(2, "length", f"{label} lasts {minutes} min; the meeting is {request.duration} min "
                                     f"(stated by {request.duration_source})")
        for why in _conflicts(slot, reading, meeting):
            verdict.cap(2, "conflict", why)


def _asks_when(reading: Reading) -> bool:
    return bool(_ASKS_WHEN.search(reading.evidence.texts[0]))


def _release_days(reading: Reading) -> list[date]:
    """Target dates of the issue the customer asks about (of every tracked issue when that is unclear)."""
    issues = tracked_issues(reading.evidence)
    asked = asked_issue(reading.evidence, issues)
    chosen = [asked] if asked is not None and asked.targets else issues
    return sorted({day for issue in chosen for day in issue.targets})


def _near(period: Period, targets: list[date]) -> bool:
    """The period lies within a week of a tracked target."""
    week = timedelta(days=7)
    return any(period.first - week <= t <= period.last + week for t in targets)


def _addresses_release(reading: Reading, text: str | None = None) -> bool | None:
    """Whether a date/window the answer names lies within a week of a tracked target; None when either is missing."""
    targets = _release_days(reading)
    periods = reading.periods if text is None else find_periods(text, anchor=reading.anchor)
    if not targets or not periods:
        return None
    return any(_near(p, targets) for p in periods)


def _reports_past_release(reading: Reading) -> bool:
    """Every date the answer gives near a target is past by the latest message it answers: a fact, not a promise."""
    evidence = reading.evidence
    latest = max([reading.anchor, *(m.when.astimezone(evidence.tz).date() for m in evidence.messages if m.when)])
    targets = _release_days(reading)
    near = [p for p in reading.periods if _near(p, targets)]
    return bool(near) and all(p.last <= latest for p in near)


def _wrong_issue(reading: Reading, verdict: Verdict) -> None:
    """Cap a reply about another tracked issue than the one the customer asks about."""
    issues = tracked_issues(reading.evidence)
    asked = asked_issue(reading.evidence, issues)
    named = named_issues(reading.answer, issues)
    if asked is not None and named and asked not in named:
        verdict.cap(2, "wrong-issue", "the reply is about " + ", ".join(f"{i.key} '{i.summary}'" for i in named)
                    + f"; the customer asks about {asked.key} '{asked.summary}'")


def _email(reading: Reading, verdict: Verdict, requirements: str) -> None:
    answer = reading.answer
    if not is_email(answer) and not _wrong_type(reading, verdict, "an e-mail"):
        verdict.cap(3, "not-email", "not written as an e-mail (no greeting, subject or sign-off)")
    if not _asks_when(reading):
        return
    _wrong_issue(reading, verdict)
    addressed = _addresses_release(reading)
    targets = _release_days(reading)
    if addressed is False:
        verdict.cap(2, "time-frame", f"states {', '.join(p.text for p in reading.periods)} but the tracking data "
                                     f"gives {', '.join(d.isoformat() for d in targets)}")
    elif addressed is None and not states_time_frame(without_deferrals(answer)):
        verdict.cap(2, "time-frame", "does not say when (no date, month, week or time frame)")
    if not addressed or not caution_asked([*reading.evidence.texts, requirements]) or _reports_past_release(reading):
        return
    if clause := promised(answer, [p for p in reading.periods if _near(p, targets)]):
        verdict.cap(3, "promise", f"states the date as a promise ('{clause[:80]}'); the guidance asks for "
                                  "cautious language")


def _document(reading: Reading, verdict: Verdict) -> None:
    """A report: the template's sections there and filled (sections are a template's demand), no invented figure."""
    answer = reading.answer
    if invented := invented_percentages(reading.evidence, reading.answer):
        verdict.cap(2, "invented", "quotes percentages the sources do not give: "
                    + "; ".join(f"{q.value:+g}% ({q.label[:50]}): {why}" for q, why in invented))
    if stale := stale_quantities(reading.evidence, answer):
        verdict.cap(2, "stale", "quotes figures from before the report week: " + "; ".join(stale))
    found = sections(answer, reading.template)
    wanted = {normal_heading(h) for h in reading.template}
    if len(found) < 2:
        if _wrong_type(reading, verdict, "a sectioned report") or not wanted:
            return  # without a template, prose or a list of bullets is a report too
    else:
        if wanted:
            checked = [s for s in found if known_heading(s.heading, wanted)] or found
        else:  # without a template, a first heading with nothing under it is the report's title
            checked = found[1:] if not found[0].content else found
        empty = [s.heading for s in checked if not s.content]
        if checked and len(empty) == len(checked):
            verdict.cap(1, "empty-template", "every section is empty: " + ", ".join(empty))
        elif empty:
            verdict.cap(2, "empty-section", "section(s) with nothing under them: " + ", ".join(empty))
    present = {known_heading(s.heading, wanted) for s in found}
    missing = [h for h in reading.template if normal_heading(h) not in present]
    if missing:
        share = 1 - len(missing) / len(reading.template)
        verdict.cap(4 if share >= 0.6 else 3, "template", "template sections missing: " + ", ".join(missing))


def satisfaction(judge_input: dict[str, Any], reading: Reading) -> tuple[int, str]:
    """The answer_requirements_satisfaction score and its justification (see the module docstring)."""
    answer = reading.answer
    if not answer.strip():
        return 0, "[empty] no final answer"
    requirements = " ".join(str(r) for r in judge_input.get("answer_requirements") or ())
    terms = {w for w in _WORD.findall(requirements.lower()) if len(w) >= 5 and w not in _STOP}
    said = set(_WORD.findall((answer + " " + str(judge_input.get("rationale") or "")).lower()))
    coverage = len(terms & said) / len(terms) if terms else 1.0
    found, calls, share = len(reading.claims), reading.evidence.calls, reading.grounded_share
    if reading.task_type == "email_reply" and _addresses_release(reading):
        found += 1  # a time frame near the tracked target ("mid-May") is a grounded fact, though not a date
    final = judge_input.get("stop_reason") == "final"
    delivers = _delivers(reading)
    base = 1 + final + (found > 0) + (found > 0 and calls > 0 and share >= 0.8) + (delivers or coverage >= 0.3)
    why = (f"base {base} (stop={judge_input.get('stop_reason')}; {found} concrete fact(s); grounded "
           f"{round(share * 100)}%; delivers the {reading.task_type or 'task'}'s output: "
           f"{'yes' if delivers else 'no'}; "
           f"requirement terms covered {round(coverage * 100)}%)")
    verdict = Verdict()
    _non_answer(reading, verdict)
    _placeholders(reading, verdict)
    if reading.task_type == "planning":
        _planning(reading, verdict)
    elif reading.task_type == "email_reply":
        _email(reading, verdict, requirements)
    elif reading.task_type == "document_generation":
        _document(reading, verdict)
    if not verdict.caps or verdict.limit >= base:
        return base, why + ("; no rule capped it" if not verdict.caps else
                            "; " + "; ".join(f"[{r}] {d}" for _, r, d in verdict.caps))
    ordered = sorted(verdict.caps, key=lambda c: c[0])
    score, rule, detail = ordered[0]
    others = "".join(f"; also [{r}] {d}" for _, r, d in ordered[1:4])
    return score, f"capped at {score} by [{rule}] {detail}; {why}{others}"
