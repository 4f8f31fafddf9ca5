"""Word-based ranked search, shared by the MPCBench tools and the tariff evidence retrieval.

Replaces the original's substring matching: the query is split into words
(stop words dropped); a record scores by how many query words it contains
(whole words, or prefixes for words of four letters or more), weighted by
field, with a bonus when the whole query appears as a phrase. Records with no
matching word are not returned; ties go to the newest record. Ranking stops at a
``checkpoint()`` per record and per 32 query words (a tool's time limit, ``_checkpoint``):
its cost grows with records × query words, both of which a caller may make large.
"""

from __future__ import annotations

import bisect
import functools
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from ._checkpoint import checkpoint

__all__ = ["has_word_starting", "rank", "words"]

TOKENS_CACHED = 16384
"""Record texts whose words ``rank`` keeps (the shipped scenarios hold a few thousand; each is its text's size)."""

TERMS_PER_CHECKPOINT = 32
"""Query words ``rank`` matches against one text between two checkpoints."""

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
def _tokens(text: str) -> tuple[frozenset[str], tuple[str, ...], str]:
    """A record text's vocabulary (as a set and sorted, for prefixes) and its words joined by spaces.

    Cached: every search of a scenario ranks the texts of the same records again, and splitting them into
    words was most of a search's CPU (issue 31). Pure, so a cached answer is the answer.
    """
    found = words(text)
    vocabulary = frozenset(found)
    return vocabulary, tuple(sorted(vocabulary)), " ".join(found)


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
    # A word of the text matches a query word it equals or, for query words of four letters or more, starts
    # with. The vocabulary sorted (``ordered``) puts the words starting with a term together from where the
    # term would go, so the first word at or after it answers: a bisection, not a scan of the vocabulary.
    # Query words in runs of TERMS_PER_CHECKPOINT, each run one checkpoint: a run's work is bounded (a set
    # lookup or a bisection per word), and a checkpoint per word was a fifth of a search's calls (issue 31).
    runs = [terms[at:at + TERMS_PER_CHECKPOINT] for at in range(0, len(terms), TERMS_PER_CHECKPOINT)]
    phrase = " ".join(words(query))
    scored: list[tuple[float, str | float, int, T]] = []
    for index, record in enumerate(records):
        checkpoint()
        score = 0.0
        matched: set[str] = set()
        for text, weight in fields(record):
            if not text:
                continue
            vocabulary, ordered, joined = _tokens(text)
            for at, run in enumerate(runs):
                if at:  # the record's own checkpoint covers each text's first run
                    checkpoint()
                for term in run:
                    if term in vocabulary or (len(term) >= 4 and (at := bisect_left(ordered, term)) < len(ordered)
                                              and ordered[at].startswith(term)):
                        score += weight
                        matched.add(term)
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
