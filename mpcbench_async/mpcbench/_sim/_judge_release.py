"""What ``sim/judge`` reads of an e-mail reply about a release: which tracked issue it is about, and whether
it promises.

The tracked issues are the Jira issues the tool results return, each with its target days (release and
due fields, fix versions, dates in release sentences of its description). The issue the customer asks
about is the one whose summary shares the most words with the question (the prompt and the e-mails of
the people the prompt names); the issues an answer is about are those it names by key or by two words of
their summary. A reply about another issue than the one asked about answers the wrong question, however
well its date is grounded.

A date is promised when the clause stating it is firm ("guaranteed", "I can confirm") or has no hedge
("currently targeting", "we expect", "should"; lower-case "may", which is not the month) and the reply
nowhere says dates may change. A hedge elsewhere in the reply ("so you can plan around it", "Should you
have questions") does not soften the clause that states the date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from ..._answers import Period, label_words
from ._judge_evidence import Evidence

__all__ = ["Issue", "asked_issue", "caution_asked", "named_issues", "promised", "tracked_issues"]

_RELEASE_FIELDS = ("releaseDate", "release_date", "duedate", "dueDate", "due_date", "targetDate", "target_date")
_RELEASE_WORDS = re.compile(r"\b(release|target|ship|launch|ga|available|due|eta)\b", re.I)
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_KEY = re.compile(r"\b[A-Z][A-Z0-9]+-\d+\b")
_CAUTION_ASKED = re.compile(
    r"cautious|may change|subject to change|not a promise|rather than a promise|target window|avoid(?:ing)? overpromis|"
    r"(?:never|don['’]t|do not|not to|avoid(?:s|ing|ed)?|without|refrains? from)\s+(?:\w+\s+){0,2}"
    r"(?:promis|commit|guarantee)|"
    r"no (?:firm|fixed|hard) (?:date|commitment)s?|plans can change", re.I)
_FIRM = re.compile(r"\b(?:guarantee[sd]?|(?:i|we) can confirm|confirmed|definitely|for sure|certainly|promise[sd]?|"
                   r"firm(?:ly)?|without fail|set in stone)\b", re.I)
_NEGATED = re.compile(r"\b(?:not|n['’]t|no|yet|cannot|never)\s+(?:\w+\s+)?$", re.I)
_HEDGE = re.compile(r"\b(?:target|targets|targeting|targeted|aim|aims|aiming|current|currently|eta|around|roughly|"
                    r"approximately|expect|expects|expected|"
                    r"expecting|anticipate[sd]?|tentative(?:ly)?|provisional(?:ly)?|estimated?|projected|likely|"
                    r"hope|hoping|(?-i:may)|might|could|on track|planned for|plan to|planning to|"
                    r"should(?! you\b))\b", re.I)
_CHANGE_NOTE = re.compile(
    r"\b(?:may|might|could|can|is likely to)\s+(?:still\s+)?(?:change|move|shift|slip)|subject to change|"
    r"not (?:yet )?(?:final|guaranteed|confirmed)|no guarantee|can(?:not|['’]t) guarantee|tentative|"
    r"(?:will|we['’]ll|I['’]ll) confirm|to be confirmed|once (?:it is |it['’]s )?confirmed", re.I)
_CLAUSE_END = re.compile(r"(?<!\d)[.!?]+|[.!?]+(?!\d)|[;\n]+|,\s*(?:so|and|but|which|while)\b|\s[–—]\s")


@dataclass(frozen=True, slots=True)
class Issue:
    """A tracked issue: key, summary and the target days its fields and description give."""

    key: str
    summary: str
    targets: tuple[date, ...]

    @property
    def words(self) -> frozenset[str]:
        return label_words(self.summary)


def _targets(issue: dict[str, Any]) -> tuple[date, ...]:
    values = [issue.get(f) for f in _RELEASE_FIELDS]
    values += [v.get(f) for v in issue.get("fixVersions") or () if isinstance(v, dict) for f in _RELEASE_FIELDS]
    sentences = re.split(r"(?<=[.;])\s+", str(issue.get("description") or ""))
    values += [m for s in sentences if _RELEASE_WORDS.search(s) for m in _ISO_DAY.findall(s)]
    out = set()
    for value in values:
        try:
            out.add(date.fromisoformat(str(value)[:10]))
        except ValueError:
            continue
    return tuple(sorted(out))


def tracked_issues(evidence: Evidence) -> list[Issue]:
    """Every issue the results return (once per key), with its targets."""
    found: dict[str, Issue] = {}
    for result in evidence.results:
        for issue in result.get("issues") or ():
            if isinstance(issue, dict):
                key = str(issue.get("key") or f"#{len(found)}")
                found.setdefault(key, Issue(key, str(issue.get("summary") or ""), _targets(issue)))
    return list(found.values())


def _question(evidence: Evidence) -> list[str]:
    """The customer's question: the prompt, the e-mails of the people it names (else every e-mail), and the
    subjects and snippets of the mail threads they take part in (a search may be all the agent read)."""
    prompt = evidence.texts[0]
    asker = evidence.people.named_in(prompt)
    addresses = {p.email for p in asker if p.email}
    written = [m.text for m in evidence.messages if m.author in asker]
    texts = [prompt, *(written or [m.text for m in evidence.messages if m.recipients])]
    for result in evidence.results:
        for thread in result.get("threads") or ():
            taking_part = " ".join(str(p) for p in thread.get("participants") or ()).lower() if isinstance(
                thread, dict) else ""
            if taking_part and (not addresses or any(a in taking_part for a in addresses)):
                texts += [str(thread.get("subject") or ""), str(thread.get("snippet") or "")]
    return texts


def asked_issue(evidence: Evidence, issues: list[Issue]) -> Issue | None:
    """The issue the question is about: named by key, else the one sharing the most summary words (a unique best)."""
    question = " ".join(_question(evidence))
    by_key = [i for i in issues if re.search(rf"\b{re.escape(i.key)}\b", question)]
    if len(by_key) == 1:
        return by_key[0]
    words = label_words(question)
    scored = sorted(((len(i.words & words), i) for i in issues), key=lambda pair: -pair[0])
    if scored and scored[0][0] > 0 and (len(scored) == 1 or scored[0][0] > scored[1][0]):
        return scored[0][1]
    return None


def named_issues(answer: str, issues: list[Issue]) -> list[Issue]:
    """The issues the answer is about: written by key, or, sentence by sentence, the issues sharing the most
    words of their summary with it (two at least, or all of a shorter summary): "iOS offline mode" names
    "iOS offline mode", not "Android offline mode"."""
    keys = set(_KEY.findall(answer))
    named = {i.key for i in issues if i.key in keys}
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", answer):
        words = label_words(sentence)
        shared = {i.key: len(i.words & words) for i in issues if i.words}
        best = max(shared.values(), default=0)
        named |= {i.key for i in issues if i.words and shared[i.key] == best >= min(2, len(i.words))}
    return [i for i in issues if i.key in named]


def caution_asked(texts: list[str]) -> bool:
    """Whether the guidance, the prompt or the requirements ask for cautious wording about dates."""
    return any(_CAUTION_ASKED.search(t) for t in texts)


def _clause(text: str, at: int) -> str:
    """The clause of ``text`` around offset ``at`` (between clause ends: sentence marks, ", so", ", and"…)."""
    start, end = 0, len(text)
    for match in _CLAUSE_END.finditer(text):
        if match.end() <= at:
            start = match.end()
        elif match.start() > at:
            end = match.start()
            break
    return text[start:end]


def promised(answer: str, dates: list[Period]) -> str | None:
    """The clause that states a date as a promise, or ``None`` when every one is hedged or a note says it may move."""
    change_noted = bool(_CHANGE_NOTE.search(answer))
    for period in dates:
        clause = _clause(answer, period.start)
        firm = [m for m in _FIRM.finditer(clause) if not _NEGATED.search(clause[:m.start()])]
        if firm or not (_HEDGE.search(clause) or change_noted):
            return " ".join(clause.split())
    return None
