"""Text readers for ``sim/judge``: the shape of an answer and the scheduling words of a message.

What kind of text an answer is (an e-mail, a sectioned report), its sections and whether
they hold content or placeholders ("See above", "[Date]", "TBD"), whether it declines to
answer ("I could not find…", "I'll check and get back"), whether it names a time frame,
and — for the meeting request a planning task starts from — the durations ("45 mins",
"an hour", "90-minute") and the period ("next week", "within the next three working
days") a message states. Pure functions over strings; no dates are resolved here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "AskedDay", "Period", "Section", "asked_day", "durations", "inline_placeholders", "is_email", "is_placeholder",
    "known_heading", "meeting_lengths", "mentions_weekend", "non_answer_marker", "normal_heading", "period",
    "range_lengths", "sections", "states_time_frame", "without_deferrals",
]

_I = re.IGNORECASE | re.MULTILINE
_SUBJECT = re.compile(r"^\s*\**subject\**\s*:", _I)
_GREETING = re.compile(r"^\W*(hi|hello|dear|hey|good (morning|afternoon|evening)|greetings|hola|buenos d[ií]as|"
                       r"bonjour|hallo|guten tag|ciao|ol[aá]|hej|moin)\b", re.I)
_SIGN_OFF = re.compile(r"^\W*(best|kind regards|regards|warm regards|warmly|many thanks|thanks|thank you|sincerely|"
                       r"cheers|all the best|respectfully|yours|talk soon|saludos|un saludo|atentamente|cordialement|"
                       r"bien [àa] vous|viele gr[üu](?:ß|ss)e|mit freundlichen|grazie|obrigad[oa]|abra[çc]os)\b", re.I)
_SALUTATION = re.compile(r"[^\W\d_][\w.'’ -]{0,40},")
_CLOSING = re.compile(r"[.!?]\s+(?:best|kind regards|regards|many thanks|thanks|cheers|sincerely)\b[^.!?]{0,40}$", re.I)
_BULLET = re.compile(r"^\s*(?:[-*•·–—]|\d{1,2}[.)]|[a-z][.)])\s+")
_NUMBERED = re.compile(r"^\s*\d{1,2}[.)]\s")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_BOLD_HEADING = re.compile(r"^\s*(?:\*\*|__)(.+?)(?:\*\*|__)\s*:?\s*$")
_COLON_HEADING = re.compile(r"^\s*(?:\d{1,2}[.)]\s*)?([A-Z][\w /&'’()+-]{0,48}?)\s*:\s*(.*)$")
_PLAIN_HEADING = re.compile(r"^\s*(?:\d{1,2}[.)]\s*)?([A-Z][^.!?:;,\d]{0,48})$")

_PLACEHOLDER_LINE = re.compile(
    r"^(?:see (?:above|below|attached|the (?:above|previous|attached)\b.*|previous (?:email|message|section))"
    r"|(?:details |info(?:rmation)? )?as (?:discussed|mentioned|noted|above|agreed|previously (?:discussed|mentioned))"
    r"(?: (?:earlier|before|previously|above|in the meeting))?"
    r"|same as (?:above|before|last week)|tbd|tbc|tba|todo|to ?do|placeholder|lorem ipsum.*"
    r"|to be (?:added|confirmed|determined|filled(?: in)?|updated|completed|provided)"
    r"|insert\b.*|(?:add|fill in|enter)(?: \w+){0,3} here|\.{2,}|…|[-–—_]+|x+|\?+"
    r"|\[[^\]]*\]|<[^>]*>|\{[^}]*\})\W*$", re.I)
_BRACKET = re.compile(r"\[([^\]\n]{1,60})\](?!\()|<([a-z][^<>\n]{0,40})>|\{\{?([^{}\n]{1,40})\}\}?", re.I)
_PLACEHOLDER_VOCABULARY = frozenset(
    "name date time day customer recipient client company product feature metric value number eta release title "
    "signature link owner team month week percent amount details detail status project version first last full "
    "target expected new start end of the subject".split())
_SIGNATURE_WORDS = re.compile(r"\b(your|my|sender)\b.*\b(name|title|role|position|signature|company|team)\b|"
                              r"^(name|signature|title|company)$", re.I)
_XX = re.compile(r"\bXX(?:[/.:-]XX)+\b|\bXX%|\bX{3,}\b")

_NON_ANSWER = re.compile(
    r"\bI\s+(?:could not|couldn['’]t|was unable to|am unable to|(?:was|am|were) not able to|can(?:not|['’]t)|"
    r"did not|didn['’]t)\s+(?:find|locate|access|determine|identify|retrieve|complete|help|see|confirm|"
    r"get|schedule|draft|write|provide)\b"
    r"|\b(?:I['’]ll|I will|let me|I need to|I['’]d need to|I have to)\s+(?:check|look into|confirm|follow up|"
    r"get back|circle back|find out|verify)\b"
    r"|\bget back to you\b|\bonce I have (?:checked|confirmed|more)\b|\bcircle back\b"
    r"|\bI['’]m (?:sorry|afraid)\b[^.]{0,60}\b(?:can(?:not|['’]t)|unable|not able)\b"
    r"|\bI (?:don['’]t|do not) have (?:access|enough|the (?:information|data|details))\b"
    r"|\b(?:not enough|insufficient) (?:information|data|context)\b"
    r"|\bno (?:relevant |matching )?(?:information|data|results?|records?|slots?|availability) (?:was |were )?"
    r"(?:found|available)\b|\bas an AI\b", re.I)

_DEFERS = re.compile(r"\bfollow(?:ing)?[ -]up\b|\bget back\b|\bcircle back\b|\bkeep you (?:posted|updated)\b", re.I)
# "May" and "March" count only capitalised: "dates may change" names no month.
_MONTH = (r"(?i:jan(?:uary)?|feb(?:ruary)?|apr(?:il)?|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|"
          r"nov(?:ember)?|dec(?:ember)?)|May|MAY|March|MARCH|Mar")
_TIME_FRAME = re.compile(
    rf"\b(?:{_MONTH})\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}/\d{{1,2}}\b|\b[qQ][1-4]\b|(?i:\bweek of\b"
    r"|\b(?:this|next|coming|following) (?:week|month|quarter|sprint|release)\b"
    r"|\bend of (?:the |this |next )?(?:week|month|quarter|year)\b|\b(?:in|within) (?:\w+ )?(?:days|weeks|months)\b"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)")

_NUMBER_WORDS = {"one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10, "fifteen": 15,
                 "twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45, "forty five": 45, "fifty": 50,
                 "sixty": 60, "ninety": 90}
_NUM = r"\d+(?:\.\d+)?|" + "|".join(sorted((re.escape(w) for w in _NUMBER_WORDS), key=len, reverse=True))
_NOT_A_LENGTH = re.compile(r"\b(?:within|in|every|past|last|after|before)\s*$", re.I)
_DURATION = re.compile(
    rf"(?<![\w:.])(?P<n>{_NUM})\s*(?:-\s*)?(?P<unit>minutes?|mins?|hours?|hrs?|h)\b(?!\s*ago)"
    r"|(?P<half>half(?:\s+an|-an)?[\s-]hour)|(?P<hour_half>(?:an?|one) hour and a half)", re.I)
_WORKING_DAYS = re.compile(
    rf"\b(?:next|within the next|in the next|over the next|within)\s+(?P<n>\d+|{'|'.join(_NUMBER_WORDS)})\s+"
    r"(?P<kind>working|business|work)?\s*days?\b", re.I)
_WEEKEND = re.compile(r"\b(?:on|over|during|this|next|the)\s+(?:the\s+)?weekend\b|\bsaturday\b|\bsunday\b", re.I)
_NOT_WEEKEND = re.compile(r"\b(?:before|not on|not over|except|excluding|outside)\s+(?:the\s+)?weekends?\b", re.I)


def is_email(text: str) -> bool:
    """A ``Subject:`` line, or a greeting opening the text with a body or a sign-off (also inline: "… Best, Owen").

    A greeting is a known word ("Hi", "Dear", "Hola") or, in any language, a short first line ending in a
    comma when a known sign-off closes the text.
    """
    if _SUBJECT.search(text):
        return True
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return False
    if not _GREETING.match(lines[0]):
        # A greeting in any language: a short first line ending in a comma ("Merhaba Emre,"), then a sign-off.
        return bool(_SALUTATION.fullmatch(lines[0].strip())) and len(lines) >= 3 and any(
            _SIGN_OFF.match(line) for line in lines[-3:])
    return len(lines) >= 3 or any(_SIGN_OFF.match(line) for line in lines[-4:]) or bool(_CLOSING.search(text))


@dataclass(frozen=True, slots=True)
class Section:
    """One heading of a sectioned text and the lines under it (an inline ``Heading: text`` counts as content)."""

    heading: str
    lines: tuple[str, ...]

    @property
    def content(self) -> tuple[str, ...]:
        """The lines that say something: not blank, not a placeholder."""
        return tuple(line for line in self.lines if not is_placeholder(line))


def normal_heading(text: str) -> str:
    """``## 2. Next Week:`` → ``next week`` (markup, numbering, punctuation and case dropped)."""
    text = re.sub(r"[*_#`]+", " ", text)
    text = re.sub(r"^\s*(?:\d{1,2}[.)]|[ivx]+\.)\s*", "", text.strip(), flags=re.I)
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def known_heading(text: str, known: set[str]) -> str | None:
    """The expected heading ``text`` names: the same words, or those words followed by at most three more."""
    words = normal_heading(text).split()
    for heading in known:
        expected = heading.split()
        if expected and words[:len(expected)] == expected and len(words) <= len(expected) + 3:
            return heading
    return None


def _heading(line: str, known: set[str], previous_blank: bool) -> tuple[str, str] | None:
    """(heading, inline content) when ``line`` is a heading.

    A heading is markdown, bold, a known name, ``Name:``, or a short title.
    """
    stripped = line.strip()
    if not stripped or _SIGN_OFF.match(stripped) or _GREETING.match(stripped):
        return None
    if match := _MD_HEADING.match(stripped) or _BOLD_HEADING.match(stripped):
        return match.group(1).strip().strip("*_").rstrip(":"), ""
    bare = _BULLET.sub("", stripped).strip("*_ ")
    if _BULLET.match(stripped) and not _NUMBERED.match(stripped):
        # A bullet is an item, unless it is exactly an expected heading ("- Risks").
        return (bare.rstrip(":"), "") if normal_heading(bare) in known else None
    for head, rest in (bare.partition(":")[::2], (re.split(r"\s+[—–-]\s+", bare, maxsplit=1) + [""])[:2]):
        if rest.strip() and known_heading(head, known):  # "Key metrics: …", "2) Risks — none"
            return head, rest.strip()
    if known_heading(bare, known):
        return bare.rstrip(":"), ""
    if (match := _COLON_HEADING.match(stripped)) and len(match.group(1).split()) <= 4 and (
            not match.group(2) or previous_blank):
        return match.group(1), match.group(2).strip()
    if previous_blank and (match := _PLAIN_HEADING.match(stripped)) and len(match.group(1).split()) <= 5:
        return match.group(1).strip(), ""
    return None


def sections(text: str, known: tuple[str, ...] = ()) -> list[Section]:
    """The text's sections: each heading with the lines up to the next heading (a preamble is not a section).

    ``known`` are headings expected in the text (a template's), matched whatever their markup.
    A short title line counts as a heading only after a blank line and when a bullet or
    another heading follows (or nothing does), so ordinary sentences stay content.
    """
    wanted = {normal_heading(k) for k in known} - {""}
    lines = text.splitlines()
    found: list[tuple[int, str, str]] = []
    for index, line in enumerate(lines):
        head = _heading(line, wanted, index == 0 or not lines[index - 1].strip())
        if head is None:
            continue
        strong = known_heading(head[0], wanted) or _MD_HEADING.match(line) or _BOLD_HEADING.match(line.strip())
        nxt = next((other for other in lines[index + 1:] if other.strip()), "")
        if strong or head[1] or _BULLET.match(nxt) or not nxt or _heading(nxt, wanted, True):
            found.append((index, head[0], head[1]))
    out = []
    for position, (index, heading, inline) in enumerate(found):
        stop = found[position + 1][0] if position + 1 < len(found) else len(lines)
        body = [inline] if inline else []
        body += [_BULLET.sub("", line).strip() for line in lines[index + 1:stop]]
        out.append(Section(heading=heading, lines=tuple(line for line in body if line)))
    return out


def is_placeholder(line: str) -> bool:
    """A line that stands in for content: "See above", "As discussed", "TBD", "[Insert metric]", "…".

    "None" and "N/A" are statements (no risks this week), not placeholders.
    """
    text = _BULLET.sub("", line.strip()).strip().strip("*_`").strip()
    return not text or bool(_PLACEHOLDER_LINE.match(text))


def _is_placeholder_words(inner: str) -> bool:
    """``Customer Name``, ``Insert metric``, ``TBD``, ``XX``: words that stand for a value, not a citation."""
    tokens = re.findall(r"[a-z]+", inner.lower())
    if not tokens:
        return False
    if tokens[0] in ("insert", "enter", "add", "your") or any(
            t in ("tbd", "tbc", "placeholder") or re.fullmatch("x{2,}", t) for t in tokens):
        return True
    return len(tokens) <= 3 and all(t in _PLACEHOLDER_VOCABULARY for t in tokens)


def inline_placeholders(text: str) -> tuple[list[str], list[str]]:
    """(placeholders, signature placeholders) left in the text.

    Placeholders look like ``[Customer Name]``, ``<date>``, ``{{eta}}`` or ``XX%``.
    """
    found: list[str] = []
    signature: list[str] = []
    for match in _BRACKET.finditer(text):
        inner = next(group for group in match.groups() if group is not None).strip()
        if not _is_placeholder_words(inner) or re.search(r"[#@/]|\b[A-Z]+-\d+\b|\d{4}", inner):
            continue
        (signature if _SIGNATURE_WORDS.search(inner) else found).append(match.group(0))
    found += _XX.findall(text)
    return found, signature


def non_answer_marker(text: str) -> str | None:
    """The phrase by which the text declines or defers ("I could not find", "I'll check and get back"), if any."""
    match = _NON_ANSWER.search(text)
    return match.group(0) if match else None


def without_deferrals(text: str) -> str:
    """The text minus its clauses that defer ("I'll check and get back", "suggest following up next week").

    A time frame inside such a clause is when the writer will come back, not an answer; the
    other half of "I'll get back to you soon, but we are targeting late January" still counts.
    """
    clauses = re.split(r"[.!?;\n]+|,?\s+(?:but|although|though|while|however)\s+|\s+[–—]\s+", text)
    return " ".join(c for c in clauses if not (_NON_ANSWER.search(c) or _DEFERS.search(c)))


def states_time_frame(text: str) -> bool:
    """Whether the text names when: a date, a month, a weekday, a quarter, "next week", "the week of", "in N weeks"."""
    return bool(_TIME_FRAME.search(text))


def _number(word: str) -> float:
    word = word.lower().strip()
    return float(_NUMBER_WORDS[word]) if word in _NUMBER_WORDS else float(word)


def durations(text: str) -> list[int]:
    """Meeting lengths the text states, in minutes, in order ("45 mins", "an hour", "90-minute", "1.5 hours").

    Spans of time that are not a length ("within 2 hours", "in 30 minutes", "10 minutes ago")
    are left out.
    """
    out = []
    for match in _DURATION.finditer(text):
        if match.group("half"):
            out.append(30)
        elif match.group("hour_half"):
            out.append(90)
        elif not _NOT_A_LENGTH.search(text[:match.start()]):
            amount = _number(match.group("n"))
            minutes = amount * (60 if match.group("unit").lower().startswith("h") else 1)
            if 5 <= minutes <= 8 * 60:
                out.append(round(minutes))
    return out


@dataclass(frozen=True, slots=True)
class Period:
    """A requested period relative to the request's day: weeks ahead (0 = this week) or a number of days."""

    weeks: int | None = None
    days: int | None = None
    working_days: bool = False
    phrase: str = ""


_PERIODS = (
    (re.compile(r"\bweek after next\b", re.I), Period(weeks=2)),
    (re.compile(r"\b(?:next|the following|the coming|early next|later next|late next)\s+week\b", re.I),
     Period(weeks=1)),
    (re.compile(r"\b(?:this|the current|end of (?:the|this)) week\b|\bbefore the weekend\b|\bby (?:this )?friday\b",
                re.I), Period(weeks=0)),
    (re.compile(r"\btomorrow\b", re.I), Period(days=1)),
)


def period(text: str) -> Period | None:
    """The period a request asks for ("sometime next week", "before the end of this week", "next 3 working days")."""
    if match := _WORKING_DAYS.search(text):
        return Period(days=round(_number(match.group("n"))), working_days=bool(match.group("kind")),
                      phrase=match.group(0))
    for pattern, found in _PERIODS:
        if match := pattern.search(text):
            return Period(weeks=found.weeks, days=found.days, phrase=match.group(0))
    return None


# A length that sizes a part of the meeting ("a 5-min bullet", "10 minutes each", "the last 15 minutes for Q&A").
_PART_AFTER = re.compile(
    r"^\s*(?:long\s+|slot\s+)?(?:bullets?|items?|agenda items?|points?|updates?|demos?|intros?|introductions?|breaks?|"
    r"buffers?|q\s*&\s*a|segments?|sections?|presentations?|talks?|pitch(?:es)?|recaps?|overviews?|rounds?|each|apiece|"
    r"per (?:person|team|topic|item|speaker)|warm-?ups?|wrap-?ups?|at the (?:start|end|beginning)|"
    r"of (?:q\s*&\s*a|questions|discussion|the (?:meeting|call|sync)))\b", re.I)
_PART_BEFORE = re.compile(r"\b(?:each|first|last|final|extra|additional|another|spare|leave|spend|reserve|save)\s+"
                          r"(?:(?:a|an|the|about|around|roughly)\s+)?$", re.I)
_MEETING_AFTER = re.compile(r"^\s*(?:long\s+)?(?:meeting|sync|call|session|chat|review|catch[- ]?up|check[- ]?in|"
                            r"slot|block|workshop|discussion|huddle|1:1|walkthrough|stand-?up)\b", re.I)


def meeting_lengths(text: str) -> list[int]:
    """The lengths ``durations`` reads, minus those that size a part of the meeting.

    "a 30-min sync … I'll add a 5-min bullet at the end" states a 30-minute meeting: a length
    followed by a part ("bullet", "demo", "Q&A", "each") or led by "each"/"last"/"spend" is
    not the meeting's. A length written on a meeting word ("30-min sync") comes first.
    """
    own: list[int] = []
    other: list[int] = []
    for match in _DURATION.finditer(text):
        found = durations(match.group(0))
        if not found or _NOT_A_LENGTH.search(text[:match.start()]):
            continue
        after, before = text[match.end():match.end() + 40], text[max(0, match.start() - 30):match.start()]
        if _PART_AFTER.match(after) or _PART_BEFORE.search(before):
            continue
        (own if _MEETING_AFTER.match(after) else other).append(found[0])
    return own + other if own else other


_CLOCK = r"(?P<{0}h>\d{{1,2}})(?:[:.h](?P<{0}m>\d{{2}}))?\s*(?P<{0}p>[ap]\.?m\.?)?"
_TIME_RANGE = re.compile(r"(?<![\d:./-])" + _CLOCK.format("a") + r"\s*(?:-|–|—|to|until|till)\s*" + _CLOCK.format("b")
                         + r"(?![\d:])", re.I)
_AVAILABILITY = re.compile(r"\b(?:free|available|availability|open|busy|blocked|booked|out|away|off|working hours|"
                           r"office hours|core hours|between|from|anytime|any time|stand-?up|lunch|except|not)\b", re.I)


def _readings(hour: str, minute: str | None, meridiem: str | None) -> list[int]:
    """The minutes after midnight a clock time may mean: as written, or 12 hours on when no meridiem says."""
    h, m = int(hour), int(minute or 0)
    if h > 23 or m > 59:
        return []
    if meridiem:
        return [(h % 12 + (12 if meridiem.lower().startswith("p") else 0)) * 60 + m]
    return [h * 60 + m] + ([(h + 12) * 60 + m] if h < 12 else [])


def range_lengths(text: str) -> list[int]:
    """Lengths of the time ranges a message proposes ("Thinking 10:00–10:45" → 45), in order.

    A range written as availability or a constraint ("I'm free 09:00–12:00", "busy 2-4pm",
    "between 1 and 3") is not a meeting's length; ranges without a colon or meridiem are
    not times ("5-10"). Each end is read as the nearest reading that makes the range
    positive ("11:30–12:15pm" is 45 minutes); lengths outside 10 minutes – 4 hours are left out.
    """
    out = []
    for match in _TIME_RANGE.finditer(text):
        if not any(match.group(g) for g in ("am", "bm", "ap", "bp")):
            continue
        clause = re.split(r"[.;!?\n]|,\s+", text[:match.start()])[-1]
        if _AVAILABILITY.search(clause):
            continue
        lengths = [b - a for a in _readings(match.group("ah"), match.group("am"), match.group("ap"))
                   for b in _readings(match.group("bh"), match.group("bm"), match.group("bp")) if b > a]
        if lengths and 10 <= min(lengths) <= 240:
            out.append(min(lengths))
    return out


_WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ASKED_DAY = re.compile(
    r"\b(?P<rel>today|tomorrow|the day after tomorrow)\b"
    r"|\b(?P<which>this|coming|this coming|next|on|by|until|till|before)\s+(?P<day>" + "|".join(_WEEKDAY_NAMES)
    + r")\b(?!['’]s|\s*[-–—]\s*\w)", re.I)
_NOT_ASKED = re.compile(r"\b(?:out|off|away|busy|ooo|leave|holiday|vacation|travell?ing|except|not|can['’]?t|cannot|"
                        r"won['’]t|unavailable|blocked|back|since|last|was|were|had|did|due|deadline)\b", re.I)
_ALSO_DAY = re.compile(r"\s*(?:,|/|\bor\b|\band\b)\s*(?:on\s+|this\s+)?(" + "|".join(_WEEKDAY_NAMES) + r")\b", re.I)


@dataclass(frozen=True, slots=True)
class AskedDay:
    """A day a request names: ``tomorrow`` (``days`` after its day) or a weekday, with how it is qualified.

    ``which`` is ``this``/``on`` (the coming one), ``next`` (the coming one or next week's: readers
    differ), ``by``/``before`` (a deadline).
    """

    which: str
    weekday: int | None = None
    days: int | None = None
    phrase: str = ""
    start: int = 0
    also: tuple[int, ...] = ()  # other weekdays offered with it ("on Tuesday or Wednesday")


def asked_day(text: str) -> AskedDay | None:
    """The day a request asks for ("tomorrow", "this Friday", "on Tuesday", "next Monday", "by Thursday").

    A day named in a clause that says someone is away or busy then ("I'm out on Monday"),
    that looks back ("since Friday") or names a deadline ("the report is due on Friday") is not
    asked for. Weekdays offered with it ("on Tuesday or Wednesday") are kept in ``also``.
    """
    for match in _ASKED_DAY.finditer(text):
        clause = re.split(r"[.;!?\n]|,\s+|\b(?:but|and|so)\b", text[:match.start()])[-1]
        if _NOT_ASKED.search(clause):
            continue
        if match.group("rel"):
            rel = match.group("rel").lower()
            days = {"today": 0, "tomorrow": 1}.get(rel, 2)
            return AskedDay("rel", days=days, phrase=match.group(0), start=match.start())
        which = " ".join(match.group("which").lower().split()).replace("this coming", "this").replace("coming", "this")
        which = {"till": "by", "until": "by"}.get(which, which)
        also, end = [], match.end()
        while alternative := _ALSO_DAY.match(text, end):
            also.append(_WEEKDAY_NAMES.index(alternative.group(1).lower()))
            end = alternative.end()
        return AskedDay(which, weekday=_WEEKDAY_NAMES.index(match.group("day").lower()), phrase=text[match.start():end],
                        start=match.start(), also=tuple(also))
    return None


def mentions_weekend(text: str) -> bool:
    """Whether a request asks for (or allows) a weekend: "on the weekend", "Saturday" — not "before the weekend"."""
    return bool(_WEEKEND.search(_NOT_WEEKEND.sub(" ", text)))
