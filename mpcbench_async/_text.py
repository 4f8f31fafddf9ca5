"""Word-based ranked search, shared by the MPCBench tools and the tariff evidence retrieval.

Replaces the original's substring matching: the query is split into words
(stop words dropped); a record scores by how many query words it contains
(whole words, or prefixes for words of four letters or more), weighted by
field, with a bonus when the whole query appears as a phrase. Records with no
matching word are not returned; ties go to the newest record. Ranking stops at a
``checkpoint()`` per record, per 32 query words read and per 32 tried as prefixes in a text (a
tool's time limit, ``_checkpoint``): its cost grows with records and query words, both of which
a caller may make large.
"""

from __future__ import annotations

import bisect
import functools
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from ._checkpoint import checkpoint

__all__ = ["has_word_starting", "rank", "words"]

TOKENS_CACHED = 16384
"""Record texts whose words ``rank`` keeps (the shipped scenarios hold a few thousand; each is its text's size)."""

TERMS_PER_CHECKPOINT = 32
"""Query words ``rank`` reads, or tries as prefixes of one text's words, between two checkpoints."""
PREFIX = 4
"""Query words this long or longer also match the words they start."""

T = TypeVar("T")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
STOP_WORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were will with "
    "about into over re fw fwd".split()
)


def words(text: str) -> list[str]:
    """Lower-case words of ``text`` (letters and digits; apostrophes inside words kept)."""
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


@functools.lru_cache(maxsize=TOKENS_CACHED)
def _tokens(text: str) -> tuple[frozenset[str], tuple[str, ...], str, frozenset[str]]:
    """A record text's vocabulary (as a set and sorted, for prefixes), its words joined by spaces, and the first
    ``PREFIX`` letters of its words that long (the only query words that can be their prefixes start so).

    Cached: every search of a scenario ranks the texts of the same records again, and splitting them into
    words was most of a search's CPU (issue 31). Pure, so a cached answer is the answer.
    """
    found = words(text)
    vocabulary = frozenset(found)
    heads = frozenset(w[:PREFIX] for w in vocabulary if len(w) >= PREFIX)
    return vocabulary, tuple(sorted(vocabulary)), " ".join(found), heads


def has_word_starting(text: str, term: str) -> bool:
    """Whether a word of ``text`` starts with ``term`` (or is it): a bisection in the text's cached vocabulary."""
    ordered = _tokens(text)[1]
    at = bisect.bisect_left(ordered, term)
    return at < len(ordered) and ordered[at].startswith(term)


def _query_terms(query: str) -> list[str]:
    terms = [w for w in words(query) if w not in STOP_WORDS]
    return terms or words(query)


def rank(
    records: Iterable[T],
    query: str,
    fields: Callable[[T], Sequence[tuple[str, float]]],
    *,
    recency: Callable[[T], str | float] = lambda _: "",
    limit: int | None = None,
) -> list[tuple[float, T]]:
    """Score ``records`` against ``query``; return (score, record) pairs, best first.

    ``fields(record)`` gives (text, weight) pairs; ``recency(record)`` a sortable
    key (an ISO timestamp) used to break ties, newest first. An empty query
    matches everything with score 0, newest first.
    """
    terms = _query_terms(query)
    # A word of the text matches a query word it equals or, for query words of PREFIX letters or more, starts
    # with. Equal words are one set intersection per text (a loop over the query's words in Python per record
    # was most of a search's CPU with long queries, issue 31). A prefix must start as one of the text's words
    # does (its first PREFIX letters, the text's ``heads``), so only the query words sharing such a head are
    # tried: the vocabulary sorted (``ordered``) puts the words starting with a term together from where the
    # term would go, so the first word at or after it answers, a bisection.
    wanted = frozenset(terms)
    times = Counter(terms) if len(wanted) < len(terms) else None  # a word written twice counts twice
    by_head: dict[str, list[str]] = {}
    for read, term in enumerate(wanted, 1):  # a query of any length: read a run of words at a time
        if not read % TERMS_PER_CHECKPOINT:
            checkpoint()
        if len(term) >= PREFIX:
            by_head.setdefault(term[:PREFIX], []).append(term)
    heads = frozenset(by_head)
    phrase = " ".join(words(query))
    tried = 0  # query words tried as prefixes, a checkpoint per TERMS_PER_CHECKPOINT
    scored: list[tuple[float, str | float, int, T]] = []
    for index, record in enumerate(records):
        checkpoint()
        score = 0.0
        matched: set[str] = set()
        for text, weight in fields(record):
            if not text:
                continue
            vocabulary, ordered, joined, text_heads = _tokens(text)
            hits: frozenset[str] | set[str] = vocabulary & wanted
            if heads and (shared := text_heads & heads):
                prefixed = []
                for head in shared:
                    for term in by_head[head]:
                        if term not in hits:
                            tried += 1
                            if not tried % TERMS_PER_CHECKPOINT:
                                checkpoint()
                            at = bisect_left(ordered, term)
                            if at < len(ordered) and ordered[at].startswith(term):
                                prefixed.append(term)
                if prefixed:
                    hits = hits.union(prefixed)
            if hits:
                for _ in range(sum(map(times.__getitem__, hits)) if times else len(hits)):
                    score += weight  # one addition per matching query word, as written: the same float sums
                matched.update(hits)
            if phrase and len(terms) > 1 and phrase in joined:
                score += weight
        if terms and not matched:
            continue
        # Records matching more distinct query words always outrank partial matches.
        score += 10.0 * len(matched)
        scored.append((score, recency(record), -index, record))
    scored.sort(key=lambda item: (item[0], item[1], item[2]), reverse=True)
    ranked = [(score, record) for score, _, _, record in scored]
    return ranked[:limit] if limit is not None else ranked
