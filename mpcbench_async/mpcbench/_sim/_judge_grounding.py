"""``sim/judge``'s grounding axis: which concrete claims of an answer the tool results support.

A claim is a proposed slot, a written date, a quoted quantity, an issue key, an e-mail address or
a person's two-word name. Each kind is checked the way a careful reader would:

* a slot lies inside a free interval FindTimeSlots returned (or its day and start time are quoted);
* a date is a date the results give (or the Monday of the week of one: "the week of Dec 15");
* a quantity matches a number the results quote with the same kind and magnitude (a numeric
  field is a number, or a percentage when its key names one: ``uptime_percent``) — numbers inside
  dates, times and identifiers never count, on either side (``17`` is not grounded by
  ``2025-12-17`` nor by ``TWB-217``); single digits are not claims;
* keys, addresses and names appear in the results (or in the prompt); a capitalised pair is a
  name claim when one of its words belongs to someone the results name ("Jisoo Kim" for Jisoo
  Park is caught; "Customer Success" in a signature is no claim).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from ..._answers import Slot, find_dates, find_quantities
from ._judge_evidence import Evidence, leaves

__all__ = ["Claim", "claims"]

_KEY = re.compile(r"\b[A-Z][A-Z0-9]+-\d+\b")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_CAPITALISED_RUN = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b")
_ISO_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")
_HHMM = re.compile(r"\b\d{1,2}:\d{2}\b")
# First words that make a capitalised pair a phrase, not a person or a named thing.
_NOT_NAMES = frozenset(
    "hi hello dear hey best kind warm many thanks thank regards subject re fw fwd good happy please the this that "
    "next last our your my we i proposed option options meeting attendees participants weekly status report "
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august "
    "september october november december mon tue wed thu fri sat sun based according looking all as".split())


@dataclass(frozen=True, slots=True)
class Claim:
    """One concrete thing an answer states, and whether the tool results support it."""

    kind: str
    text: str
    grounded: bool


def _prose(evidence: Evidence) -> list[str]:
    """The distinct evidence strings that can quote a date or a number: with a digit, not a bare timestamp."""
    return [t for t in dict.fromkeys(evidence.texts) if any(c.isdigit() for c in t) and not _STAMP.fullmatch(t)]


def _evidence_days(evidence: Evidence, prose: list[str]) -> set[date]:
    """Every day the results write out: ISO dates and timestamps, and written dates in message texts."""
    days: set[date] = set()
    for text in evidence.texts:
        for match in _ISO_DAY.finditer(text):
            try:
                days.add(date(int(match.group(1)), int(match.group(2)), int(match.group(3))))
            except ValueError:
                continue
    anchor = evidence.request.today or (min(days) if days else date(2000, 1, 3))
    for text in prose:
        days.update(m.value for m in find_dates(text, anchor=anchor) if m.kind == "date")
    return days


def _slot_claim(slot: Slot, evidence: Evidence, corpus: str, days: set[date]) -> Claim:
    inside = any(s.contains(slot.start, slot.end) for s in evidence.searches)
    quoted = slot.start.date() in days and f"{slot.start:%H:%M}" in corpus
    return Claim("slot", f"{slot.start:%a %Y-%m-%d %H:%M}–{slot.end:%H:%M}", inside or quoted)


def claims(answer: str, evidence: Evidence, slots: list[Slot], anchor: date,
           window: tuple[date, date] | None) -> list[Claim]:
    """The answer's concrete claims, each marked grounded or not (see the module docstring)."""
    corpus = " ".join(" ".join(evidence.texts).lower().split())
    prose = _prose(evidence)
    days = _evidence_days(evidence, prose)
    mondays = {d - timedelta(days=d.weekday()) for d in days}
    out = [_slot_claim(slot, evidence, corpus, days) for slot in slots]
    slot_days = {s.start.date() for s in slots}
    for mention in find_dates(answer, anchor=anchor, window=window):
        if mention.kind == "date" and mention.value not in slot_days:
            out.append(Claim("date", answer[mention.start:mention.end],
                             mention.value in days or mention.value in mondays))
    if not slots:
        out += [Claim("time", t, t.lower() in corpus) for t in _HHMM.findall(answer)]
    # Quantities the results quote in text, and numeric fields whose key names a percentage ("uptime_percent").
    quoted = [q for text in prose for q in find_quantities(text)] + [s.quantity for s in evidence.stated if not s.text]
    # Numbers the results hold as JSON numbers (counts, durations), not inside strings.
    numbers = {abs(float(n)) for result in evidence.results for n in leaves(result)
               if isinstance(n, int | float) and not isinstance(n, bool)}
    for quantity in find_quantities(answer):
        if quantity.kind == "number" and quantity.value.is_integer() and abs(quantity.value) < 10:
            continue
        grounded = any(q.kind == quantity.kind and abs(abs(q.value) - abs(quantity.value)) < 1e-9 for q in quoted) or (
            quantity.kind == "number" and abs(quantity.value) in numbers)
        out.append(Claim(quantity.kind, re.sub(r"^[-–•*]\s+", "", answer[quantity.start:quantity.end]), grounded))
    raw = " ".join(evidence.texts)
    out += [Claim("key", k, k in raw) for k in dict.fromkeys(_KEY.findall(answer))]
    out += [Claim("email", e, e.lower() in corpus) for e in dict.fromkeys(_EMAIL.findall(answer))]
    known = {token for person in evidence.people.people for token in person.tokens}
    for run in dict.fromkeys(_CAPITALISED_RUN.findall(answer)):
        words = run.split()
        if len(words) == 2 and set(words) & known and not {w.lower() for w in words} & _NOT_NAMES:
            out.append(Claim("name", run, run.lower() in corpus))
    return out
