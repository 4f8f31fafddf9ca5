"""What ``sim/judge`` can read from a judge input's tool trace — the only thing it ever sees.

The scenario timezone (a result's ``timezone`` field, else the commonest ISO offset), the free
slots FindTimeSlots returned (for whom, over which dates), the events ListEvents returned, the
people named anywhere (contacts, Slack authors, mail senders, attendee addresses), the messages,
and the meeting request a planning task starts from: the message asking for the meeting, the
replies in its thread, the participants they name, the duration they state and the period they
ask for. The day "now" falls on is read from a FindTimeSlots call with a relative start
(``next_week`` → the week before the returned range), else from the request message's date; a
day or period the message itself names ("tomorrow", "this Friday") counts from the day it was
written, in the scenario's zone. The meeting's length is the one written in words (a part's
length, "a 5-min bullet", is not it), else a time range the thread proposes ("Thinking
10:00–10:45"), else the FindTimeSlots call's minimum. Mailing lists and shared mailboxes
("design-list@", "All Staff <all@>") are never participants.
It also keeps every quantity the results state (``stated``: in texts and numeric fields) and the
usable calls themselves (``steps``) for the rules that date them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from email.utils import parsedate_to_datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson

from ..._answers import Stated, json_quantities
from ._judge_text import (
    AskedDay,
    Period,
    asked_day,
    durations,
    meeting_lengths,
    mentions_weekend,
    period,
    range_lengths,
)

__all__ = [
    "WEEK_NAMES", "Event", "Evidence", "FreeSearch", "Message", "Person", "Request", "Step", "leaves", "read_evidence",
    "read_stamp",
]

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NAME_WORD = re.compile(r"(?<![\w@.])[^\W\d_][^\W\d_'’-]*(?:['’-][^\W\d_]+)*")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})")
_MEETING = re.compile(r"\b(meet|meeting|sync|call|session|catch[- ]?up|get[- ]together|rehearsal|workshop|huddle|"
                      r"review|discussion|discuss|check[- ]?in|touch base|go over|1:1|one[- ]on[- ]one|kick[- ]?off|"
                      r"walkthrough|walk through|go through|run through|planning)\b", re.I)
_ASKING = re.compile(r"\b(slot|schedule|set up|find (?:a )?time|can we|could we|let['’]s|would like|i['’]d like|"
                     r"need to|should|works for|availability|available|put .* on the calendar|grab|how about|"
                     r"what about|(?:would|does|do|could|will) [^.?!]{0,60}\bwork)\b", re.I)
_INCLUDE = re.compile(r"\b(loop(?:ing)? in|include|including|add|adding|invite|inviting|bring(?:ing)? in|"
                      r"cc|should join|join us|along)\b", re.I)
_OPTIONAL = re.compile(r"\b(optional|not needed|no need|skip|without|can['’]t make|cannot make|won['’]t make)\b", re.I)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_GROUP_WORDS = frozenset("all everyone staff team teams list lists group groups leads crew squad committee dept "
                         "department announce announcements dl distro members noreply info support helpdesk office "
                         "admin".split())
WEEK_NAMES = {"this_week": 0, "next_week": 7, "last_week": -7}  # a relative start date: days from now's Monday
_DAY_NAMES = {"today": 0, "tomorrow": 1, "yesterday": -1}


def _key(tool_name: str) -> str:
    """``GoogleCalendar.ListEvents`` / ``GoogleCalendar_ListEvents`` → ``googlecalendarlistevents``."""
    return re.sub(r"[^a-z]", "", str(tool_name).lower())


def read_stamp(value: Any, tz: tzinfo | None = None) -> datetime | None:
    """An aware datetime from an ISO or e-mail (RFC 2822) date string (a bare date is its midnight in ``tz``).

    ``None`` when unreadable.
    """
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        try:
            parsed = parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=tz) if tz else None
    return parsed


def leaves(value: Any) -> Iterator[Any]:
    """Every scalar inside a JSON value (keys excluded)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item)
    else:
        yield value


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    return (leaf for leaf in leaves(value) if isinstance(leaf, str))


def _decoded(value: Any) -> Any:
    """A JSON string decoded (runners may record arguments and results as text); anything else as it is."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


@dataclass(frozen=True, slots=True)
class Person:
    """Someone the tool results name: a display name (or one derived from the address) and an e-mail."""

    name: str
    email: str | None = None

    @property
    def tokens(self) -> tuple[str, ...]:
        return tuple(t for t in _NAME_WORD.findall(self.name) if len(t) > 1)

    @property
    def label(self) -> str:
        return self.name or self.email or "?"

    @property
    def is_group(self) -> bool:
        """A mailing list or shared mailbox (``design-list@``, ``all@``, "All Staff", "Finance Team"), not a person."""
        local = self.email.split("@", 1)[0] if self.email else ""
        words = {w.lower() for w in re.split(r"[._+-]+", local) if w} | {t.lower() for t in self.tokens}
        return bool(words & _GROUP_WORDS)


def _name_from_email(email: str) -> str:
    """``jiwoo.han@x`` → ``Jiwoo Han`` (a stand-in when no display name was seen)."""
    local = email.split("@", 1)[0]
    return " ".join(part.capitalize() for part in re.split(r"[._-]+", local) if part.isalpha())


class Directory:
    """The people of the tool results, merged by e-mail, and the names that point at them."""

    def __init__(self) -> None:
        self._by_email: dict[str, Person] = {}
        self._by_name: dict[str, Person] = {}

    def add(self, name: Any, email: Any) -> None:
        """Record a (name, e-mail) pair; a real name replaces one derived from the address."""
        name = " ".join(str(name).split()) if isinstance(name, str) and "@" not in name else ""
        mail = str(email).strip().lower() if isinstance(email, str) and _EMAIL.fullmatch(str(email).strip()) else None
        if mail:
            known = self._by_email.get(mail)
            if known is None or (name and (known.name == _name_from_email(mail)
                                           or len(name.split()) > len(known.name.split()))):
                self._by_email[mail] = Person(name or _name_from_email(mail), mail)
            self._by_name.pop(name.lower(), None)
        elif name and name.lower() not in self._by_name and not any(
                p.name.lower() == name.lower() for p in self._by_email.values()):
            self._by_name[name.lower()] = Person(name)

    def add_text(self, text: Any) -> None:
        """Record every ``Name <email>`` or bare address in a header-like string."""
        if not isinstance(text, str):
            return
        named_or_bare = r"(?:\"?([^\"<>,;]+?)\"?\s*)?<(" + _EMAIL.pattern + r")>|(" + _EMAIL.pattern + ")"
        for match in re.finditer(named_or_bare, text):
            self.add(match.group(1) or "", match.group(2) or match.group(3))

    @property
    def people(self) -> list[Person]:
        return [*self._by_email.values(), *self._by_name.values()]

    def by_email(self, email: str) -> Person | None:
        return self._by_email.get(email.lower())

    def _unique(self, word: str, position: int, among: frozenset[str | None] = frozenset()) -> Person | None:
        """The one person with ``word`` at ``position`` of their name (among ``among``'s addresses, when given).

        ``among`` holds None when the request's author has no address; it then matches the people without one.
        """
        found = [p for p in self.people if len(p.tokens) > position and p.tokens[position] == word
                 and (not among or p.email in among)]
        return found[0] if len(found) == 1 else None

    def named_in(self, text: str, *, loose: bool = False,
                 among: frozenset[str | None] = frozenset()) -> set[Person]:
        """People ``text`` names: an address, a full name, or a first name only one person has.

        A first name several people share names the one of them ``among`` holds (the addresses
        an e-mail was sent to: "Hi Priya" in a mail to priya.raman@ is Priya Raman).

        ``loose`` (used on answers) also accepts a surname only one person has, all of a
        name's words in any order, or an address's local part.
        """
        found: set[Person] = set()
        lowered = text.lower()
        words = set(_NAME_WORD.findall(text))
        for person in self.people:
            tokens = person.tokens
            local = person.email.split("@")[0] if person.email else ""
            full_name = r"(?<!\w)" + r"\s+".join(map(re.escape, tokens)) + r"(?!\w)"
            if (
                (person.email and (person.email in lowered or (
                    loose and len(local) > 2 and re.search(rf"(?<![\w.]){re.escape(local)}(?![\w@])", lowered))))
                or (len(tokens) > 1 and re.search(full_name, text, re.I))
                or (loose and len(tokens) > 1 and set(tokens) <= words)
            ):
                found.add(person)
        for word in words:
            if word[0].isupper() and (named := self._unique(word, 0) or (among and self._unique(word, 0, among))
                                      or (loose and self._unique(word, -1)) or None):
                found.add(named)
        return found


@dataclass(frozen=True, slots=True)
class Message:
    """A Slack message or an e-mail: who wrote it, when, its text and the thread it belongs to."""

    author: Person | None
    when: datetime | None
    text: str
    thread: str
    opens_thread: bool
    recipients: frozenset[str] = frozenset()  # an e-mail's To and Cc addresses


@dataclass(frozen=True, slots=True)
class FreeSearch:
    """One FindTimeSlots call: whose calendars, which days, and the free intervals it returned."""

    emails: frozenset[str]
    first: date
    last: date
    free: tuple[tuple[datetime, datetime], ...]
    minutes: int | None
    working_hours: tuple[time, time] | None

    def covers(self, day: date) -> bool:
        return self.first <= day <= self.last

    def contains(self, start: datetime, end: datetime) -> bool:
        """Whether [start, end] lies inside one free interval (touching intervals merged)."""
        return any(lo <= start and end <= hi for lo, hi in self.free)


@dataclass(frozen=True, slots=True)
class Event:
    """One ListEvents event: title, interval, attendees (the listed person when the call filtered by one)."""

    title: str
    start: datetime
    end: datetime
    attendees: frozenset[str]


@dataclass(slots=True)
class Request:
    """The meeting request of a planning task as the tool results show it."""

    message: Message | None = None
    thread: list[Message] = field(default_factory=list)
    participants: list[Person] = field(default_factory=list)
    duration: int | None = None
    duration_source: str = ""
    window: tuple[date, date] | None = None
    window_source: str = ""
    weekends_ok: bool = False
    today: date | None = None
    weekdays: frozenset[int] = frozenset()  # the weekdays a named-day window allows ("next Friday": two Fridays)


Step = tuple[str, dict[str, Any], Any]  # (tool key, arguments, result) of one call


@dataclass(slots=True)
class Evidence:
    """Everything the judge input's tool results establish."""

    tz: tzinfo
    tz_name: str
    calls: int
    people: Directory
    messages: list[Message]
    searches: list[FreeSearch]
    events: list[Event]
    texts: list[str]
    results: list[Any]
    anchor: date | None
    request: Request
    steps: list[Step] = field(default_factory=list)  # the calls whose result is usable (no error)
    stated: list[Stated] = field(default_factory=list)  # every quantity those results state


def _results(judge_input: dict[str, Any]) -> list[Step]:
    """(tool key, arguments, result) per step; string results are decoded when they are JSON."""
    out = []
    for step in judge_input.get("tool_trace") or ():
        if not isinstance(step, dict):
            continue
        result, arguments = _decoded(step.get("result")), _decoded(step.get("arguments"))
        out.append((_key(step.get("tool_name", "")), arguments if isinstance(arguments, dict) else {}, result))
    return out


def _timezone(results: list[Step]) -> tuple[tzinfo, str]:
    """The scenario timezone: a ``timezone`` field naming a zone, else the commonest ISO offset, else UTC."""
    for _, _, result in results:
        if isinstance(result, dict) and isinstance(result.get("timezone"), str):
            try:
                return ZoneInfo(result["timezone"]), result["timezone"]
            except (ZoneInfoNotFoundError, ValueError):
                pass
    offsets: Counter[timedelta] = Counter()
    for _, _, result in results:
        for text in _strings(result):
            for stamp in _ISO.findall(text):
                parsed = read_stamp(stamp)
                if parsed and (utcoffset := parsed.utcoffset()) is not None:
                    offsets[utcoffset] += 1
    if offsets:
        offset = offsets.most_common(1)[0][0]
        return timezone(offset), f"UTC{offset.total_seconds() / 3600:+g}"
    return UTC, "UTC"


def _merge(intervals: list[tuple[datetime, datetime]]) -> tuple[tuple[datetime, datetime], ...]:
    """Sorted intervals with touching or overlapping ones joined (slot_minutes cuts free time into pieces)."""
    out: list[tuple[datetime, datetime]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


def _search(arguments: dict[str, Any], result: dict[str, Any], tz: tzinfo) -> FreeSearch | None:
    span = result["date_range"] if isinstance(result.get("date_range"), dict) else {}
    try:
        first, last = date.fromisoformat(str(span.get("start"))[:10]), date.fromisoformat(str(span.get("end"))[:10])
    except ValueError:
        return None
    free = []
    for slot in result.get("slots") or ():
        if isinstance(slot, dict) and (start := read_stamp(slot.get("start"), tz)) and (
                end := read_stamp(slot.get("end"), tz)):
            free.append((start, end))
    hours = None
    if match := re.fullmatch(r"(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})", str(result.get("working_hours", ""))):
        hours = (time.fromisoformat(match.group(1).zfill(5)), time.fromisoformat(match.group(2).zfill(5)))
    minutes = arguments.get("slot_minutes") or arguments.get("min_duration_minutes")
    emails = arguments.get("email_addresses") or []
    return FreeSearch(emails=frozenset(str(e).strip().lower() for e in emails if isinstance(e, str)), first=first,
                      last=last, free=_merge(free), minutes=minutes if isinstance(minutes, int) else None,
                      working_hours=hours)


def _events(arguments: dict[str, Any], result: dict[str, Any], tz: tzinfo) -> list[Event]:
    owner = str(arguments.get("attendee_email") or "").strip().lower()
    out = []
    for event in result.get("events") or ():
        if not isinstance(event, dict):
            continue
        start, end = read_stamp(event.get("start"), tz), read_stamp(event.get("end"), tz)
        if start is None or end is None:
            continue
        if end <= start:  # an all-day event written as one date
            end = start + timedelta(days=1)
        attendees = {str(a.get("email") if isinstance(a, dict) else a).strip().lower()
                     for a in event.get("attendees") or ()}
        out.append(Event(title=str(event.get("title") or event.get("summary") or "event"), start=start, end=end,
                         attendees=frozenset(attendees | ({owner} if owner else set()))))
    return out


def _messages(key: str, result: dict[str, Any], people: Directory, tz: tzinfo) -> list[Message]:
    out = []
    if key.endswith("searchmessages"):
        for item in result.get("messages") or ():
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                author = people.by_email(str(item.get("author_email") or "")) or (
                    Person(str(item["author"])) if isinstance(item.get("author"), str) else None)
                stamp, parent = read_stamp(item.get("timestamp"), tz), read_stamp(item.get("thread_ts"), tz)
                opener = parent or stamp
                out.append(Message(author=author, when=stamp, text=item["text"],
                                   thread=opener.astimezone(UTC).isoformat() if opener else str(item.get("id")),
                                   opens_thread=parent is None or parent == stamp))
    elif key.endswith("getthread"):
        for index, item in enumerate(result.get("messages") or ()):
            if isinstance(item, dict) and isinstance(item.get("body"), str):
                match = _EMAIL.search(str(item.get("from") or ""))
                author = people.by_email(match.group(0)) if match else None
                addressed = frozenset(a.lower() for a in _EMAIL.findall(f"{item.get('to')} {item.get('cc')}"))
                out.append(Message(author=author, when=read_stamp(item.get("date"), tz), text=item["body"],
                                   thread=str(result.get("id")), opens_thread=index == 0, recipients=addressed))
    return out


def _collect_people(key: str, arguments: dict[str, Any], result: Any, people: Directory) -> None:
    """Every name/e-mail pair a call shows (contacts, Slack authors, mail headers, attendees, searched addresses)."""
    if key.endswith("searchcontactsbyname") and isinstance(result, dict):
        for contact in result.get("contacts") or ():
            if isinstance(contact, dict):
                people.add(contact.get("name"), contact.get("email"))
    for email in arguments.get("email_addresses") or ():
        people.add("", email)
    if isinstance(result, dict):
        for thread in result.get("threads") or ():
            if isinstance(thread, dict):
                for participant in thread.get("participants") or ():
                    people.add_text(participant)
        for message in result.get("messages") or ():
            if isinstance(message, dict):
                if message.get("author"):
                    people.add(message.get("author"), message.get("author_email"))
                for header in ("from", "to", "cc"):
                    value = message.get(header)
                    for item in value if isinstance(value, list) else [value]:
                        people.add_text(item)
        for event in result.get("events") or ():
            if isinstance(event, dict):
                for attendee in event.get("attendees") or ():
                    people.add_text(attendee.get("email") if isinstance(attendee, dict) else attendee)


def _anchor(results: list[Step]) -> tuple[date | None, bool]:
    """(the day "now" falls on, exact?) from a FindTimeSlots call with a relative start date.

    ``today``/``tomorrow``/``+Nd`` give the day itself; a week name gives only its week
    (the Monday is returned, ``exact`` False). The tools resolve these against the
    scenario's reference now, so this is the agent's "today" as the tools saw it.
    """
    for key, arguments, result in results:
        if not key.endswith("findtimeslotswheneveryoneisfree") or not isinstance(result, dict):
            continue
        try:
            first = date.fromisoformat(str((result.get("date_range") or {}).get("start"))[:10])
        except ValueError:
            continue
        start = str(arguments.get("start_date") or "today").strip().lower().replace(" ", "_")
        if start in _DAY_NAMES:
            return first - timedelta(days=_DAY_NAMES[start]), True
        if start in WEEK_NAMES:
            return first - timedelta(days=WEEK_NAMES[start]), False
        if match := re.fullmatch(r"\+(\d+)d(?:ays?)?", start):
            return first - timedelta(days=int(match.group(1))), True
    return None, False


def _request_message(messages: list[Message], prompt: str, people: Directory) -> Message | None:
    """The message asking for the meeting: a thread opener with meeting and asking words.

    Openers by someone the prompt names come first ("Jiwoo mentioned…"), then those
    sharing most words with the prompt, then the latest.
    """
    candidates = [m for m in messages if m.opens_thread and (
        (_MEETING.search(m.text) and (_ASKING.search(m.text) or durations(m.text) or period(m.text)))
        or ((durations(m.text) or range_lengths(m.text)) and _ASKING.search(m.text)))]
    if not candidates:
        return None
    named = people.named_in(prompt)
    prompt_words = {w.lower() for w in _NAME_WORD.findall(prompt) if len(w) >= 4}

    def rank(message: Message) -> tuple[bool, int, datetime]:
        overlap = len(prompt_words & {w.lower() for w in _NAME_WORD.findall(message.text)})
        return (message.author in named, overlap, message.when or datetime.min.replace(tzinfo=UTC))

    return max(candidates, key=rank)


def _participants(request: Message | None, thread: list[Message], prompt: str, people: Directory) -> list[Person]:
    """The request's author, the people it names, those replies add ("loop in X"), and those the prompt names."""
    found: list[Person] = []

    def add(persons: set[Person]) -> None:
        found.extend(sorted((p for p in persons if p not in found), key=lambda p: p.label))

    if request is not None:
        if request.author is not None and (request.author.email or request.author.tokens):
            add({request.author})
        addressed = request.recipients | {request.author.email} if request.author else request.recipients
        for sentence in _SENTENCE.findall(request.text):
            if not _OPTIONAL.search(sentence):
                add(people.named_in(sentence, among=addressed))
        for reply in thread[1:]:
            for sentence in _SENTENCE.findall(reply.text):
                if _INCLUDE.search(sentence) and not _OPTIONAL.search(sentence):
                    add(people.named_in(sentence))
    add(people.named_in(prompt))
    return [p for p in found if not p.is_group]


def _window(found: Period | None, anchor: date | None) -> tuple[date, date] | None:
    """The requested days: a whole week (Mon–Sun) or the next N (working) days plus one day of slack."""
    if found is None or anchor is None:
        return None
    monday = anchor - timedelta(days=anchor.weekday())
    if found.weeks is not None:
        start = monday + timedelta(days=7 * found.weeks)
        return start, start + timedelta(days=6)
    day, left = anchor, (found.days or 0) + 1
    while left:
        day += timedelta(days=1)
        if not found.working_days or day.weekday() < 5:
            left -= 1
    return anchor, day


def _day_window(asked: AskedDay, anchor: date) -> tuple[date, date]:
    """The days a named day allows: exactly that day (or the days offered with it); "next Friday" the coming one to
    next week's; a deadline from the anchor to it ("by Thursday" included, "before Thursday" not)."""
    if asked.weekday is None:
        day = anchor + timedelta(days=asked.days or 0)
        return day, day
    comings = [anchor + timedelta(days=(w - anchor.weekday()) % 7) for w in (asked.weekday, *asked.also)]
    if asked.which == "next":
        comings += [anchor - timedelta(days=anchor.weekday() - 7 - w) for w in (asked.weekday, *asked.also)]
    if asked.which == "by":
        return anchor, max(comings)
    if asked.which == "before":
        return anchor, max(anchor, max(comings) - timedelta(days=1))
    return min(comings), max(comings)


def _asked(text: str) -> AskedDay | Period | None:
    """What a text asks for: the named day or the period, whichever it writes first."""
    day, found = asked_day(text), period(text)
    if day is None or found is None:
        return day or found
    if day.which == "rel" and found.days == day.days:
        return day  # "tomorrow" is one day, not a period with slack
    if day.which in ("on", "by", "before"):
        return found  # "next week … on Tuesday": the period, the day a preference within it
    return day if day.start <= max(0, text.lower().find(found.phrase.lower())) else found


def _length(request: Request, prompt: str, evidence: Evidence) -> None:
    """The meeting's length: stated in words (latest message first), else a range the thread proposes
    ("Thinking 10:00–10:45"), else the FindTimeSlots call's minimum."""
    stated = [(prompt, "the request")] + [(m.text, f"a message by {m.author.label if m.author else 'someone'}")
                                          for m in reversed(request.thread)]
    for reader, how in ((meeting_lengths, "{}"), (range_lengths, "a time range in {}")):
        for text, source in stated:
            if found := reader(text):
                request.duration, request.duration_source = found[-1], how.format(source)
                return
    sized = [s for s in evidence.searches if s.minutes]
    if sized:
        request.duration, request.duration_source = sized[-1].minutes, "the FindTimeSlots call"


def _request(judge_input: dict[str, Any], evidence: Evidence, exact: bool) -> Request:
    prompt = str(judge_input.get("user_prompt") or "")
    message = _request_message(evidence.messages, prompt, evidence.people)
    thread = sorted((m for m in evidence.messages if message is not None and m.thread == message.thread),
                    key=lambda m: (m.when is None, m.when or datetime.min.replace(tzinfo=UTC)))
    unique_thread = list(dict.fromkeys(thread))
    request = Request(message=message, thread=unique_thread,
                      participants=_participants(message, unique_thread, prompt, evidence.people))
    _length(request, prompt, evidence)
    anchor = evidence.anchor
    sent = message.when.astimezone(evidence.tz).date() if message is not None and message.when else None
    if sent is not None and (anchor is None or (not exact and anchor <= sent <= anchor + timedelta(days=6))):
        anchor = sent
    request.today = anchor
    # A phrase of the message counts from the day it was written ("tomorrow" in Wednesday's mail is Thursday).
    sources = [(prompt, anchor)] + ([(message.text, sent or anchor)] if message is not None else [])
    asked, counted_from = next(((found, day) for text, day in sources if (found := _asked(text))), (None, anchor))
    if isinstance(asked, AskedDay) and counted_from is not None:
        request.window = _day_window(asked, counted_from)
        if asked.weekday is not None and asked.which not in ("by", "before"):
            request.weekdays = frozenset((asked.weekday, *asked.also))
    elif not isinstance(asked, AskedDay):
        request.window = _window(asked, counted_from)
    if request.window and asked and counted_from:
        request.window_source = f"'{asked.phrase}' counted from {counted_from.isoformat()}"
    request.weekends_ok = mentions_weekend(" ".join([prompt, *(m.text for m in unique_thread)]))
    return request


def read_evidence(judge_input: dict[str, Any]) -> Evidence:
    """Read a judge input's tool trace (and prompt) into the facts the rubric checks against."""
    results = _results(judge_input)
    tz, tz_name = _timezone(results)
    people = Directory()
    messages: list[Message] = []
    searches: list[FreeSearch] = []
    events: list[Event] = []
    texts = [str(judge_input.get("user_prompt") or "")]
    for key, arguments, result in results:
        _collect_people(key, arguments, result, people)
    usable = [(key, arguments, result) for key, arguments, result in results
              if isinstance(result, dict) and "error" not in result]
    for key, arguments, result in usable:
        texts.extend(_strings(result))
        if key.endswith("findtimeslotswheneveryoneisfree") and (search := _search(arguments, result, tz)):
            searches.append(search)
        elif key.endswith("listevents"):
            events.extend(_events(arguments, result, tz))
        messages.extend(_messages(key, result, people, tz))
    anchor, exact = _anchor(results)
    evidence = Evidence(tz=tz, tz_name=tz_name, calls=len(results), people=people,
                        messages=list(dict.fromkeys(messages)), searches=searches, events=events, texts=texts,
                        results=[result for _, _, result in usable], anchor=anchor, request=Request(), steps=usable,
                        stated=[s for _, _, result in usable for s in json_quantities(result, numbers=True)])
    evidence.request = _request(judge_input, evidence, exact)
    return evidence
