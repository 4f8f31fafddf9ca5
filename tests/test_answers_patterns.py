"""The answer reader's start-guarded patterns (and the CSV reader's faster line tests) find exactly what their plain
forms found.

``_answers`` puts a lookahead of what a match can start with in front of its costliest scans (issue 31: they were
most of a check's CPU). A lookahead that forgot one way a match can start would silently drop dates. Here each
guarded pattern is compared with its plain form — as it was written before the guards, rebuilt from the same
pieces — on the labelled answers of the checks' corpus and of the judge's cases, and on seeded random texts made
of the forms the patterns read in every letter case (with the non-ASCII letters that match ASCII ones when case
is ignored: ``ſ``, ``K``, ``İ``), glued by the separators around them: every match, its span and every group.
"""

from __future__ import annotations

import random
import re

import orjson

from mpcbench_async import _answers as A
from mpcbench_async import _rows
from tests.conftest import REPO
from tests.mpcbench.check_corpus import CASES

_O = A._ORDINAL
ZONE_GUARD = "(?=[A-Z(]|(?i:[ly]))(?:"
PLAIN = {
    "_EXPLICIT": re.compile(
        r"(?<![\w/.-])(?P<iy>\d{4})[-/.](?P<im>\d{1,2})[-/.](?P<id>\d{1,2})(?!\d)"
        r"|(?<![\w/.:-])(?P<na>\d{1,2})/(?P<nb>\d{1,2})(?:/(?P<ny>\d{4}|\d{2}))?(?![\d/])"
        r"|(?<![\w.:-])(?P<ea>\d{1,2})\.(?P<eb>\d{1,2})\.(?P<ey>\d{4})(?!\d)"
        rf"|(?P<mon>{A._MONTH})[\s.-]*(?P<md>\d{{1,2}}){_O}?(?!\d|:\d|\s*(?i:[ap]\.?m\b|%|h\b|hours?\b))"
        r"(?:,?\s+(?P<my>\d{4})(?![:\d]))?"
        rf"|(?<![\w:.$])(?P<dd>\d{{1,2}}){_O}?(?:\s+of)?[\s-]*(?P<dmon>{A._MONTH})(?:[\s,-]+(?P<dy>\d{{4}})(?![:\d]))?"),
    "_WEEKDAY_DAY": re.compile(rf"(?P<wd>{A._WEEKDAY}),?\s+(?:the\s+(?P<a>\d{{1,2}}){_O}?|(?P<b>\d{{1,2}}){_O})(?!\w)"),
    "_WEEKDAY_ALONE": re.compile(rf"(?:(?P<rel>(?i:next|this|coming|following))\s+)?(?P<wd>{A._WEEKDAY})"
                                 r"|(?P<word>(?i:today|tomorrow))(?![A-Za-z])"),
    "_MONTH_ALONE": re.compile(
        r"(?P<part>(?i:(?:the\s+)?(?:early|mid|late|end\s+of|beginning\s+of|start\s+of|middle\s+of"
        r"|(?:first|second)\s+half\s+of|(?:first|second|third|fourth|last|1st|2nd|3rd|4th)\s+week\s+of))[\s-]+)?"
        rf"(?P<mon>{A._MONTH})(?:,?\s+(?P<year>\d{{4}}))?"),
    "_RELATIVE_WEEK": re.compile(r"(?i)\b(?P<part>(?:early|mid|late|later|end\s+of|the\s+end\s+of)[\s-]+)?"
                                 r"(?P<which>this|next)\s+(?P<unit>week|month)\b"),
    "_NUMBER": re.compile(
        r"(?<![\w.,/:#$€£%])(?<![A-Za-z]-)(?P<sign>[+\-−]|↑|↓|▲|▼)?\s?(?P<cur>[$€£])?"
        r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
        r"(?:\s?(?P<pct>%|(?i:percent|per\s+cent|pct|percentage\s+points?|pp)(?![A-Za-z]))"
        r"|(?P<mult>[kKM]|bn)(?![A-Za-z])|\s?(?P<unit>ms|s|secs?|mins?|h|hrs?|x|d)(?![A-Za-z]))?(?![\w-]\d|\.\d|[A-Za-z])"),
    "_NUMBER_WORD": re.compile(r"(?i)\b(?:" + "|".join(A._NUMBER_WORDS) + r")\b(?![-‐])"),
    "_CLOCK": re.compile(
        r"(?:(?<![\w:./+−$€£#])|(?<=\dT))"
        r"(?:(?P<h>\d{1,2})(?P<sep>[:.])(?P<m>[0-5]\d)(?::[0-5]\d(?:\.\d+)?)?"
        r"|(?P<hh>\d{2})h(?P<hm>[0-5]\d)"
        r"|(?P<bare>\d{1,2})(?=\s?(?i:[ap]\.?\s?m\.?)(?![A-Za-z])"
        r"|\s*(?:-|–|—|(?i:to|and|until|till))\s*\d{1,2}(?:[:.]\d{2})?\s?(?i:[ap]\.?\s?m\.?)(?![A-Za-z]))"
        r"|(?P<noon>(?i:noon|midday))(?![A-Za-z]))"
        r"(?:\s?(?P<ap>(?i:[ap]\.?\s?m\.?))(?![A-Za-z]))?"
        r"(?![\d%]|\.\d)"),
    # The zone pattern's body is built by a function: the guarded form's, the guard left out.
    "_ZONE_ANYWHERE": re.compile(A._ZONE_ANYWHERE.pattern.removeprefix(ZONE_GUARD)[:-1]),
}

WORDS = """january february march april may june july august september october november december jan feb mar
apr jun jul aug sept sep oct nov dec monday tuesday wednesday thursday friday saturday sunday mon tues tue weds wed
thurs thur thu fri sat sun next this coming following today tomorrow the early mid late later end beginning start
middle first second third fourth last 1st 2nd 3rd 4th half week month of utc gmt local your time standard daylight
summer eastern pacific asia/seoul america/st_johns europe/paris kst npt ist et pt cet zero one two three four five
six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty
forty fifty percent pct pp down up""".split()
GLUE = [" ", "  ", "\n", ", ", ". ", "-", "–", "/", "(", ")", "", ":", " the ", " of ", "|"]
NUMBERS = ["1", "7", "12", "25", "31", "2025", "2026", "09", "3rd", "18th", "25/11", "11/25/2025", "25.11.2025",
           "2025-11-25", "14:30", "+05:45", "(+05:45)", "UTC+9", "24/7", "$5", "v2.3", "-12%", "↓3", "▲ 4.5", "▼1.5",
           "↑ 9", "€1,204", "1.2k", "240ms", "12 pct", " 7", "+5", "−2.5", "APP-412", "#3"]
PHRASES = ["next week", "this month", "the end of next month", "late this week", "Tue 25th", "tuesday the 3rd",
           "Fri, the 21st", "mid-December", "week of Dec 15", "early next month", "Mon 1st", "sat 30th",
           "fourth week of March", "the first half of june", "2nd week of Sept", "end of Nov", "beginning of october",
           "start of Dec", "middle of feb", "last week of January", "the second half of May", "late-April 2026",
           "first week of Jan", "2:30 PM", "14h30", "noon", "Midday", "9am-10am", "2 p.m.", "14.30", "10:00:00",
           "2025-11-25T09:30", "3 to 4pm", "NOON"]


def _cased(word: str, rng: random.Random) -> str:
    form = rng.choice([str.lower, str.upper, str.capitalize, lambda w: "".join(
        c.upper() if rng.random() < 0.5 else c for c in w)])(word)
    if rng.random() < 0.03:
        return form.replace("s", "ſ", 1)
    return form.replace("i", "İ", 1) if rng.random() < 0.02 else form


def random_texts(count: int, seed: int = 31) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        pieces = [rng.choice(NUMBERS) if (roll := rng.random()) < 0.3
                  else " ".join(_cased(w, rng) for w in rng.choice(PHRASES).split()) if roll < 0.45
                  else _cased(rng.choice(WORDS), rng) for _ in range(rng.randint(1, 14))]
        texts.append("".join(p + rng.choice(GLUE) for p in pieces) + rng.choice(["", "K", "x", "."]))
    return texts


def corpus() -> list[str]:
    cases = orjson.loads((REPO / "tests" / "mpcbench" / "judge_cases.json").read_bytes())["cases"]
    judged = [str(case.get("final_answer", "")) for case in cases]
    return [case.answer for case in CASES] + judged + random_texts(3000)


def found(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in pattern.finditer(text)]


def test_every_guarded_pattern_finds_what_its_plain_form_finds():
    texts = corpus()
    assert len(texts) > 3200
    for name, plain in PLAIN.items():
        guarded = getattr(A, name)
        assert guarded.pattern != plain.pattern, name
        assert name != "_ZONE_ANYWHERE" or guarded.pattern.startswith(ZONE_GUARD)
        differing = [text for text in texts if found(guarded, text) != found(plain, text)]
        assert [] == differing, name


def test_the_random_texts_hold_what_the_patterns_read():
    """The comparison is not vacuous: each plain pattern matches in over 3% of the random texts."""
    texts = random_texts(3000)
    assert all(sum(1 for text in texts if plain.search(text)) > 100 for plain in PLAIN.values())


def test_the_csv_line_tests_read_what_their_plain_forms_read():
    """A line is prose when every comma groups thousands — one search for a comma that does not, where a pattern
    walked every character — and a line without quotes is cut at every comma by a split (issue 31)."""
    thousands_only = re.compile(r"^(?:[^,]|(?<=\d),(?=\d{3}(?!\d)))*$")

    def cells(line: str, offset: int) -> list[tuple[int, int]]:
        spans, begin, quoted = [], 0, False
        for i, char in enumerate(line):
            if char == '"':
                quoted = not quoted
            elif char == "," and not quoted:
                spans.append((offset + begin, offset + i))
                begin = i + 1
        return [*spans, (offset + begin, offset + len(line))]

    rng = random.Random(5)
    pieces = ["1", "2", "0", "9", ",", ",", " ", "a", '"', "٣", "x,", "1,204", "12,3456", "|", "\r"]
    lines = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(20_000)]
    assert 500 < sum(1 for line in lines if "," in line and thousands_only.match(line))  # not vacuous
    for line in lines:
        assert (thousands_only.match(line) is None) == (_rows._NOT_THOUSANDS.search(line) is not None), line
        assert cells(line, 7) == _rows._cells(line, 7), line
